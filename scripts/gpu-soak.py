#!/usr/bin/env python3
"""GPU soak test (a script, not CI): many forward calls with random M across
dense W4A16, W8A16, W8A8 (fp8, the layer's own quantizer) and a MoE block,
checking that device and host memory stay constant and that a fixed probe
input keeps giving bitwise the same output; then the faults: CUDA out of
memory during transform and a kernel cache that cannot be written must give
clean errors and leave the layer usable or cleanly unusable.

    python3 scripts/gpu-soak.py [--calls N] [--seconds S] [--out DIR]
    python3 scripts/gpu-soak.py --fault oom|cache     (one fault, alone)

Runs on the GPU machine against the bundle's libhumming.so
(HUMMING_LIBRARY; scripts/device-run.sh sets it up). Writes soak.json
under --out (default $OUT or .) and prints one line per check; exits 1 on
any failure.
"""
import argparse
import json
import os
import random
import resource
import signal
import subprocess
import sys
import tempfile
import time

W4G128 = {"dtype": "uint4", "group_size": 128, "scale_dtype": "float16"}
W8CH = {"dtype": "uint8", "scale_dtype": "float16"}
FP8CH = {"dtype": "e4m3", "scale_dtype": "float16"}
FP8IN = {"dtype": "e4m3", "scaling": "token", "output_dtype": "float16"}


def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def random_m(rng):
    """Mostly decode and small batches, sometimes prefill."""
    r = rng.random()
    if r < 0.5:
        return rng.randint(1, 16)
    if r < 0.8:
        return rng.randint(17, 256)
    if r < 0.97:
        return rng.randint(257, 2048)
    return rng.randint(2049, 4096)


def build(torch, humming):
    """The soak's layers: name -> (callable taking M, probe output)."""
    g = torch.Generator(device="cuda").manual_seed(0)
    layers = {}

    def dense(name, n, k, config, input_config=None, act=torch.float16):
        w = torch.randn(n, k, generator=g, device="cuda",
                        dtype=torch.float32) * 0.02
        layer = humming.HummingLayer(n, k, config, input_config)
        layer.load_from_unquantized(w.half())
        layer.transform()
        xs = (torch.rand(4096, k, generator=g, device="cuda") * 2 - 1).to(act)
        layers[name] = lambda m: layer(xs[:m])

    dense("w4a16_g128", 4096, 4096, W4G128)
    dense("w8a16_channel", 4096, 4096, W8CH)
    dense("w8a8_fp8", 4096, 4096, FP8CH, FP8IN)
    e, hidden, inter, top_k = 8, 1024, 512, 2
    moe = humming.HummingMoeLayer(hidden, inter, e, top_k, W4G128)
    gate_up = torch.randn(e, 2 * inter, hidden, generator=g,
                          device="cuda") * 0.02
    down = torch.randn(e, hidden, inter, generator=g, device="cuda") * 0.02
    moe.quantize(gate_up.half().cpu(), down.half().cpu())
    moe.transform(max_tokens=4096)
    xm = (torch.rand(4096, hidden, generator=g, device="cuda") * 2 - 1).half()
    ids = torch.randint(0, e, (4096, top_k), generator=g, device="cuda",
                        dtype=torch.int32)
    wts = torch.rand(4096, top_k, generator=g, device="cuda")
    layers["moe_w4a16"] = lambda m: moe(xm[:m], ids[:m], wts[:m])
    return layers


def soak(args, torch, humming):
    rng = random.Random(1)
    layers = build(torch, humming)
    names = sorted(layers)
    probes = {}
    for name in names:  # the probe: M = 37, as it was before any load
        probes[name] = layers[name](37).clone()
    torch.cuda.synchronize()
    # Warm-up: every layer at every M range once, then the baselines.
    for name in names:
        for m in (1, 9, 17, 65, 129, 513, 2049, 4096):
            layers[name](m)
    torch.cuda.synchronize()
    free0 = torch.cuda.mem_get_info()[0]
    rss0 = rss_mb()
    start = time.time()
    calls, failures, samples = 0, [], []
    while calls < args.calls and time.time() - start < args.seconds:
        name = names[rng.randrange(len(names))]
        layers[name](random_m(rng))
        calls += 1
        if calls % 10000 == 0:
            torch.cuda.synchronize()
            for probe_name in names:
                again = layers[probe_name](37)
                if not torch.equal(again, probes[probe_name]):
                    failures.append(f"{probe_name}: the probe changed after "
                                    f"{calls} calls")
            free, rss = torch.cuda.mem_get_info()[0], rss_mb()
            samples.append({"calls": calls, "s": time.time() - start,
                            "device_free_mb": free / 2**20, "rss_mb": rss})
            # Constant memory: the torch allocator's cache may hold a few
            # outputs more than at the baseline; a leak grows without bound.
            if free0 - free > 256 * 2**20:
                failures.append(f"device memory fell by "
                                f"{(free0 - free) / 2**20:.0f} MB after "
                                f"{calls} calls")
            if rss - rss0 > 128:
                failures.append(f"host memory grew by {rss - rss0:.0f} MB "
                                f"after {calls} calls")
            print(f"soak: {calls} calls, {time.time() - start:.0f} s, "
                  f"device free {free / 2**20:.0f} MB, RSS {rss:.0f} MB",
                  flush=True)
            if failures:
                break
    torch.cuda.synchronize()
    return {"calls": calls, "seconds": time.time() - start,
            "samples": samples, "failures": failures}


