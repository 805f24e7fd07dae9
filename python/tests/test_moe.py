"""The MoE block through the Python package (HummingMoeLayer).

Without torch or a GPU: creation errors and a compile-only transform. With
torch and a CUDA device: a small block whose weights quantize exactly,
routed by random top-k choices, against a float64 reference that rounds to
float16 where the block stores its intermediate tensors.
"""

import math
import random
import unittest

from humming import (HummingError, HummingLayer, HummingMoeGrouping,
                     HummingMoeLayer, HummingQuantizer)

from test_layer import MAKE_CHECKPOINT, _cuda, exact_weights

W4G128 = {"dtype": "uint4", "group_size": 128, "scale_dtype": "float16"}


class MoeCreateTest(unittest.TestCase):
    def test_errors_say_what_was_expected(self):
        with self.assertRaises(HummingError) as e:
            HummingMoeLayer(256, 128, 4, 8, W4G128)
        self.assertEqual(str(e.exception),
                         "expected top_k in 1 .. 4 (the experts), got 8")
        with self.assertRaises(HummingError) as e:
            HummingMoeLayer(256, 128, 4, 2, W4G128, block_size=24)
        self.assertEqual(str(e.exception),
                         "expected block_size to be a multiple of 16 in 16 .. "
                         "1024, got 24")
        with self.assertRaises(HummingError) as e:
            HummingMoeLayer(255, 128, 4, 2, W4G128)
        self.assertEqual(str(e.exception),
                         "expected positive, even hidden and intermediate "
                         "sizes, got H = 255, I = 128")
        # Per-stream scratch blocks made up front: 0 .. 64.
        with self.assertRaises(HummingError) as e:
            HummingMoeLayer(256, 128, 4, 2, W4G128, streams=65)
        self.assertEqual(str(e.exception),
                         "expected 0 <= streams <= 64, got 65")
        HummingMoeLayer(256, 128, 4, 2, W4G128, streams=1)

    def test_wrong_weight_count(self):
        moe = HummingMoeLayer(256, 128, 4, 2, W4G128)
        with self.assertRaises(HummingError) as e:
            moe.quantize([0.0] * 3, [0.0] * (4 * 256 * 128))
        self.assertEqual(str(e.exception),
                         "gate_up: expected 262144 values, got 3")

    def test_compile_only(self):
        moe = HummingMoeLayer(256, 128, 4, 2, W4G128)
        moe.quantize(exact_weights(4 * 256, 256, 128),
                     exact_weights(4 * 256, 128, 128, seed=2))
        moe.transform(device="H200", compile_only=True, max_tokens=64)

    def test_eight_bit_activations(self):
        # fp8 per token: each GEMM quantizes its own 16-bit input, x and y
        # are the output type; a static scale, a group without its size, a
        # typo and 8-bit keys on 16-bit activations are refused.
        moe = HummingMoeLayer(256, 128, 4, 2, W4G128,
                              {"dtype": "e4m3", "output_dtype": "bfloat16"})
        self.assertEqual(moe._act, "bf16")
        moe.quantize(exact_weights(4 * 256, 256, 128),
                     exact_weights(4 * 256, 128, 128, seed=2))
        moe.transform(device="H200", compile_only=True, max_tokens=64)
        with self.assertRaises(HummingError) as e:
            HummingMoeLayer(256, 128, 4, 2, W4G128,
                            {"dtype": "e4m3", "scaling": "static"})
        self.assertTrue(str(e.exception).startswith(
            "expected f8E4M3FN activations scaled per token (or per group "
            "of K) in a MoE block"), str(e.exception))
        with self.assertRaises(HummingError) as e:
            HummingMoeLayer(256, 128, 4, 2, W4G128,
                            {"dtype": "e4m3", "scaling": "group"})
        self.assertEqual(str(e.exception),
                         "expected input_config['group_size'] (the "
                         "activation group along K) with group scaling")
        with self.assertRaises(HummingError) as e:
            HummingMoeLayer(256, 128, 4, 2, W4G128,
                            {"dtype": "e4m3", "scale": 0.5})
        self.assertIn("'scale'", str(e.exception))
        with self.assertRaises(HummingError) as e:
            HummingMoeLayer(256, 128, 4, 2, W4G128,
                            {"dtype": "float16", "scaling": "token"})
        self.assertEqual(str(e.exception),
                         "expected only 'dtype' in the input_config of "
                         "16-bit activations, got ['dtype', 'scaling']")


