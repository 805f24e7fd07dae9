#!/usr/bin/env bash
# Runs on the GPU machine (one device call, ~8 minutes; bench/NOTES.md,
# session 13): 1. wide N at M = 16, where the heuristics refuse the
# shared-activation tile (2 x 128-column tiles > SMs) and the per-warp
# 2-warp tile took 83.8 us at 28672x8192 against 57.2 for the shared tile
# split 2 (three CTAs per SM): the shared tile without a split, split 2,
# against auto (28672x8192, 14336x4096). 2. The standard sweep with
# programmatic dependent launch (three configs) and the model-sweep shapes
# for W4A16 g128 at M = 1, 16.
source "$(dirname "${BASH_SOURCE[0]}")/device-script-env.sh"
sh="m = [1, 16], block = [16, 128, 128], warp = [16, 64, 32], block_copies = true"
for s in 28672x8192 14336x4096; do
  OUT="$logs/w$s" HUMMING_RUN_TIMEOUT=40 bash "$here/large-m-sweep.sh" --shape=$s --ms=1,16 \
    auto "$sh" "$sh, split_k = 2" 2>&1 | say
done
OUT="$logs/bench" timeout 300 bash "$here/run-bench.sh" 2>&1 | grep -E "^\|" | head -n 24 | say
cp "$logs/bench/bench.json" "$out/bench.json" 2>/dev/null
OUT="$logs/model" timeout 150 bash "$here/run-bench.sh" --configs w4a16_g128 \
  --shapes 4096x14336,14336x4096,28672x8192,8192x28672 --ms 1,16 2>&1 | grep -E "^\| w4a16" | head -n 8 | say
cp "$logs/model/bench.json" "$out/bench-model.json" 2>/dev/null
tar -C "$logs" -cJf "$out/session13-wide-logs.tar.xz" .
