#!/usr/bin/env bash
# Runs on the GPU machine (one device call, ~4.5 minutes; bench/NOTES.md,
# session 14): the split-K reductions with every load of the partial sums
# issued before the first is used (they waited out one L2 round trip per
# output column group: the wgmma workspace split took 44 us at M = 64
# where the cluster took 27). 1. 8192^2 M = 16, 64, 128: the heuristics
# (M = 13-16 mma_sync split 4; 33-64 wgmma 64 tokens split 4 through the
# workspace; 65-128 128 tokens split 4 through the workspace) against the
# cluster split 2 tile of before; 4096x14336 M = 64, 128 likewise. 2. The
# prepared suite with the heuristics. 3. The bench at M = 16, 64, 128.
source "$(dirname "${BASH_SOURCE[0]}")/device-script-env.sh"
source "$here/bundle-env.sh"
t64="block = [64, 256, 64], warp = [64, 32, 64], mma = wgmma, warp_specialized = true, mbarrier = true"
OUT="$logs/a" HUMMING_RUN_TIMEOUT=40 bash "$here/large-m-sweep.sh" --ms=16,64,128 auto \
  "m = [1, inf], $t64, split_k = 2" "m = [1, 128], $t64, split_k = 4, workspace_split = true" 2>&1 | say
OUT="$logs/b" HUMMING_RUN_TIMEOUT=40 bash "$here/large-m-sweep.sh" --shape=4096x14336 --ms=64,128 auto \
  "m = [1, inf], $t64, split_k = 4" 2>&1 | say
OUT="$logs/bench" timeout 120 bash "$here/run-bench.sh" --configs w4a16_g128 \
  --ms 16,64,128 2>&1 | grep -E "^\| w4a16_g128 \| 8192x8192 \| [0-9]" | say
timeout 130 "$bin/humming-gpu-test" --filter=_prep > "$out/suite.log" 2>&1
echo "suite: $(tail -n 1 "$out/suite.log")" | say
grep ' FAIL' "$out/suite.log" | head -5 | say
