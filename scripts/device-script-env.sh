# Sourced by the device-call scripts (scripts/*-runs.sh): $here (the
# scripts folder), $out ($OUT, else ../gpu-results; created), $logs (a
# fresh temporary folder for per-step logs), say, which appends its input
# to $out/summary.txt as each step ends, so a timed-out call still returns
# what finished, and the tile strings below.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${OUT:-$here/../gpu-results}"
mkdir -p "$out"
logs="$(mktemp -d)"
say() { tee -a "$out/summary.txt"; }
# The sm_90a wgmma tiles the scripts time (insides of #humming.tile_config):
# 64 tokens, the same with a producer warpgroup, and the warp-specialized
# 128-token tile; scripts append split_k, tma and the like.
t64="m = [1, inf], block = [64, 256, 64], warp = [64, 32, 64], mma = wgmma"
ws64="$t64, warp_specialized = true, mbarrier = true"
ws128="m = [1, inf], block = [128, 256, 64], warp = [128, 32, 64], mma = wgmma, warp_specialized = true, mbarrier = true"