def checkpoint_generator():
    """test/humming-inspect/Inputs/make_checkpoint.py as a module (its
    write_safetensors)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("make_checkpoint",
                                                  MAKE_CHECKPOINT)
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    return gen


def e4m3(byte):
    """The value of an e4m3 byte (no NaN codes are written here)."""
    sign = -1.0 if byte & 0x80 else 1.0
    e, m = (byte >> 3) & 15, byte & 7
    if e == 0:
        return sign * m / 8 * 2.0 ** -6
    return sign * (1 + m / 8) * 2.0 ** (e - 7)


def write_fp8_moe_checkpoint(d, E, H, I, top_code, seed=4):
    """An FP8 (per-tensor scale 0.5) checkpoint with Mixtral's expert names
    (w1 gate / w3 up / w2 down) in directory d; returns the float weights
    as (gate_up [E, 2I, H], down [E, H, I]) flat lists."""
    import json
    import os
    import struct
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump({"torch_dtype": "float16",
                   "quantization_config": {"quant_method": "fp8"}}, f)
    tensors, values = {}, {}
    rng = random.Random(seed)
    for e in range(E):
        p = f"model.layers.0.block_sparse_moe.experts.{e}"
        for name, n, k in (("w1", I, H), ("w3", I, H), ("w2", H, I)):
            codes = bytes(rng.randrange(top_code) | rng.choice((0, 0x80))
                          for _ in range(n * k))
            values[(e, name)] = [0.5 * e4m3(b) for b in codes]
            tensors[f"{p}.{name}.weight"] = ("F8_E4M3", [n, k], codes)
            tensors[f"{p}.{name}.weight_scale"] = (
                "F32", [1], struct.pack("<f", 0.5))
    checkpoint_generator().write_safetensors(
        os.path.join(d, "model.safetensors"),
        [(name, *t) for name, t in tensors.items()])
    gate_up, down = [], []
    for e in range(E):
        gate_up += values[(e, "w1")] + values[(e, "w3")]
        down += values[(e, "w2")]
    return gate_up, down


MIXTRAL_EXPERTS = "model.layers.0.block_sparse_moe.experts.{e}"


class MoeCheckpointTest(unittest.TestCase):
    def test_from_safetensors(self):
        import tempfile
        d = tempfile.mkdtemp(prefix="humming-moe-")
        E, H, I = 2, 256, 128
        write_fp8_moe_checkpoint(d, E, H, I, 0x70)
        moe = HummingMoeLayer.from_safetensors(
            d, MIXTRAL_EXPERTS, E, 2, gate="w1", up="w3", down="w2")
        self.assertEqual((moe.hidden, moe.intermediate), (H, I))
        moe.transform(device="H200", compile_only=True, max_tokens=16)
        with self.assertRaises(HummingError) as e:
            HummingMoeLayer.from_safetensors(
                d, "model.layers.0.block_sparse_moe.experts", E, 2)
        self.assertEqual(str(e.exception),
                         "expected the experts' module pattern to hold {e} "
                         "(their index), or to name the module whose "
                         "gate_up_proj holds every expert (gpt-oss), got "
                         "'model.layers.0.block_sparse_moe.experts'")

    def test_gpt_oss_from_safetensors(self):
        import tempfile
        d = tempfile.mkdtemp(prefix="humming-gpt-oss-")
        E, H, I = 4, 256, 128
        write_gpt_oss_checkpoint(d, E, H, I)
        moe = HummingMoeLayer.from_safetensors(d, GPT_OSS_EXPERTS, E, 2)
        self.assertEqual((moe.hidden, moe.intermediate), (H, I))
        self.assertEqual(moe._act, "bf16")
        moe.transform(device="H200", compile_only=True, max_tokens=16)
        with self.assertRaises(HummingError) as e:
            HummingMoeLayer.from_safetensors(d, GPT_OSS_EXPERTS, E + 1, 2)
        self.assertEqual(str(e.exception),
                         GPT_OSS_EXPERTS + ".gate_up_proj: expected 5 experts "
                         "in one tensor, got 4")
        # A swiglu_limit that is not a positive number.
        import json
        import os
        path = os.path.join(d, "config.json")
        with open(path) as f:
            config = json.load(f)
        config["swiglu_limit"] = -7.0
        with open(path, "w") as f:
            json.dump(config, f)
        with self.assertRaises(HummingError) as e:
            HummingMoeLayer.from_safetensors(d, GPT_OSS_EXPERTS, E, 2)
        self.assertEqual(str(e.exception),
                         d + "/config.json: swiglu_limit: expected a positive "
                         "number")

    def test_activation_errors(self):
        moe = HummingMoeLayer(256, 128, 4, 2, W4G128, activation="gpt_oss")
        with self.assertRaises(HummingError) as e:
            moe.set_activation("gelu")
        self.assertEqual(str(e.exception),
                         "expected activation 'silu', 'gpt_oss' or (alpha, "
                         "up_offset, limit), got 'gelu'")
        with self.assertRaises(HummingError) as e:
            moe.set_activation((0.0, 1.0, 7.0))
        self.assertEqual(str(e.exception),
                         "expected a positive finite alpha, a finite up offset "
                         "and a limit >= 0 (0: none) for the gated activation, "
                         "got alpha = 0, up offset = 1, limit = 7")


class MoeGemmLayerTest(unittest.TestCase):
    """HummingLayer(..., num_experts=E): the MoE GEMM alone, as the
    original's HummingLayer takes it."""

    def test_errors_say_what_was_expected(self):
        with self.assertRaises(HummingError) as e:
            HummingLayer(256, 512, W4G128, num_experts=8,
                         moe={"gemm_type": "sorted"})
        self.assertEqual(str(e.exception),
                         "routing: expected indexed, grouped_contiguous or "
                         "grouped_masked, got 'sorted'")
        with self.assertRaises(HummingError) as e:
            HummingLayer(256, 512, W4G128, num_experts=8, moe={"topk": 2})
        self.assertEqual(str(e.exception), "unknown moe keys: ['topk']")
        with self.assertRaises(HummingError) as e:
            HummingLayer(256, 512, W4G128, moe={"top_k": 2})
        self.assertEqual(str(e.exception),
                         "expected num_experts > 0 with moe")
        with self.assertRaises(HummingError) as e:
            HummingLayer(256, 512, W4G128, num_experts=8,
                         moe={"top_k": 9})
        self.assertEqual(str(e.exception),
                         "expected top_k in 1 .. 8 (the experts), got 9")
        with self.assertRaises(HummingError) as e:
            HummingLayer(256, 512, W4G128, {"dtype": "int4"}, num_experts=8)
        self.assertEqual(str(e.exception),
                         "expected 16-bit or 8-bit activations in a MoE "
                         "HummingLayer (no MoE kernel takes int4 ones), got "
                         "int4")
        # 8-bit activations: per token (or group, over fp8 weights).
        fp8 = HummingLayer(256, 512, W4G128, {"dtype": "e4m3"}, num_experts=8,
                           moe={"top_k": 2})
        fp8.load_from_unquantized(exact_weights(8 * 256, 512, 128))
        fp8.transform(device="H200", compile_only=True)
        self.assertTrue(fp8.prepared)

    def test_compile_only_and_block_size(self):
        layer = HummingLayer(256, 512, W4G128, num_experts=8,
                             moe={"top_k": 2})
        with self.assertRaises(HummingError) as e:
            layer.load_from_unquantized([0.0] * (256 * 512))
        self.assertEqual(str(e.exception),
                         "weight: expected 1048576 values, got 131072")
        layer.load_from_unquantized(exact_weights(8 * 256, 512, 128))
        self.assertEqual(layer.moe_block_size(1), 0)  # before transform
        layer.transform(device="H200", compile_only=True)
        self.assertEqual(layer.moe_block_size(1), 16)
        fixed = HummingLayer(256, 512, W4G128, num_experts=8,
                             moe={"top_k": 2, "block_size": 64})
        fixed.load_from_unquantized(exact_weights(8 * 256, 512, 128))
        fixed.transform(device="H200", compile_only=True)
        self.assertEqual(fixed.moe_block_size(1), 64)
        # A batch of matmuls, one weight matrix per batch element.
        batched = HummingLayer(256, 512, W4G128, num_experts=4,
                               moe={"gemm_type": "grouped_masked",
                                    "all_rows": True})
        batched.load_from_unquantized(exact_weights(4 * 256, 512, 128))
        batched.transform(device="H200", compile_only=True)
        with self.assertRaises(HummingError) as e:
            HummingLayer(256, 512, W4G128, num_experts=4,
                         moe={"all_rows": True})
        self.assertTrue(str(e.exception).startswith(
            "expected all_rows only with gemm_type grouped_masked"),
            str(e.exception))
        dense = HummingLayer(256, 512, W4G128)
        with self.assertRaises(HummingError) as e:
            dense.forward_moe(None)
        self.assertEqual(str(e.exception),
                         "forward_moe runs MoE layers (num_experts > 0); this "
                         "one is dense: call it as layer(x)")


