#!/usr/bin/env bash
# Runs on the GPU machine (one device call, ~4 minutes; only after
# session12-first-runs.sh showed tma = [a, b] correct): where the 128-token
# warp-specialized kernel's warps wait at 8192^2 M = 8192 with the
# activations and weights by TMA (Nsight Compute, stall samples per SASS
# instruction; session 9's profile of the cp.async version is
# bench/results/h200/2026-12-01-ncu-source-session9-ws-m8192*.txt).
source "$(dirname "${BASH_SOURCE[0]}")/device-script-env.sh"
timeout 420 bash "$here/profile-source.sh" 8192x8192 8192 gemm0_m0 \
  "--force-tile-config=#humming.tile_config<$ws128, tma = [a, b]>" 2>&1 | say
