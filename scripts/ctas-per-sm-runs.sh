#!/usr/bin/env bash
# Runs on the GPU machine (one device call, ~3 minutes): the 64-token
# warp-specialized cluster tile with two CTAs per SM (ctas_per_sm = 2: 80
# registers at launch, the consumers take more through setmaxnreg — which
# only ptxas honours; nvJitLink serializes the wgmmas then) against the
# heuristics, W4A16 g128 at 8192^2 and 4096 x 14336 (bench/NOTES.md,
# session 10). Logs under $OUT (one packed file); the summary last.
set -uo pipefail
here="$(dirname "${BASH_SOURCE[0]}")"
out="${OUT:-$here/../gpu-results}"
logs="$(mktemp -d)"
ws64="m = [1, inf], block = [64, 256, 64], warp = [64, 32, 64], mma = wgmma, warp_specialized = true, mbarrier = true"
{
  for shape in 8192x8192 4096x14336; do
    OUT="$logs/$shape-nvjitlink" HUMMING_RUN_TIMEOUT=60 bash "$here/large-m-sweep.sh" \
      --shape=$shape --ms=33,64,128,256 auto "$ws64, split_k = 2, ctas_per_sm = 2"
    echo "(ptxas)"
    OUT="$logs/$shape-ptxas" HUMMING_COMPILER=ptxas HUMMING_RUN_TIMEOUT=60 bash "$here/large-m-sweep.sh" \
      --shape=$shape --ms=33,64,128,256 "$ws64, split_k = 2, ctas_per_sm = 2" \
      "$ws64, split_k = 4, ctas_per_sm = 2" "$ws64, ctas_per_sm = 2"
  done
} 2>&1 | tee "$logs/summary.txt"
mkdir -p "$out"
cp "$logs/summary.txt" "$out/ctas-per-sm-summary.txt"
tar -C "$logs" -cJf "$out/ctas-per-sm-logs.tar.xz" .
