#!/usr/bin/env bash
# Runs on the GPU machine (one device call, ~7 minutes): checks the cluster
# split heuristics (session 10). Needs the main bundle (new heuristics) and
# .bundle/ab-old.tar.xz (humming-gpu-test before them). 1. the prepared
# suite; 2. the heuristics' choice, old against new, W4A16 g128 at four
# shapes and M = 17..512; 3. the standard W4A16 g128 table against torch.
# Logs under $OUT (one packed file); the summary last.
source "$(dirname "${BASH_SOURCE[0]}")/device-script-env.sh"
{
  OUT="$logs/suite" bash "$here/run-gpu-suite.sh" --filter=_prep | tail -n 8
  ms=17,24,32,33,48,64,96,128,192,256,384,512
  for shape in 8192x8192 4096x14336 28672x8192 14336x4096; do
    for b in ab-old humming-bundle; do
      echo "== $b"
      HUMMING_BUNDLE=$b OUT="$logs/t-$shape-$b" HUMMING_RUN_TIMEOUT=90 \
        bash "$here/large-m-sweep.sh" --shape=$shape --ms=$ms auto
    done
  done
  OUT="$logs/bench" timeout 240 bash "$here/run-bench.sh" --configs w4a16_g128 2>&1 | tail -n 12
} 2>&1 | tee "$logs/summary.txt"
mkdir -p "$out"
cp "$logs/summary.txt" "$out/cluster-verify-summary.txt"
tar -C "$logs" -cJf "$out/cluster-verify-logs.tar.xz" .
