#!/usr/bin/env bash
# Runs on the GPU machine (one device call, ~2 minutes; bench/NOTES.md,
# session 14): M = 33-128 with two consumer warpgroups of 64 columns on
# 128-column blocks: 64 column tiles x a cluster split of 2 = 128 CTAs,
# each with two warpgroups (the 7680x8192 run: 120 CTAs of two
# warpgroups take 27 us at M = 64 where 60 take 47; 8192's split of 4
# overflows the ~120 CTAs that clusters of 4 keep resident).
source "$(dirname "${BASH_SOURCE[0]}")/device-script-env.sh"
ws="m = [1, inf], mma = wgmma, warp_specialized = true, mbarrier = true, warp = [64, 16, 64]"
OUT="$logs/a" HUMMING_RUN_TIMEOUT=40 bash "$here/large-m-sweep.sh" --ms=33,64,128 auto \
  "$ws, block = [64, 128, 64], split_k = 2" \
  "$ws, block = [64, 128, 64], split_k = 2, tma = [a, b]" \
  "$ws, block = [64, 128, 64], split_k = 4" \
  "$ws, block = [64, 256, 64], split_k = 4" 2>&1 | say
OUT="$logs/b" HUMMING_RUN_TIMEOUT=40 bash "$here/large-m-sweep.sh" --shape=4096x14336 --ms=64 auto \
  "$ws, block = [64, 128, 64], split_k = 4" \
  "$ws, block = [64, 128, 64], split_k = 2" 2>&1 | say
tar -C "$logs" -cJf "$out/session14-wg-logs.tar.xz" .
