# Sourced by the device-call scripts (scripts/session*-runs.sh): $here (the
# scripts folder), $out ($OUT, else ../gpu-results; created), $logs (a
# fresh temporary folder for per-step logs) and say, which appends its
# input to $out/summary.txt as each step ends, so a timed-out call still
# returns what finished.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${OUT:-$here/../gpu-results}"
mkdir -p "$out"
logs="$(mktemp -d)"
say() { tee -a "$out/summary.txt"; }
