#!/usr/bin/env bash
# Runs on the GPU machine: Nsight Compute's full set on one kernel of an
# ad-hoc layer, then the per-SASS-instruction source page (stall samples
# per instruction) as CSV, to see where a kernel's warps wait.
#   usage: profile-source.sh <N>x<K> <M> <kernel regex> [humming-gpu-test args]
# Writes $OUT/src-<N>x<K>-m<M>.{ncu-rep,csv,txt}; prints the headline
# metrics and the 25 instructions with the most stall samples.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bundle-env.sh"
shape="$1" m="$2" kernel="$3"
shift 3
base="$out/src-$shape-m$m"
if ! command -v ncu > /dev/null; then
  echo "no ncu"
  exit 0
fi
timeout 300 ncu --set full --import-source no --launch-skip 2 --launch-count 1 \
  -k "regex:$kernel" -o "$base" -f \
  "$bin/humming-gpu-test" --layer="$shape" --m="$m" --filter=_prep "$@" \
  > "$base.log" 2>&1
echo "ncu rc=$? ($shape M=$m $kernel)"
ncu -i "$base.ncu-rep" --print-details all > "$base.txt" 2>&1
grep -E "Duration|SM Frequency|Compute \(SM\) Throughput|L2 Cache Throughput|Issued Ipc|No Eligible|Warp Cycles Per Issued|Registers Per|Stall [A-Z]" "$base.txt" | head -40
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
stall = [i for i, c in enumerate(cols) if c.startswith("stall_") or "Stall" in c]
data = []
for r in rows[head + 1:]:
    try:
        data.append((float(r[samp] or 0), r))
    except (ValueError, IndexError):
        pass
total = sum(d[0] for d in data) or 1
print(f"{len(data)} SASS instructions, {total:.0f} samples")
for s, r in sorted(data, key=lambda d: -d[0])[:25]:
    print(f"{100*s/total:5.1f}% {r[0]:>6} {r[src][:90]}")
PY
