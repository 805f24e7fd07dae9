"""humming.nn (nn.Module layers) and humming.serving (an engine's
quantization method), on a GPU: state_dict round trips, .to(), act-order
GPTQ, tensor parallelism over two ranks in one process, torch.compile
(fullgraph) and CUDA graphs, all against float64.

Without torch and a CUDA device the tests skip; the package test runs them
on the GPU machine.
"""

import os
import tempfile
import unittest

from humming import HummingError

from test_layer import _cuda, exact_weights, make_checkpoint

W4G128 = {"dtype": "uint4", "group_size": 128, "scale_dtype": "float16"}


def gptq_checkpoint(torch, n, k, group=128, act_order=False, seed=0):
    """A GPTQ (v1 zero points, asymmetric, 4-bit) layer as a checkpoint
    stores it — qweight [K/8, N], qzeros [G, N/8], scales [G, N], g_idx [K]
    — and its float64 weights [N, K]. Act-order: input column i belongs to
    group g_idx[i] of a random permutation."""
    gen = torch.Generator().manual_seed(seed)
    groups = k // group
    codes = torch.randint(0, 16, (k, n), generator=gen, dtype=torch.int64)
    zeros = torch.randint(0, 16, (groups, n), generator=gen,
                          dtype=torch.int64)
    scales = (torch.rand(groups, n, generator=gen, dtype=torch.float64)
              * 0.004 + 0.001).to(torch.float16)
    if act_order:
        perm = torch.randperm(k, generator=gen)
        g_idx = torch.empty(k, dtype=torch.int64)
        g_idx[perm] = torch.arange(k) // group
    else:
        g_idx = torch.arange(k) // group

    def pack(values, dim):
        # Eight 4-bit fields per int32 along `dim`, low bits first.
        v = values.movedim(dim, -1)
        v = v.reshape(*v.shape[:-1], -1, 8)
        word = sum(v[..., j] << (4 * j) for j in range(8))
        word = (word + 2 ** 31) % 2 ** 32 - 2 ** 31
        return word.to(torch.int32).movedim(-1, dim).contiguous()
    tensors = {"qweight": pack(codes, 0),
               "qzeros": pack((zeros - 1) % 16, 1),
               "scales": scales,
               "g_idx": g_idx.to(torch.int32)}
    w = ((codes - zeros[g_idx]).double() * scales.double()[g_idx]).T
    return tensors, w.contiguous()


def gptq_config(act_order):
    return {"quant_method": "gptq", "bits": 4, "group_size": 128,
            "sym": False, "desc_act": act_order, "checkpoint_format": "gptq"}


def relative_error(torch, y, ref):
    return ((y.double() - ref).norm() / ref.norm()).item()


