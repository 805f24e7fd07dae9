#!/usr/bin/env bash
# Runs on the GPU machine (one short device call, ~1.5 minutes): the
# heuristics' warp-specialized kernels (M = 64, 128, 256, 1024 of 8192^2
# W4A16 g128: 64-token cluster, 128-token cluster, 128-token tiles)
# compiled by ptxas and by the driver's JIT, which honour setmaxnreg (the
# default nvJitLink ignores it): with .maxnreg they must run, not hang.
# Each log is written under $OUT as it finishes (a timeout keeps them).
set -uo pipefail
here="$(dirname "${BASH_SOURCE[0]}")"
out="${OUT:-$here/../gpu-results}"
mkdir -p "$out"
for compiler in ptxas driver; do
  OUT="$out/$compiler" HUMMING_COMPILER=$compiler HUMMING_RUN_TIMEOUT=40 \
    bash "$here/large-m-sweep.sh" --ms=64,128,256,1024 auto 2>&1 |
    sed "s/^auto/$compiler/" | tee -a "$out/summary.txt"
done
