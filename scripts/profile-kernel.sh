#!/usr/bin/env bash
# Runs on the GPU machine: Nsight Compute on one prepared kernel of an
# ad-hoc W4A16 g128 layer. Usage: profile-kernel.sh <N>x<K> <M> <kernel
# regex, e.g. gemm0_m4>. Full report to $OUT/ncu-<N>x<K>-m<M>.txt, the
# headline metrics printed.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bundle-env.sh"
shape="$1" m="$2" kernel="$3"
report="$out/ncu-$shape-m$m.txt"
if ! command -v ncu > /dev/null; then
  echo "no ncu"
  exit 0
fi
timeout 200 ncu --launch-skip 6 --launch-count 1 -k "regex:$kernel" \
  --section SpeedOfLight --section WarpStateStats --section Occupancy \
  --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
  --section LaunchStats --section InstructionStats \
  "$bin/humming-gpu-test" --layer="$shape" --m="$m" --filter=_prep > "$report" 2>&1
echo "ncu rc=$? ($shape M=$m $kernel)"
grep -E "Duration|Memory Throughput|DRAM Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Issued Ipc|No Eligible|Warp Cycles Per Issued|Registers Per|Stall|Executed Ipc|Pipe" "$report" | head -30
