#!/usr/bin/env bash
# Runs on the GPU machine (one device call, ~4 minutes): the first runs of
# the wgmma split-K in a thread block cluster (bench/NOTES.md, session 9).
# 1. correctness across the prepared suite for two forced cluster tiles;
# 2. W4A16 g128 8192^2 at M = 64..512: the heuristics against cluster
#    splits of the 64-token tile (2, 4, 8; with and without a producer
#    warpgroup) and of the 128-token WS tile;
# 3. M = 9-16 with 256-column shared-activation blocks.
# Logs under $OUT (packed into one file: the device call returns 8 files at
# most); the summary last.
source "$(dirname "${BASH_SOURCE[0]}")/device-script-env.sh"
s16="m = [1, 16], block = [16, 256, 64], warp = [16, 64, 32], block_copies = true, split_k = 8"
s16k="m = [1, 16], block = [16, 256, 128], warp = [16, 64, 64], block_copies = true, split_k = 8"
{
  OUT="$logs/check" HUMMING_RUN_TIMEOUT=150 bash "$here/large-m-sweep.sh" \
    "--check=$t64, split_k = 4" "--check=$ws128, split_k = 2"
  OUT="$logs/mid" HUMMING_RUN_TIMEOUT=90 bash "$here/large-m-sweep.sh" \
    --ms=64,128,256,512 auto "$t64, split_k = 2" "$t64, split_k = 4" \
    "$t64, split_k = 8" "$ws64, split_k = 4" "$ws128, split_k = 2"
  OUT="$logs/m16" HUMMING_RUN_TIMEOUT=60 bash "$here/large-m-sweep.sh" \
    --ms=9,16 auto "$s16" "$s16k"
} 2>&1 | tee "$logs/summary.txt"
mkdir -p "$out"
cp "$logs/summary.txt" "$out/cluster-split-summary.txt"
tar -C "$logs" -cJf "$out/cluster-split-logs.tar.xz" .
