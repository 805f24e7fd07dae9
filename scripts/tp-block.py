#!/usr/bin/env python3
"""A tensor-parallel Llama-style MLP block over torch.distributed: checked
against float64 and timed.

Each of --world ranks (one process each, torch.multiprocessing) builds its
shard of one GPTQ MLP block from the same checkpoint tensors with
humming.nn modules — gate and up act-order GPTQ, column-parallel; down
row-parallel — computes silu(gate x) * up x and its part of down, and the
ranks add their parts with one all_reduce. Rank 0 checks the block's output
against the float64 block of the unsharded weights at every M of --ms, run
eagerly, under torch.compile (fullgraph, the shard) and replayed from a CUDA
graph (with NCCL the all_reduce is captured too); with --time it also times,
per M, the block (GEMMs + all_reduce), the shard's GEMMs alone, the
all_reduce alone and the unsharded block on one GPU (CUDA graphs, median of
--replays), and writes them to --out.

  scripts/tp-block.py --world 2                       # NCCL, one GPU per rank
  scripts/tp-block.py --world 2 --backend gloo --same-gpu   # emulation on one GPU

--same-gpu puts every rank on cuda:0 (NCCL refuses two ranks on one device:
use gloo, which adds through host memory): it checks the sharding and the
reduction where only one GPU is lent, not NCCL or the timing of a real
TP block.
"""

import argparse
import json
import os
import socket
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", "python"),
                os.path.join(HERE, "..", "python", "tests")]


def relative_error(y, ref):
    return ((y.double() - ref).norm() / ref.norm()).item()


def build_shard(torch, hnn, tensors, rank, size, device):
    """Rank `rank` of `size`: the block's modules over its slices."""
    from test_serving import gptq_config
    gate, up, down = tensors

    class Shard(torch.nn.Module):
        def __init__(s):
            super().__init__()
            s.gate = hnn.HummingLayer.from_tensors(
                gate[0], gptq_config(True), tp_rank=rank, tp_size=size)
            s.up = hnn.HummingLayer.from_tensors(
                up[0], gptq_config(True), tp_rank=rank, tp_size=size)
            s.down = hnn.HummingLayer.from_tensors(
                down[0], gptq_config(False), tp_rank=rank, tp_size=size,
                parallel="row")

        def forward(s, x):
            return s.down(torch.nn.functional.silu(s.gate(x)) * s.up(x))

    shard = Shard().to(device)
    hnn.transform_all(shard, progress=False)
    return shard


def reference(torch, tensors, x):
    gate, up, down = (t[1].to(x.device) for t in tensors)
    g = x.double() @ gate.T
    u = x.double() @ up.T
    h = (torch.nn.functional.silu(g) * u).to(torch.float16).double()
    return h @ down.T


def graph_of(torch, fn, x):
    """fn captured over the static input x: (graph, static output)."""
    fn(x)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y = fn(x)
    return graph, y


def median_us(torch, run, replays):
    times = []
    for _ in range(replays):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000.0)
    return statistics.median(times)


