#!/usr/bin/env bash
# Runs on the GPU machine: humming-bench (python -m humming.bench, the
# protocol of bench/PROTOCOL.md) against the bundle's libhumming.so; JSON and
# the table go under $OUT (or ./gpu-results). Arguments go to the bench.
# Usage: scripts/run-bench.sh [--configs ...] [--shapes NxK,...] [--ms M,...]
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bundle-env.sh"
export HUMMING_LIBRARY="$work/humming/lib/libhumming.so"
export HUMMING_COMMIT="$(cat "$work/humming/COMMIT")"
export PYTHONPATH="$root/python${PYTHONPATH:+:$PYTHONPATH}"
python3 -m humming.bench --out "$out/bench.json" "$@" 2>&1 | tee "$out/bench.txt"
exit "${PIPESTATUS[0]}"