def fault_oom(torch, humming):
    """Transform with the device nearly full: a clean HummingError, then
    the same layer transforms and runs once memory is back."""
    n, k = 28672, 8192
    layer = humming.HummingLayer(n, k, W4G128)
    layer.load_from_unquantized(torch.randn(n, k, dtype=torch.float16) * 0.02)
    free = torch.cuda.mem_get_info()[0]
    blocker = torch.empty(free - 64 * 2**20, dtype=torch.uint8, device="cuda")
    try:
        layer.transform()
        return {"ok": False, "error": "transform succeeded with 64 MB free"}
    except humming.HummingError as e:
        message = str(e)
    del blocker
    torch.cuda.empty_cache()
    layer.transform()
    x = torch.rand(16, k, device="cuda").half()
    y = layer(x)
    torch.cuda.synchronize()
    good = bool(torch.isfinite(y).all().item())
    return {"ok": good and "memory" in message.lower(), "error": message}


def fault_cache(torch, humming):
    """A kernel cache that cannot be written (file size limit 0, as a full
    disk fails writes): the transform either works without caching or fails
    with a clean error naming what it could not write (the cache, or the
    temporary file ptxas reads where nvJitLink is not used)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    layer = humming.HummingLayer(2048, 2048, W4G128)
    layer.load_from_unquantized(torch.randn(2048, 2048,
                                            dtype=torch.float16) * 0.02)
    # Only the soft limit, and only around the transform: the result is
    # printed afterwards, to a file where stdout is one (a limit of 0 left
    # in place made that print fail and the step report nothing).
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, hard))
    try:
        layer.transform()
    except humming.HummingError as e:
        message = str(e).lower()
        return {"ok": "cache" in message or "cannot write" in message,
                "error": str(e), "transformed": False}
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    y = layer(torch.rand(8, 2048, device="cuda").half())
    torch.cuda.synchronize()
    return {"ok": bool(torch.isfinite(y).all().item()), "transformed": True}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000000)
    parser.add_argument("--seconds", type=float, default=1e9)
    parser.add_argument("--out", default=os.environ.get("OUT", "."))
    parser.add_argument("--fault", choices=["oom", "cache"])
    args = parser.parse_args()
    import torch
    import humming
    if args.fault:
        if args.fault == "cache":
            os.environ["HUMMING_CACHE_DIR"] = tempfile.mkdtemp()
        result = (fault_oom if args.fault == "oom" else fault_cache)(
            torch, humming)
        print(json.dumps(result))
        return 0 if result["ok"] else 1
    report = {"soak": soak(args, torch, humming), "faults": {}}
    # Each fault in a fresh process (the cache fault sets a file-size
    # limit; the OOM one fills the device).
    for fault in ("oom", "cache"):
        p = subprocess.run([sys.executable, __file__, "--fault", fault],
                           capture_output=True, text=True)
        last = (p.stdout.strip().splitlines() or ["{}"])[-1]
        try:
            report["faults"][fault] = json.loads(last)
        except ValueError:
            report["faults"][fault] = {"ok": False, "rc": p.returncode,
                                       "stderr": p.stderr[-2000:]}
        report["faults"][fault]["rc"] = p.returncode
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "soak.json"), "w") as f:
        json.dump(report, f, indent=2)
    s = report["soak"]
    print(f"soak: {s['calls']} calls in {s['seconds']:.0f} s, "
          f"{len(s['failures'])} failures" +
          "".join(f"\n  {x}" for x in s["failures"]))
    for fault, r in report["faults"].items():
        print(f"fault {fault}: {'ok' if r.get('ok') else 'FAILED'} "
              f"{r.get('error', '')[:300]}")
    ok = not s["failures"] and all(r.get("ok")
                                   for r in report["faults"].values())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
