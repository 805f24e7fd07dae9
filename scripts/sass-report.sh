#!/usr/bin/env bash
# Runs on the GPU machine: writes the PTX of the suite cases matching a
# filter (humming-gpu-test --compile-only), assembles it with ptxas -v and
# dumps the SASS with cuobjdump, then prints per kernel the registers and
# the instruction mix of its hottest loop (the longest backward branch
# body), to read before guessing at performance.
#   usage: scripts/sass-report.sh <filter> [chip] [humming-gpu-test arguments]
#   (e.g. 'moe_indexed_w4a8 sm_90a --moe --quick' for the MoE cases' kernels)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bundle-env.sh"
filter="${1:?usage: sass-report.sh <filter> [chip] [humming-gpu-test arguments]}"
chip="${2:-sm_90a}"
shift $(( $# >= 2 ? 2 : $# ))
dir="$out/sass"
mkdir -p "$dir"
"$bin/humming-gpu-test" --compile-only="$chip" --ptx-dir="$dir" --filter="$filter" "$@" > "$dir/compile.log" 2>&1 || { cat "$dir/compile.log"; exit 1; }
for ptx in "$dir"/*.ptx; do
  base="${ptx%.ptx}"
  ptxas -arch="$chip" -v "$ptx" -o "$base.cubin" > "$base.ptxas.txt" 2>&1
  cuobjdump --dump-sass "$base.cubin" > "$base.sass" 2>&1
  python3 - "$base.sass" <<'PY'
import re, sys, collections
text = open(sys.argv[1]).read()
for fn in re.split(r'\n\s*Function : ', text)[1:]:
    name = fn.split('\n', 1)[0].strip()
    ins = re.findall(r'/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)[^;]*;', fn)
    addr = [int(a, 16) for a, _, _ in ins]
    ops = [o for _, _, o in ins]
    # Loops: backward branches BRA to a lower address.
    best = None
    labels = {l: int(a, 16) for l, a in re.findall(r'\.L_x_(\d+):\s*\n\s*/\*([0-9a-f]{4,})\*/', fn)}
    # Targets are labels (.L_x_N) or, in CUDA 13's cuobjdump, addresses.
    for m in re.finditer(r'/\*([0-9a-f]{4,})\*/[^\n]*BRA[^\n]*?(?:\.L_x_(\d+)|\b(0x[0-9a-f]+))', fn):
        src = int(m.group(1), 16)
        dst = labels.get(m.group(2)) if m.group(2) else int(m.group(3), 16)
        if dst is not None and dst < src:
            if not best or src - dst > best[1] - best[0]:
                best = (dst, src)
    print(f"== {name}: {len(ops)} instructions")
    if best:
        body = [o for a, o in zip(addr, ops) if best[0] <= a <= best[1]]
        mix = collections.Counter(o.split('.')[0] for o in body)
        print(f"   hottest loop: {len(body)} instructions: " +
              ", ".join(f"{k} {v}" for k, v in mix.most_common(14)))
PY
  grep -E "registers|spill" "$base.ptxas.txt" | sed 's/^/   /' | head -8
done