@unittest.skipUnless(_cuda(), "needs torch and a CUDA device")
class ModuleTest(unittest.TestCase):
    def test_state_dict_round_trip_and_moves(self):
        import torch
        import humming.nn as hnn
        n, k = 512, 1024
        w = torch.tensor(exact_weights(n, k, 128, seed=7),
                         dtype=torch.float64).reshape(n, k)
        a = hnn.HummingLayer(n, k, W4G128)
        self.assertEqual(dict(a.state_dict()), {})
        a.load_from_unquantized(w)
        sd = a.state_dict()
        self.assertEqual(sorted(sd), ["scales", "weight"])
        self.assertEqual((sd["weight"].dtype, tuple(sd["weight"].shape)),
                         (torch.int32, (512, 128)))
        self.assertEqual(sd["weight"].device.type, "cpu")
        b = hnn.HummingLayer(n, k, W4G128)
        b.load_state_dict(sd)
        for name in sd:
            self.assertTrue(torch.equal(b.state_dict()[name], sd[name]))
        # .to() moves the buffers and keeps their types; a cast does not
        # touch them.
        b.to("cuda").half()
        self.assertEqual(b.weight.device.type, "cuda")
        self.assertEqual(b.weight.dtype, torch.int32)
        self.assertEqual(b.scales.dtype, torch.float16)
        x = (torch.rand(3, 5, k, dtype=torch.float64, device="cuda") * 2
             - 1).to(torch.float16)
        y = b(x)  # prepared at the first forward on x's device
        self.assertEqual(tuple(y.shape), (3, 5, n))
        ref = x.double() @ w.cuda().T
        self.assertLess(relative_error(torch, y, ref), 1e-3)
        self.assertTrue(torch.equal(y, a(x)))
        # A state dict that does not fit says why, as load_state_dict does.
        other = hnn.HummingLayer(n, 2 * k, W4G128)
        with self.assertRaises(RuntimeError) as e:
            other.load_state_dict(sd)
        self.assertIn("weight: expected", str(e.exception))
        with self.assertRaises(RuntimeError) as e:
            other.load_state_dict({"scales": sd["scales"]})
        self.assertIn('Missing key(s) in state_dict: "weight"',
                      str(e.exception))
        with self.assertRaises(HummingError) as e:
            b(x.float())
        self.assertIn("expected a CUDA tensor of torch.float16",
                      str(e.exception))
        with self.assertRaises(HummingError) as e:
            b(x[..., :100])
        self.assertEqual(str(e.exception),
                         "expected x [..., 1024], got [3, 5, 100]")
        with self.assertRaises(HummingError) as e:
            hnn.HummingLayer(n, k, W4G128, torch_dtype=torch.float32)
        self.assertEqual(str(e.exception), "torch_dtype: expected "
                         "torch.float16 or torch.bfloat16, got torch.float32")
        # A module is prepared for GPUs only, and is not prepared inside
        # torch.compile (transform first).
        with self.assertRaises(HummingError) as e:
            b.transform("cpu")
        self.assertEqual(str(e.exception),
                         "transform: expected a CUDA device, got cpu")
        c = hnn.HummingLayer(n, k, W4G128)
        c.load_state_dict(sd)
        with self.assertRaises(HummingError) as e:
            c(x.cpu())
        self.assertEqual(str(e.exception),
                         "expected x on a CUDA device, got cpu")
        with self.assertRaises(Exception) as e:
            torch.compile(c, fullgraph=True)(x)
        self.assertIn("the layer is not prepared for cuda:0: call "
                      "transform()", str(e.exception))

    @unittest.skipUnless(_cuda() and __import__("torch").cuda.device_count()
                         >= 2, "needs two CUDA devices")
    def test_layers_on_two_gpus(self):
        # One process, one layer per GPU (each prepared on its own device,
        # run whatever the current device is); a tensor on the other GPU is
        # a clear error for a layer transformed for one.
        import torch
        import humming.nn as hnn
        from humming import HummingLayer
        n, k = 256, 512
        w = torch.tensor(exact_weights(n, k, 128, seed=9),
                         dtype=torch.float64).reshape(n, k)
        mods = []
        for d in range(2):
            m = hnn.HummingLayer(n, k, W4G128)
            m.load_from_unquantized(w)
            mods.append(m.to(f"cuda:{d}"))
        x = (torch.rand(4, k, dtype=torch.float64) * 2 - 1).to(torch.float16)
        with torch.cuda.device(0):
            ys = [mods[d](x.to(f"cuda:{d}")) for d in range(2)]
        self.assertEqual(ys[1].device, torch.device("cuda:1"))
        self.assertTrue(torch.equal(ys[0].cpu(), ys[1].cpu()))
        self.assertLess(relative_error(torch, ys[1].cpu(), x.double() @ w.T),
                        1e-3)
        layer = HummingLayer(n, k, W4G128)
        layer.load_from_unquantized(w)
        with torch.cuda.device(0):
            layer.transform()
        with self.assertRaises(HummingError) as e:
            layer(x.to("cuda:1"))
        self.assertEqual(str(e.exception), "the layer was transformed on "
                         "cuda:0; got x on cuda:1")

    def test_act_order_state_travels_with_the_weights(self):
        # A GPTQ desc_act checkpoint: the permutation is a buffer; loading
        # the state dict into a module of the natural order gives it.
        import torch
        import humming.nn as hnn
        d = tempfile.mkdtemp(prefix="humming-ckpt-")
        make_checkpoint("gptq-act-order", d)
        make_checkpoint("gptq", d)
        m = "model.layers.0.mlp.down_proj"
        a = hnn.HummingLayer.from_safetensors(os.path.join(d,
                                                           "gptq-act-order"), m)
        sd = a.state_dict()
        self.assertIn("input_permutation", sd)
        b = hnn.HummingLayer.from_safetensors(os.path.join(d, "gptq"), m)
        self.assertNotIn("input_permutation", b.state_dict())
        b.load_state_dict(sd)
        self.assertTrue(torch.equal(b.input_permutation,
                                    sd["input_permutation"]))
        x = torch.randn(4, 256, dtype=torch.float16, device="cuda")
        self.assertTrue(torch.equal(a(x), b(x)))


