#!/usr/bin/env bash
# Runs on the GPU machine (one device call, ~7 minutes; bench/NOTES.md,
# session 12): bulk fills (tma = [a, b] with the scales by a bulk copy and
# one arrival per fill, no cp.async group waits) — first run on a GPU.
# 1. The whole suite with the heuristics (which now pick tma = [a, b] for
#    the 128-token tile from M = 513).
# 2. tma = [b] against [a, b] at 8192^2 M = 1024-8192 (session 12 call 1,
#    the [a, b] of session 11 — its fills announced two fills late: 2187
#    us at M = 8192).
# 3. The wave model's residency refit (clusters of 4 and 8 hold 120 CTAs,
#    not 66): the picks it would change, forced, against the heuristics.
# 4. The 64-token cluster tile with bulk fills across the suite.
source "$(dirname "${BASH_SOURCE[0]}")/device-script-env.sh"
OUT="$logs/suite" timeout 200 bash "$here/run-gpu-suite.sh" --filter=_prep 2>&1 | tail -n 6 | say
OUT="$logs/t128" HUMMING_RUN_TIMEOUT=40 bash "$here/large-m-sweep.sh" \
  --ms=1024,4096,8192 "$ws128, tma = [b]" "$ws128, tma = [a, b]" auto 2>&1 | say
OUT="$logs/w1" HUMMING_RUN_TIMEOUT=30 bash "$here/large-m-sweep.sh" --ms=48,64,384 \
  auto "$ws64, split_k = 8" "$ws128, split_k = 8" 2>&1 | say
OUT="$logs/w2" HUMMING_RUN_TIMEOUT=30 bash "$here/large-m-sweep.sh" --shape=4096x14336 \
  --ms=96,128 auto "$ws64, split_k = 8" 2>&1 | say
OUT="$logs/w3" HUMMING_RUN_TIMEOUT=40 bash "$here/large-m-sweep.sh" --shape=28672x8192 \
  --ms=256 auto "$ws128, split_k = 8" 2>&1 | say
OUT="$logs/check64" HUMMING_RUN_TIMEOUT=100 bash "$here/large-m-sweep.sh" \
  "--check=$ws64, split_k = 2, tma = [a, b]" 2>&1 | grep -v "^---" | say
tar -C "$logs" -cJf "$out/session12-bulk-logs.tar.xz" .
