#!/usr/bin/env bash
# Runs on the GPU machine (one device call, ~5 minutes; after
# session12-first-runs.sh): the 64-token cluster tile with tma = [b] and
# [a, b] (tma = [b] hung there before the destination fix of session 11:
# short timeouts), checked across the suite and timed at M = 64-256; then
# the 64-token tile's K split at M = 48-128 from ptxas; M = 9-16 tile
# variants (pipeline depth, 64 of K per warp). Summary to
# $OUT/summary.txt as each step ends.
source "$(dirname "${BASH_SOURCE[0]}")/device-script-env.sh"
ws64k2="$ws64, split_k = 2"
OUT="$logs/check64" HUMMING_RUN_TIMEOUT=100 bash "$here/large-m-sweep.sh" \
  "--check=$ws64k2, tma = [b]" "--check=$ws64k2, tma = [a, b]" 2>&1 | grep -v "^---" | say
OUT="$logs/t64" HUMMING_RUN_TIMEOUT=25 bash "$here/large-m-sweep.sh" \
  --ms=64,128,256 "$ws64k2" "$ws64k2, tma = [b]" "$ws64k2, tma = [a, b]" 2>&1 | say
# M = 33-128 (8192^2 takes the 64-token tile in clusters of 2: 64 CTAs on
# 132 SMs): splits 4 and 8 were as fast from nvJitLink (session 10); from
# ptxas, the default for these kernels now?
OUT="$logs/split64" HUMMING_RUN_TIMEOUT=30 bash "$here/large-m-sweep.sh" --ms=48,64,128 \
  auto "$ws64, split_k = 4" "$ws64, split_k = 8" 2>&1 | say
# M = 16 (18.7 us, the milestone's 0.51 is ~17.9): the heuristics' tile
# against deeper/shallower pipelines and 64 of K per warp.
m16="m = [1, 16], block = [16, 128, 128], warp = [16, 64, 32], block_copies = true, split_k = 4"
OUT="$logs/m16" HUMMING_RUN_TIMEOUT=40 bash "$here/large-m-sweep.sh" --ms=9,16 \
  auto "$m16, stages = 3" "$m16, stages = 6" \
  "m = [1, 16], block = [16, 128, 256], warp = [16, 64, 64], block_copies = true, split_k = 4" \
  2>&1 | say
tar -C "$logs" -cJf "$out/session12-second-logs.tar.xz" .
