#!/usr/bin/env bash
# Writes the PTX of every kernel family the lowering emits into one folder,
# so that two builds can be compared file by file (a refactor of the
# lowering should leave it byte-identical; a change says where it differs):
#
#   scripts/ptx-snapshot.sh <out-dir> [<build-dir>]
#   diff -r <before> <after>
#
# <out-dir>/suite-<chip>/: the GPU suite (--quick) compile-only for sm_80,
# sm_90a, sm_100a and sm_120a (the Blackwell targets' mma.sync kernels, fp8
# through the block-scaled form on sm_120a) with the heuristics' tiles;
# <out-dir>/<family>/: its prepared cases with each tile family of
# scripts/tile-families.txt forced (per-warp, shared activations, block
# copies, split-K through the workspace and a cluster, scale after MMA, L2
# prefetch, wgmma, warp-specialized with TMA / bulk copies, cluster and
# workspace splits, staged weights, 192 tokens). A family that a layer cannot
# take is reported by humming-gpu-test and leaves no file; the counts go to
# <out-dir>/counts.txt. Needs no GPU.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: scripts/ptx-snapshot.sh <out-dir> [<build-dir>]" >&2; exit 2; }
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$1"
build="${2:-${HUMMING_BUILD_DIR:-$root/build}}"
test="$build/bin/humming-gpu-test"
[ -x "$test" ] || { echo "ptx-snapshot: no $test (ninja -C $build humming-gpu-test)" >&2; exit 1; }
mkdir -p "$out"
: > "$out/counts.txt"

run() { # <dir> <chip> [humming-gpu-test arguments]
  local dir="$out/$1" chip="$2"
  shift 2
  mkdir -p "$dir"
  local last
  last=$(HUMMING_CACHE_DIR="$(mktemp -d)" "$test" --quick --compile-only="$chip" \
         --ptx-dir="$dir" "$@" 2>&1 | tail -n 1 || true)
  printf '%-14s %s\n' "$(basename "$dir")" "$last" >> "$out/counts.txt"
}

run suite-sm_80 sm_80
run suite-sm_90a sm_90a
run suite-sm_100a sm_100a
run suite-sm_120a sm_120a

while IFS='|' read -r -u 3 name chip tile _case; do
  case "$name" in ''|\#*) continue ;; esac
  run "$name" "$chip" --filter=_prep --force-tile-config="#humming.tile_config<$tile>"
done 3< "$root/scripts/tile-families.txt"
cat "$out/counts.txt"