class MoeGroupingTest(unittest.TestCase):
    """HummingMoeGrouping: top-k ids into the grouped routings."""

    def test_errors_say_what_was_expected(self):
        with self.assertRaises(HummingError) as e:
            HummingMoeGrouping(2048, 8)
        self.assertEqual(str(e.exception),
                         "expected 1 .. 1024 experts (one thread of the "
                         "routing block each), got 2048")
        with self.assertRaises(HummingError) as e:
            HummingMoeGrouping(8, 2, row_bytes=[6])
        self.assertEqual(str(e.exception),
                         "expected row widths in bytes that are positive "
                         "multiples of 4 up to 1 MiB, got 6")

    def test_compile_only_and_rows(self):
        g = HummingMoeGrouping(8, 2, row_bytes=[512])
        g.transform(device="H200", compile_only=True)
        self.assertEqual(g.rows(5), 10)
        masked = HummingMoeGrouping(8, 2, max_tokens=32, row_bytes=[512])
        masked.transform(chip="sm_80", compile_only=True)
        self.assertEqual(masked.rows(5), 8 * 32)


def align_block_size(ids, E, block):
    """vLLM's moe_align_block_size on the host: each expert's flat ids
    (token * top_k + k) padded with the sentinel len(ids) to a multiple of
    block; the expert of each block; the total."""
    sentinel = len(ids)
    per = [[] for _ in range(E)]
    for i, e in enumerate(ids):
        per[e].append(i)
    sorted_ids, expert_ids = [], []
    for e in range(E):
        if not per[e]:
            continue
        padded = per[e] + [sentinel] * (-len(per[e]) % block)
        sorted_ids += padded
        expert_ids += [e] * (len(padded) // block)
    return sorted_ids, expert_ids, len(sorted_ids)


E2M1 = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)
GPT_OSS_EXPERTS = "model.layers.0.mlp.experts"


