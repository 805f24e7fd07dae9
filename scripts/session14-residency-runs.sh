#!/usr/bin/env bash
# Runs on the GPU machine (one device call, ~2 minutes; bench/NOTES.md,
# session 14): is M = 64 short of SMs or of clusters? At 8192² the M =
# 33-128 tile runs 64 CTAs (2 consumer warpgroups each) on 132 SMs; a
# split of 4 makes 128 CTAs, more than the ~120 that clusters of 4 keep
# resident (session 11), and lost (52 vs 44 us). N = 7680 has 30 column
# tiles: a split of 4 is 120 CTAs, one wave. If per-SM work bounds M = 64,
# split 4 takes ~0.6x the split-2 time there.
source "$(dirname "${BASH_SOURCE[0]}")/device-script-env.sh"
ws="m = [1, inf], mma = wgmma, warp_specialized = true, mbarrier = true, warp = [64, 32, 64], block = [64, 256, 64]"
OUT="$logs/a" HUMMING_RUN_TIMEOUT=40 bash "$here/large-m-sweep.sh" --shape=7680x8192 --ms=64,128 auto \
  "$ws, split_k = 2" "$ws, split_k = 4" "$ws, split_k = 4, tma = [a, b]" 2>&1 | say
OUT="$logs/b" HUMMING_RUN_TIMEOUT=40 bash "$here/large-m-sweep.sh" --shape=8192x8192 --ms=64,128 \
  "$ws, split_k = 4" 2>&1 | say
tar -C "$logs" -cJf "$out/session14-residency-logs.tar.xz" .
