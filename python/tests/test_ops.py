"""torch.ops.humming: custom operators, torch.compile and CUDA graphs.

Run: HUMMING_LIBRARY=build/lib/libhumming.so PYTHONPATH=python \
     python3 -m unittest discover -s python/tests
(GPU tests skip without torch and a CUDA device.)
"""

import random
import unittest

from humming import HummingError, HummingLayer

from test_layer import _cuda, exact_weights
from test_moe import W4G128, moe_reference, relative_error, w4g128_moe_layer


def _layer(torch, n, k, seed=1):
    w = torch.tensor(exact_weights(n, k, 128, seed=seed),
                     dtype=torch.float64).reshape(n, k)
    layer = HummingLayer(n, k, W4G128)
    layer.load_from_unquantized(w)
    layer.transform()
    return layer, w.cuda()


@unittest.skipUnless(_cuda(), "needs torch and a CUDA device")
class OpsTest(unittest.TestCase):
    def test_opcheck(self):
        # The operators' schemas, fake implementations and dispatch as
        # torch.library.opcheck tests them (the fake one under
        # FakeTensorMode and AOT dispatch with dynamic shapes).
        import torch
        import humming.ops as ops
        layer, _ = _layer(torch, 256, 512)
        ident = ops.register(layer)
        self.assertEqual(ops.register(layer), ident)
        x = torch.randn(5, 512, dtype=torch.float16, device="cuda")
        torch.library.opcheck(torch.ops.humming.gemm.default, (x, ident))
        E, H, I, K = 4, 256, 128, 2
        moe, _, _ = w4g128_moe_layer(E, H, I, K, max_tokens=16)
        ids = torch.tensor([[0, 1], [2, 3], [1, 2]], dtype=torch.int32,
                           device="cuda")
        w = torch.rand(3, 2, dtype=torch.float32, device="cuda")
        xm = torch.randn(3, H, dtype=torch.float16, device="cuda") * 0.1
        torch.library.opcheck(torch.ops.humming.moe.default,
                              (xm, ids, w, ops.register(moe)))

    def test_errors_say_what_was_expected(self):
        import torch
        import humming.ops as ops
        with self.assertRaises(HummingError) as e:
            ops.register(object())
        self.assertEqual(str(e.exception),
                         "expected a HummingLayer or HummingMoeLayer, got "
                         "object")
        x = torch.zeros(2, 512, dtype=torch.float16, device="cuda")
        with self.assertRaises(HummingError) as e:
            torch.ops.humming.gemm(x, 10 ** 9)
        self.assertEqual(str(e.exception),
                         "no live layer has id 1000000000: register the "
                         "layer with humming.ops.register() and keep it "
                         "alive")
        layer, _ = _layer(torch, 256, 512)
        with self.assertRaises(HummingError) as e:
            torch.ops.humming.moe(x, x, x, ops.register(layer))
        self.assertEqual(str(e.exception),
                         f"layer {ops.register(layer)} is a HummingLayer, "
                         "expected a HummingMoeLayer")
        with self.assertRaises(HummingError) as e:
            ops.HummingMoe(layer)
        self.assertEqual(str(e.exception), "expected a HummingMoeLayer")
        experts = HummingLayer(256, 512, W4G128, num_experts=4,
                               moe={"top_k": 2})
        with self.assertRaises(HummingError) as e:
            ops.HummingLinear(experts)
        self.assertEqual(str(e.exception), "expected a dense HummingLayer")
        with self.assertRaises(HummingError) as e:
            torch.ops.humming.gemm(x, ops.register(experts))
        self.assertEqual(str(e.exception),
                         "humming::gemm runs dense layers; this one has "
                         "experts (use forward_moe)")

    def test_compiled_fullgraph_matches_float64(self):
        # Two layers and an activation between them, one graph under
        # torch.compile(fullgraph=True), rows of any leading shape.
        import torch
        import humming.ops as ops
        up, w1 = _layer(torch, 512, 256, seed=3)
        down, w2 = _layer(torch, 256, 512, seed=4)

        class Mlp(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.up = ops.HummingLinear(up)
                self.down = ops.HummingLinear(down)

            def forward(self, x):
                return self.down(torch.nn.functional.silu(self.up(x)))

        model = Mlp()
        compiled = torch.compile(model, fullgraph=True)
        for shape in ((1, 256), (3, 5, 256), (64, 256)):
            x = (torch.rand(*shape, dtype=torch.float64, device="cuda") * 2
                 - 1).to(torch.float16)
            y = compiled(x)
            self.assertEqual(tuple(y.shape), shape[:-1] + (256,))
            h = (x.double() @ w1.T).to(torch.float16).double()
            h = torch.nn.functional.silu(h).to(torch.float16).double()
            ref = h @ w2.T
            rel = ((y.double() - ref).norm() / ref.norm()).item()
            self.assertLess(rel, 2e-3, f"shape {shape}")

    def test_cuda_graph_replays_match_float64(self):
        # Captured once, replayed on new activations written into the
        # captured input.
        import torch
        import humming.ops as ops
        layer, w = _layer(torch, 512, 1024, seed=5)
        linear = ops.HummingLinear(layer)
        static_x = torch.zeros(16, 1024, dtype=torch.float16, device="cuda")
        linear(static_x)  # warm up outside the capture
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_y = linear(static_x)
        for seed in range(3):
            gen = torch.Generator(device="cuda").manual_seed(seed)
            x = torch.rand(16, 1024, generator=gen, dtype=torch.float64,
                           device="cuda") * 2 - 1
            static_x.copy_(x.to(torch.float16))
            graph.replay()
            torch.cuda.synchronize()
            ref = static_x.double() @ w.T
            rel = ((static_y.double() - ref).norm() / ref.norm()).item()
            self.assertLess(rel, 1e-3, f"replay {seed}")

    def test_moe_compiled_matches_float64(self):
        import torch
        import humming.ops as ops
        E, H, I, K = 8, 256, 128, 2
        layer, gate_up, down = w4g128_moe_layer(E, H, I, K)
        block = torch.compile(ops.HummingMoe(layer), fullgraph=True)
        rng = random.Random(7)
        for m in (1, 9, 40):
            x = torch.tensor([[rng.uniform(-1, 1) for _ in range(H)]
                              for _ in range(m)], dtype=torch.float16)
            ids = [rng.sample(range(E), K) for _ in range(m)]
            wts = [[rng.uniform(0.1, 1) for _ in range(K)] for _ in range(m)]
            y = block(x.cuda(), torch.tensor(ids, dtype=torch.int32).cuda(),
                      torch.tensor(wts, dtype=torch.float32).cuda()).cpu()
            ref = moe_reference(x.double().tolist(), ids, wts, gate_up, down,
                                H, I)
            self.assertLessEqual(relative_error(y.float(), ref), 2e-3,
                                 f"M={m}")


if __name__ == "__main__":
    unittest.main()
