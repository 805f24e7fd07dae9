#!/usr/bin/env bash
# The verifier <=> lowering contract over the whole support matrix
# (tools/humming-contract): every combination either is refused by the
# verifier or gets through --stage (default ptxas: the named pipeline's PTX
# assembled for the chip), in JOBS parallel shards (default: the cores).
# Writes each shard's verdicts to $OUT (default ./contract-results) and
# prints the violations and the totals; exits 1 on a violation.
#   scripts/contract-matrix.sh [humming-contract arguments, e.g. --stage=lower --chips=sm_90a]
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tool="${HUMMING_CONTRACT:-${HUMMING_BUILD_DIR:-$root/build}/bin/humming-contract}"
out="${OUT:-$root/contract-results}"
jobs="${JOBS:-$(nproc)}"
mkdir -p "$out"
[ -x "$tool" ] || { echo "contract-matrix: no $tool (build humming-contract first)" >&2; exit 2; }
stage=(--stage=ptxas)
for a in "$@"; do case "$a" in --stage=*) stage=() ;; esac; done
pids=()
for ((i = 0; i < jobs; ++i)); do
  "$tool" "${stage[@]}" "$@" --list --shard="$i/$jobs" > "$out/shard-$i.txt" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
cat "$out"/shard-*.txt | grep ': VIOLATION: ' | sort > "$out/violations.txt"
awk '/^humming-contract: /{c+=$2; r+=$4; p+=$9; v+=$(NF-1)}
     END{printf "contract-matrix: %d combinations: %d refused by the verifier, %d passed, %d violations\n", c, r, p, v}' \
  "$out"/shard-*.txt | tee "$out/totals.txt"
head -50 "$out/violations.txt"
[ ! -s "$out/violations.txt" ]
