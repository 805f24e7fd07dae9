#!/usr/bin/env bash
# Runs on the GPU machine (one device call, ~7 minutes; bench/NOTES.md,
# session 11, "Next session"). Summary to $OUT/summary.txt as each step
# ends (a timeout keeps what finished); logs packed at the end.
# 1. The standard sweep and the Python tests with session 11's adopted
#    changes (ptxas for the setmaxnreg kernels, tma = [b] from M = 513),
#    never measured by humming.bench.
# 2. How many clusters of 8 stay resident (HUMMING_LOG=info).
# 3. tma = [a, b] (activations by 2-D tensor copies through the per-launch
#    tensor map, first run on a GPU): the 128-token tile across the suite,
#    then timed against tma = [b] at M = 1024-8192.
#    Then tma = [b] compiled by nvJitLink instead of ptxas.
# Then scripts/session12-second-runs.sh (the 64-token tile, M = 9-16).
source "$(dirname "${BASH_SOURCE[0]}")/device-script-env.sh"
OUT="$logs/bench" timeout 300 bash "$here/run-bench.sh" 2>&1 | grep -E "^\|" | head -n 24 | say
cp "$logs/bench/bench.json" "$out/bench.json" 2>/dev/null
cp "$logs/bench/bench.txt" "$out/bench.txt" 2>/dev/null
OUT="$logs/python" timeout 150 bash "$here/run-python-tests.sh" 2>&1 | tail -n 3 | say
# The residency of clusters of 8 (the wave model's missing count; 4 -> 120
# CTAs, 2 -> 132 in session 11).
source "$here/bundle-env.sh" # bin: the bundle's tools
HUMMING_LOG=info timeout 60 "$bin/humming-gpu-test" --layer=4096x14336 --m=64 \
  --filter=_prep --force-tile-config="#humming.tile_config<$ws64, split_k = 8>" \
  2>&1 | grep -E "clusters of|PASS|FAIL" | say
OUT="$logs/check128" HUMMING_RUN_TIMEOUT=120 bash "$here/large-m-sweep.sh" \
  "--check=$ws128, tma = [a, b]" 2>&1 | grep -v "^---" | say
OUT="$logs/t128" HUMMING_RUN_TIMEOUT=40 bash "$here/large-m-sweep.sh" \
  --ms=1024,4096,8192 "$ws128, tma = [b]" "$ws128, tma = [a, b]" 2>&1 | say
# The 128-token tile was 2% faster from nvJitLink than from ptxas without
# bulk copies (session 11): the same with them, as the routed default
# compiles it (ptxas) against nvJitLink.
echo "(nvjitlink)" | say
OUT="$logs/t128nvj" HUMMING_COMPILER=nvjitlink HUMMING_RUN_TIMEOUT=40 \
  bash "$here/large-m-sweep.sh" --ms=1024,8192 "$ws128, tma = [b]" 2>&1 | say
tar -C "$logs" -cJf "$out/session12-first-logs.tar.xz" .
