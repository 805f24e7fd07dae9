#!/usr/bin/env bash
# Runs on the GPU machine (one device call, ~5 minutes; bench/NOTES.md,
# session 15): M = 16 met the issue-5 milestone by a hair in the standard
# sweep (0.509): the W4A16 g128 bench at M = 1, 16 twice more, the model
# shapes the new tile serves (M = 1, 16), and the Python tests.
source "$(dirname "${BASH_SOURCE[0]}")/device-script-env.sh"
for i in 1 2; do
  OUT="$logs/r$i" timeout 90 bash "$here/run-bench.sh" --configs w4a16_g128 --ms 1,16 2>&1 | grep -E "^\| w4a16_g128 \| 8192x8192 \| [0-9]" | say
  cp "$logs/r$i/bench.json" "$out/bench-repeat-$i.json" 2>/dev/null
done
OUT="$logs/model" timeout 200 bash "$here/run-bench.sh" --configs w4a16_g128 \
  --shapes 4096x14336,14336x4096,28672x8192 --ms 1,16 2>&1 | grep -E "^\| w4a16_g128 \| [0-9]+x[0-9]+ \| [0-9]" | say
cp "$logs/model/bench.json" "$out/bench-model.json" 2>/dev/null
OUT="$logs/python" timeout 100 bash "$here/run-python-tests.sh" 2>&1 | tail -n 3 | say
