#!/usr/bin/env bash
# Runs on the GPU machine (one device call, ~4 minutes; bench/NOTES.md,
# session 14): does the L2 -> SM traffic of the activations bound M = 16?
# Counted: per-warp tile (every 64-column CTA reads all of A) at M = 16
# moves 32 MB of A + 34 MB of weights through L2, the shared tile (128
# columns) 16 + 34, M = 1 2 + 34; their graph-replay times 20.5 / 17.2 /
# 12.6 us fit ~0.27 us per MB of A. Blocks of 256 or 512 columns read A
# 8 or 4 MB: the model predicts 17.2 -> ~15-16 us at M = 16 if the bytes
# bound it (session 7 measured 256 columns at 20.8 vs 21.2 with an older
# kernel). Then a profile of the heuristics' M = 16 kernel (L2, DRAM).
source "$(dirname "${BASH_SOURCE[0]}")/device-script-env.sh"
w="m = [1, 16], block_copies = true"
OUT="$logs/a" HUMMING_RUN_TIMEOUT=40 bash "$here/large-m-sweep.sh" --ms=13,16 auto \
  "$w, block = [16, 256, 64], warp = [16, 64, 32], split_k = 8" \
  "$w, block = [16, 256, 128], warp = [16, 64, 64], split_k = 8" \
  "$w, block = [16, 256, 128], warp = [16, 64, 32], split_k = 4" \
  "$w, block = [16, 256, 64], warp = [16, 64, 32], split_k = 4" \
  "$w, block = [16, 512, 64], warp = [16, 64, 64], split_k = 16" 2>&1 | say
OUT="$logs/p" timeout 200 bash "$here/profile-source.sh" 8192x8192 16 gemm 2>&1 | head -n 45 | say
grep -E "dram__|lts__t_|L1/TEX Hit|L2 Hit|Memory Throughput|DRAM Throughput|Achieved Occupancy" "$logs/p"/*.txt | head -20 | say
tar -C "$logs" -cJf "$out/session14-wide-logs.tar.xz" --exclude='*.ncu-rep' .
