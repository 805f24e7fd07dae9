#!/usr/bin/env bash
# Writes the PTX of every kernel family the lowering emits into one folder,
# so that two builds can be compared file by file (a refactor of the
# lowering should leave it byte-identical; a change says where it differs):
#
#   scripts/ptx-snapshot.sh <out-dir> [<build-dir>]
#   diff -r <before> <after>
#
# <out-dir>/suite-<chip>/: the GPU suite (--quick) compile-only for sm_80 and
# sm_90a with the heuristics' tiles; <out-dir>/<family>/: its prepared cases
# with each tile family forced (per-warp, shared activations, block copies,
# split-K through the workspace and a cluster, scale after MMA, L2 prefetch,
# wgmma, warp-specialized with TMA / bulk copies, cluster and workspace
# splits). A family that a layer cannot take is reported by humming-gpu-test
# and leaves no file; the counts go to <out-dir>/counts.txt. Needs no GPU.
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

t64="block = [64, 256, 64], warp = [64, 32, 64], mma = wgmma"
ws128="block = [128, 256, 64], warp = [128, 32, 64], stages = 4, mma = wgmma, warp_specialized = true, mbarrier = true"
families=(
  "warp|sm_80|block = [16, 64, 64], warp = [16, 64, 32], stages = 3"
  "scaleafter|sm_90a|block = [16, 64, 64], warp = [16, 64, 32], stages = 3, scale_after_mma = true"
  "l2prefetch|sm_90a|block = [16, 64, 64], warp = [16, 64, 32], stages = 3, l2_prefetch = 2"
  "share16|sm_90a|m = [1, 16], block = [16, 128, 64], warp = [16, 64, 32], stages = 3, split_k = 2, share_activations = true"
  "share32|sm_90a|block = [32, 128, 64], warp = [32, 64, 32], stages = 3, share_activations = true"
  "blockcopies|sm_90a|block = [16, 128, 64], warp = [16, 64, 32], stages = 3, block_copies = true, scale_after_mma = true"
  "coop|sm_80|block = [128, 256, 32], warp = [64, 64, 32], stages = 4, ctas_per_sm = 2"
  "splitk|sm_90a|m = [1, 16], block = [16, 64, 64], warp = [16, 64, 32], stages = 3, split_k = 2"
  "clustersplit|sm_90a|block = [16, 128, 128], warp = [16, 64, 32], split_k = 2, block_copies = true, cluster_split = true"
  "wgmma|sm_90a|$t64"
  "wgmmacluster|sm_90a|$t64, stages = 4, split_k = 4"
  "ws64|sm_90a|$t64, warp_specialized = true, mbarrier = true, ctas_per_sm = 2"
  "wsworkspace|sm_90a|m = [1, 64], $t64, warp_specialized = true, mbarrier = true, split_k = 4, workspace_split = true"
  "wstmab|sm_90a|$ws128, tma = [b]"
  "wstmaab|sm_90a|$ws128, tma = [a, b]"
  "wsinflight|sm_90a|$ws128, wgmma_in_flight = 1"
)
for f in "${families[@]}"; do
  IFS='|' read -r name chip tile <<<"$f"
  case "$tile" in m\ =*) ;; *) tile="m = [1, inf], $tile" ;; esac
  run "$name" "$chip" --filter=_prep --force-tile-config="#humming.tile_config<$tile>"
done
cat "$out/counts.txt"
