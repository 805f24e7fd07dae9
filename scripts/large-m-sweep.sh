#!/usr/bin/env bash
# Runs on the GPU machine: the cooperative (several warp rows along M)
# prepared kernels. First every prepared suite case under two forced
# cooperative tiles (correctness across schemas and odd shapes; cases whose
# N the forced block_n does not divide fail to compile and are listed
# apart), then 8192 x 8192 W4A16 g128 timed at large M under each tile
# given as an argument (block and warp shapes, "[bm, bn, bk], warp = [...],
# stages = s"). Logs under $OUT.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bundle-env.sh"
tile() { echo "#humming.tile_config<m = [1, inf], block = $1>"; }
i=0
for config in "[128, 256, 32], warp = [64, 64, 32], stages = 4" \
              "[64, 128, 64], warp = [16, 64, 64], stages = 3"; do
  "$bin/humming-gpu-test" --filter=_prep --force-tile-config="$(tile "$config")" \
    > "$out/coop-check-$i.log" 2>&1
  echo "check $i ($config): $(tail -n 1 "$out/coop-check-$i.log")"
  echo "  wrong results: $(grep -c ' FAIL' "$out/coop-check-$i.log" | tr -d '\n')," \
       "not compiled: $(grep -c "op tile_configs" "$out/coop-check-$i.log")"
  grep ' FAIL' "$out/coop-check-$i.log" | head -5
  i=$((i + 1))
done
echo "--- 8192x8192 W4A16 g128, graph replay (us)"
i=0
for config in "$@"; do
  "$bin/humming-gpu-test" --layer=8192x8192 --m=128,1024,8192 --filter=_prep \
    --force-tile-config="$(tile "$config")" > "$out/coop-time-$i.log" 2>&1
  echo "$config: $(grep -E 'graph' "$out/coop-time-$i.log" |
    awk '{for (f = 1; f <= NF; f++) if ($f == "graph") g = $(f + 1);
          printf "M=%s %s %s; ", substr($2, 3), g, $NF}')"
  i=$((i + 1))
done
