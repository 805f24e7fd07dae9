#!/usr/bin/env bash
# Runs on the GPU machine (one device call, ~3 minutes; bench/NOTES.md,
# session 14): wgmma at M <= 16. The M = 16 mma_sync kernel is SM-bound
# (ncu: its time scales with the SM clock, 40% issue-busy, 220
# instructions per 16 HMMA per warp; 0.99 eligible warps per scheduler).
# wgmma m64n16k16 with the dequantized weights as the register operand
# and the 16 tokens from shared memory by descriptor issues one
# instruction per warpgroup for what takes 8 HMMA plus the A fragments'
# ldmatrix, and runs asynchronously beside the next k-tile's
# dequantization. The cluster split (2 CTAs: warp_m / 8) fills the SMs.
source "$(dirname "${BASH_SOURCE[0]}")/device-script-env.sh"
w="m = [1, 16], mma = wgmma"
ws="$w, warp_specialized = true, mbarrier = true"
OUT="$logs/a" HUMMING_RUN_TIMEOUT=40 bash "$here/large-m-sweep.sh" --ms=1,16 auto \
  "$w, block = [16, 128, 64], warp = [16, 32, 64], split_k = 2" \
  "$w, block = [16, 64, 64], warp = [16, 16, 64], split_k = 2" \
  "$w, block = [16, 64, 64], warp = [16, 16, 64], split_k = 2, stages = 8" \
  "$ws, block = [16, 128, 64], warp = [16, 32, 64], split_k = 2, tma = [a, b]" \
  "$ws, block = [16, 64, 64], warp = [16, 16, 64], split_k = 2, tma = [a, b]" \
  "$ws, block = [16, 64, 64], warp = [16, 16, 64], split_k = 2, tma = [a, b], stages = 8" \
  "$ws, block = [16, 64, 64], warp = [16, 16, 64], split_k = 2, tma = [b], stages = 8" 2>&1 | say
tar -C "$logs" -cJf "$out/session14-wgmma16-logs.tar.xz" .
