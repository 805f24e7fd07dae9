#!/usr/bin/env bash
# Runs on the GPU machine (one device call, ~6 minutes; bench/NOTES.md,
# session 15): share_activations at M = 16. 1. 8192^2 M = 13, 16: the
# heuristics' block_copies tile against the same tile with per-warp copies
# (no barrier, A read per warp), with share_activations (A per K group,
# named barrier per group), and wider shared tiles with scale_after_mma.
# 2. Correctness of share_activations across the prepared suite (16- and
# 32-token warps). 3. 4096x14336 M = 64, 128: the workspace split 4 the
# heuristics now take for 65-128 (not measured) against the cluster splits.
source "$(dirname "${BASH_SOURCE[0]}")/device-script-env.sh"
source "$here/bundle-env.sh"
s="m = [1, 16], block = [16, 128, 128], warp = [16, 64, 32], split_k = 4"
OUT="$logs/a" HUMMING_RUN_TIMEOUT=40 bash "$here/large-m-sweep.sh" --ms=13,16 auto \
  "$s" "$s, share_activations = true" \
  "m = [1, 16], block = [16, 128, 256], warp = [16, 64, 64], stages = 3, split_k = 4, share_activations = true, scale_after_mma = true" \
  "m = [1, 16], block = [16, 256, 256], warp = [16, 64, 64], stages = 3, split_k = 4, share_activations = true, scale_after_mma = true" \
  "m = [1, 16], block = [16, 128, 256], warp = [16, 64, 32], split_k = 2, share_activations = true" \
  "m = [1, 16], block = [16, 256, 128], warp = [16, 64, 64], stages = 3, split_k = 8, share_activations = true, scale_after_mma = true" \
  "$s, share_activations = true, stages = 3" \
  "$s, share_activations = true, stages = 6" 2>&1 | say
OUT="$logs/b" HUMMING_RUN_TIMEOUT=150 bash "$here/large-m-sweep.sh" --ms=16 \
  --check="$s, share_activations = true" \
  --check="m = [1, 64], block = [32, 128, 128], warp = [32, 64, 32], split_k = 2, share_activations = true" 2>&1 | grep -v "^---" | say
t64="block = [64, 256, 64], warp = [64, 32, 64], mma = wgmma, warp_specialized = true, mbarrier = true"
OUT="$logs/c" HUMMING_RUN_TIMEOUT=40 bash "$here/large-m-sweep.sh" --shape=4096x14336 --ms=64,128 auto \
  "m = [1, inf], $t64, split_k = 4" "m = [1, inf], $t64, split_k = 2" 2>&1 | say
