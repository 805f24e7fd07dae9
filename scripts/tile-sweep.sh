#!/usr/bin/env bash
# Runs on the GPU machine: times prepared layers under forced tile
# configurations (one humming-gpu-test run per configuration) and prints
# "config case M steady_us graph_us". Usage: tile-sweep.sh <filter> <config>...
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bundle-env.sh"
filter="$1"
shift
i=0
for config in "$@"; do
  timeout "${HUMMING_RUN_TIMEOUT:-300}" "$bin/humming-gpu-test" --filter="$filter" --force-tile-config="$config" \
    > "$out/sweep-$i.log" 2>&1
  grep -E "steady" "$out/sweep-$i.log" |
    awk -v c="$i" '{g = "-"; for (f = 1; f <= NF; f++) { if ($f == "steady") s = $(f + 1); if ($f == "graph") g = $(f + 1) } print c, $1, $2, s, g, $NF}'
  i=$((i + 1))
done
