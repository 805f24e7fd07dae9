#!/usr/bin/env bash
# Runs on the GPU machine (one device call, ~5 minutes; bench/NOTES.md,
# session 12): the M <= 8 tile (16 rows, eight warps splitting K in the
# block, two CTAs along K) at M = 9-16 against the heuristics' M = 9-16
# tile (shared activations); then the standard sweep with bulk fills
# adopted (M >= 513) and the Python tests.
source "$(dirname "${BASH_SOURCE[0]}")/device-script-env.sh"
m8="m = [1, 16], block = [16, 64, 512], warp = [16, 64, 64], scale_after_mma = true"
OUT="$logs/m16" HUMMING_RUN_TIMEOUT=40 bash "$here/large-m-sweep.sh" --ms=9,16 \
  auto "$m8, split_k = 2" "$m8" 2>&1 | say
OUT="$logs/m16b" HUMMING_RUN_TIMEOUT=40 bash "$here/large-m-sweep.sh" --shape=4096x14336 \
  --ms=16 auto "$m8, split_k = 2" "$m8, split_k = 4" 2>&1 | say
OUT="$logs/bench" timeout 300 bash "$here/run-bench.sh" 2>&1 | grep -E "^\|" | head -n 24 | say
cp "$logs/bench/bench.json" "$out/bench.json" 2>/dev/null
cp "$logs/bench/bench.txt" "$out/bench.txt" 2>/dev/null
OUT="$logs/python" timeout 120 bash "$here/run-python-tests.sh" 2>&1 | tail -n 3 | say
tar -C "$logs" -cJf "$out/session12-final-logs.tar.xz" .
