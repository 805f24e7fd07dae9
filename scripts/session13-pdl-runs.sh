#!/usr/bin/env bash
# Runs on the GPU machine (one device call, ~8 minutes; bench/NOTES.md,
# session 13): programmatic dependent launch (griddepcontrol in every
# sm_90 prepared kernel, cuLaunchKernelEx with programmatic stream
# serialization) — first run on a GPU.
# 1. The chain test (each forward reads the previous one's output, back to
#    back on a stream and in a graph) and the prepared suite with it on.
# 2. The protocol's W4A16 g128 sweep with it on, off, and on again (drift).
# 3. The Python tests.
source "$(dirname "${BASH_SOURCE[0]}")/device-script-env.sh"
source "$here/bundle-env.sh" # bin: the bundle's tools
timeout 120 "$bin/humming-gpu-test" --filter=pdl_chain 2>&1 |
  grep -E "pdl_chain|passed|failed" | say
OUT="$logs/suite" timeout 200 bash "$here/run-gpu-suite.sh" --filter=_prep 2>&1 | tail -n 4 | say
for pdl in 1 0 1; do
  echo "(HUMMING_PDL=$pdl)" | say
  OUT="$logs/bench$pdl" HUMMING_PDL=$pdl timeout 150 bash "$here/run-bench.sh" \
    --configs w4a16_g128 2>&1 | grep -E "^\| w4a16" | say
  cp "$logs/bench$pdl/bench.json" "$out/bench-pdl$pdl.json" 2>/dev/null
done
OUT="$logs/python" timeout 100 bash "$here/run-python-tests.sh" 2>&1 | tail -n 3 | say
tar -C "$logs" -cJf "$out/session13-pdl-logs.tar.xz" .
