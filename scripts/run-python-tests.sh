#!/usr/bin/env bash
# Runs on the GPU machine: the Python package's tests (python/tests) against
# the bundle's libhumming.so, with the machine's PyTorch and GPU; the log
# goes under $OUT (or ./gpu-results).
# Usage: scripts/run-python-tests.sh [<test module or name> ...]
#   (none: every test in python/tests)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bundle-env.sh"
export HUMMING_LIBRARY="$work/humming/lib/libhumming.so"
export PYTHONPATH="$root/python${PYTHONPATH:+:$PYTHONPATH}"
if [ $# -eq 0 ]; then
  python3 -m unittest discover -s "$root/python/tests" -v 2>&1 | tee "$out/python-tests.log"
else
  (cd "$root/python/tests" && python3 -m unittest -v "$@") 2>&1 | tee "$out/python-tests.log"
fi
exit "${PIPESTATUS[0]}"
