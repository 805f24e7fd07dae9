#!/usr/bin/env bash
# Runs on the GPU machine: unpacks the device bundle, runs the GPU
# correctness suite (the JIT compiles every kernel there) and writes the
# report under $OUT (or ./gpu-results). Arguments go to humming-gpu-test.
# Usage: scripts/run-gpu-suite.sh [humming-gpu-test options]
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bundle-env.sh"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$out/gpu.txt" 2>&1
echo "bundle commit: $(cat "$work/humming/COMMIT")" | tee -a "$out/gpu.txt"
"$bin/humming-gpu-test" --json="$out/gpu-test.json" "$@" 2>&1 | tee "$out/gpu-test.log"
status=${PIPESTATUS[0]}
echo "--- summary"
grep -E "FAIL|ERROR" "$out/gpu-test.log" | head -20
tail -n 1 "$out/gpu-test.log"
exit "$status"
