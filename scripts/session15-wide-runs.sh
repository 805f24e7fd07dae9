#!/usr/bin/env bash
# Runs on the GPU machine (one device call, ~6 minutes; bench/NOTES.md,
# session 15): the 256 x 256 share_activations tile (16 warps, scale after
# the MMAs, 3 stages; 15.6 us at 8192^2 M = 16 against 17.1) — at M = 1-16,
# its neighbours (no scale_after_mma, block_copies instead of sharing,
# l2_prefetch), and on the model shapes with split_k = SMs / blocks.
source "$(dirname "${BASH_SOURCE[0]}")/device-script-env.sh"
source "$here/bundle-env.sh"
w="block = [16, 256, 256], warp = [16, 64, 64], stages = 3, share_activations = true, scale_after_mma = true"
OUT="$logs/a" HUMMING_RUN_TIMEOUT=40 bash "$here/large-m-sweep.sh" --ms=1,8,12,16 auto \
  "m = [1, 16], $w, split_k = 4" 2>&1 | say
OUT="$logs/b" HUMMING_RUN_TIMEOUT=40 bash "$here/large-m-sweep.sh" --ms=16 \
  "m = [1, 16], block = [16, 256, 256], warp = [16, 64, 64], stages = 3, share_activations = true, split_k = 4" \
  "m = [1, 16], block = [16, 256, 256], warp = [16, 64, 64], stages = 4, block_copies = true, scale_after_mma = true, split_k = 4" \
  "m = [1, 16], block = [16, 256, 256], warp = [16, 64, 64], stages = 3, block_copies = true, scale_after_mma = true, split_k = 4" \
  "m = [1, 16], $w, split_k = 4, l2_prefetch = 2" \
  "m = [1, 16], $w, split_k = 2" 2>&1 | grep -v "^---" | say
for shape in 4096x14336:8 14336x4096:2 4096x4096:4 4096x4096:8 8192x28672:4 28672x8192:1; do
  OUT="$logs/c-${shape%%:*}" HUMMING_RUN_TIMEOUT=40 bash "$here/large-m-sweep.sh" --shape="${shape%%:*}" --ms=1,9,16 auto \
    "m = [1, 16], $w, split_k = ${shape##*:}" 2>&1 | say
done