def bf16_bytes(values):
    import struct
    out = b""
    for v in values:
        out += struct.pack("<f", v)[2:]  # exact: the values are bf16's
    return out


def write_gpt_oss_checkpoint(d, E, H, I, seed=5):
    """gpt-oss's MXFP4 experts (one tensor per projection: blocks [E, N,
    K / 32, 16] of e2m1 pairs, low nibble first; e8m0 scales [E, N, K / 32];
    bf16 biases [E, N]; gate_up's rows alternate gate and up) in directory
    d; returns (gate_up [E, 2I, H] in the checkpoint's row order, its bias
    [E, 2I], down [E, H, I], its bias [E, H]) as flat float lists."""
    import json
    import os
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump({"torch_dtype": "bfloat16", "swiglu_limit": 7.0,
                   "quantization_config": {
                       "quant_method": "mxfp4",
                       "modules_to_not_convert": ["model.layers.*.self_attn",
                                                  "lm_head"]}}, f)
    rng = random.Random(seed)
    tensors, out = {}, []
    for name, n, k in (("gate_up_proj", 2 * I, H), ("down_proj", H, I)):
        codes = [rng.randrange(16) for _ in range(E * n * k)]
        exps = [rng.randrange(123, 127) for _ in range(E * n * k // 32)]
        bias = [rng.randrange(-64, 64) / 64 for _ in range(E * n)]
        packed = bytes(codes[i] | codes[i + 1] << 4
                       for i in range(0, len(codes), 2))
        p = f"{GPT_OSS_EXPERTS}.{name}"
        tensors[p + "_blocks"] = ("U8", [E, n, k // 32, 16], packed)
        tensors[p + "_scales"] = ("U8", [E, n, k // 32], bytes(exps))
        tensors[p + "_bias"] = ("BF16", [E, n], bf16_bytes(bias))
        weights = [(-1 if c & 8 else 1) * E2M1[c & 7] *
                   2.0 ** (exps[i // 32] - 127) for i, c in enumerate(codes)]
        out += [weights, bias]
    checkpoint_generator().write_safetensors(
        os.path.join(d, "model.safetensors"),
        [(name, *t) for name, t in tensors.items()])
    return out


def w4g128_moe_layer(E, H, I, K, max_tokens=64):
    """A W4A16 g128 MoE layer (E experts, hidden H, intermediate I, top-K)
    of exact float weights, transformed for up to `max_tokens` tokens, with
    the weights it quantized: (layer, gate_up, down)."""
    gate_up = exact_weights(E * 2 * I, H, 128)
    down = exact_weights(E * H, I, 128, seed=2)
    layer = HummingMoeLayer(H, I, E, K, W4G128)
    layer.quantize(gate_up, down)
    layer.transform(max_tokens=max_tokens)
    return layer, gate_up, down


def moe_reference(x, ids, w, gate_up, down, H, I, dtype=None,
                  gpt_oss=None):
    """The MoE block in float64 (x, ids, w as lists), rounded to the
    layer's 16-bit type (float16 by default) where it stores a tensor:
    gate_up's output, the activation, each weighted down row and the sum.
    gate_up's rows are each expert's gate rows then its up rows, or with
    gpt_oss = (gate_up_bias, down_bias) gpt-oss's: gate and up alternating,
    biases added, the clamped SwiGLU (alpha 1.702, up + 1, limit 7)."""
    import torch
    dtype = dtype or torch.float16

    def r(v):
        return float(torch.tensor(v, dtype=dtype))
    out = []
    for t in range(len(x)):
        want = [0.0] * H
        for k, e in enumerate(ids[t]):
            gu = [sum(x[t][c] * gate_up[(e * 2 * I + j) * H + c]
                      for c in range(H)) for j in range(2 * I)]
            if gpt_oss:
                gu = [r(v + gpt_oss[0][e * 2 * I + j])
                      for j, v in enumerate(gu)]
                act = []
                for g, u in zip(gu[0::2], gu[1::2]):
                    g, u = min(g, 7.0), max(min(u, 7.0), -7.0)
                    act.append(r(g / (1 + math.exp(-1.702 * g)) * (u + 1)))
            else:
                gu = [r(v) for v in gu]
                act = [r(g / (1 + math.exp(-g)) * u)
                       for g, u in zip(gu[:I], gu[I:])]
            for n in range(H):
                o = sum(act[j] * down[(e * H + n) * I + j] for j in range(I))
                if gpt_oss:
                    o += gpt_oss[1][e * H + n]
                want[n] += r(w[t][k] * o)
        out.append([r(v) for v in want])
    return out


def relative_error(y, ref):
    num = den = 0.0
    for row, want in zip(y.tolist(), ref):
        for got, r in zip(row, want):
            num += (got - r) ** 2
            den += r ** 2
    return math.sqrt(num / den)


@unittest.skipUnless(_cuda(), "needs torch and a CUDA device")
class MoeGpuTest(unittest.TestCase):
    def run_block(self, moe, gate_up, down, E, H, I, K, ms, bound,
                  dtype=None, gpt_oss=None):
        import torch
        dtype = dtype or torch.float16
        rng = random.Random(3)
        for m in ms:
            x = torch.tensor([[rng.uniform(-1, 1) for _ in range(H)]
                              for _ in range(m)], dtype=dtype)
            ids = [rng.sample(range(E), K) for _ in range(m)]
            w = [[rng.uniform(0.1, 1) for _ in range(K)] for _ in range(m)]
            y = moe(x.cuda(), torch.tensor(ids, dtype=torch.int32).cuda(),
                    torch.tensor(w, dtype=torch.float32).cuda()).cpu()
            ref = moe_reference(x.double().tolist(), ids, w, gate_up, down,
                                H, I, dtype, gpt_oss)
            self.assertLessEqual(relative_error(y.float(), ref), bound,
                                 f"M={m}")

    def test_matches_float64(self):
        E, H, I, K = 8, 256, 128, 2
        moe, gate_up, down = w4g128_moe_layer(E, H, I, K)
        self.run_block(moe, gate_up, down, E, H, I, K, (1, 5, 33), 2e-3)

    def test_fp8_checkpoint_matches_float64(self):
        # The checkpoint path on the GPU: per-expert FP8 modules (Mixtral's
        # names) loaded, gate and up fused, against the decoded values.
        import tempfile
        E, H, I, K = 4, 256, 128, 2
        d = tempfile.mkdtemp(prefix="humming-moe-gpu-")
        # Codes below 0x38 (|v| < 1): the block's sums stay well inside f16.
        gate_up, down = write_fp8_moe_checkpoint(d, E, H, I, 0x38, seed=9)
        moe = HummingMoeLayer.from_safetensors(
            d, MIXTRAL_EXPERTS, E, K, gate="w1", up="w3", down="w2")
        moe.transform(max_tokens=64)
        self.run_block(moe, gate_up, down, E, H, I, K, (1, 6, 40), 2e-3)

    def test_fp8_block_matches_float64(self):
        # HummingMoeLayer with e4m3 activations per token: gate_up quantizes
        # x, down the gated intermediate (each per row, scale absmax / 448),
        # against float64 of the same steps (f16 where the block stores a
        # tensor); a code on the other side of a rounding boundary moves the
        # result by far less than the bound.
        import torch
        if torch.cuda.get_device_capability() != (9, 0):
            self.skipTest("8-bit MoE activations run on sm_90a here")
        E, H, I, K = 8, 256, 128, 2
        gate_up = exact_weights(E * 2 * I, H, 128)
        down = exact_weights(E * H, I, 128, seed=2)
        moe = HummingMoeLayer(H, I, E, K, W4G128, {"dtype": "e4m3"})
        moe.quantize(gate_up, down)
        moe.transform(max_tokens=64)
        gu = torch.tensor(gate_up, dtype=torch.float64).view(E, 2 * I, H)
        dn = torch.tensor(down, dtype=torch.float64).view(E, H, I)

        def fp8(a):
            s = (a.abs().amax(dim=-1, keepdim=True) / 448.0).float()
            s = torch.where(s > 0, s, torch.ones_like(s))
            return ((a.float() / s).to(torch.float8_e4m3fn).double() *
                    s.double())

        def f16(a):
            return a.half().double()
        torch.manual_seed(14)
        for m in (1, 5, 40):
            x = (torch.rand(m, H) * 2 - 1).half()
            ids = torch.stack([torch.randperm(E)[:K] for _ in range(m)])
            w = torch.rand(m, K) * 0.9 + 0.1
            y = moe(x.cuda(), ids.int().cuda(), w.cuda()).cpu()
            xq = fp8(x.double())
            ref = torch.zeros(m, H, dtype=torch.float64)
            for t in range(m):
                for k in range(K):
                    e = int(ids[t, k])
                    h = f16(gu[e] @ xq[t])
                    g, u = h[:I], h[I:]
                    act = fp8(f16(g / (1 + torch.exp(-g)) * u))
                    ref[t] += f16(w[t, k].double() * (dn[e] @ act))
            ref = f16(ref)
            rel = ((y.double() - ref).norm() / ref.norm()).item()
            self.assertLess(rel, 5e-3, f"M={m}")

    def test_moe_gemm_layer_matches_float64(self):
        # HummingLayer(num_experts=E).forward_moe with the host's routing at
        # the block size of each M's kernel, against float64.
        import torch
        E, N, K, top_k = 8, 128, 256, 2
        w = exact_weights(E * N, K, 128)
        layer = HummingLayer(N, K, W4G128, num_experts=E,
                             moe={"top_k": top_k, "router_weights": True})
        layer.load_from_unquantized(w)
        layer.transform()
        with self.assertRaises(HummingError) as e:
            layer.forward_moe(torch.zeros(2, K, dtype=torch.bfloat16).cuda())
        self.assertEqual(str(e.exception),
                         f"expected a CUDA tensor [M, {K}] of torch.float16, "
                         f"got [2, {K}] torch.bfloat16 on cuda:0")
        with self.assertRaises(HummingError) as e:
            layer.forward_moe(torch.zeros(2, K, dtype=torch.float16).cuda(),
                              sorted_ids=torch.zeros(4, dtype=torch.int64))
        self.assertEqual(str(e.exception),
                         "sorted_ids: expected a CUDA tensor of torch.int32, "
                         "got torch.int64 on cpu")
        rng = random.Random(8)
        for m in (1, 7, 140):  # 140: 35 tokens per expert, 64-row tiles
            x = torch.tensor([[rng.uniform(-1, 1) for _ in range(K)]
                              for _ in range(m)], dtype=torch.float16)
            ids = [e for _ in range(m) for e in rng.sample(range(E), top_k)]
            rw = [rng.uniform(0.1, 1) for _ in range(m * top_k)]
            block = layer.moe_block_size(m)
            sorted_ids, expert_ids, padded = align_block_size(ids, E, block)
            cuda = lambda v, t: torch.tensor(v, dtype=t).cuda()
            y = layer.forward_moe(
                x.cuda(), sorted_ids=cuda(sorted_ids, torch.int32),
                expert_ids=cuda(expert_ids, torch.int32),
                num_tokens_padded=cuda([padded], torch.int32),
                topk_weights=cuda(rw, torch.float32),
                block_size=block).cpu()
            xs = x.double().tolist()
            ref = [[float(torch.tensor(
                rw[r] * sum(xs[r // top_k][c] * w[(ids[r] * N + n) * K + c]
                            for c in range(K)), dtype=torch.float16))
                    for n in range(N)] for r in range(m * top_k)]
            self.assertLessEqual(relative_error(y.float(), ref), 2e-3,
                                 f"M={m}")

    def test_fp8_moe_gemm_matches_float64(self):
        # W8A8 fp8 (e4m3 weights per channel as FP8 checkpoints store them,
        # e4m3 activations per token) through HummingLayer(num_experts=E):
        # 16-bit x (quantized by the layer) and codes with their scales,
        # against float64 of the quantized operands, up to the prefill tile.
        import torch
        if torch.cuda.get_device_capability() != (9, 0):
            self.skipTest("8-bit MoE activations run on sm_90a here")
        E, N, K, top_k = 8, 256, 512, 2
        torch.manual_seed(12)
        w = torch.randn(E * N, K) * 0.02
        layer = HummingLayer(N, K, {"dtype": "e4m3", "scale_dtype": "float16"},
                             {"dtype": "e4m3"}, num_experts=E,
                             moe={"top_k": top_k})
        layer.load_from_unquantized(w)
        layer.transform()
        s = (w.abs().amax(dim=1, keepdim=True) / 448.0).half().float()
        wd = ((w / s).to(torch.float8_e4m3fn).double() * s.double()).cuda()
        q = HummingQuantizer(K, "e4m3", "float16")
        q.transform()
        rng = random.Random(13)
        for m in (1, 7, 700):  # 700: 175 tokens per expert, prefill tiles
            x = (torch.rand(m, K, device="cuda") * 2 - 1).half()
            codes, scales = q(x)
            xd = codes.double() * scales.double()
            ids = [e for _ in range(m) for e in rng.sample(range(E), top_k)]
            block = layer.moe_block_size(m)
            sorted_ids, expert_ids, padded = align_block_size(ids, E, block)
            cuda = lambda v, t: torch.tensor(v, dtype=t).cuda()
            route = dict(sorted_ids=cuda(sorted_ids, torch.int32),
                         expert_ids=cuda(expert_ids, torch.int32),
                         num_tokens_padded=cuda([padded], torch.int32),
                         block_size=block)
            ref = torch.stack([xd[r // top_k] @ wd[ids[r] * N:(ids[r] + 1) * N].T
                               for r in range(m * top_k)])
            for y in (layer.forward_moe(x, **route),
                      layer.forward_moe(codes, scale=scales, **route)):
                rel = ((y.double() - ref).norm() / ref.norm()).item()
                self.assertLess(rel, 1e-3, f"M={m}")

    def test_batched_matches_float64(self):
        # moe={"gemm_type": "grouped_masked", "all_rows": True}: a batch of
        # matmuls with one weight matrix each, no routing tensors.
        import torch
        E, N, K = 3, 128, 256
        w = exact_weights(E * N, K, 128)
        layer = HummingLayer(N, K, W4G128, num_experts=E,
                             moe={"gemm_type": "grouped_masked",
                                  "all_rows": True})
        layer.load_from_unquantized(w)
        layer.transform()
        rng = random.Random(11)
        for rows in (1, 5, 40):
            x = torch.tensor([[rng.uniform(-1, 1) for _ in range(K)]
                              for _ in range(E * rows)], dtype=torch.float16)
            y = layer.forward_moe(x.cuda()).cpu()
            xs = x.double().tolist()
            ref = [[float(torch.tensor(
                sum(xs[r][c] * w[((r // rows) * N + n) * K + c]
                    for c in range(K)), dtype=torch.float16))
                    for n in range(N)] for r in range(E * rows)]
            self.assertLessEqual(relative_error(y.float(), ref), 2e-3,
                                 f"rows={rows}")

    def test_grouped_from_topk_matches_float64(self):
        # Top-k ids routed into each grouped layout on the GPU, the
        # activations and router weights scattered, the grouped GEMM, its
        # rows gathered back, against float64; an id of no expert (-1)
        # gathers as zeros.
        import torch
        E, N, K, top_k = 8, 128, 256, 2
        w = exact_weights(E * N, K, 128)
        rng = random.Random(11)
        for gemm_type, max_tokens in (("grouped_contiguous", 0),
                                      ("grouped_masked", 64)):
            layer = HummingLayer(N, K, W4G128, num_experts=E,
                                 moe={"gemm_type": gemm_type,
                                      "router_weights": True})
            layer.load_from_unquantized(w)
            layer.transform()
            g = HummingMoeGrouping(E, top_k, max_tokens, [2 * K, 2 * N])
            g.transform()
            with self.assertRaises(HummingError) as e:
                g.route(torch.zeros(3, 4, dtype=torch.int32).cuda())
            self.assertEqual(str(e.exception),
                             "topk_ids: expected [M, 2], got [3, 4]")
            with self.assertRaises(HummingError) as e:
                g.route(torch.zeros(3, 2, dtype=torch.int32))
            self.assertEqual(str(e.exception),
                             "topk_ids: expected a CUDA tensor of "
                             "torch.int32, got [3, 2] torch.int32 on cpu")
            pos3, _ = g.route(torch.zeros(3, 2, dtype=torch.int32).cuda())
            with self.assertRaises(HummingError) as e:
                g.scatter(torch.zeros(4, K, dtype=torch.float16).cuda(),
                          pos3)
            self.assertEqual(str(e.exception),
                             "x: expected [3, columns] (one row per token "
                             "of positions), got [4, 256]")
            with self.assertRaises(HummingError) as e:
                g.gather(torch.zeros(5, N, dtype=torch.float16).cuda(), pos3)
            self.assertEqual(str(e.exception),
                             f"grouped: expected [{g.rows(3)}, columns] "
                             f"(rows(3)), got [5, {N}]")
            with self.assertRaises(HummingError) as e:
                g.gather(torch.zeros(5, N, dtype=torch.float16).cuda(),
                         pos3[:5])
            self.assertEqual(str(e.exception),
                             "positions: expected [M * 2] (route()'s), got "
                             "[5]")
            for m in (1, 9, 64):
                x = torch.tensor([[rng.uniform(-1, 1) for _ in range(K)]
                                  for _ in range(m)], dtype=torch.float16)
                ids = [e for _ in range(m) for e in rng.sample(range(E), top_k)]
                ids[0] = -1  # an expert on another rank
                rw = [rng.uniform(0.1, 1) for _ in range(m * top_k)]
                cuda = lambda v, t: torch.tensor(v, dtype=t).cuda()
                pos, layout = g.route(cuda(ids, torch.int32).view(m, top_k))
                xs = g.scatter(x.cuda(), pos)
                ws = g.scatter_weights(
                    cuda(rw, torch.float32).view(m, top_k), pos)
                ys = layer.forward_moe(xs, expert_layout=layout,
                                       topk_weights=ws)
                y = g.gather(ys, pos).cpu()
                xd = x.double().tolist()
                ref = [[0.0 if ids[r] < 0 else float(torch.tensor(
                    rw[r] * sum(xd[r // top_k][c] * w[(ids[r] * N + n) * K + c]
                                for c in range(K)), dtype=torch.float16))
                        for n in range(N)] for r in range(m * top_k)]
                self.assertTrue(bool((y[0] == 0).all()), f"{gemm_type} M={m}")
                self.assertLessEqual(relative_error(y.float(), ref), 2e-3,
                                     f"{gemm_type} M={m}")

    def test_gpt_oss_checkpoint_matches_float64(self):
        # gpt-oss's stacked MXFP4 experts: gate and up rows interleaved in
        # the checkpoint, biases, the clamped SwiGLU, bf16 activations.
        import tempfile
        import torch
        E, H, I, K = 4, 256, 128, 2
        d = tempfile.mkdtemp(prefix="humming-gpt-oss-gpu-")
        gate_up, gu_bias, down, dn_bias = write_gpt_oss_checkpoint(
            d, E, H, I, seed=6)
        moe = HummingMoeLayer.from_safetensors(d, GPT_OSS_EXPERTS, E, K)
        moe.transform(max_tokens=64)
        self.run_block(moe, gate_up, down, E, H, I, K, (1, 5, 37), 1e-2,
                       torch.bfloat16, (gu_bias, dn_bias))


if __name__ == "__main__":
    unittest.main()
