#!/usr/bin/env bash
# Runs on the GPU machine (one device call, ~6 minutes; bench/NOTES.md,
# session 11): the default compiler now routes the setmaxnreg kernels to
# ptxas (timed, two shapes, M = 1-8192); tma = [b] with the bulk copies'
# destinations fixed (the 128-token tile across the suite, then timed);
# the prepared suite with the routed compiler last. Summary to
# $OUT/summary.txt as it goes.
source "$(dirname "${BASH_SOURCE[0]}")/device-script-env.sh"
for shape in 8192x8192 4096x14336; do
  OUT="$logs/routed-$shape" HUMMING_RUN_TIMEOUT=50 bash "$here/large-m-sweep.sh" \
    --shape=$shape --ms=1,16,64,128,256,1024,8192 auto 2>&1 | sed "s/^auto/routed/" | say
done
OUT="$logs/check" HUMMING_RUN_TIMEOUT=100 bash "$here/large-m-sweep.sh" \
  "--check=$ws128, tma = [b]" 2>&1 | grep -v "^---" | say
OUT="$logs/t128" HUMMING_RUN_TIMEOUT=40 bash "$here/large-m-sweep.sh" \
  --ms=1024,8192 "$ws128" "$ws128, tma = [b]" 2>&1 | say
tar -C "$logs" -cJf "$out/session11-routed-logs.tar.xz" .
OUT="$logs/suite" timeout 200 bash "$here/run-gpu-suite.sh" --filter=_prep 2>&1 | tail -n 4 | say
