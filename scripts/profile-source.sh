#!/usr/bin/env bash
# Runs on the GPU machine: Nsight Compute's full set on one kernel of an
# ad-hoc layer, then the per-SASS-instruction source page (stall samples
# per instruction) as CSV, to see where a kernel's warps wait.
#   usage: profile-source.sh <N>x<K> <M> <kernel regex> [humming-gpu-test args]
#          profile-source.sh moe:<filter> <M> <kernel regex> [...]
#          profile-source.sh cublaslt:<N>x<K> <M> <kernel regex>
# (moe:<filter>: the --moe-bench layer and variant the filter selects, e.g.
# moe:mixtral_8x7b_gate_up_w4a16_indexed, at M tokens; cublaslt:<N>x<K>:
# the reference, torch._scaled_mm on e4m3 codes with per-token and
# per-channel f32 scales as bench/PROTOCOL.md times it, e.g.
# 'cublaslt:8192x8192 8192 gemm|xmma|cutlass' — its kernel's name says its
# tile and cluster, the profile its registers, pipes and stalls).
# Writes $OUT/src-<N>x<K>-m<M>.{ncu-rep,csv,txt}; prints the headline
# metrics and the 25 instructions with the most stall samples.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bundle-env.sh"
shape="$1" m="$2" kernel="$3"
shift 3
base="$out/src-${shape#moe:}-m$m"
case "$shape" in
  moe:*) select=(--moe-bench "--filter=${shape#moe:}") ;;
  cublaslt:*) ;;
  *) select=(--layer="$shape" --filter=_prep) ;;
esac
if ! command -v ncu > /dev/null; then
  echo "no ncu"
  exit 0
fi
if [[ "$shape" == cublaslt:* ]]; then
  nk="${shape#cublaslt:}"
  timeout 300 ncu --set full --import-source no --launch-skip 2 --launch-count 1 \
    -k "regex:$kernel" -o "$base" -f \
    python3 -c '
import sys, torch
m, n, k = int(sys.argv[1]), *map(int, sys.argv[2].split("x"))
a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
b = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn).t()
sa = torch.rand(m, 1, device="cuda") + 0.5
sb = torch.rand(1, n, device="cuda") + 0.5
for _ in range(4):
    torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=torch.float16)
torch.cuda.synchronize()' "$m" "$nk" > "$base.log" 2>&1
else
  timeout 300 ncu --set full --import-source no --launch-skip 2 --launch-count 1 \
    -k "regex:$kernel" -o "$base" -f \
    "$bin/humming-gpu-test" "${select[@]}" --m="$m" "$@" \
    > "$base.log" 2>&1
fi
echo "ncu rc=$? ($shape M=$m $kernel)"
ncu -i "$base.ncu-rep" --print-details all > "$base.txt" 2>&1
# The kernel's name, grid and block (cuBLASLt's name says its tile,
# cluster and schedule).
grep -m1 -E "^  [^ ].*\([0-9, ]+\)x\([0-9, ]+\)" "$base.txt" | cut -c1-400
# The headline metrics, each once (--print-details all repeats some in
# every section, with its own spacing).
grep -E "^ +(Duration|SM Frequency|Compute \(SM\) Throughput|DRAM Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|Memory Throughput|Mem Busy|Max Bandwidth|Mem Pipes Busy|Shared [A-Za-z ]+|L2 Hit Rate|Issued Ipc|No Eligible|Warp Cycles Per Issued|Registers Per|Grid Size|Waves Per SM|Achieved Occupancy|dram__bytes_(read|write)\.sum|Stall [A-Z])" "$base.txt" \
  | sed -E 's/ +/ /g; s/^ //' | awk '!seen[$0]++' | head -40
ncu -i "$base.ncu-rep" --page source --print-source sass --csv > "$base.csv" 2>&1
python3 - "$base.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
head = next(i for i, r in enumerate(rows) if "Source" in r)
cols = rows[head]
src = cols.index("Source")
samp = next((i for i, c in enumerate(cols) if c.startswith("Warp Stall Sampling (All")), None)
if samp is None:
    print("columns:", cols[:40]); sys.exit()
execd = next((i for i, c in enumerate(cols) if c == "Instructions Executed"), None)
reasons = [i for i, c in enumerate(cols) if c.startswith("stall_") and "Not Issued" not in c]
def num(r, i):
    try:
        return float(r[i] or 0)
    except (ValueError, IndexError):
        return 0.0
data = [r for r in rows[head + 1:] if len(r) > samp]
total = sum(num(r, samp) for r in data) or 1
print(f"{len(data)} SASS instructions, {total:.0f} samples; by reason:")
by = sorted(((sum(num(r, i) for r in data), cols[i][6:]) for i in reasons), reverse=True)
print("  " + ", ".join(f"{k} {100 * v / total:.1f}%" for v, k in by[:8]))
print("top instructions (share, executions, the two main reasons):")
for r in sorted(data, key=lambda r: -num(r, samp))[:25]:
    top = sorted(((num(r, i), cols[i][6:]) for i in reasons), reverse=True)[:2]
    why = " ".join(f"{k}:{100 * v / total:.1f}" for v, k in top if v > 0)
    ex = r[execd] if execd is not None else ""
    print(f"{100 * num(r, samp) / total:5.1f}% {ex:>9} {r[0][-5:]} {r[src][:70]:70} {why}")
PY
# The pipes and memories a GEMM can be bound by, as raw metrics (tensor
# pipe busy, shared-memory and L1 traffic, TMA): whichever is near its
# peak is the limit.
ncu -i "$base.ncu-rep" --page raw --csv > "$base-raw.csv" 2>&1
python3 - "$base-raw.csv" <<'PY'
import csv, re, sys
rows = list(csv.reader(open(sys.argv[1])))
if len(rows) < 3:
    sys.exit()
names, values = rows[0], rows[2]
want = re.compile(r"(pipe_tensor.*pct_of_peak|pipe_shared.*pct|mem_shared.*(pct|sum\.per_second)|"
                  r"l1tex__throughput.*pct|l1tex__data_bank.*pct|lsu_mem_shared|"
                  r"tma.*pct|sm__throughput.*pct|lts__throughput.*pct|"
                  r"l1tex__data_pipe.*pct)")
# What reaches the SM from L2 (the crossbar's bytes into L1 / shared
# memory) and what the TMA unit does: a copy path below its peak while the
# consumers wait on fills says the requests, not the bandwidth, limit.
feed = re.compile(r"(xbar2l1tex.*(sum|per_second|pct)|l1tex__m_l1tex2xbar.*sum|"
                  r"lts__t_sectors_srcunit_tex(_op_read)?\.sum(\.per_second)?$|"
                  r"lts__t_bytes\.sum\.per_second|tma|utma|"
                  r"lts__average_t_sector.*|lts__t_sector_hit_rate\.pct)")
for n, v in zip(names, values):
    if (want.search(n) or feed.search(n)) and v not in ("", "n/a"):
        print(f"{n} = {v}")
PY
