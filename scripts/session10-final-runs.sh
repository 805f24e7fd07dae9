#!/usr/bin/env bash
# Runs on the GPU machine (one device call, ~5 minutes): the session's final
# checks with the cluster split heuristics — the standard sweep (W4A16 g128
# and channel, W8A16), the Python tests — and the warp-specialized tile with
# eight stages against four at M = 1024..8192 (the 3/5/6-stage slowdown of
# session 9: is it stages != 4, or non-powers of two?). Logs under $OUT.
source "$(dirname "${BASH_SOURCE[0]}")/device-script-env.sh"
{
  OUT="$logs/bench" timeout 300 bash "$here/run-bench.sh" 2>&1 | grep -E "^\|" | head -n 24
  OUT="$logs/python" timeout 150 bash "$here/run-python-tests.sh" 2>&1 | tail -n 3
  OUT="$logs/stages" HUMMING_RUN_TIMEOUT=90 bash "$here/large-m-sweep.sh" \
    --ms=1024,4096,8192 "$ws128" "$ws128, stages = 8"
} 2>&1 | tee "$logs/summary.txt"
mkdir -p "$out"
cp "$logs/summary.txt" "$out/final-summary.txt"
cp "$logs/bench/bench.json" "$out/bench.json" 2>/dev/null
tar -C "$logs" -cJf "$out/final-logs.tar.xz" .
