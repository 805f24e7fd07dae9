#!/usr/bin/env bash
# Runs on the GPU machine (one device call, ~8 minutes; bench/NOTES.md,
# session 15): the heuristics with the 256 x 256 share_activations tile for
# M = 9-16 (1-16 with wide N). 1. The standard sweep (W4A16 g128 and
# channel, W8A16, 8192^2, every standard M). 2. The prepared suite. 3. The
# model-sweep bench at M = 1, 16 for the shapes the tile now serves.
source "$(dirname "${BASH_SOURCE[0]}")/device-script-env.sh"
OUT="$logs/std" timeout 330 bash "$here/run-bench.sh" \
  --configs w4a16_g128,w4a16_channel,w8a16_channel 2>&1 | grep -E "^\|" | head -n 24 | say
cp "$logs/std/bench.json" "$out/bench-standard.json" 2>/dev/null
cp "$logs/std/bench.txt" "$out/bench-standard.txt" 2>/dev/null
OUT="$logs/suite" timeout 150 bash "$here/run-gpu-suite.sh" --filter=_prep 2>&1 | tail -n 2 | say
OUT="$logs/model" timeout 100 bash "$here/run-bench.sh" --configs w4a16_g128 \
  --shapes 4096x14336,14336x4096,28672x8192 --ms 1,16 2>&1 | grep -E "^\| w4a16" | say
cp "$logs/model/bench.json" "$out/bench-model.json" 2>/dev/null
tar -C "$logs" -cJf "$out/session15-final-logs.tar.xz" .