@unittest.skipUnless(_cuda(), "needs torch and a CUDA device")
class ServingTest(unittest.TestCase):
    H, I = 512, 1024  # hidden, intermediate

    @classmethod
    def setUpClass(cls):
        import torch
        cls.gate = gptq_checkpoint(torch, cls.I, cls.H, act_order=True,
                                   seed=1)
        cls.up = gptq_checkpoint(torch, cls.I, cls.H, act_order=True, seed=2)
        cls.down = gptq_checkpoint(torch, cls.H, cls.I, seed=3)

    def reference(self, torch, x):
        g = x.double() @ self.gate[1].cuda().T
        u = x.double() @ self.up[1].cuda().T
        h = (torch.nn.functional.silu(g) * u).to(torch.float16).double()
        return h @ self.down[1].cuda().T

    def rank_layers(self, torch, rank, size):
        """Rank `rank` of `size`: gate and up split by columns (act-order),
        down by rows, through the serving method as an engine drives it."""
        from humming.serving import HummingLinearMethod, load_weight
        layers = []
        for (tensors, _), act_order, parallel in (
                (self.gate, True, "column"), (self.up, True, "column"),
                (self.down, False, "row")):
            method = HummingLinearMethod(gptq_config(act_order))
            n = tensors["scales"].shape[1]
            k = tensors["g_idx"].shape[0]
            layer = torch.nn.Module()
            method.create_weights(
                layer, k // size if parallel == "row" else k,
                [n // size if parallel == "column" else n], k, n,
                torch.float16)
            for name, p in layer.named_parameters():
                load_weight(p, tensors[name].cuda(), rank, size)
            method.process_weights_after_loading(layer)
            self.assertEqual(list(layer.parameters()), [])
            layers.append((method, layer))
        return layers

    def test_tensor_parallel_stack_compiled_and_graphed(self):
        import torch
        ranks = [self.rank_layers(torch, r, 2) for r in range(2)]

        class Model(torch.nn.Module):
            def forward(self, x):
                out = None
                for (gm, gate), (um, up), (dm, down) in ranks:
                    h = torch.nn.functional.silu(gm.apply(gate, x)) * \
                        um.apply(up, x)
                    part = dm.apply(down, h)
                    out = part if out is None else out + part
                return out

        model = Model()
        x = (torch.rand(7, self.H, dtype=torch.float64, device="cuda") * 2
             - 1).to(torch.float16)
        ref = self.reference(torch, x)
        eager = model(x)
        self.assertLess(relative_error(torch, eager, ref), 1e-2)
        compiled = torch.compile(model, fullgraph=True)
        for m in (7, 1, 33):
            xm = (torch.rand(m, self.H, dtype=torch.float64, device="cuda")
                  * 2 - 1).to(torch.float16)
            self.assertLess(relative_error(torch, compiled(xm),
                                           self.reference(torch, xm)), 1e-2,
                            f"M = {m}")
        static_x = torch.zeros(16, self.H, dtype=torch.float16,
                               device="cuda")
        model(static_x)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_y = model(static_x)
        for seed in range(2):
            gen = torch.Generator(device="cuda").manual_seed(seed)
            static_x.copy_((torch.rand(16, self.H, generator=gen,
                                       dtype=torch.float64, device="cuda")
                            * 2 - 1).to(torch.float16))
            graph.replay()
            torch.cuda.synchronize()
            self.assertLess(relative_error(torch, static_y,
                                           self.reference(torch, static_x)),
                            1e-2, f"replay {seed}")

    def test_the_same_stack_as_modules(self):
        # humming.nn modules from the same tensors, sharded by the layer
        # itself (tp_rank / tp_size), compiled after transform_all.
        import torch
        import humming.nn as hnn

        class Rank(torch.nn.Module):
            def __init__(s, rank):
                super().__init__()
                s.gate = hnn.HummingLayer.from_tensors(
                    self.gate[0], gptq_config(True), tp_rank=rank, tp_size=2)
                s.up = hnn.HummingLayer.from_tensors(
                    self.up[0], gptq_config(True), tp_rank=rank, tp_size=2)
                s.down = hnn.HummingLayer.from_tensors(
                    self.down[0], gptq_config(False), tp_rank=rank,
                    tp_size=2, parallel="row")

            def forward(s, x):
                return s.down(torch.nn.functional.silu(s.gate(x)) * s.up(x))

        class Model(torch.nn.Module):
            def __init__(s):
                super().__init__()
                s.ranks = torch.nn.ModuleList([Rank(0), Rank(1)])

            def forward(s, x):
                return s.ranks[0](x) + s.ranks[1](x)

        model = Model().cuda()
        totals = hnn.transform_all(model, progress=False)
        self.assertEqual(totals["layers"], 6)
        compiled = torch.compile(model, fullgraph=True)
        x = (torch.rand(5, self.H, dtype=torch.float64, device="cuda") * 2
             - 1).to(torch.float16)
        self.assertLess(relative_error(torch, compiled(x),
                                       self.reference(torch, x)), 1e-2)
        sd = model.state_dict()
        self.assertIn("ranks.0.gate.input_permutation", sd)
        self.assertNotIn("ranks.0.down.input_permutation", sd)

    def test_other_formats_load_as_the_checkpoint_loader_does(self):
        # AWQ and compressed-tensors pack-quantized: parameters made by
        # create_weights, filled from the checkpoint files, give the
        # canonical tensors the directory loader gives.
        import torch
        from humming import HummingLayer
        from humming.serving import HummingLinearMethod, load_weight
        from test_layer import read_module_tensors
        d = tempfile.mkdtemp(prefix="humming-ckpt-")
        for kind, module in (
                ("awq", "model.layers.0.mlp.gate_proj"),
                ("ct-pack", "model.layers.0.self_attn.q_proj")):
            path = make_checkpoint(kind, d)
            import json
            with open(os.path.join(path, "config.json")) as f:
                whole = json.load(f)
            config = whole["quantization_config"]
            dtype = torch.bfloat16 if whole.get("torch_dtype") == \
                "bfloat16" else torch.float16
            want = HummingLayer.from_safetensors(path, module)
            n, k = want.shape_n, want.shape_k
            method = HummingLinearMethod(config, torch_dtype=dtype)
            layer = torch.nn.Module()
            method.create_weights(layer, k, [n], k, n, torch.float16)
            files = read_module_tensors(path, module)
            for name, p in layer.named_parameters():
                st, shape, data = files[name]
                t = torch.frombuffer(bytearray(data), dtype={
                    "I32": torch.int32, "F16": torch.float16,
                    "I64": torch.int64}[st]).reshape(shape)
                load_weight(p, t.cuda())
            method.process_weights_after_loading(layer)
            got = layer.humming_layer.canonical_tensors()
            expected = want.canonical_tensors()
            self.assertEqual(sorted(got), sorted(expected), kind)
            for name in got:
                self.assertTrue(torch.equal(got[name], expected[name]),
                                f"{kind} {name}")
            x = torch.randn(3, k, dtype=dtype, device="cuda")
            want.transform()
            self.assertTrue(torch.equal(method.apply(layer, x), want(x)),
                            kind)

    def test_moe_block_matches_float64(self):
        # Four GPTQ experts loaded one projection at a time into the
        # stacked parameters (two ranks splitting the intermediate size),
        # each rank's block summed, against float64.
        import torch
        from humming.serving import HummingMoeMethod, load_expert_weight
        E, H, I, K = 4, 256, 256, 2
        experts = [(gptq_checkpoint(torch, I, H, seed=10 + 3 * e),
                    gptq_checkpoint(torch, I, H, seed=11 + 3 * e),
                    gptq_checkpoint(torch, H, I, seed=12 + 3 * e))
                   for e in range(E)]
        method = HummingMoeMethod(gptq_config(False))
        ranks = []
        for rank in range(2):
            layer = torch.nn.Module()
            method.create_weights(layer, E, H, I // 2, torch.float16,
                                  top_k=K)
            for e, projections in enumerate(experts):
                for (tensors, _), shard in zip(projections,
                                               ("w1", "w3", "w2")):
                    prefix = "w2_" if shard == "w2" else "w13_"
                    for name in ("qweight", "qzeros", "scales"):
                        load_expert_weight(getattr(layer, prefix + name),
                                           tensors[name].cuda(), e, shard,
                                           rank, 2)
            method.process_weights_after_loading(layer, max_tokens=64)
            ranks.append(layer)
        gen = torch.Generator(device="cuda").manual_seed(3)
        x = (torch.rand(9, H, generator=gen, dtype=torch.float64,
                        device="cuda") * 2 - 1).to(torch.float16)
        ids = torch.stack([torch.randperm(E, device="cuda")[:K]
                           for _ in range(9)]).to(torch.int32)
        w = torch.rand(9, K, generator=gen, device="cuda")
        y = sum(method.apply(layer, x, w, ids).double() for layer in ranks)
        ref = torch.zeros(9, H, dtype=torch.float64, device="cuda")
        for t in range(9):
            for k in range(K):
                gate, up, down = (p[1].cuda() for p in experts[int(ids[t, k])])
                xt = x[t].double()
                h = torch.nn.functional.silu(xt @ gate.T) * (xt @ up.T)
                ref[t] += w[t, k].double() * (h.to(torch.float16).double()
                                               @ down.T)
        self.assertLess(relative_error(torch, y, ref), 2e-2)
        with self.assertRaises(HummingError) as e:
            HummingMoeMethod(gptq_config(True))
        self.assertIn("expected desc_act false for a MoE block",
                      str(e.exception))
        with self.assertRaises(HummingError) as e:
            load_expert_weight(ranks[0].humming_layer, None, 0, "w4")
        self.assertEqual(str(e.exception),
                         "shard: expected w1, w3 or w2, got 'w4'")

    def test_refusals_say_why(self):
        import torch
        from humming.serving import HummingLinearMethod, load_weight
        layer = torch.nn.Module()
        with self.assertRaises(HummingError) as e:
            HummingLinearMethod(gptq_config(True)).create_weights(
                layer, 256, [1024], 512, 1024, torch.float16)
        self.assertIn("an act-order (desc_act) layer cannot be split by rows",
                      str(e.exception))
        with self.assertRaises(HummingError) as e:
            HummingLinearMethod(gptq_config(False)).create_weights(
                layer, 192, [1024], 384, 1024, torch.float16)
        self.assertEqual(str(e.exception), "input_size_per_partition (192) "
                         "over group_size: expected a multiple of 128, got "
                         "192")
        with self.assertRaises(HummingError) as e:
            HummingLinearMethod({"quant_method": "bitsandbytes"})
        self.assertIn("quant_method: expected gptq, awq, compressed-tensors "
                      "or fp8", str(e.exception))
        with self.assertRaises(HummingError) as e:
            HummingLinearMethod({"quant_method": "fp8"})
        self.assertIn("fp8: expected weight_block_size", str(e.exception))
        method = HummingLinearMethod(gptq_config(False))
        layer = torch.nn.Module()
        method.create_weights(layer, 256, [512], 512, 512, torch.float16)
        with self.assertRaises(HummingError) as e:
            load_weight(layer.scales, torch.zeros(4, 384), 0, 2)
        self.assertEqual(str(e.exception), "output_dim 1: expected 512 x 2 "
                         "ranks, got 384")
        with self.assertRaises(HummingError) as e:
            method.apply(layer, torch.zeros(1, 256))
        self.assertEqual(str(e.exception), "apply: call "
                         "process_weights_after_loading first")
        # Without a GPU at process_weights_after_loading the layer is not
        # prepared, and apply says so (no GPU played by _target_device).
        import humming.serving as serving
        tensors, _ = gptq_checkpoint(torch, 512, 512, seed=4)
        for name, p in layer.named_parameters():
            load_weight(p, tensors[name], 0, 2)
        real = serving._target_device
        serving._target_device = lambda where: None
        try:
            method.process_weights_after_loading(layer)
        finally:
            serving._target_device = real
        with self.assertRaises(HummingError) as e:
            method.apply(layer, torch.zeros(1, 256, dtype=torch.float16,
                                            device="cuda"))
        self.assertEqual(str(e.exception), "apply: the layer is not "
                         "prepared for a GPU (there was none at "
                         "process_weights_after_loading)")


if __name__ == "__main__":
    unittest.main()
