#!/usr/bin/env bash
# Runs on the GPU machine (one device call, ~6 minutes): the data behind the
# heuristics for wgmma split-K clusters at M = 32..512 (bench/NOTES.md,
# session 10). W4A16 g128 at 8192 x 8192 and 4096 x 14336: the heuristics'
# choice against the 64-token tile (split 2/4/8, with and without a producer
# warpgroup) and the 128-token warp-specialized tile (split 1/2/4). Logs
# under $OUT (one packed file); the summary last.
source "$(dirname "${BASH_SOURCE[0]}")/device-script-env.sh"
{
  OUT="$logs/a" HUMMING_RUN_TIMEOUT=60 bash "$here/large-m-sweep.sh" \
    --ms=32,48,64,96,128,192,256,384,512 auto "$t64, split_k = 2" \
    "$t64, split_k = 4" "$t64, split_k = 8" "$ws64, split_k = 2" \
    "$ws64, split_k = 4" "$ws128" "$ws128, split_k = 2" "$ws128, split_k = 4"
  OUT="$logs/b" HUMMING_RUN_TIMEOUT=60 bash "$here/large-m-sweep.sh" \
    --shape=4096x14336 --ms=32,64,128,256,512 auto "$t64, split_k = 4" \
    "$t64, split_k = 8" "$ws64, split_k = 4" "$ws64, split_k = 8" \
    "$ws128, split_k = 2" "$ws128, split_k = 4"
} 2>&1 | tee "$logs/summary.txt"
mkdir -p "$out"
cp "$logs/summary.txt" "$out/cluster-heuristic-summary.txt"
tar -C "$logs" -cJf "$out/cluster-heuristic-logs.tar.xz" .
