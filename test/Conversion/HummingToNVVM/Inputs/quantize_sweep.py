"""Compiles humming.quantize over a deterministic sample of source types,
code types, scalings, widths K, codes per row (K, or K plus 1 to 16: rows
padded with zero codes) and chips (with and without a PTX version)
through humming-translate: each must compile or be refused with a
diagnostic (exit status 0 or 1), never crash (LLVM aborts on an intrinsic
the target cannot select: the lowering must refuse first).

  quantize_sweep.py <humming-translate> <work-dir> <samples>
"""
import itertools
import os
import random
import subprocess
import sys

SOURCES = ["f16", "bf16", "f32", "f64", "i8"]
CODES = [("f8E4M3FN", "f8E4M3FN"), ("f8E5M2", "f8E5M2"), ("si8", "i8"),
         ("si4", "i4"), ("f4E2M1FN", "f4E2M1FN"), ("ui8", "i8"),
         ("f16", "f16")]
SCALINGS = ["token", "static", "group<32>", "group<64>", "group<128>",
            "group<256>", "group<512>"]
KS = [1, 2, 7, 8, 64, 100, 256, 1000, 4096, 8200, 16777216, 16777218]
CHIPS = [("sm_75", 0), ("sm_80", 0), ("sm_89", 0), ("sm_89", 81),
         ("sm_90a", 0), ("sm_100a", 0), ("sm_120a", 0)]
PADS = [0, 0, 1, 8, 16]


def main():
    tool, work, samples = sys.argv[1], sys.argv[2], int(sys.argv[3])
    os.makedirs(work, exist_ok=True)
    combos = list(itertools.product(SOURCES, CODES, SCALINGS, KS, CHIPS,
                                    PADS))
    random.Random(1).shuffle(combos)
    compiled = refused = 0
    path = os.path.join(work, "in.mlir")
    for src, (code, elem), scaling, k, (chip, ptx), pad in combos[:samples]:
        if scaling == "token":
            scales = "?x1"
        elif scaling == "static":
            scales = "1"
        else:
            scales = "?x%d" % max(1, k // int(scaling[6:-1]))
        with open(path, "w") as f:
            f.write(
                "func.func @q(%%x: memref<?x%dx%s>, %%q: memref<?x%dx%s>, "
                "%%s: memref<%sxf32>) {\n"
                "  humming.quantize %%x into %%q scales(%%s : memref<%sxf32>)\n"
                "      {schema = #humming.input_schema<type = %s, scaling = %s>}\n"
                "      : memref<?x%dx%s> -> memref<?x%dx%s>\n"
                "  return\n}\n" % (k, src, k + pad, elem, scales, scales,
                                   code, scaling, k, src, k + pad, elem))
        cmd = [tool, path, "--chip=" + chip, "-o", os.devnull]
        if ptx:
            cmd.append("--ptx-version=%d" % ptx)
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode == 0:
            compiled += 1
        elif r.returncode == 1 and "error:" in r.stderr:
            refused += 1
        else:
            print("CRASH (exit %d): source %s, codes %s, %s, K = %d, "
                  "codes per row %d, %s%s\n%s"
                  % (r.returncode, src, code, scaling, k, k + pad, chip,
                     " ptx %d" % ptx if ptx else "", r.stderr[-2000:]))
            sys.exit(1)
    print("%d compiled, %d refused, 0 crashed" % (compiled, refused))


if __name__ == "__main__":
    main()
