#!/usr/bin/env bash
# Runs on the GPU machine (one device call, ~8 minutes; bench/NOTES.md,
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
# 4. The 64-token cluster tile with tma = [b] and [a, b] (tma = [b] hung
#    there before the destination fix of session 11; short timeouts).
# 5. M = 9-16 tile variants (pipeline depth, 64 of K per warp).
source "$(dirname "${BASH_SOURCE[0]}")/device-script-env.sh"
OUT="$logs/bench" timeout 300 bash "$here/run-bench.sh" 2>&1 | grep -E "^\|" | head -n 24 | say
cp "$logs/bench/bench.json" "$out/bench.json" 2>/dev/null
cp "$logs/bench/bench.txt" "$out/bench.txt" 2>/dev/null
OUT="$logs/python" timeout 150 bash "$here/run-python-tests.sh" 2>&1 | tail -n 3 | say
# The residency of clusters of 8 (the wave model's missing count; 4 -> 120
# CTAs, 2 -> 132 in session 11).
source "$here/bundle-env.sh" # bin: the bundle's tools
HUMMING_LOG=info timeout 60 "$bin/humming-gpu-test" --layer=4096x14336 --m=64 \
  --filter=_prep --force-tile-config="#humming.tile_config<m = [1, inf], block = [64, 256, 64], warp = [64, 32, 64], mma = wgmma, warp_specialized = true, mbarrier = true, split_k = 8>" \
  2>&1 | grep -E "clusters of|PASS|FAIL" | say
ws128="m = [1, inf], block = [128, 256, 64], warp = [128, 32, 64], mma = wgmma, warp_specialized = true, mbarrier = true"
ws64="m = [1, inf], block = [64, 256, 64], warp = [64, 32, 64], mma = wgmma, warp_specialized = true, mbarrier = true, split_k = 2"
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
OUT="$logs/check64" HUMMING_RUN_TIMEOUT=100 bash "$here/large-m-sweep.sh" \
  "--check=$ws64, tma = [b]" "--check=$ws64, tma = [a, b]" 2>&1 | grep -v "^---" | say
OUT="$logs/t64" HUMMING_RUN_TIMEOUT=25 bash "$here/large-m-sweep.sh" \
  --ms=64,128,256 "$ws64" "$ws64, tma = [b]" "$ws64, tma = [a, b]" 2>&1 | say
# M = 16 (18.7 us, the milestone's 0.51 is ~17.9): the heuristics' tile
# against deeper/shallower pipelines and 64 of K per warp.
m16="m = [1, 16], block = [16, 128, 128], warp = [16, 64, 32], block_copies = true, split_k = 4"
OUT="$logs/m16" HUMMING_RUN_TIMEOUT=40 bash "$here/large-m-sweep.sh" --ms=9,16 \
  auto "$m16, stages = 3" "$m16, stages = 6" \
  "m = [1, 16], block = [16, 128, 256], warp = [16, 64, 64], block_copies = true, split_k = 4" \
  2>&1 | say
tar -C "$logs" -cJf "$out/session12-first-logs.tar.xz" .
