#!/usr/bin/env bash
# Runs the libFuzzer targets (fuzz/) for a set time and reports, per target,
# the executions and any finding:
#
#   scripts/fuzz.sh [--time=<s>] [--runs=<n>] [--fork=<jobs>] [--build=<dir>]
#                   [--coverage-build] [<target> ...]
#
# <target>: json, safetensors, quant-config, checkpoint, ir (default: all).
# --time      seconds per target (default 60); --runs stops a target after
#             that many executions instead (libFuzzer's -runs)
# --fork      libFuzzer's -fork=<jobs> (parallel workers per target)
# --build     the build directory holding bin/humming-fuzz-* (default: build)
# --coverage-build
#             configure and build <repo>/build-fuzz with HUMMING_FUZZ_COVERAGE
#             (every library with coverage and ASan/UBSan; ~15 min on 2
#             cores) and run from there: humming-fuzz-ir then sees our passes
# Seeds come from fuzz/make-seeds.py (the tests' checkpoints and IR); each
# target's corpus grows in <build>/fuzz-work/corpus/<target> across runs;
# a finding is written to <build>/fuzz-work/findings/<target>/ and makes the
# exit status 1 (until it is removed). Turn each into a file under
# fuzz/regressions/<target>/ (replayed by test/Fuzz) with its fix. An input
# that runs past 30 s (120 s for ir, which compiles whole modules) is a
# finding too.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
time=60 runs="" fork="" build="$root/build" coverage=0 targets=()
for a in "$@"; do
  case "$a" in
    --time=*) time="${a#*=}" ;;
    --runs=*) runs="${a#*=}" ;;
    --fork=*) fork="${a#*=}" ;;
    --build=*) build="${a#*=}" ;;
    --coverage-build) coverage=1 ;;
    json|safetensors|quant-config|checkpoint|ir) targets+=("$a") ;;
    *) sed -n 2,23p "${BASH_SOURCE[0]}"; exit 2 ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=(json safetensors quant-config checkpoint ir)
if [ "$coverage" = 1 ]; then
  build="$root/build-fuzz"
  HUMMING_BUILD_DIR="$build" HUMMING_STATIC_LLVM=OFF \
    HUMMING_CMAKE_ARGS="-DHUMMING_ENABLE_UNITTESTS=OFF -DHUMMING_FUZZ_COVERAGE=ON" \
    "$root/scripts/humming" configure || exit 1
fi
names=()
for t in "${targets[@]}"; do names+=("humming-fuzz-$t"); done
ninja -C "$build" "${names[@]}" >/dev/null || { echo "fuzz: build failed (ninja -C $build ${names[*]})" >&2; exit 1; }

work="$build/fuzz-work"
rm -rf "$work/seeds"
python3 "$root/fuzz/make-seeds.py" "$work/seeds" >/dev/null || exit 1
# The MLIR libraries are not instrumented: container annotations would
# mismatch across the boundary.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_container_overflow=0}"
status=0
for t in "${targets[@]}"; do
  corpus="$work/corpus/$t" findings="$work/findings/$t" log="$work/$t.log"
  mkdir -p "$corpus" "$findings"
  limits=(-max_total_time="$time")
  [ -n "$runs" ] && limits=(-runs="$runs")
  [ -n "$fork" ] && limits+=(-fork="$fork" -ignore_crashes=0)
  seeds=("$work/seeds/$t")
  [ -d "$root/fuzz/regressions/$t" ] && seeds+=("$root/fuzz/regressions/$t")
  start=$(date +%s)
  "$build/bin/humming-fuzz-$t" "${limits[@]}" -max_len=65536 -rss_limit_mb=4096 \
    -timeout="$([ "$t" = ir ] && echo 120 || echo 30)" -print_final_stats=1 -artifact_prefix="$findings/" \
    "$corpus" "${seeds[@]}" >"$log" 2>&1
  rc=$?
  execs=$(grep -E 'stat::number_of_executed_units' "$log" | awk '{s += $2} END {print s + 0}')
  # With --fork the workers' final stats stay in their own logs: the
  # parent's last "#<n>:" progress line holds the total.
  if [ "$execs" = 0 ]; then
    execs=$(grep -oE '^#[0-9]+' "$log" | tail -n 1 | tr -d '#')
    execs=${execs:-0}
  fi
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -n 1)
  # libFuzzer also leaves slow-unit-* files (over 10 s): reported, not
  # findings.
  found=$(find "$findings" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
  slow=$(find "$findings" -type f -name 'slow-unit-*' | wc -l)
  printf 'humming-fuzz-%-13s %9s executions in %4ss, %s, corpus %s, findings %s, slow inputs %s%s\n' \
    "$t" "$execs" "$(( $(date +%s) - start ))" "${cov:-cov: ?}" \
    "$(find "$corpus" -type f | wc -l)" "$found" "$slow" "$([ "$rc" -ne 0 ] && echo " (exit $rc; log $log)")"
  [ "$rc" -ne 0 ] || [ "$found" -ne 0 ] && status=1
done
exit "$status"
