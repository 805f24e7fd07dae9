"""humming-bench: the benchmark protocol (bench/PROTOCOL.md) on this GPU.

    python -m humming.bench --out results.json [--quick]

For each configuration and M: CUDA-graph replay of one call on each of
>= 4 layer copies (different weights, so they do not sit in L2), >= 15
replays timed with CUDA events, median per call; torch.matmul fp16 on the
same shapes with the same method in the same run. Reports time, ratio to
torch, effective TB/s (weights + scales + activations + outputs) and
TFLOP/s, and the compile cost: cold JIT per layer (empty kernel cache; in
parallel, and in a fresh process with one compile thread, whose slowest
kernel is the per-kernel cost on one core), a transform in a fresh process
that finds the kernels in the on-disk cache, and one that finds them in the
process's memory. Prints a markdown table; writes JSON with the device,
the git commit (if known) and every number, and next to it an SVG plot of
the ratio to torch fp16 against M per configuration and shape (no plotting
package needed). `--plot-from results.json` redraws the plot of an
earlier run without a GPU.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

CONFIGS = {
    "w4a16_g128": {"dtype": "uint4", "group_size": 128, "scale_dtype": "float16"},
    "w4a16_channel": {"dtype": "uint4", "scale_dtype": "float16"},
    "w8a16_channel": {"dtype": "uint8", "scale_dtype": "float16"},
    # bf16 activations (and scales; torch's matmul in bf16 beside them):
    # named, not in the default sweep.
    "w4a16_g128_bf16": {"dtype": "uint4", "group_size": 128,
                        "scale_dtype": "bfloat16"},
    "w8a16_channel_bf16": {"dtype": "uint8", "scale_dtype": "bfloat16"},
    # 8-bit activations (sm_90a; INPUTS below): fp8 weights per channel as
    # FP8 checkpoints store them, uint4 per group of 128 and per channel,
    # e2m1 per group of 128.
    "w8a8_fp8": {"dtype": "e4m3", "scale_dtype": "float16"},
    # DeepSeek-V3's fine-grained FP8: f32 scales per 128 x 128 block of the
    # weights, activations per token and group of 128 of K (INPUTS).
    "w8a8_fp8_block": {"dtype": "e4m3", "granularity": "block",
                       "group_size": 128, "block_n": 128,
                       "scale_dtype": "float32"},
    "w4a8_g128": {"dtype": "uint4", "group_size": 128, "scale_dtype": "float16"},
    "w4a8_channel": {"dtype": "uint4", "scale_dtype": "float16"},
    "w4a8_e2m1_g128": {"dtype": "e2m1", "group_size": 128,
                       "scale_dtype": "float16"},
    # int8 activations (s8 wgmma): int8 weights per channel (SmoothQuant /
    # W8A8-INT8 checkpoints), uint4 per group of 128.
    "w8a8_int8": {"dtype": "int8", "scale_dtype": "float16"},
    "w4a8_int8_g128": {"dtype": "uint4", "group_size": 128,
                       "scale_dtype": "float16"},
}
# Activations of the configurations that do not take float16 ones.
INPUTS = {name: {"dtype": "int8" if "int8" in name else "e4m3",
                 "scaling": "token"}
          for name in CONFIGS if "a8" in name}
INPUTS["w8a8_fp8_block"] = {"dtype": "e4m3", "scaling": "group",
                            "group_size": 128}
STANDARD_MS = [1, 16, 64, 128, 1024, 8192]
# The model sweep (--shapes model): Llama-3-8B's 4096 x 4096 (q/o),
# 6144 x 4096 (fused qkv), 4096 x 14336 / 14336 x 4096 (up / down), and
# Llama-3-70B's 28672 x 8192 / 8192 x 28672 (fused gate_up / down).
MODEL_SHAPES = [(4096, 4096), (6144, 4096), (4096, 14336), (14336, 4096),
                (28672, 8192), (8192, 28672)]


def activation_dtype(name):
    """The 16-bit activation (and output) type of a configuration that
    takes 16-bit activations: "bfloat16" for the *_bf16 ones."""
    return "bfloat16" if name.endswith("_bf16") else "float16"


def code_bits(config):
    """Bits per weight code of a CONFIGS entry."""
    dtype = config["dtype"]
    return {"e4m3": 8, "e5m2": 8, "e2m1": 4}.get(dtype) or int(
        dtype.lstrip("uint"))


def weight_bytes(config, n, k):
    bits = code_bits(config)
    group = config.get("group_size") or k
    rows = -(-n // config.get("block_n", 1))  # block scales: a row per block
    scale = 4 if config.get("scale_dtype") == "float32" else 2
    return n * k * bits / 8 + rows * (k // group) * scale


def time_graph(torch, calls, replays):
    """Median microseconds per call of `calls` (closures) captured once."""
    for c in calls:  # warm up outside the capture
        c()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for c in calls:
            c()
    graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(replays):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        stop.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(stop) * 1000.0 / len(calls))
    times.sort()
    return times[len(times) // 2]


def scaled_mm_us(torch, weights16, codes, scales, replays):
    """torch._scaled_mm (cuBLASLt fp8) on e4m3 copies of `weights16` with
    per-channel scales and the activations' per-token scales, bf16 out;
    None where this torch or GPU has no such GEMM (M is padded to 16 rows,
    which it needs)."""
    m, k = codes.shape
    pad = (-m) % 16
    if pad:
        codes = torch.cat([codes, codes.new_zeros(pad, k)])
        scales = torch.cat([scales, scales.new_ones(pad, 1)])
    ws, ss = [], []
    for w in weights16:
        s = w.float().abs().amax(dim=1, keepdim=True) / 448.0
        ws.append((w.float() / s).to(torch.float8_e4m3fn))
        ss.append(s.t().contiguous())
    try:
        calls = [(lambda w=w, s=s: torch._scaled_mm(
            codes, w.t(), scale_a=scales, scale_b=s,
            out_dtype=torch.bfloat16)) for w, s in zip(ws, ss)]
        return time_graph(torch, calls, replays)
    except (RuntimeError, AttributeError) as e:
        print(f"torch._scaled_mm: {e}", file=sys.stderr)
        return None


def int_mm_us(torch, weights16, codes, replays):
    """torch._int_mm (cuBLASLt int8 x int8 -> int32, no scales: a lower
    bound for a scaled int8 GEMM) on int8 copies of `weights16`; None where
    this torch or GPU has none (M is padded to a multiple of 8 above 16,
    which it needs)."""
    m, k = codes.shape
    rows = max(24, m + (-m) % 8)
    if rows != m:
        codes = torch.cat([codes, codes.new_zeros(rows - m, k)])
    ws = []
    for w in weights16:
        s = w.float().abs().amax(dim=1, keepdim=True) / 127.0
        ws.append((w.float() / s).round().to(torch.int8))
    try:
        calls = [(lambda w=w: torch._int_mm(codes, w.t())) for w in ws]
        return time_graph(torch, calls, replays)
    except (RuntimeError, AttributeError) as e:
        print(f"torch._int_mm: {e}", file=sys.stderr)
        return None


PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
           "#17becf", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22"]


def plot_svg(report):
    """An SVG line plot of report["results"]: ratio to torch fp16 (end to
    end) against M (log scale), one line per configuration and shape, the
    1.0 line (torch's own time) dashed."""
    import math
    rows = [r for r in report.get("results", [])
            if r.get("ratio") and r.get("m", 0) > 0]
    series = {}
    for r in rows:
        label = f" v{r['variant']}" if "variant" in r else ""
        label += " act-order" if r.get("act_order") else ""
        series.setdefault(f"{r['config']}{label} {r['n']}x{r['k']}",
                          []).append((r["m"], r["ratio"]))
    width, height, left, right, top, bottom = 760, 420, 60, 250, 40, 50
    pw, ph = width - left - right, height - top - bottom
    ms = sorted({m for pts in series.values() for m, _ in pts}) or [1]
    lo, hi = math.log2(ms[0]), math.log2(ms[-1])
    span = hi - lo or 1.0
    top_ratio = max([1.0] + [v for pts in series.values() for _, v in pts])
    ymax = math.ceil(top_ratio * 1.1 * 4) / 4

    def x(m):
        return left + pw * (math.log2(m) - lo) / span

    def y(v):
        return top + ph * (1 - v / ymax)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" '
           f'height="{height}" font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{left}" y="22" font-size="14">'
           f'{report.get("device", "")}: time / torch fp16 '
           f'(lower is faster), commit {str(report.get("commit", ""))[:10]}'
           f'</text>']
    for i in range(int(ymax / 0.25) + 1):
        v = i * 0.25
        out.append(f'<line x1="{left}" y1="{y(v):.1f}" x2="{left + pw}" '
                   f'y2="{y(v):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 8}" y="{y(v) + 4:.1f}" '
                   f'text-anchor="end">{v:.2f}</text>')
    out.append(f'<line x1="{left}" y1="{y(1):.1f}" x2="{left + pw}" '
               f'y2="{y(1):.1f}" stroke="black" stroke-dasharray="4 3"/>')
    for m in ms:
        out.append(f'<text x="{x(m):.1f}" y="{top + ph + 18}" '
                   f'text-anchor="middle">{m}</text>')
    out.append(f'<text x="{left + pw / 2}" y="{height - 10}" '
               f'text-anchor="middle">M (tokens)</text>')
    for i, (name, pts) in enumerate(sorted(series.items())):
        color = PALETTE[i % len(PALETTE)]
        pts = sorted(pts)
        path = " ".join(f"{x(m):.1f},{y(v):.1f}" for m, v in pts)
        out.append(f'<polyline points="{path}" fill="none" stroke="{color}" '
                   f'stroke-width="2"/>')
        for m, v in pts:
            out.append(f'<circle cx="{x(m):.1f}" cy="{y(v):.1f}" r="3" '
                       f'fill="{color}"><title>{name} M={m}: {v:.2f}'
                       f'</title></circle>')
        ly = top + 16 * i
        out.append(f'<line x1="{left + pw + 12}" y1="{ly}" '
                   f'x2="{left + pw + 32}" y2="{ly}" stroke="{color}" '
                   f'stroke-width="2"/>')
        out.append(f'<text x="{left + pw + 38}" y="{ly + 4}">{name}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def write_plot(report, json_path):
    """Writes plot_svg(report) next to `json_path` (same name, .svg);
    returns the path."""
    path = os.path.splitext(json_path)[0] + ".svg"
    with open(path, "w") as f:
        f.write(plot_svg(report))
    return path


def transform_in_fresh_process(n, k, name, tile_config, **env):
    """Transforms one layer in a new process (by default with the same
    HUMMING_CACHE_DIR: the cost of a cached load from disk; `env` overrides
    variables). Returns the stats as a dict."""
    done = subprocess.run(
        [sys.executable, "-m", "humming.bench", "--transform-only",
         f"{n}x{k}:{name}"] + ([tile_config] if tile_config else []),
        capture_output=True, text=True, check=True,
        env=dict(os.environ, **env))
    return json.loads(done.stdout.strip().splitlines()[-1])


def load_random_codes(layer, torch, config, n, k):
    """Random codes and scales in the standard format (load_quantized)
    instead of quantizing float weights: the kernels' time does not depend
    on the values, and an 8192 x 28672 layer quantizes in seconds per copy
    (tuning runs, --random-codes)."""
    bits = code_bits(config)
    groups = k // (config.get("group_size") or k)
    words = torch.randint(-2**31, 2**31 - 1, (n, k * bits // 32),
                          dtype=torch.int32)
    if config.get("dtype") in ("e4m3", "e5m2"):
        # Finite fp8 codes only (0x7f / 0xff are NaN in e4m3): bit 6 clear.
        words &= 0x3F3F3F3F
    rows = -(-n // config.get("block_n", 1))  # block scales: a row per block
    scales = (torch.rand(rows, groups) * 0.01 + 0.001).to(
        getattr(torch, config["scale_dtype"]))
    layer.load_quantized(words, scales)


def transform_once(HummingLayer, torch, n, k, name, tile_config=None,
                   random_codes=False, act_order=False):
    layer = HummingLayer(n, k, CONFIGS[name],
                         INPUTS.get(name, {"dtype": activation_dtype(name)}))
    if random_codes:
        load_random_codes(layer, torch, CONFIGS[name], n, k)
    else:
        layer.load_from_unquantized(
            torch.randn(n, k, dtype=torch.float32) * 0.02)
    if act_order:
        # A GPTQ desc_act layer's state: x's columns are gathered by a
        # permutation before the kernels (part of the time).
        layer.set_input_permutation(torch.randperm(k).tolist())
    # --tiles-for: another device's tile heuristics for the GPU present
    # (its chip's kernels, e.g. the L40S's mma_sync tiles on an H200).
    tiles_for = os.environ.get("HUMMING_BENCH_TILES_FOR") or None
    chip = None
    if tiles_for:
        major, minor = torch.cuda.get_device_capability()
        chip = f"sm_{major}{minor}" + ("a" if major == 9 else "")
    t0 = time.perf_counter()
    layer.transform(device=tiles_for, chip=chip, tile_config=tile_config)
    seconds = time.perf_counter() - t0
    s = layer.transform_stats
    return layer, {"config": name, "n": n, "k": k, "transform_s": seconds,
                   "kernels": layer.kernel_count,
                   "compiled": s.compiled, "cached": s.cached,
                   "kernel_s": s.kernel_seconds,
                   "slowest_kernel_s": s.slowest_kernel_seconds,
                   "weight_s": s.weight_seconds}


def bench_layers(HummingLayer, torch, n, k, name, tile_config, args, jit,
                 act_order=False):
    """args.copies transformed layers of one configuration; appends the
    transforms' compile cost to `jit` (copy 0: cold JIT, then, unless
    --no-cold, in fresh processes on one thread and from the disk cache;
    copy 1: from this process's memory)."""
    layers = []
    for copy in range(args.copies):
        layer, stats = transform_once(HummingLayer, torch, n, k, name,
                                      tile_config, args.random_codes,
                                      act_order)
        # (An act-order layer compiles the same kernels: its JIT is not
        # timed again.)
        if act_order:
            layers.append(layer)
            continue
        if copy == 0:
            jit.append(dict(stats, cache="cold"))
            if not args.no_cold:
                # Cold again with one compile thread (an empty cache of its
                # own): the protocol's per-kernel cost on one core.
                jit.append(dict(transform_in_fresh_process(
                    n, k, name, tile_config, HUMMING_JIT_THREADS="1",
                    HUMMING_CACHE_DIR=tempfile.mkdtemp(prefix="humming-bench-")),
                    cache="cold, 1 thread"))
                jit.append(dict(transform_in_fresh_process(
                    n, k, name, tile_config), cache="disk"))
        elif copy == 1:
            jit.append(dict(stats, cache="memory"))
        layers.append(layer)
    return layers


def time_one(torch, layers, torch_ws, torch_us, config, name, n, k, m, replays,
             memory_gbs=0.0):
    """One result row: the layers and torch.matmul on the same M x K
    activations (torch's time from `torch_us` where an earlier variant
    measured it). With the device's peak memory bandwidth `memory_gbs`
    the row also says the time the bytes alone would take at it
    (hbm_floor_us) and which fraction of our time that is (of_floor: 1.0
    is the floor; what limits decode)."""
    act = getattr(torch, activation_dtype(name))
    x = (torch.rand(m, k, device="cuda") * 2 - 1).to(act)
    outs = [torch.empty(m, n, dtype=act, device="cuda")
            for _ in range(len(layers))]
    ours = time_graph(torch, [
        (lambda l=l, o=o: l(x, out=o)) for l, o in zip(layers, outs)],
        replays)
    if m not in torch_us:
        torch_us[m] = time_graph(torch, [
            (lambda w=w, o=o: torch.matmul(x, w.t(), out=o))
            for w, o in zip(torch_ws, outs)], replays)
    base = torch_us[m]
    moved = weight_bytes(config, n, k) + 2 * m * (k + n)
    row = {
        "config": name, "m": m, "n": n, "k": k,
        # torch_fp16_us: torch.matmul in the activation type (bf16 for the
        # *_bf16 configurations; the key kept for the results before them).
        "humming_us": ours, "torch_fp16_us": base,
        "ratio": ours / base,
        "tb_per_s": moved / (ours * 1e-6) / 1e12,
        "tflop_per_s": 2.0 * m * n * k / (ours * 1e-6) / 1e12,
    }
    if memory_gbs > 0:
        row["hbm_floor_us"] = moved / (memory_gbs * 1e9) * 1e6
        row["of_floor"] = row["hbm_floor_us"] / ours
    if name in INPUTS:
        # humming_us is end to end (the layer quantizes x, then
        # multiplies); the GEMM alone on pre-quantized codes, the
        # quantization alone, and cuBLASLt's 8-bit GEMM
        # (fp8: torch._scaled_mm, per-token x per-channel scales;
        # int8: torch._int_mm, int32 out without scales).
        codes, scales = layers[0]._quantizer("float16")(x)
        row["gemm_us"] = time_graph(torch, [
            (lambda l=l, o=o: l(codes, out=o, scale=scales))
            for l, o in zip(layers, outs)], replays)
        quant = layers[0]._quantizer("float16")
        row["quantize_us"] = time_graph(
            torch, [lambda: quant(x)] * len(layers), replays)
        if INPUTS[name]["dtype"] == "int8":
            row["int_mm_us"] = int_mm_us(torch, torch_ws, codes, replays)
            vendor = row["int_mm_us"]
        else:
            if INPUTS[name].get("scaling") == "group":
                # cuBLASLt's per-token x per-channel fp8 GEMM beside the
                # fine-grained one (bench/PROTOCOL.md: within 90 % of it).
                from humming import HummingQuantizer
                per_token = HummingQuantizer(k, "e4m3")
                per_token.transform()
                codes, scales = per_token(x)
            row["scaled_mm_us"] = scaled_mm_us(torch, torch_ws, codes,
                                               scales, replays)
            vendor = row["scaled_mm_us"]
        row["ratio_gemm"] = row["gemm_us"] / base
        if vendor:
            row["vs_vendor"] = ours / vendor
    return row


def op_overhead(torch, HummingLayer, shapes, configs, ms, calls):
    """Eager host time per call (no CUDA graph: the host's cost is what it
    measures) of a transformed layer called directly, through
    torch.ops.humming.gemm, and through the same call registered the
    lighter way, a torch.library.Library operator with one
    CompositeExplicitAutograd Python kernel (the candidate to replace
    custom_op's wrappers), in one process; each path `calls` times after a
    warm-up, timed to the last launch returning (issue) and to the stream's
    end (wall). Returns one row per shape, config, M and path."""
    import humming.ops as ops

    lib = torch.library.Library("humming_bench", "DEF")
    lib.define("gemm(Tensor x, int layer) -> Tensor")
    lib.impl("gemm", lambda x, layer: ops._dense(layer)(x),
             "CompositeExplicitAutograd")

    rows = []
    for (n, k), name in [(s, c) for s in shapes for c in configs]:
        layer, _ = transform_once(HummingLayer, torch, n, k, name,
                                  random_codes=True)
        ident = ops.register(layer)
        paths = {"direct": lambda x: layer(x),
                 "torch.ops.humming.gemm":
                     lambda x: torch.ops.humming.gemm(x, ident),
                 "Library op": lambda x: torch.ops.humming_bench.gemm(
                     x, ident)}
        for m in ms:
            x = torch.randn(m, k, device="cuda", dtype=torch.float16)
            for path, call in paths.items():
                for _ in range(50):
                    call(x)
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                for _ in range(calls):
                    call(x)
                issued = time.perf_counter()
                torch.cuda.synchronize()
                done = time.perf_counter()
                rows.append({"config": name, "n": n, "k": k, "m": m,
                             "path": path, "calls": calls,
                             "issue_us": 1e6 * (issued - t0) / calls,
                             "wall_us": 1e6 * (done - t0) / calls})
    return rows


def main():
    if len(sys.argv) in (3, 4) and sys.argv[1] == "--transform-only":
        import torch
        from humming import HummingLayer
        shape, name = sys.argv[2].split(":")
        n, k = (int(v) for v in shape.split("x"))
        tile = sys.argv[3] if len(sys.argv) == 4 else None
        print(json.dumps(transform_once(HummingLayer, torch, n, k, name,
                                        tile)[1]))
        return
    if len(sys.argv) == 3 and sys.argv[1] == "--plot-from":
        with open(sys.argv[2]) as f:
            print(write_plot(json.load(f), sys.argv[2]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="JSON results path")
    parser.add_argument("--configs", default=None,
                        help="comma-separated CONFIGS names (default: all "
                             "the GPU runs; fp8 activations need sm_89, "
                             "int8 ones sm_80)")
    parser.add_argument("--shapes", default="8192x8192",
                        help="comma-separated NxK, or 'model' for the "
                             "model sweep (" + ",".join(
                                 f"{n}x{k}" for n, k in MODEL_SHAPES) + ")")
    parser.add_argument("--ms", default=",".join(map(str, STANDARD_MS)))
    parser.add_argument("--tile-config", action="append", default=None,
                        help="a #humming.tile_config<...> for every M instead "
                             "of the device heuristics (tuning); given more "
                             "than once, each is a variant timed against the "
                             "same torch runs ('heuristics' = the device's "
                             "picks), rows say which")
    parser.add_argument("--no-cold", action="store_true",
                        help="skip the fresh-process transforms (cold JIT on "
                             "one thread, disk cache): tuning runs")
    parser.add_argument("--random-codes", action="store_true",
                        help="load random codes and scales instead of "
                             "quantizing float weights (seconds per copy at "
                             "model sizes): tuning runs, timing only")
    parser.add_argument("--act-order", action="store_true",
                        help="time every configuration twice: as it is and "
                             "as an act-order layer (x's columns gathered "
                             "by a random permutation before the kernels)")
    parser.add_argument("--tiles-for", default=None,
                        help="choose tiles with this device's facts (e.g. "
                             "L40S: its mma_sync tiles) for the GPU present")
    parser.add_argument("--op-overhead", action="store_true",
                        help="instead of the protocol's timings: eager host "
                             "time per call of the layer's direct call, "
                             "torch.ops.humming.gemm and a Library-defined "
                             "op around the direct call, per shape, config "
                             "and M (random codes)")
    parser.add_argument("--calls", type=int, default=2000,
                        help="calls per path with --op-overhead")
    parser.add_argument("--copies", type=int, default=4)
    parser.add_argument("--replays", type=int, default=20)
    args = parser.parse_args()
    if args.copies < 4 or args.replays < 15:
        parser.error("the protocol asks for >= 4 copies and >= 15 replays")

    # An empty kernel cache for this run: the first transform is a cold JIT.
    os.environ["HUMMING_CACHE_DIR"] = tempfile.mkdtemp(prefix="humming-bench-")
    if args.tiles_for:
        os.environ["HUMMING_BENCH_TILES_FOR"] = args.tiles_for
    import torch
    from humming import HummingLayer
    from humming import compiler as humming_compiler
    from humming import device_facts

    shapes = (list(MODEL_SHAPES) if args.shapes == "model" else
              [tuple(int(v) for v in s.split("x"))
               for s in args.shapes.split(",")])
    ms = [int(v) for v in args.ms.split(",")]
    rows, jit = [], []
    torch.manual_seed(0)
    configs = (args.configs.split(",") if args.configs else
               [c for c in CONFIGS if not c.endswith("_bf16") and
                (c not in INPUTS or
                 torch.cuda.get_device_capability() >= (8, 9))])
    variants = [None if v == "heuristics" else v
                for v in (args.tile_config or [None])]
    if args.op_overhead:
        rows = op_overhead(torch, HummingLayer, shapes, configs, ms,
                           args.calls)
        with open(args.out, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(),
                       "method": "eager calls, host time per call",
                       "compiler": humming_compiler(), "results": rows}, f,
                      indent=2)
        print("| config | N x K | M | path | issue us/call | wall us/call |")
        print("|---|---|---|---|---|---|")
        for r in rows:
            print(f"| {r['config']} | {r['n']}x{r['k']} | {r['m']} | "
                  f"{r['path']} | {r['issue_us']:.1f} | {r['wall_us']:.1f} |")
        return
    # The floor of each row: its bytes at the device's peak bandwidth.
    memory_gbs = device_facts()["memory_gbs"]
    for (n, k), name in [(s, c) for s in shapes for c in configs]:
        config = CONFIGS[name]
        torch_ws = [torch.randn(n, k, device="cuda",
                                dtype=getattr(torch, activation_dtype(name)))
                    for _ in range(args.copies)]
        torch_us = {}  # M -> torch's time, measured once for all variants
        for variant, tile_config in enumerate(variants):
            for act_order in ([False, True] if args.act_order else [False]):
                layers = bench_layers(HummingLayer, torch, n, k, name,
                                      tile_config, args, jit, act_order)
                for m in ms:
                    rows.append(time_one(torch, layers, torch_ws, torch_us,
                                         config, name, n, k, m, args.replays,
                                         memory_gbs))
                    if len(variants) > 1:
                        rows[-1].update(variant=variant,
                                        tile_config=tile_config)
                    if args.act_order:
                        rows[-1]["act_order"] = act_order
    # The library's own commit (the device bundle records it) before the
    # checkout's: a copied working tree's git HEAD can be older than the
    # code that ran.
    commit = os.environ.get("HUMMING_COMMIT")
    if not commit:
        try:
            commit = subprocess.run(["git", "rev-parse", "HEAD"],
                                    capture_output=True, text=True,
                                    check=True).stdout.strip()
        except Exception:
            commit = "unknown"
    report = {"device": torch.cuda.get_device_name(), "commit": commit,
              "method": f"CUDA graph, {args.copies} copies, median of "
                        f"{args.replays} replays", "tile_config": (args.tile_config[0] if args.tile_config and
                              len(args.tile_config) == 1 else None),
              "variants": variants if len(variants) > 1 else None,
              "tiles_for": args.tiles_for,
              "compiler": humming_compiler(),
              "memory_gbs": memory_gbs,
              # Programmatic dependent launch (sm_90+): on unless HUMMING_PDL=0.
              "dependent_launch": os.environ.get("HUMMING_PDL", "1") != "0",
              "results": rows, "jit": jit}
    with open(args.out, "w") as f:
        json.dump(report, f, indent=2)
    print(f"plot: {write_plot(report, args.out)}")
    if len(variants) > 1:
        for i, v in enumerate(variants):
            print(f"variant {i}: {v or 'the device heuristics'}")
        print()
    print(f"| config | N x K | M | humming us | torch fp16 us | ratio | TB/s | "
          f"TFLOP/s | of HBM floor ({memory_gbs:.0f} GB/s) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        label = f" v{r['variant']}" if "variant" in r else ""
        floor = f"{r['of_floor']:.2f}" if "of_floor" in r else "-"
        print(f"| {r['config']}{label} | {r['n']}x{r['k']} | {r['m']} | "
              f"{r['humming_us']:.1f} | {r['torch_fp16_us']:.1f} | "
              f"{r['ratio']:.2f} | {r['tb_per_s']:.2f} | "
              f"{r['tflop_per_s']:.1f} | {floor} |")
    print()
    eight = [r for r in rows if "gemm_us" in r]
    if eight:
        print("8-bit activations: end to end (quantize + GEMM), the GEMM on "
              "codes, the quantization, cuBLASLt's 8-bit GEMM (fp8: "
              "torch._scaled_mm with scales; int8: torch._int_mm without)")
        print()
        print("| config | N x K | M | end to end us | ratio | GEMM us | "
              "GEMM ratio | quantize us | cuBLASLt us | end to end / "
              "cuBLASLt |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for r in eight:
            sm = r.get("scaled_mm_us") or r.get("int_mm_us")
            tail = (f"{sm:.1f} | {r['vs_vendor']:.2f} |" if sm
                    else "- | - |")
            print(f"| {r['config']} | {r['n']}x{r['k']} | {r['m']} | "
                  f"{r['humming_us']:.1f} | {r['ratio']:.2f} | "
                  f"{r['gemm_us']:.1f} | {r['ratio_gemm']:.2f} | "
                  f"{r['quantize_us']:.1f} | " + tail)
        print()
    print("| config | N x K | transform | kernels (compiled/cached) | "
          "all kernels s | slowest kernel s | per kernel ms | weights s | total s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for j in jit:
        print(f"| {j['config']} | {j['n']}x{j['k']} | "
              f"{j['cache']} | {j['kernels']} "
              f"({j['compiled']}/{j['cached']}) | {j['kernel_s']:.3f} | "
              f"{j['slowest_kernel_s']:.3f} | "
              f"{1e3 * j['kernel_s'] / max(1, j['kernels']):.2f} | "
              f"{j['weight_s']:.3f} | {j['transform_s']:.3f} |")


if __name__ == "__main__":
    main()
