#!/usr/bin/env bash
# A ptxas for experiments on the PTX the lowering emits, without changing
# the lowering: the runtime runs it as its ptxas (HUMMING_PTXAS), it
# applies a sed script to the PTX file it is given, then runs the real
# ptxas on the edited copy with the same arguments.
#
#   HUMMING_PTXAS=$PWD/scripts/ptxas-edit.sh HUMMING_COMPILER=ptxas \
#   PTXAS_EDIT='s/setmaxnreg.inc.sync.aligned.u32 \t88;/.../' \
#   humming-gpu-test ...
#
# PTXAS_EDIT   the sed script (required; an empty one is refused, so a typo
#              in the variable's name cannot pass for an experiment)
# PTXAS_REAL   the ptxas to run (default $CUDA_HOME/bin/ptxas, else
#              /usr/local/cuda/bin/ptxas)
# PTXAS_EDIT_LOG  if set, a file to which each compilation appends the
#              lines the edit changed (diff) and ptxas -v's report
# Also HUMMING_CACHE_DIR=off, or the cache hands back unedited kernels.
set -uo pipefail
real="${PTXAS_REAL:-${CUDA_HOME:-/usr/local/cuda}/bin/ptxas}"
[ -x "$real" ] || { echo "ptxas-edit: no ptxas at '$real' (set PTXAS_REAL)" >&2; exit 2; }
for a in "$@"; do
  case "$a" in
    --version|-V) exec "$real" "$@" ;;
  esac
done
[ -n "${PTXAS_EDIT:-}" ] || { echo "ptxas-edit: PTXAS_EDIT (a sed script) is not set" >&2; exit 2; }
if [ -n "${PTXAS_EDIT_LOG:-}" ] && ! : >> "$PTXAS_EDIT_LOG"; then
  echo "ptxas-edit: cannot write PTXAS_EDIT_LOG '$PTXAS_EDIT_LOG'" >&2
  exit 2
fi
args=()
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
edited=0
for a in "$@"; do
  if [[ "$a" == *.ptx && -f "$a" ]]; then
    copy="$tmp/$(basename "$a")"
    sed -e "$PTXAS_EDIT" "$a" > "$copy" || exit 2
    if [ -n "${PTXAS_EDIT_LOG:-}" ]; then
      { echo "== $a"; diff "$a" "$copy"; } >> "$PTXAS_EDIT_LOG"
    fi
    cmp -s "$a" "$copy" || edited=$((edited + 1))
    args+=("$copy")
  else
    args+=("$a")
  fi
done
if [ -n "${PTXAS_EDIT_LOG:-}" ]; then
  echo "ptxas-edit: $edited file(s) changed" >> "$PTXAS_EDIT_LOG"
  "$real" -v "${args[@]}" 2>&1 | tee -a "$PTXAS_EDIT_LOG"
  exit "${PIPESTATUS[0]}"
fi
exec "$real" "${args[@]}"
