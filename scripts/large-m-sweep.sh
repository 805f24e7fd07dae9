#!/usr/bin/env bash
# Runs on the GPU machine: forced tile configurations for the prepared
# kernels. Usage:
#   large-m-sweep.sh [--check=<tile>]... [--ms=<M,...>] [--shape=<N>x<K>] <tile>...
# where <tile> is the inside of a #humming.tile_config<...> ("m = [1, inf],
# block = [128, 256, 32], warp = [64, 64, 32], stages = 4"). Every --check
# tile runs all prepared suite cases (correctness across schemas and odd
# shapes; cases whose N the forced block_n does not divide fail to compile
# and are counted apart); every other tile times the W4A16 g128 layer
# (default 8192x8192) at the M of --ms (default 128,1024,8192); "auto"
# times the heuristics' own choice. Each run is stopped after
# $HUMMING_RUN_TIMEOUT seconds (default 300: a hung kernel must not take
# the call's device time). Logs under
# $OUT.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bundle-env.sh"
checks=() timed=() ms=128,1024,8192 shape=8192x8192
for a in "$@"; do
  case "$a" in
    --check=*) checks+=("${a#--check=}") ;;
    --ms=*) ms="${a#--ms=}" ;;
    --shape=*) shape="${a#--shape=}" ;;
    *) timed+=("$a") ;;
  esac
done
i=0
for config in "${checks[@]}"; do
  timeout "${HUMMING_RUN_TIMEOUT:-300}" "$bin/humming-gpu-test" --filter=_prep --force-tile-config="#humming.tile_config<$config>" \
    > "$out/check-$i.log" 2>&1
  echo "check $i ($config): $(tail -n 1 "$out/check-$i.log")"
  echo "  not compiled: $(grep -c "op tile_configs" "$out/check-$i.log")"
  grep ' FAIL' "$out/check-$i.log" | grep -v "op tile_configs" | head -5
  i=$((i + 1))
done
echo "--- $shape W4A16 g128, graph replay (us)"
i=0
for config in "${timed[@]}"; do
  force=(--force-tile-config="#humming.tile_config<$config>")
  [ "$config" = auto ] && force=()  # the heuristics' own choice
  timeout "${HUMMING_RUN_TIMEOUT:-300}" "$bin/humming-gpu-test" --layer="$shape" --m="$ms" --filter=_prep \
    "${force[@]}" > "$out/time-$i.log" 2>&1
  echo "$config: $(grep -E 'graph' "$out/time-$i.log" |
    awk '{for (f = 1; f <= NF; f++) if ($f == "graph") g = $(f + 1);
          printf "M=%s %s %s; ", substr($2, 3), g, $NF}')"
  grep -m1 "op tile_configs" "$out/time-$i.log"
  i=$((i + 1))
done
