#!/usr/bin/env bash
# Runs on the GPU machine (one device call, ~6 minutes; bench/NOTES.md,
# session 14): workspace_split, the wgmma K split through the global
# workspace (no cluster to co-schedule). 1. Correctness across the
# prepared suite, the 64- and 128-token tiles forced with a split of 4.
# 2. The heuristics (8192^2 M = 33-64: 64 tokens split 4 through the
# workspace, 128 CTAs in one wave; 65-128: 128 tokens split 4) against
# the cluster tiles they replace. 3. The PDL chain test (M = 64 through
# humming::Layer). 4. The bench at M = 64, 128.
source "$(dirname "${BASH_SOURCE[0]}")/device-script-env.sh"
ws="mma = wgmma, warp_specialized = true, mbarrier = true"
t64="block = [64, 256, 64], warp = [64, 32, 64], $ws"
t128="block = [128, 256, 64], warp = [128, 32, 64], $ws"
OUT="$logs/c" HUMMING_RUN_TIMEOUT=200 bash "$here/large-m-sweep.sh" \
  "--check=m = [1, 64], $t64, split_k = 4, workspace_split = true" \
  "--check=m = [1, 128], $t128, split_k = 4, workspace_split = true" 2>&1 | say
OUT="$logs/a" HUMMING_RUN_TIMEOUT=40 bash "$here/large-m-sweep.sh" --ms=33,64,96,128 auto \
  "m = [1, inf], $t64, split_k = 2" "m = [1, 128], $t64, split_k = 4, workspace_split = true" 2>&1 | say
OUT="$logs/b" HUMMING_RUN_TIMEOUT=40 bash "$here/large-m-sweep.sh" --shape=4096x14336 --ms=64,128 auto \
  "m = [1, inf], $t64, split_k = 4" "m = [1, inf], $t64, split_k = 2" 2>&1 | say
timeout 120 "$bin/humming-gpu-test" --filter=pdl_chain 2>&1 | grep -E "M=64 |passed|failed" | say
OUT="$logs/bench" timeout 150 bash "$here/run-bench.sh" --configs w4a16_g128 \
  --ms 64,128 2>&1 | grep -E "^\| w4a16" | say
tar -C "$logs" -cJf "$out/session14-workspace-logs.tar.xz" .
