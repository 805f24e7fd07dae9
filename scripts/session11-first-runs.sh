#!/usr/bin/env bash
# Runs on the GPU machine (one device call, ~6 minutes; bench/NOTES.md,
# session 10, "First runs for the next session"):
# 0. the resident clusters per cluster kernel (info log of the transform);
# 1. the warp-specialized kernels under ptxas and the driver JIT (they
#    honour setmaxnreg; .maxnreg must keep them from hanging);
# 2. the prepared suite with the heuristics (an M in every cluster range);
# 3. tma = [b] (weights by bulk copies) across the suite, forced, for the
#    128-token tile and the 64-token cluster tile;
# 4. tma = [b] against the 16-byte copies, 8192^2 W4A16 g128.
# The summary goes to $OUT/summary.txt as each step ends (a timeout keeps
# it); the logs are packed into $OUT at the end.
set -uo pipefail
here="$(dirname "${BASH_SOURCE[0]}")"
out="${OUT:-$here/../gpu-results}"
mkdir -p "$out"
logs="$(mktemp -d)"
source "$here/bundle-env.sh" # bin: the bundle's tools
say() { tee -a "$out/summary.txt"; }
ws128="m = [1, inf], block = [128, 256, 64], warp = [128, 32, 64], mma = wgmma, warp_specialized = true, mbarrier = true"
ws64="m = [1, inf], block = [64, 256, 64], warp = [64, 32, 64], mma = wgmma, warp_specialized = true, mbarrier = true, split_k = 2"
# 0. How many clusters the driver keeps resident (Layer::transform asks
#    cuOccupancyMaxActiveClusters; none would be an error): the cluster
#    kernels of 4096 x 14336 (splits 4 and 2) and 8192^2 (split 2).
for shape in 4096x14336 8192x8192; do
  HUMMING_LOG=info timeout 60 "$bin/humming-gpu-test" --layer=$shape \
    --m=64,200 --filter=_prep 2>&1 | grep -E "clusters of|not checked|FAIL|PASS" | say
done
for compiler in ptxas driver; do
  OUT="$logs/$compiler" HUMMING_COMPILER=$compiler HUMMING_RUN_TIMEOUT=40 \
    bash "$here/large-m-sweep.sh" --ms=64,128,256,1024 auto 2>&1 |
    sed "s/^auto/$compiler/" | say
done
OUT="$logs/suite" timeout 200 bash "$here/run-gpu-suite.sh" --filter=_prep 2>&1 | tail -n 6 | say
OUT="$logs/check" HUMMING_RUN_TIMEOUT=120 bash "$here/large-m-sweep.sh" \
  "--check=$ws128, tma = [b]" "--check=$ws64, tma = [b]" --ms=64 2>&1 | grep -v "^---" | say
OUT="$logs/t128" HUMMING_RUN_TIMEOUT=60 bash "$here/large-m-sweep.sh" \
  --ms=1024,4096,8192 "$ws128" "$ws128, tma = [b]" 2>&1 | say
OUT="$logs/t64" HUMMING_RUN_TIMEOUT=40 bash "$here/large-m-sweep.sh" \
  --ms=64,128 "$ws64" "$ws64, tma = [b]" 2>&1 | say
tar -C "$logs" -cJf "$out/session11-first-logs.tar.xz" .
