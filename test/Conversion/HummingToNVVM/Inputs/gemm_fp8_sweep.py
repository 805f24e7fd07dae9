"""Compiles humming.gemm with 8-bit activations over a deterministic sample
of weight types, scale types and granularities, zero points, activation
types and scalings, shapes, prepared or canonical weights and chips through
humming-translate (the whole pipeline: legalize-schema, select-tiles for
the chip's representative device, the lowering, PTX): each must compile or
be refused with a diagnostic (exit status 0 or 1), never crash. The
operands have the shapes the schema asks for, so most samples reach the
kernels.

  gemm_fp8_sweep.py <humming-translate> <work-dir> <samples>
"""
import itertools
import os
import random
import subprocess
import sys

WEIGHTS = [("ui4", 4), ("ui5", 5), ("ui8", 8), ("si4", 4), ("ui2", 2),
           ("ui3", 3), ("f8E4M3FN", 8), ("f8E5M2", 8), ("f4E2M1FN", 4),
           ("f6E2M3FN", 6), ("f6E3M2FN", 6), ("si8", 8), ("ui7", 7)]
SCALES = ["f16", "bf16", "f8E4M3FN", "f8E8M0FNU", "f32"]
GRANULARITIES = ["channel", "group<32>", "group<64>", "group<128>", "tensor"]
ZEROS = ["none", "none", "none", "int", "float"]
ACTS = [("f8E4M3FN", "token"), ("f8E4M3FN", "static"), ("f8E5M2", "token"),
        ("f8E4M3FN", "token"), ("f8E4M3FN", "group<128>"), ("si8", "token"),
        ("si8", "static")]
# The memref element type of each activation type.
ELEMENTS = {"si8": "i8"}
SHAPES = [(256, 512), (320, 1024), (4096, 4096), (64, 128), (256, 96)]
TARGETS = [("sm_90a", True), ("sm_90a", True), ("sm_90a", True),
           ("sm_90a", False), ("sm_89", True), ("sm_80", False)]


def main():
    tool, work, samples = sys.argv[1], sys.argv[2], int(sys.argv[3])
    os.makedirs(work, exist_ok=True)
    # Mostly schemas the verifier accepts (zero points on unsigned integers,
    # f32 scales per channel), so the samples reach the kernels; the rest
    # are near-misses.
    def plausible(c):
        (wt, _), st, gran, zp, _, _, _ = c
        return ((zp == "none" or (zp == "int" and wt.startswith("ui"))) and
                (st != "f32" or gran == "channel") and gran != "tensor")
    combos = list(itertools.product(WEIGHTS, SCALES, GRANULARITIES, ZEROS,
                                    ACTS, SHAPES, TARGETS))
    random.Random(1).shuffle(combos)
    good = [c for c in combos if plausible(c)]
    bad = [c for c in combos if not plausible(c)]
    # Three plausible samples, then a near-miss.
    combos = []
    for i in range(len(good)):
        combos.append(good[i])
        if i % 3 == 2 and i // 3 < len(bad):
            combos.append(bad[i // 3])
    compiled = refused = 0
    path = os.path.join(work, "in.mlir")
    for ((wt, b), st, gran, zp, (act, scaling), (n, k),
         (chip, prepared)) in combos[:samples]:
        g = {"channel": 1, "tensor": 1}.get(gran) or k // int(gran[6:-1])
        if prepared:
            weight = "%dx%d" % (k // 32, n * b)  # kPack 32 for 8-bit
        else:
            weight = "%dx%d" % (n, k * b // 32)
        scales = "%dx%d" % (g, n) if prepared else "%dx%d" % (n, g)
        if gran == "tensor":
            scales = "1"
        zb = 4 if b <= 4 else 8
        zeros = ("%dx%d" % (g, n * zb // 32) if prepared
                 else "%dx%d" % (n * b // 32, g))
        zelem = "i32"
        if zp == "float":
            zeros, zelem = ("%dx%d" % (g, n) if prepared
                            else "%dx%d" % (n, g)), "f16"
        elem = ELEMENTS.get(act, act)
        ascale = {"token": "?x1", "static": "1"}.get(scaling,
                                                     "?x%d" % (k // 128))
        ops = "scales(%%s : memref<%sx%s>)" % (scales, st)
        args = "%%s: memref<%sx%s>" % (scales, st)
        if zp != "none":
            ops += " zero_points(%%z : memref<%sx%s>)" % (zeros, zelem)
            args += ", %%z: memref<%sx%s>" % (zeros, zelem)
        layout = ', layout = #humming.layout<chip = "sm_90a">' if prepared else ""
        zattr = "" if zp == "none" else ", zero_point = %s" % zp
        with open(path, "w") as f:
            f.write(
                "func.func @g(%%a: memref<?x%dx%s>, %%w: memref<%sxi32>, %s, "
                "%%as: memref<%sxf32>, %%c: memref<?x%dxf16>) {\n"
                "  humming.gemm %%a, %%w %s input_scale(%%as : memref<%sxf32>) "
                "into %%c\n"
                "      {weight_schema = #humming.weight_schema<type = %s, "
                "scale = %s, granularity = %s%s>,\n"
                "       input_schema = #humming.input_schema<type = %s, "
                "scaling = %s>%s}\n"
                "      : memref<?x%dx%s>, memref<%sxi32> -> memref<?x%dxf16>\n"
                "  return\n}\n" % (k, elem, weight, args, ascale, n, ops, ascale,
                                   wt, st, gran, zattr, act, scaling, layout,
                                   k, elem, weight, n))
        r = subprocess.run([tool, path, "--chip=" + chip, "-o", os.devnull],
                           capture_output=True, text=True)
        if r.returncode == 0:
            compiled += 1
        elif r.returncode == 1 and "error" in r.stderr:
            refused += 1
        else:
            print("CRASH (exit %d): %s %s %s zp=%s, %s %s, %dx%d, %s%s\n%s"
                  % (r.returncode, wt, st, gran, zp, act, scaling, n, k, chip,
                     " prepared" if prepared else "", r.stderr[-2000:]))
            sys.exit(1)
    print("%d compiled, %d refused, 0 crashed" % (compiled, refused))


if __name__ == "__main__":
    main()
