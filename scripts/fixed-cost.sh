#!/usr/bin/env bash
# Runs on the GPU machine: where does a small-M prepared GEMM's time go?
#  1. K sweep at N = 4096 and 8192, M = 1 (intercept = the per-launch fixed
#     cost, slope = the streaming rate);
#  2. the SASS of the 4096 x 4096 kernels (instruction mix of the loop);
#  3. Nsight Compute on one steady-state launch (stall reasons), if present.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bundle-env.sh"
layers=()
for k in 1024 2048 4096 8192 16384; do layers+=(--layer=4096x$k --layer=8192x$k); done
"$bin/humming-gpu-test" "${layers[@]}" --m=1,16 --filter=_prep > "$out/ksweep.log" 2>&1
awk '{for(f=1;f<=NF;f++){if($f=="steady")s=$(f+1);if($f=="graph")g=$(f+1)} print $1,$2,"steady",s,"graph",g,$NF}' "$out/ksweep.log" | grep -E "PASS|FAIL"
dir="$work/sass"; mkdir -p "$dir"
"$bin/humming-gpu-test" --layer=4096x4096 --m=1 --filter=_prep --compile-only=sm_90a --ptx-dir="$dir" > /dev/null 2>&1
ptxas -arch=sm_90a -v "$dir/w4a16_g128_4096x4096_prep_m0.ptx" -o "$dir/k.cubin" > "$out/ptxas.txt" 2>&1
cuobjdump --dump-sass "$dir/k.cubin" > "$out/sass.txt" 2>&1
echo "sass lines: $(wc -l < "$out/sass.txt")"
if command -v ncu > /dev/null; then
  timeout 240 ncu --launch-skip 6 --launch-count 1 -k regex:gemm0_m0 \
    --section SpeedOfLight --section LaunchStats --section Occupancy \
    --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis \
    "$bin/humming-gpu-test" --layer=4096x4096 --m=1 --filter=_prep > "$out/ncu.txt" 2>&1
  echo "ncu rc=$?"
  grep -E "Duration|Elapsed Cycles|Memory Throughput|DRAM Throughput|Compute \(SM\)|Achieved Occupancy|Stall|Issued Ipc|No Eligible|Warp Cycles Per Issued|Registers|Block Limit|Waves" "$out/ncu.txt" | head -40
else
  echo "no ncu"
fi
