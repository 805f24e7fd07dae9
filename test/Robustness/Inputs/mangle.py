#!/usr/bin/env python3
"""Feeds humming-opt truncated and mutated versions of the lit inputs.

Every input must give either success or a diagnostic: exit status 0 or 1,
no signal, no "LLVM ERROR", no stack dump. Deterministic (fixed seed) so a
failure reproduces; the failing input is written next to the message.
"""
import glob
import os
import random
import subprocess
import sys
import tempfile

def main():
    opt, src_root, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    rng = random.Random(1234)
    files = sorted(glob.glob(os.path.join(src_root, "Dialect", "Humming", "*.mlir")))
    chunks = []
    for f in files:
        text = open(f).read()
        chunks += [c for c in text.split("// -----") if "humming" in c]
    tokens = ["<", ">", "[", "]", ",", "=", "inf", "-1", "0", "99999999999999999999",
              "group<", "block<0, 0>", "#humming.target<", "!humming.float<e9m9>",
              "memref<?x?xi4>", "f8E8M0FNU", "\"", "{", "}", "%", "@", "tensor"]
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "in.mlir")
        for i in range(count):
            text = rng.choice(chunks)
            kind = i % 3
            if kind == 0:      # truncate
                text = text[: rng.randrange(1, len(text))]
            elif kind == 1:    # splice a token in
                pos = rng.randrange(len(text))
                text = text[:pos] + rng.choice(tokens) + text[pos:]
            else:              # delete a span
                a = rng.randrange(len(text))
                text = text[:a] + text[a + rng.randrange(1, 40):]
            with open(path, "w") as fh:
                fh.write(text)
            p = subprocess.run([opt, path, "-o", os.devnull],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, timeout=60)
            bad = p.returncode not in (0, 1) or "LLVM ERROR" in p.stderr or \
                "Stack dump" in p.stderr
            if bad:
                failures += 1
                keep = os.path.join(os.getcwd(), f"mangle-failure-{i}.mlir")
                with open(keep, "w") as fh:
                    fh.write(text)
                print(f"case {i}: exit {p.returncode}; input kept at {keep}\n"
                      f"{p.stderr[-2000:]}")
    print(f"mangled inputs: {count}, crashes: {failures}")
    return 1 if failures else 0

if __name__ == "__main__":
    sys.exit(main())
