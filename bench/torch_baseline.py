#!/usr/bin/env python3
"""torch.matmul fp16 baseline on the PROTOCOL shapes (runs on the GPU machine).

CUDA-graph replay over 4 weight copies (so weights do not sit in L2), median
of the per-call time over >= 15 replays, as bench/PROTOCOL.md says. Writes
JSON to argv[1] and prints a table.
"""
import json
import sys

import torch


def bench(m, n, k, copies=4, replays=20):
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    ws = [torch.randn(n, k, device="cuda", dtype=torch.float16) for _ in range(copies)]
    outs = [torch.empty(m, n, device="cuda", dtype=torch.float16) for _ in range(copies)]
    for w, o in zip(ws, outs):  # warm up (and cuBLAS handle creation)
        torch.matmul(a, w.t(), out=o)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for w, o in zip(ws, outs):
            torch.matmul(a, w.t(), out=o)
    times = []
    for _ in range(replays):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        g.replay()
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e) * 1000.0 / copies)
    times.sort()
    return times[len(times) // 2]


def main():
    shapes = [(8192, 8192), (4096, 14336), (14336, 4096), (4096, 4096)]
    ms = [1, 7, 16, 33, 64, 128, 1000, 1024, 4096, 8192]
    rows = []
    for n, k in shapes:
        for m in ms:
            rows.append({"m": m, "n": n, "k": k, "torch_fp16_us": bench(m, n, k)})
    json.dump({"device": torch.cuda.get_device_name(), "results": rows},
              open(sys.argv[1], "w"), indent=2)
    for r in rows:
        print("torch fp16 %5dx%-5d M=%-5d %9.1f us" % (r["n"], r["k"], r["m"], r["torch_fp16_us"]))


if __name__ == "__main__":
    main()
