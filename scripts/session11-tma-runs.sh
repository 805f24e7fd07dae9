#!/usr/bin/env bash
# Runs on the GPU machine (one device call, ~4 minutes; bench/NOTES.md,
# session 10): tma = [b] (the weights by bulk copies) across the suite for
# the 128-token tile and the 64-token cluster tile, then timed against the
# 16-byte copies, 8192^2 W4A16 g128; and wgmma_in_flight = 1 under ptxas
# (nvJitLink serializes the WS kernels' wgmmas anyway). Summary to
# $OUT/summary.txt as it goes.
source "$(dirname "${BASH_SOURCE[0]}")/device-script-env.sh"
ws64k2="$ws64, split_k = 2"
OUT="$logs/check" HUMMING_RUN_TIMEOUT=120 bash "$here/large-m-sweep.sh" \
  "--check=$ws128, tma = [b]" "--check=$ws64k2, tma = [b]" 2>&1 | grep -v "^---" | say
OUT="$logs/t128" HUMMING_RUN_TIMEOUT=60 bash "$here/large-m-sweep.sh" \
  --ms=1024,4096,8192 "$ws128" "$ws128, tma = [b]" 2>&1 | say
OUT="$logs/t64" HUMMING_RUN_TIMEOUT=40 bash "$here/large-m-sweep.sh" \
  --ms=64,128 "$ws64k2" "$ws64k2, tma = [b]" 2>&1 | say
echo "(ptxas)" | say
OUT="$logs/flight" HUMMING_COMPILER=ptxas HUMMING_RUN_TIMEOUT=60 \
  bash "$here/large-m-sweep.sh" --ms=1024,8192 "$ws128" \
  "$ws128, wgmma_in_flight = 1" 2>&1 | say
tar -C "$logs" -cJf "$out/session11-tma-logs.tar.xz" .
