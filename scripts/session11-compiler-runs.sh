#!/usr/bin/env bash
# Runs on the GPU machine (one device call, ~7 minutes; bench/NOTES.md,
# session 11): the heuristics' kernels compiled by nvJitLink (separate
# compilation: setmaxnreg ignored, C7504) against ptxas (whole program),
# three shapes, M = 1-8192, alternating; then tma = [b] with the bulk
# copies' shared-window destinations fixed: the 128-token tile across the
# suite and timed, the 64-token cluster tile last (it hung before the fix).
# Summary to $OUT/summary.txt as it goes.
source "$(dirname "${BASH_SOURCE[0]}")/device-script-env.sh"
for shape in 8192x8192 4096x14336 28672x8192; do
  for compiler in nvjitlink ptxas nvjitlink ptxas; do
    OUT="$logs/$compiler-$shape" HUMMING_COMPILER=$compiler HUMMING_RUN_TIMEOUT=60 \
      bash "$here/large-m-sweep.sh" --shape=$shape --ms=1,16,64,128,256,1024,8192 auto 2>&1 |
      sed "s/^auto/$compiler/" | say
  done
done
ws64k2="$ws64, split_k = 2"
OUT="$logs/check" HUMMING_RUN_TIMEOUT=120 bash "$here/large-m-sweep.sh" \
  "--check=$ws128, tma = [b]" 2>&1 | grep -v "^---" | say
OUT="$logs/t128" HUMMING_RUN_TIMEOUT=60 bash "$here/large-m-sweep.sh" \
  --ms=1024,8192 "$ws128" "$ws128, tma = [b]" 2>&1 | say
OUT="$logs/t64" HUMMING_RUN_TIMEOUT=30 bash "$here/large-m-sweep.sh" \
  --ms=64,128 "$ws64k2" "$ws64k2, tma = [b]" 2>&1 | say
tar -C "$logs" -cJf "$out/session11-compiler-logs.tar.xz" .
