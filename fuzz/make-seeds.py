#!/usr/bin/env python3
"""Writes the seed inputs of the fuzz targets (fuzz/*.cpp) from the tests.

  fuzz/make-seeds.py <out-dir>

<out-dir>/<target>/ gets, for the target humming-fuzz-<target>:
  json, quant-config  config.json / hf_quant_config.json of every checkpoint
                      kind of test/humming-inspect/Inputs/make_checkpoint.py
  safetensors         their model.safetensors files
  checkpoint          each checkpoint as one input (config, "\\n---\\n",
                      hf_quant_config or nothing, "\\n---\\n", safetensors)
  ir                  every .mlir of test/ and examples/, split at "// -----"
Pure Python; deterministic (make_checkpoint.py seeds its random bytes).
"""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KINDS = ["gptq", "gptq-act-order", "awq", "ct-pack", "nvfp4", "fp8-block"]


def write(d, name, data):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: fuzz/make-seeds.py <out-dir>")
    out = sys.argv[1]
    make = os.path.join(ROOT, "test", "humming-inspect", "Inputs", "make_checkpoint.py")
    with tempfile.TemporaryDirectory() as tmp:
        for kind in KINDS:
            d = os.path.join(tmp, kind)
            subprocess.run([sys.executable, make, d, kind], check=True)
            config = read(os.path.join(d, "config.json"))
            hf_path = os.path.join(d, "hf_quant_config.json")
            hf = read(hf_path) if os.path.exists(hf_path) else b""
            st = read(os.path.join(d, "model.safetensors"))
            write(os.path.join(out, "json"), kind + "-config", config)
            write(os.path.join(out, "quant-config"), kind + "-config", config)
            if hf:
                write(os.path.join(out, "json"), kind + "-hf", hf)
                write(os.path.join(out, "quant-config"), kind + "-hf", hf)
            write(os.path.join(out, "safetensors"), kind, st)
            write(os.path.join(out, "checkpoint"), kind,
                  config + b"\n---\n" + hf + b"\n---\n" + st)
    n = 0
    for top in ("test", "examples"):
        for dirpath, _, files in sorted(os.walk(os.path.join(ROOT, top))):
            for f in sorted(files):
                if not f.endswith(".mlir"):
                    continue
                text = read(os.path.join(dirpath, f))
                for i, part in enumerate(text.split(b"// -----")):
                    if part.strip():
                        write(os.path.join(out, "ir"), "%s-%d.mlir" % (f[:-5], i), part)
                        n += 1
    print("fuzz seeds in %s (%d IR modules)" % (out, n))


if __name__ == "__main__":
    main()
