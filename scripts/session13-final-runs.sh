#!/usr/bin/env bash
# Runs on the GPU machine (one device call, ~7 minutes; bench/NOTES.md,
# session 13): the wide-N rule (the shared-activation tile without a split
# for M = 1..16 where N / 128 > SMs / 2) chosen by the heuristics: timed
# and checked at 28672x8192 and 14336x4096, the model-sweep bench of those
# two shapes (W4A16 g128, M = 1, 16), then the prepared suite.
source "$(dirname "${BASH_SOURCE[0]}")/device-script-env.sh"
for s in 28672x8192 14336x4096; do
  OUT="$logs/w$s" HUMMING_RUN_TIMEOUT=40 bash "$here/large-m-sweep.sh" --shape=$s --ms=1,8,16 auto 2>&1 | say
done
OUT="$logs/model" timeout 200 bash "$here/run-bench.sh" --configs w4a16_g128 \
  --shapes 14336x4096,28672x8192 --ms 1,16 2>&1 | grep -E "^\| w4a16" | head -n 4 | say
cp "$logs/model/bench.json" "$out/bench-model.json" 2>/dev/null
OUT="$logs/suite" timeout 200 bash "$here/run-gpu-suite.sh" --filter=_prep 2>&1 | tail -n 2 | say
tar -C "$logs" -cJf "$out/session13-final-logs.tar.xz" .
