#!/usr/bin/env bash
# Runs on the GPU machine (one device call, ~6 minutes; bench/NOTES.md,
# session 13 "Next"): written after session 13's last device call.
# 1. The PDL chain test with this bundle (the CUDA 12.3 driver check and
#    Layer::dependentLaunch() were made after the last run: expect "(pdl)").
# 2. With PDL, M = 13-16 again: the per-warp tile (one CTA per SM, 120
#    registers: the next kernel's CTA fits beside it) lost to the split
#    shared tile without PDL (20.7 vs 18.8 us at M = 16); and the shared
#    tile with 3 / 5 / 6 stages (more stages: more weights copied before
#    the wait).
# 3. The W4A16 g128 bench at M = 1, 16 (two runs, for the spread).
source "$(dirname "${BASH_SOURCE[0]}")/device-script-env.sh"
source "$here/bundle-env.sh" # bin: the bundle's tools
timeout 120 "$bin/humming-gpu-test" --filter=pdl_chain 2>&1 |
  grep -E "pdl_chain|passed|failed" | say
m8="m = [1, 16], block = [16, 64, 512], warp = [16, 64, 64], scale_after_mma = true"
sh="m = [1, 16], block = [16, 128, 128], warp = [16, 64, 32], block_copies = true, split_k = 4"
OUT="$logs/a" HUMMING_RUN_TIMEOUT=40 bash "$here/large-m-sweep.sh" --ms=12,13,16 \
  auto "$m8" "$sh, stages = 3" "$sh, stages = 5" "$sh, stages = 6" 2>&1 | say
for i in 1 2; do
  OUT="$logs/bench$i" timeout 150 bash "$here/run-bench.sh" --configs w4a16_g128 \
    --ms 1,16 2>&1 | grep -E "^\| w4a16" | head -n 2 | say
done
tar -C "$logs" -cJf "$out/session14-first-logs.tar.xz" .
