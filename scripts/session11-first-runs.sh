#!/usr/bin/env bash
# Runs on the GPU machine (one device call, ~6 minutes; bench/NOTES.md,
# session 10, "First runs for the next session"):
# 0. the resident clusters per cluster kernel (info log of the transform);
# 1. the warp-specialized kernels under ptxas and the driver JIT (they
#    honour setmaxnreg; .maxnreg must keep them from hanging);
# 2. the prepared suite with the heuristics (an M in every cluster range);
# 3. M = 9-16 with the K split reduced in a cluster (cluster_split):
#    across the suite, then timed against the heuristics' workspace split.
# The summary goes to $OUT/summary.txt as each step ends (a timeout keeps
# it); the logs are packed into $OUT at the end. tma = [b]:
# scripts/session11-tma-runs.sh.
source "$(dirname "${BASH_SOURCE[0]}")/device-script-env.sh"
source "$here/bundle-env.sh" # bin: the bundle's tools
for shape in 4096x14336 8192x8192; do
  HUMMING_LOG=info timeout 60 "$bin/humming-gpu-test" --layer=$shape \
    --m=64,200 --filter=_prep > "$logs/clusters-$shape.log" 2>&1
  grep -E "clusters of|not checked|cannot run|FAIL|PASS" "$logs/clusters-$shape.log" | say
  # The cluster kernels ran in session 10; a refusal here is the new
  # occupancy query's launch config, and every later step would fail too.
  if grep -q "cannot run a cluster" "$logs/clusters-$shape.log"; then
    echo "STOP: cuOccupancyMaxActiveClusters refused a cluster kernel (Layer.cpp)" | say
    tar -C "$logs" -cJf "$out/session11-first-logs.tar.xz" .
    exit 1
  fi
done
for compiler in ptxas driver; do
  OUT="$logs/$compiler" HUMMING_COMPILER=$compiler HUMMING_RUN_TIMEOUT=40 \
    bash "$here/large-m-sweep.sh" --ms=64,128,256,1024 auto 2>&1 |
    sed "s/^auto/$compiler/" | say
done
OUT="$logs/suite" timeout 200 bash "$here/run-gpu-suite.sh" --filter=_prep 2>&1 | tail -n 6 | say
cs="m = [1, 16], block = [16, 128, 128], warp = [16, 64, 32], block_copies = true, cluster_split = true"
OUT="$logs/cs-check" HUMMING_RUN_TIMEOUT=120 bash "$here/large-m-sweep.sh" \
  "--check=$cs, split_k = 4" 2>&1 | grep -v "^---" | say
for shape in 8192x8192 4096x14336; do
  OUT="$logs/cs-$shape" HUMMING_RUN_TIMEOUT=40 bash "$here/large-m-sweep.sh" \
    --shape=$shape --ms=9,16 auto "$cs, split_k = 4" "$cs, split_k = 8" 2>&1 | say
done
tar -C "$logs" -cJf "$out/session11-first-logs.tar.xz" .
