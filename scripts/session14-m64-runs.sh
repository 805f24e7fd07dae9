#!/usr/bin/env bash
# Runs on the GPU machine (one device call, ~4 minutes; bench/NOTES.md,
# session 14): M = 64-128. The heuristics' M = 33-128 tile (warp-
# specialized wgmma, 64 tokens x 256 columns, cluster split 2) makes 64
# CTAs for 132 SMs and takes 45 us at M = 64 (torch 38; the original
# ~25 with the same block and warp shape but stream-K over every SM and
# TMA). Counted: 34 MB of weights (8 us at 4.3 TB/s), 8.6 GFLOP (~14 us on
# 64 SMs at wgmma's rate, ~7 on 132). Candidates: TMA for a and b (the
# 257+ tile has it; 33-128 does not), blocks of 128 columns (twice the
# CTAs), splits of 4 and 8. Then the heuristics' M = 64 kernel's profile.
source "$(dirname "${BASH_SOURCE[0]}")/device-script-env.sh"
ws="m = [1, inf], mma = wgmma, warp_specialized = true, mbarrier = true, warp = [64, 32, 64]"
OUT="$logs/a" HUMMING_RUN_TIMEOUT=40 bash "$here/large-m-sweep.sh" --ms=64,128 auto \
  "$ws, block = [64, 256, 64], split_k = 2, tma = [a, b]" \
  "$ws, block = [64, 256, 64], split_k = 4, tma = [a, b]" \
  "$ws, block = [64, 256, 64], split_k = 8, tma = [a, b]" \
  "$ws, block = [64, 128, 64], split_k = 2" \
  "$ws, block = [64, 128, 64], split_k = 2, tma = [a, b]" \
  "$ws, block = [64, 128, 64], split_k = 4, tma = [a, b]" \
  "$ws, block = [64, 128, 64], split_k = 2, tma = [a, b], stages = 8" 2>&1 | say
OUT="$logs/p" timeout 200 bash "$here/profile-source.sh" 8192x8192 64 gemm 2>&1 | grep -v "SM Frequency" | head -n 40 | say
grep -E "Duration|dram__bytes_read.sum  |Issue Slots Busy|Eligible Warps Per|Registers Per Thread|Grid Size|Achieved Occupancy|L2 Cache Throughput|DRAM Throughput" "$logs/p"/*.txt | head -20 | say
tar -C "$logs" -cJf "$out/session14-m64-logs.tar.xz" --exclude='*.ncu-rep' .
