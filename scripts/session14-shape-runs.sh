#!/usr/bin/env bash
# Runs on the GPU machine (one device call, ~1.5 minutes; bench/NOTES.md,
# session 14): is N = 8192 slow for its size at M = 64? 7680 x 8192 took
# 27 us with 120 CTAs (split 4 in clusters); 8192 x 8192 44 us with 64,
# 128 (split 4 through the workspace) or 256 CTAs alike. The same tile
# (64 tokens, split 4 through the workspace) at N = 7680, 7936, 8192,
# 8448: if 8192 alone is slow, its power-of-two strides are the suspect.
source "$(dirname "${BASH_SOURCE[0]}")/device-script-env.sh"
t="m = [1, 64], block = [64, 256, 64], warp = [64, 32, 64], mma = wgmma, warp_specialized = true, mbarrier = true, split_k = 4, workspace_split = true"
for n in 7680 7936 8192 8448; do
  OUT="$logs/$n" HUMMING_RUN_TIMEOUT=40 bash "$here/large-m-sweep.sh" --shape=${n}x8192 --ms=64 "$t" 2>&1 | grep -v "^---" | sed "s/^/N=$n /" | say
done
OUT="$logs/k" HUMMING_RUN_TIMEOUT=40 bash "$here/large-m-sweep.sh" --shape=8192x7680 --ms=64 "$t" 2>&1 | grep -v "^---" | sed "s/^/K=7680 /" | say
