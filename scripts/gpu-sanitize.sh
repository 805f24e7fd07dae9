#!/usr/bin/env bash
# compute-sanitizer over the GPU suite, on the GPU machine (one device call;
# carry .bundle made by scripts/make-bundle.sh --tools=humming-gpu-test --lib):
#
#   scripts/gpu-sanitize.sh memcheck [<filter>]
#       memcheck over the whole suite (or the cases whose name contains
#       <filter>), checking only (--no-timing)
#   scripts/gpu-sanitize.sh families [<family> ...]
#       racecheck, synccheck and initcheck over one prepared case
#       (ui4_g128_f16_prep, --quick: M = 1, 7, 16, 33, 128, or the family's
#       own: the 8-bit ones) with each tile family of
#       scripts/tile-families.txt forced (default: all of them);
#       SANITIZE_TOOLS picks other tools (e.g. "memcheck synccheck")
#
# PTX experiments: with HUMMING_PTXAS=scripts/ptxas-edit.sh and PTXAS_EDIT
# (see there) the kernels are assembled from edited PTX; the kernel cache
# is then off, so that no edited kernel outlives the call.
#
# Steps go through scripts/device-run.sh, so $OUT gets summary.txt (one line
# per step: rc, cases passed, the tool's summary) and logs.tar.xz. A step
# passes when humming-gpu-test passes every case and the tool reports 0
# errors (rc=0; compute-sanitizer exits 99 on a finding). SANITIZE_TIMEOUT
# bounds each step (seconds; default 500 for memcheck, 60 per family step).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
usage() { sed -n 2,23p "${BASH_SOURCE[0]}"; exit 2; }
[ $# -ge 1 ] || usage
mode="$1"
shift
steps=()
case "$mode" in
  memcheck)
    [ $# -le 1 ] || usage
    filter=""
    [ $# -eq 1 ] && filter=" \"--filter=$1\""
    steps+=("sanitize@${SANITIZE_TIMEOUT:-500}|memcheck${1:+-$1}|memcheck|--no-timing$filter")
    ;;
  families)
    found=0
    while IFS='|' read -r -u 3 name chip tile family_case; do
      case "$name" in ''|\#*) continue ;; esac
      if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qxF "$name"; then continue; fi
      found=$((found + 1))
      for tool in ${SANITIZE_TOOLS:-racecheck synccheck initcheck}; do
        steps+=("sanitize@${SANITIZE_TIMEOUT:-60}|$tool-$name|$tool|--quick --no-timing --filter=${family_case:-ui4_g128_f16_prep} \"--force-tile-config=#humming.tile_config<$tile>\"")
      done
    done 3< "$here/tile-families.txt"
    if [ "$found" -eq 0 ] || { [ $# -gt 0 ] && [ "$found" -ne $# ]; }; then
      echo "gpu-sanitize: expected family names from scripts/tile-families.txt, got: $*" >&2
      exit 2
    fi
    ;;
  *) usage ;;
esac
case "${HUMMING_PTXAS:-}" in
  *ptxas-edit.sh) export HUMMING_CACHE_DIR=off HUMMING_COMPILER=ptxas ;;
esac
exec bash "$here/device-run.sh" "${steps[@]}"
