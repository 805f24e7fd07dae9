#!/usr/bin/env python3
"""Run every registered humming pass and pipeline alone over MLIR inputs.

A pass may refuse a module with a diagnostic (exit status 1); it must never
crash, abort, hang or print an LLVM stack dump. The passes are read from
`humming-opt --help`, so a newly registered `--humming-*` pass that has no
entry in VARIANTS below fails this script until it gets one.

    scripts/passes-alone.py --opt build/bin/humming-opt [--sample N] PATH...

PATH is a .mlir file or a directory searched for them. Each file is split at
`// -----` (humming-opt's -split-input-file), so every chunk of a lit test is
one module. Built-in modules without humming ops (an empty module, a plain
func, a gpu.module) are always included. --sample N takes every N-th file
(stable order) to bound the time in CI; the full run is the default.
"""

import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile

# How each pass runs alone: its option sets. Passes that need an option to do
# anything get their common values; the empty string runs it with defaults.
VARIANTS = {
    "humming-attach-target": ["", "device=H200", "device=A100",
                              "device=T4 chip=sm_75"],
    "humming-legalize-schema": ["", "chip=sm_90a", "chip=sm_80", "chip=sm_75"],
    "humming-raise-quantized-matmul": [""],
    "humming-select-tiles": ["", "chip=sm_90a", "chip=sm_80", "device=H200"],
    "humming-lower-to-nvvm": ["", "chip=sm_90a", "chip=sm_89"],
    # Nested on gpu.module: run through an explicit pipeline below.
    "humming-kernel-params": [""],
    "humming-compile-pipeline": ["chip=sm_90a", "chip=sm_80 opt-level=0",
                                 "chip=sm_75 opt-level=0"],
}
NESTED_ON_GPU_MODULE = {"humming-kernel-params"}

PLAIN_MODULES = {
    "empty-module.mlir": "module {}\n",
    "plain-func.mlir": "func.func @f(%a: memref<4xf16>) {\n  return\n}\n",
    "plain-gpu-module.mlir": (
        "module attributes {gpu.container_module} {\n"
        "  gpu.module @k {\n"
        "    gpu.func @f(%a: memref<4xf16>) kernel {\n"
        "      gpu.return\n"
        "    }\n"
        "  }\n"
        "}\n"),
}

CRASH_MARKS = ("Stack dump", "LLVM ERROR", "PLEASE submit a bug report",
               "Assertion", "AddressSanitizer", "UndefinedBehaviorSanitizer")


def registered_passes(opt):
    out = subprocess.run([opt, "--help"], capture_output=True, text=True,
                         check=True).stdout
    return sorted(set(re.findall(r"^\s+--(humming-[a-z0-9-]+)\b", out, re.M)))


def collect_inputs(paths, sample):
    files = []
    for p in paths:
        if os.path.isdir(p):
            for root, _, names in os.walk(p):
                files += [os.path.join(root, n) for n in names
                          if n.endswith(".mlir")]
        elif p.endswith(".mlir"):
            files.append(p)
    files = sorted(set(files))
    if sample > 1:
        files = files[::sample]
    return files


def command(opt, path, name, options):
    cmd = [opt, path, "--split-input-file", "-o", os.devnull,
           "--mlir-disable-threading"]
    if name in NESTED_ON_GPU_MODULE:
        arg = name + ("{" + options + "}" if options else "")
        cmd.append(f"--pass-pipeline=builtin.module(gpu.module({arg}))")
    else:
        cmd.append(f"--{name}" + (f"={options}" if options else ""))
    return cmd


def run_one(cmd, timeout):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"timed out after {timeout} s"
    crashed = r.returncode not in (0, 1) or any(m in r.stderr for m in CRASH_MARKS)
    if crashed:
        tail = "\n    ".join(r.stderr.strip().splitlines()[-8:])
        return f"exit status {r.returncode}:\n    {tail}"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--opt", required=True, help="path of humming-opt")
    ap.add_argument("--sample", type=int, default=1,
                    help="take every N-th input file (default: all)")
    ap.add_argument("--timeout", type=int, default=300,
                    help="seconds one humming-opt run may take")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("paths", nargs="*")
    args = ap.parse_args()

    passes = registered_passes(args.opt)
    unknown = [p for p in passes if p not in VARIANTS]
    if unknown:
        print("error: registered passes with no entry in scripts/passes-alone.py "
              f"VARIANTS: {', '.join(unknown)}; expected every --humming-* pass "
              "of humming-opt --help to have one", file=sys.stderr)
        return 1
    stale = [p for p in VARIANTS if p not in passes]
    if stale:
        print(f"error: VARIANTS names passes humming-opt does not register: "
              f"{', '.join(stale)}", file=sys.stderr)
        return 1

    with tempfile.TemporaryDirectory() as tmp:
        inputs = []
        for name, text in PLAIN_MODULES.items():
            path = os.path.join(tmp, name)
            with open(path, "w") as f:
                f.write(text)
            inputs.append(path)
        inputs += collect_inputs(args.paths, args.sample)
        jobs = [(path, name, options, command(args.opt, path, name, options))
                for path in inputs for name in passes for options in VARIANTS[name]]
        failures = []
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            futures = {pool.submit(run_one, cmd, args.timeout): (path, name, options)
                       for path, name, options, cmd in jobs}
            for fut in concurrent.futures.as_completed(futures):
                why = fut.result()
                if why:
                    failures.append((*futures[fut], why))
    for path, name, options, why in sorted(failures):
        shown = f"--{name}" + (f"='{options}'" if options else "")
        print(f"CRASH: {shown} on {path}: {why}")
    print(f"passes-alone: {len(passes)} passes, {len(inputs)} inputs, "
          f"{len(jobs)} runs, {len(failures)} crashes")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
