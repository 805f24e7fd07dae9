#!/usr/bin/env bash
# Runs on the GPU machine (one device call, ~6 minutes; bench/NOTES.md,
# session 13): l2_prefetch (first run on a GPU) on the small-M tiles the
# heuristics choose for 8192^2 (M <= 12: the per-warp tile; 13-16: the
# shared-activation tile split over 4 CTAs) and 4096x14336, against auto;
# correctness of both tiles with the prefetch across the suite.
source "$(dirname "${BASH_SOURCE[0]}")/device-script-env.sh"
m8="m = [1, 16], block = [16, 64, 512], warp = [16, 64, 64], scale_after_mma = true"
sh="m = [1, 16], block = [16, 128, 128], warp = [16, 64, 32], block_copies = true, split_k = 4"
OUT="$logs/m1" HUMMING_RUN_TIMEOUT=40 bash "$here/large-m-sweep.sh" --ms=1,8 \
  auto "$m8, l2_prefetch = 4" "$m8, l2_prefetch = 8" "$m8, l2_prefetch = 16" 2>&1 | say
OUT="$logs/m16" HUMMING_RUN_TIMEOUT=40 bash "$here/large-m-sweep.sh" --ms=16 \
  auto "$sh, l2_prefetch = 4" "$sh, l2_prefetch = 8" "$sh, l2_prefetch = 12" 2>&1 | say
OUT="$logs/m16b" HUMMING_RUN_TIMEOUT=40 bash "$here/large-m-sweep.sh" --shape=4096x14336 --ms=1,16 \
  auto "$m8, split_k = 2, l2_prefetch = 8" "m = [1, 16], block = [16, 128, 128], warp = [16, 64, 32], block_copies = true, split_k = 8, l2_prefetch = 8" 2>&1 | say
OUT="$logs/check" HUMMING_RUN_TIMEOUT=100 bash "$here/large-m-sweep.sh" \
  "--check=$m8, l2_prefetch = 8" "--check=$sh, l2_prefetch = 8" 2>&1 | grep -v "^---" | say
tar -C "$logs" -cJf "$out/session13-l2-logs.tar.xz" .