def worker(rank, args, port):
    import torch
    import torch.distributed as dist
    import humming.nn as hnn
    from test_serving import gptq_checkpoint

    device = torch.device("cuda", 0 if args.same_gpu else rank)
    torch.cuda.set_device(device)
    dist.init_process_group(args.backend,
                            init_method=f"tcp://127.0.0.1:{port}",
                            rank=rank, world_size=args.world)
    H, I = args.hidden, args.intermediate
    # The same checkpoint on every rank (fixed seeds).
    tensors = (gptq_checkpoint(torch, I, H, act_order=True, seed=1),
               gptq_checkpoint(torch, I, H, act_order=True, seed=2),
               gptq_checkpoint(torch, H, I, seed=3))
    shard = build_shard(torch, hnn, tensors, rank, args.world, device)
    compiled = torch.compile(shard, fullgraph=True)
    captures_reduce = args.backend == "nccl"

    def block(x, gemms=shard):
        y = gemms(x)
        dist.all_reduce(y)
        return y

    def inputs(m, seed):
        gen = torch.Generator(device=device).manual_seed(seed)
        return (torch.rand(m, H, generator=gen, dtype=torch.float64,
                           device=device) * 2 - 1).to(torch.float16)

    failures, rows = [], []
    for m in args.ms:
        x = inputs(m, m)
        ref = reference(torch, tensors, x) if rank == 0 else None
        outs = {"eager": block(x), "compiled": block(x, compiled)}
        # CUDA graph: the shard's GEMMs (and with NCCL the all_reduce) over
        # a static input refilled between replays.
        static = torch.zeros_like(x)
        graph, y = graph_of(torch, block if captures_reduce else shard,
                            static)
        static.copy_(x)
        graph.replay()
        if not captures_reduce:
            dist.all_reduce(y)
        outs["graph"] = y
        torch.cuda.synchronize()
        if rank == 0:
            for how, out in outs.items():
                err = relative_error(out, ref)
                print(f"tp-block: M = {m} {how}: rel {err:.2e}", flush=True)
                if not err < 1e-2:
                    failures.append(f"M = {m} {how}: rel {err:.3e}")
        if args.time:
            gemms, ys = graph_of(torch, shard, static)
            t_gemms = median_us(torch, gemms.replay, args.replays)
            t_reduce = median_us(torch, lambda: dist.all_reduce(ys),
                                 args.replays)
            if captures_reduce:
                t_block = median_us(torch, graph.replay, args.replays)
            else:
                t_block = median_us(torch, lambda: (graph.replay(),
                                                    dist.all_reduce(y)),
                                    args.replays)
            rows.append({"m": m, "block_us": t_block, "gemms_us": t_gemms,
                         "all_reduce_us": t_reduce})
    if args.time and rank == 0:
        # The unsharded block on one GPU, same protocol.
        whole = build_shard(torch, hnn, tensors, 0, 1, device)
        for row in rows:
            static = torch.zeros(row["m"], H, dtype=torch.float16,
                                 device=device)
            g, _ = graph_of(torch, whole, static)
            row["unsharded_us"] = median_us(torch, g.replay, args.replays)
        result = {"world": args.world, "backend": args.backend,
                  "same_gpu": args.same_gpu, "hidden": H,
                  "intermediate": I, "device": torch.cuda.get_device_name(),
                  "rows": rows}
        with open(args.out, "w") as f:
            json.dump(result, f, indent=2)
        print("| M | TP block us | its GEMMs us | all_reduce us | "
              "unsharded block us |")
        print("|---|---|---|---|---|")
        for r in rows:
            print(f"| {r['m']} | {r['block_us']:.1f} | {r['gemms_us']:.1f} | "
                  f"{r['all_reduce_us']:.1f} | {r['unsharded_us']:.1f} |")
    dist.barrier()
    dist.destroy_process_group()
    if failures:
        raise SystemExit("tp-block: " + "; ".join(failures))
    if rank == 0:
        print(f"tp-block: ok ({args.world} ranks, {args.backend})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--world", type=int, default=2)
    parser.add_argument("--backend", choices=["nccl", "gloo"],
                        default="nccl")
    parser.add_argument("--same-gpu", action="store_true")
    parser.add_argument("--hidden", type=int, default=4096)
    parser.add_argument("--intermediate", type=int, default=14336)
    parser.add_argument("--ms", default="1,16,128,2048")
    parser.add_argument("--time", action="store_true")
    parser.add_argument("--replays", type=int, default=20)
    parser.add_argument("--out", default="tp-block.json")
    args = parser.parse_args()
    args.ms = [int(m) for m in args.ms.split(",")]
    import torch
    import torch.multiprocessing as mp
    if args.world < 1:
        raise SystemExit(f"tp-block: expected --world >= 1, got {args.world}")
    if args.same_gpu and args.backend == "nccl" and args.world > 1:
        raise SystemExit("tp-block: NCCL refuses two ranks on one GPU; "
                         "use --backend gloo with --same-gpu")
    gpus = torch.cuda.device_count()
    if not args.same_gpu and gpus < args.world:
        raise SystemExit(f"tp-block: expected {args.world} CUDA devices "
                         f"(one per rank), found {gpus}; --same-gpu with "
                         "--backend gloo emulates the ranks on one")
    if args.hidden % (128 * args.world) or args.intermediate % (128 * args.world):
        raise SystemExit("tp-block: expected hidden and intermediate sizes "
                         "that divide into --world shards of whole groups "
                         f"of 128, got {args.hidden} and {args.intermediate}")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.spawn(worker, args=(args, port), nprocs=args.world, join=True)


if __name__ == "__main__":
    main()
