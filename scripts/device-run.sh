#!/usr/bin/env bash
# The one device call: runs on the GPU machine, a list of steps over the
# device bundles carried in .bundle/ (scripts/make-bundle.sh), each under a
# time limit, and leaves under $OUT (else ./gpu-results) summary.txt (one
# line per step as it ends, so a call that runs out of time still returns
# what finished), each bench step's JSON and logs.tar.xz (every finished
# step's log, rewritten after each step).
#
#   scripts/device-run.sh <step> [<step> ...]
#
# A step is one argument, fields separated by '|':
#   suite|<name>|<humming-gpu-test arguments>
#       the GPU correctness suite (the JIT compiles every kernel there);
#       e.g. 'suite|all|' or, for a forced tile family (arguments are
#       split as the shell would: quote one with spaces),
#       'suite|wstma|--quick --filter=_prep "--force-tile-config=#humming.tile_config<...>"';
#       the whole suite is longer than one step: run it as shards (each
#       case in exactly one; a third took over 250 s alone on 2026-12-04),
#       side by side: 'suite@400&|all0|--shard=0/4' ... '...|--shard=3/4'
#   gpu-test|<name>|<bundle>|<humming-gpu-test arguments>
#       humming-gpu-test of <bundle> (timing A/Bs of two compilers: e.g.
#       'gpu-test|m16-base|humming-base|--layer=28672x8192 --filter=_prep -m 9,16'
#       beside the same step over humming-bundle; --layer prints each
#       layer's graph-replay time; without --filter=_prep it checks the
#       canonical kernels too, ~20 s per M at model sizes)
#   bench|<name>|<bundle>|<humming.bench arguments>
#       python -m humming.bench (bench/PROTOCOL.md) against <bundle>'s
#       libhumming.so; e.g. 'bench|std-after|humming-bundle|--configs w4a16_g128'
#   python|<name>|[<test module or name> ...]
#       the Python package's tests (all, or those named: e.g.
#       'python|serving|test_serving test_ops.OpsTest')
#   soak|<name>|<scripts/gpu-soak.py arguments>
#       the GPU soak test (random-M forward calls across dense, 8-bit and
#       MoE layers with memory and a probe output checked, then the OOM and
#       unwritable-cache faults), e.g. 'soak@590|soak|--seconds 500'
#   sanitize|<name>|<tool>|<humming-gpu-test arguments>
#       compute-sanitizer --tool <tool> over humming-gpu-test
#   profile|<name>|<bundle>|<profile-source.sh arguments>
#       Nsight Compute on one kernel of <bundle> (scripts/profile-source.sh:
#       stall samples per SASS instruction), e.g.
#       'profile|mix256|humming-bundle|moe:mixtral_8x7b_gate_up_w4a16_indexed 256 moe_gemm0'
# STEP_TIMEOUT (seconds, default 300) bounds each step, <kind>@<seconds>
# (e.g. 'sanitize@500|...') one step; HUMMING_BUNDLE names
# the bundle of suite/python/sanitize steps (default humming-bundle).
# A kind ending in '&' runs its step in the background, beside the steps
# after it ('&<n>': on GPU n alone, CUDA_VISIBLE_DEVICES=n); 'wait||' waits
# for every background step, and so does the end of the list. Shards of the
# suite can share one GPU (a small case's time is mostly the JIT, on the
# host's cores). Never time a bench step beside background steps on its GPU.
# Experiments are recorded in bench/NOTES.md as the arguments they ran with.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${OUT:-$here/../gpu-results}"
mkdir -p "$out"
logs="$(mktemp -d)"
[ $# -ge 1 ] || { sed -n 2,50p "${BASH_SOURCE[0]}"; exit 2; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader \
  | tee "$out/summary.txt"
say() { echo "$*" | tee -a "$out/summary.txt"; }

run_step() {
  local kind="$1" name="$2" rest="$3" limit="$4"
  local log start status result fails bundle bargs tool sargs
  local -a args
  log="$logs/$name.log"
  start=$(date +%s)
  case "$kind" in
    suite|gpu-test)
      # A suite step's bundle is the call's; a gpu-test step names its own.
      bundle="${HUMMING_BUNDLE:-humming-bundle}" bargs="$rest"
      [ "$kind" = gpu-test ] && IFS='|' read -r bundle bargs <<<"$rest"
      eval "args=($bargs)"
      OUT="$logs/$name" HUMMING_BUNDLE="$bundle" timeout "$limit" bash "$here/run-gpu-suite.sh" "${args[@]}" >"$log" 2>&1
      status=$?
      result="$(grep -E '^humming-gpu-test: [0-9]+ passed' "$log" | tail -n 1)"
      fails="$(grep -cE ' (FAIL|ERROR)( |$)' "$log")"
      say "$(printf '%-18s %-8s %4ss  bundle %s  %s  (FAIL/ERROR lines: %s)' "$name" "rc=$status" "$(( $(date +%s) - start ))" "$bundle" "${result:-no result}" "$fails")"
      # Timed cases (--layer): their graph-replay lines.
      grep -E ' graph [0-9.]+ us' "$log" | sed -E 's/ +/ /g' | tee -a "$out/summary.txt"
      ;;
    bench)
      IFS='|' read -r bundle bargs <<<"$rest"
      eval "args=($bargs)"
      OUT="$logs/$name" HUMMING_BUNDLE="$bundle" timeout "$limit" bash "$here/run-bench.sh" "${args[@]}" >"$log" 2>&1
      status=$?
      cp "$logs/$name/bench.json" "$out/$name.json" 2>/dev/null
      say "$(printf '%-18s %-8s %4ss  bundle %s' "$name" "rc=$status" "$(( $(date +%s) - start ))" "$bundle")"
      grep -E '^\|' "$log" | tee -a "$out/summary.txt"
      ;;
    python)
      eval "args=($rest)"
      OUT="$logs/$name" timeout "$limit" bash "$here/run-python-tests.sh" "${args[@]}" >"$log" 2>&1
      status=$?
      say "$(printf '%-18s %-8s %4ss  %s' "$name" "rc=$status" "$(( $(date +%s) - start ))" "$(grep -E '^(OK|FAILED|Ran )' "$log" | tr '\n' ' ')")"
      ;;
    soak)
      # scripts/gpu-soak.py against the bundle's libhumming.so.
      eval "args=($rest)"
      [ -n "${work:-}" ] || source "$here/bundle-env.sh"
      mkdir -p "$logs/$name"
      HUMMING_LIBRARY="$work/humming/lib/libhumming.so" \
        PYTHONPATH="$root/python${PYTHONPATH:+:$PYTHONPATH}" \
        timeout "$limit" python3 "$here/gpu-soak.py" --out "$logs/$name" "${args[@]}" >"$log" 2>&1
      status=$?
      say "$(printf '%-18s %-8s %4ss  %s' "$name" "rc=$status" "$(( $(date +%s) - start ))" "$(grep -E '^(soak|fault)' "$log" | tr '\n' ' ')")"
      ;;
    sanitize)
      IFS='|' read -r tool sargs <<<"$rest"
      eval "args=($sargs)"
      [ -n "${bin:-}" ] || source "$here/bundle-env.sh"
      timeout "$limit" compute-sanitizer --tool "$tool" --error-exitcode 99 \
        "$bin/humming-gpu-test" "${args[@]}" >"$log" 2>&1
      status=$?
      say "$(printf '%-20s %-8s %4ss  %s  %s' "$name" "rc=$status" "$(( $(date +%s) - start ))" \
        "$(grep -E '^humming-gpu-test: [0-9]+ passed' "$log" | tail -n 1 | sed 's/^humming-gpu-test: //')" \
        "$(grep -E '(ERROR|RACECHECK) SUMMARY' "$log" | tail -n 1 | sed 's/^=* *//')")"
      ;;
    profile)
      IFS='|' read -r bundle bargs <<<"$rest"
      eval "args=($bargs)"
      OUT="$logs/$name" HUMMING_BUNDLE="$bundle" timeout "$limit" bash "$here/profile-source.sh" "${args[@]}" >"$log" 2>&1
      status=$?
      say "$(printf '%-18s %-8s %4ss  bundle %s' "$name" "rc=$status" "$(( $(date +%s) - start ))" "$bundle")"
      # The headline metrics and the top instructions, then the raw
      # metrics of the pipes and memories (profile-source.sh's last lines).
      { head -n 40 "$log"; grep -E '^[a-z0-9_]+__[^ ]* = ' "$log"; } \
        | tee -a "$out/summary.txt"
      ;;
    *)
      say "$name: unknown step kind '$kind'"
      ;;
  esac
  # After every step, so that a call cut short still returns the logs
  # (written aside and renamed: background steps end at any time).
  # A log still being written may change under tar: the archive is whole.
  tar -C "$logs" --warning=no-file-changed -cJf "$out/logs.$BASHPID.tar.xz" . 2>/dev/null
  [ -s "$out/logs.$BASHPID.tar.xz" ] && mv -f "$out/logs.$BASHPID.tar.xz" "$out/logs.tar.xz"
}

for step in "$@"; do
  IFS='|' read -r kind name rest <<<"$step"
  limit="${STEP_TIMEOUT:-300}"
  background=""
  case "$kind" in *'&'*) background="&${kind#*&}"; kind="${kind%%&*}" ;; esac
  case "$kind" in *@*) limit="${kind#*@}"; kind="${kind%%@*}" ;; esac
  if [ "$kind" = wait ]; then
    wait
    continue
  fi
  if [ -z "$background" ]; then
    run_step "$kind" "$name" "$rest" "$limit"
  elif [ "$background" = "&" ]; then
    run_step "$kind" "$name" "$rest" "$limit" &
  else
    CUDA_VISIBLE_DEVICES="${background#&}" run_step "$kind" "$name" "$rest" "$limit" &
  fi
done
wait
