#!/usr/bin/env bash
# Runs on the GPU machine (one device call, ~3 minutes; bench/NOTES.md,
# session 13): with programmatic dependent launch, the M = 13-16
# shared-activation tile at three CTAs per SM (80 registers: ptxas
# .minnctapersm 3, no spills) so that the next kernel's CTAs fit beside a
# running kernel's two, against the heuristics (two per SM, 90 registers).
source "$(dirname "${BASH_SOURCE[0]}")/device-script-env.sh"
sh="m = [1, 16], block = [16, 128, 128], warp = [16, 64, 32], block_copies = true"
OUT="$logs/a" HUMMING_RUN_TIMEOUT=40 bash "$here/large-m-sweep.sh" --ms=13,16 \
  auto "$sh, split_k = 4" "$sh, split_k = 4, ctas_per_sm = 3" "$sh, split_k = 6, ctas_per_sm = 3" 2>&1 | say
OUT="$logs/b" HUMMING_RUN_TIMEOUT=40 bash "$here/large-m-sweep.sh" --shape=4096x14336 --ms=16 \
  auto "$sh, split_k = 8, ctas_per_sm = 3" "$sh, split_k = 12, ctas_per_sm = 3" 2>&1 | say
OUT="$logs/c" HUMMING_RUN_TIMEOUT=40 bash "$here/large-m-sweep.sh" --shape=28672x8192 --ms=16 \
  auto "$sh, split_k = 2, ctas_per_sm = 3" 2>&1 | say
tar -C "$logs" -cJf "$out/session13-ctas-logs.tar.xz" .
