"""The Python package over the C API.

Without torch or a GPU: creation errors and a compile-only transform. With
torch and a CUDA device: a layer whose weights quantize exactly, run on the
current stream and compared with x @ W^T in float64.
"""

import json
import os
import random
import struct
import subprocess
import sys
import tempfile
import unittest

import humming
from humming import HummingError, HummingLayer, HummingQuantizer

W4G128 = {"dtype": "uint4", "group_size": 128, "scale_dtype": "float16"}


def exact_weights(n, k, group, seed=1):
    """Weights s * c with integers c in [-7, 7] and one 7 per group, so
    absmax quantization to uint4 with an f16 group scale is exact."""
    rng = random.Random(seed)
    s = 2.0 ** -6
    w = [s * rng.randint(-7, 7) for _ in range(n * k)]
    for row in range(n):
        for g in range(0, k, group):
            w[row * k + g] = 7 * s
    return w


# The humming-inspect tests' checkpoint generator.
MAKE_CHECKPOINT = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                               "..", "..", "test", "humming-inspect", "Inputs",
                               "make_checkpoint.py")


def make_checkpoint(kind, parent=None):
    """A generated checkpoint of `kind` in a directory of that name under
    `parent` (a new temporary directory by default); returns its path."""
    d = os.path.join(parent or tempfile.mkdtemp(prefix="humming-ckpt-"), kind)
    subprocess.run([sys.executable, MAKE_CHECKPOINT, d, kind], check=True)
    return d


def canonical_bytes(layer):
    """The layer's canonical tensors as (dtype, shape, bytes) triples,
    whether canonical_tensors() gave torch tensors or triples."""
    out = {}
    for name, t in layer.canonical_tensors().items():
        if isinstance(t, tuple):
            out[name] = t
        else:
            out[name] = (str(t.dtype), tuple(t.shape), bytes(
                t.contiguous().reshape(-1).view(__import__("torch").uint8)
                .tolist()))
    return out


def read_module_tensors(directory, module):
    """The tensors of `module` in a checkpoint directory's safetensors
    files, as (dtype, shape, bytes) triples by name under the module."""
    out = {}
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".safetensors"):
            continue
        with open(os.path.join(directory, name), "rb") as f:
            blob = f.read()
        size = struct.unpack("<Q", blob[:8])[0]
        header = json.loads(blob[8:8 + size])
        for key, entry in header.items():
            if key == "__metadata__" or not key.startswith(module + "."):
                continue
            begin, end = entry["data_offsets"]
            out[key[len(module) + 1:]] = (
                entry["dtype"], tuple(entry["shape"]),
                blob[8 + size + begin:8 + size + end])
    return out


class CreateTest(unittest.TestCase):
    def test_errors_say_what_was_expected(self):
        with self.assertRaises(HummingError) as e:
            HummingLayer(256, 512, {"dtype": "uint11", "group_size": 128})
        self.assertEqual(str(e.exception),
                         "weight.type: expected an element type such as "
                         "uint4, int8, e4m3 or e2m1, got 'uint11'")
        with self.assertRaises(HummingError) as e:
            HummingLayer(256, 512, W4G128, {"dtype": "e2m1"})
        self.assertEqual(str(e.exception),
                         "activation: expected f16 or bf16, got 'e2m1'")

    def test_wrong_weight_count(self):
        layer = HummingLayer(256, 512, W4G128)
        with self.assertRaises(HummingError) as e:
            layer.load_from_unquantized([0.0] * 10)
        self.assertEqual(str(e.exception),
                         "weight: expected 131072 values, got 10")

    def test_probe_mode(self):
        # The first-use probe's mode: refused when unknown; a compile-only
        # transform never probes and says nothing of it.
        layer = HummingLayer(256, 512, W4G128)
        layer.load_from_unquantized(exact_weights(256, 512, 128))
        with self.assertRaises(HummingError) as e:
            layer.set_probe("sometimes")
        self.assertEqual(str(e.exception), "expected probe mode auto, always "
                         "or never, got 'sometimes'")
        layer.set_probe("always")
        layer.transform(chip="sm_100a", compile_only=True)
        self.assertEqual(layer.probe_result, "")

    def test_batch_invariance_is_offered(self):
        # One K decomposition for every M: the heuristics' M ranges agree
        # and merge, so the layer needs fewer kernels; off again, as many
        # as before. A MoE layer refuses it.
        layer = HummingLayer(4096, 4096, W4G128)
        layer.load_from_unquantized(exact_weights(4096, 4096, 128))
        self.assertFalse(layer.batch_invariant)
        layer.transform(device="H200", compile_only=True)
        by_m = layer.kernel_count
        layer.set_batch_invariant(True)
        self.assertTrue(layer.batch_invariant)
        layer.transform(device="H200", compile_only=True)
        self.assertLess(layer.kernel_count, by_m)
        made = HummingLayer(4096, 4096, W4G128, batch_invariant=True)
        self.assertTrue(made.batch_invariant)
        moe = HummingLayer(256, 512, W4G128, num_experts=4,
                           moe={"top_k": 2})
        with self.assertRaises(HummingError) as e:
            moe.set_batch_invariant(True)
        self.assertEqual(str(e.exception),
                         "expected batch_invariant = false in a MoE layer "
                         "(its tiles follow the tokens per expert, so a "
                         "token's K decomposition depends on the batch)")

    def test_config_typos_are_refused(self):
        # A misspelt key would otherwise be ignored ({"grp_size": 128}: a
        # per-channel layer).
        with self.assertRaises(HummingError) as e:
            HummingLayer(256, 512, {"dtype": "uint4", "grp_size": 128})
        self.assertEqual(
            str(e.exception),
            "weight_config: unknown key 'grp_size' (did you mean "
            "'group_size'?); expected some of dtype, scale_dtype, "
            "granularity, group_size, block_n, zero_point, has_bias, pad_n, "
            "pad_k")
        with self.assertRaises(HummingError) as e:
            HummingLayer(256, 512, W4G128, {"dtype": "e4m3", "scale": 1.0,
                                            "output": "bfloat16"})
        self.assertTrue(str(e.exception).startswith(
            "input_config: unknown key 'output' (did you mean "
            "'output_dtype'?)"), str(e.exception))
        with self.assertRaises(HummingError) as e:
            HummingLayer(256, 512, {"group_size": 128})
        self.assertEqual(str(e.exception),
                         "weight_config: expected 'dtype' (the weights' code "
                         "type, e.g. 'uint4')")

    def test_package_version_is_the_projects(self):
        # python/pyproject.toml, humming.__version__ and CMake's
        # HUMMING_VERSION name one version.
        import re
        here = os.path.dirname(os.path.abspath(__file__))
        with open(os.path.join(here, "..", "pyproject.toml")) as f:
            pyproject = re.search(r'^version = "([^"]+)"', f.read(), re.M)
        with open(os.path.join(here, "..", "..", "CMakeLists.txt")) as f:
            cmake = re.search(r'set\(HUMMING_VERSION "([^"]+)"\)', f.read())
        self.assertIsNotNone(pyproject)
        self.assertIsNotNone(cmake)
        self.assertEqual(pyproject.group(1), humming.__version__)
        self.assertEqual(cmake.group(1), humming.__version__)

    def test_device_facts(self):
        # A known name, else the chip's representative (transform's rule).
        self.assertEqual(humming.device_facts("H200"),
                         {"sm_count": 132, "memory_gbs": 4800.0})
        self.assertEqual(humming.device_facts("H100 80GB HBM3", "sm_90a"),
                         {"sm_count": 132, "memory_gbs": 3350.0})
        with self.assertRaises(HummingError) as e:
            humming.device_facts(chip="sm_42")
        self.assertTrue(str(e.exception).startswith("expected a chip among"))

    def test_the_compiler_names_itself(self):
        text = humming.compiler()
        self.assertRegex(text, r"^(nvjitlink\+(ptxas|driver)|ptxas|nvjitlink|driver) \(.+\)$")
        self.assertEqual(humming.compiler(), text)

    def test_compile_only_transform(self):
        layer = HummingLayer(256, 512, W4G128)
        layer.load_from_unquantized(exact_weights(256, 512, 128))
        layer.transform(device="H200", compile_only=True)
        # M ranges 1-8, 9-64, 65-512 and 513-: the heuristics' ranges, those
        # with equal tiles merged (not across 8 / 9: up to 8 tokens the
        # 16-row tile takes the transposed product).
        self.assertEqual(layer.kernel_count, 4)
        self.assertTrue(layer.prepared)
        stats = layer.transform_stats
        self.assertEqual(stats.compiled + stats.cached, 4)
        self.assertGreaterEqual(stats.kernel_seconds, 0.0)
        self.assertGreaterEqual(stats.weight_seconds, 0.0)
        # Nothing the compiler might drop in these kernels.
        self.assertEqual(layer.compiler_reports, [])
        # The same description again: every kernel from the cache.
        twin = HummingLayer(256, 512, W4G128)
        twin.load_from_unquantized(exact_weights(256, 512, 128, seed=2))
        twin.transform(device="H200", compile_only=True)
        self.assertEqual(twin.transform_stats[:2], (0, 4))
        with self.assertRaises(HummingError) as e:
            layer.transform(chip="sm_75", compile_only=True)
        self.assertEqual(str(e.exception),
                         "the mma_sync kernels need sm_80 or newer, got sm_75")

    def test_transform_all_shows_progress(self):
        import io
        layers = []
        for n in (256, 512):
            layer = HummingLayer(n, 512, W4G128)
            layer.load_from_unquantized(exact_weights(n, 512, 128))
            layers.append(layer)
        out = io.StringIO()
        totals = humming.transform_all(layers, progress=out, chip="sm_90a",
                                       compile_only=True)
        self.assertEqual(totals["layers"], 2)
        self.assertEqual(totals["compiled"] + totals["cached"],
                         sum(l.kernel_count for l in layers))
        text = out.getvalue()
        self.assertIn("\r[humming] 1/2 layers, ", text)
        self.assertIn("\r[humming] 2/2 layers, ", text)
        self.assertTrue(text.endswith("\n"))

    def test_tile_config_replaces_the_heuristics(self):
        layer = HummingLayer(256, 512, W4G128)
        layer.load_from_unquantized(exact_weights(256, 512, 128))
        layer.transform(device="H200", compile_only=True,
                        tile_config="#humming.tile_config<block = [128, 128, 32],"
                                    " warp = [64, 64, 32], stages = 3>")
        self.assertEqual(layer.kernel_count, 1)
        # The warp-specialized wgmma kernel's setmaxnreg: nvJitLink reports
        # dropping it (ptxas keeps it and says nothing).
        layer.transform(device="H200", compile_only=True,
                        tile_config="#humming.tile_config<block = [128, 256, "
                                    "64], warp = [128, 32, 64], stages = 4, "
                                    "mma = wgmma, warp_specialized = true, "
                                    "mbarrier = true>")
        for report in layer.compiler_reports:
            self.assertTrue(report.startswith("kernel 0: "), report)
        with self.assertRaises(HummingError) as e:
            layer.transform(device="H200", compile_only=True,
                            tile_config="#humming.tile_config<block = [16, 64]>")
        self.assertTrue(str(e.exception).startswith(
            "expected a #humming.tile_config, got "), str(e.exception))


def canonical_w4(n, k, seed):
    """Canonical uint4 g128 tensors as raw bytes (codes packed LSB first
    along K into int32 words, f16 group scales) and the weights they stand
    for, w[n][k] = (code - 8) * scale (unsigned codes without zero points
    have the implicit zero 2^(b-1))."""
    import array
    import struct
    rng = random.Random(seed)
    codes = [[rng.randrange(16) for _ in range(k)] for _ in range(n)]
    scales = [[rng.choice((0.25, 0.5, 0.125)) for _ in range(k // 128)]
              for _ in range(n)]
    words = array.array("I")
    for row in codes:
        for w in range(k // 8):
            words.append(sum(row[8 * w + j] << (4 * j) for j in range(8)))
    raw_scales = struct.pack("<" + "e" * (n * (k // 128)),
                             *[v for row in scales for v in row])
    w = [[(codes[r][c] - 8) * scales[r][c // 128] for c in range(k)]
         for r in range(n)]
    return words.tobytes(), raw_scales, w


class LoadQuantizedTest(unittest.TestCase):
    """HummingLayer.load_quantized: tensors already in the standard
    format (a serving engine's loaded tensors)."""

    def test_errors_say_what_was_expected(self):
        layer = HummingLayer(64, 128, W4G128)
        with self.assertRaises(HummingError) as e:
            layer.load_quantized(bytes(100), bytes(128))
        self.assertEqual(str(e.exception),
                         "weight: expected 4096 bytes (I32 [64, 16]), got 100")
        with self.assertRaises(HummingError) as e:
            layer.load_quantized(bytes(4096))
        self.assertEqual(str(e.exception),
                         "scales: expected 128 bytes (F16 [64, 1]), got 0")
        with self.assertRaises(HummingError) as e:
            layer.load_quantized(object(), bytes(128))
        self.assertEqual(str(e.exception),
                         "weight: expected a torch tensor or a bytes-like "
                         "object, got object")
        experts = HummingLayer(256, 512, W4G128, num_experts=4,
                               moe={"top_k": 2})
        with self.assertRaises(HummingError) as e:
            experts.load_quantized(bytes(4))
        self.assertEqual(str(e.exception),
                         "load_quantized loads dense layers; a MoE layer "
                         "quantizes float weights (load_from_unquantized)")

    def test_loads_and_compiles(self):
        weight, scales, _ = canonical_w4(64, 256, seed=2)
        layer = HummingLayer(64, 256, W4G128)
        layer.load_quantized(weight, scales)
        layer.transform(device="H200", compile_only=True)
        self.assertGreater(layer.kernel_count, 0)


class QuantizerTest(unittest.TestCase):
    def test_errors_say_what_was_expected(self):
        with self.assertRaises(HummingError) as e:
            HummingQuantizer(4096, "int2")
        self.assertEqual(str(e.exception),
                         "type: expected e4m3, e5m2, int8, int4 or e2m1, "
                         "got 'int2'")
        with self.assertRaises(HummingError) as e:
            HummingQuantizer(4000, "int8", group_size=128)
        self.assertEqual(str(e.exception),
                         "expected K to be a multiple of the activation group "
                         "128, got K = 4000")

    def test_a_static_scale_has_no_group(self):
        with self.assertRaises(HummingError) as e:
            HummingQuantizer(4096, "int8", group_size=128, static=True)
        self.assertEqual(str(e.exception),
                         "expected group_size = 0 with a static scale, got 128")

    def test_compile_only_transform(self):
        q = HummingQuantizer(4096, "float8_e4m3fn", "bfloat16")
        q.transform(chip="sm_90a", compile_only=True)
        with self.assertRaises(HummingError) as e:
            q.transform(chip="sm_80", compile_only=True)
        self.assertIn("f8E4M3FN activations need cvt to fp8 (sm_89 and later), "
                      "got sm_80", str(e.exception))


FP8 = {"dtype": "e4m3", "scale_dtype": "float16"}  # per channel


class EightBitActivationTest(unittest.TestCase):
    def test_errors_say_what_was_expected(self):
        with self.assertRaises(HummingError) as e:
            HummingLayer(256, 512, FP8, {"dtype": "e4m3", "scaling": "group"})
        self.assertEqual(str(e.exception),
                         "expected input_config['group_size'] (the activation "
                         "group along K) with group scaling")

        with self.assertRaises(HummingError) as e:
            HummingLayer(256, 512, FP8, {"dtype": "e4m3", "scaling": "static"})
        self.assertEqual(str(e.exception), "expected input_config['scale'] "
                         "(the static activation scale)")
        with self.assertRaises(HummingError) as e:
            HummingLayer(256, 512, FP8, {"dtype": "float8_e4m3fn"},
                         f16_accumulation=True)
        self.assertEqual(str(e.exception),
                         "f16_accumulation applies to 16-bit activations")

    def test_scales_default_to_the_output_type(self):
        # No scale_dtype: the output's 16-bit type, not the activations'.
        layer = HummingLayer(256, 512, {"dtype": "uint4", "group_size": 128},
                             {"dtype": "e4m3", "output_dtype": "bfloat16"})
        layer.load_from_unquantized(exact_weights(256, 512, 128))
        layer.transform(chip="sm_90a", compile_only=True)
        self.assertTrue(layer.prepared)

    def test_int8_activations_take_integer_weights(self):
        with self.assertRaises(HummingError) as e:
            HummingLayer(256, 512, FP8, {"dtype": "int8"})
        self.assertEqual(str(e.exception), "float weights (f8E4M3FN) cannot "
                         "be used with integer activations (si8)")
        layer = HummingLayer(256, 512, W4G128, {"dtype": "int8"})
        layer.load_from_unquantized(exact_weights(256, 512, 128))
        layer.transform(chip="sm_90a", compile_only=True)
        self.assertTrue(layer.prepared)

    def test_compile_only_transform(self):
        layer = HummingLayer(256, 512, W4G128, {"dtype": "float8_e4m3fn"})
        layer.load_from_unquantized(exact_weights(256, 512, 128))
        layer.transform(chip="sm_90a", compile_only=True)
        self.assertTrue(layer.prepared)
        # sm_89: the mma_sync m16n8k32 kernels; sm_86 has no fp8 MMA.
        layer.transform(chip="sm_89", compile_only=True)
        self.assertTrue(layer.prepared)
        with self.assertRaises(HummingError) as e:
            layer.transform(chip="sm_86", compile_only=True)
        self.assertEqual(str(e.exception), "f8E4M3FN activations need sm_89 "
                         "or newer (m16n8k32 f8E4M3FN MMAs); got sm_86")


class CheckpointTest(unittest.TestCase):
    """A GPTQ checkpoint written by the humming-inspect tests' generator."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="humming-ckpt-")
        for kind in ("gptq", "gptq-act-order", "ct-w8a8-int8",
                     "ct-w8a8-fp8", "ct-w8a8-int8-static", "fp8-block",
                     "ct-w4a4"):
            make_checkpoint(kind, cls.dir)
        cls.module = "model.layers.0.mlp.down_proj"

    def test_from_safetensors(self):
        layer = HummingLayer.from_safetensors(self.dir + "/gptq", self.module)
        self.assertEqual((layer.shape_n, layer.shape_k), (64, 256))
        layer.transform(device="H200", compile_only=True)
        self.assertEqual(layer.kernel_count, 3)  # M 1-8, 9-64 and 65-

    def test_eight_bit_activations_from_the_checkpoint(self):
        # W8A8 int8 and fp8 (compressed-tensors, dynamic per-token
        # activations): the checkpoint's own activations on request.
        for kind, act, older, why in (
                ("ct-w8a8-int8", "int8", "sm_75", "need sm_80 or newer"),
                ("ct-w8a8-fp8", "e4m3", "sm_86", "need sm_89 or newer"),
                ("ct-w4a4", "int4", "sm_75", "need sm_80 or newer")):
            layer = HummingLayer.from_safetensors(
                self.dir + "/" + kind, self.module, activations="checkpoint")
            self.assertEqual((layer._act, layer._scaling), (act, "token"))
            self.assertEqual((layer.shape_n, layer.shape_k), (256, 512))
            layer.transform(chip="sm_90a", compile_only=True)
            self.assertTrue(layer.prepared)
            layer.transform(chip="sm_89", compile_only=True)  # mma_sync
            with self.assertRaises(HummingError) as e:
                layer.transform(chip=older, compile_only=True)
            self.assertIn(why, str(e.exception))
        with self.assertRaises(HummingError) as e:
            HummingLayer.from_safetensors(self.dir + "/gptq", self.module,
                                          activations="checkpoint")
        self.assertIn("the checkpoint's activations are", str(e.exception))
        self.assertIn("(not quantized): use "
                      "humming_layer_create_from_checkpoint", str(e.exception))
        # Static scales (the checkpoint's input_scale is not read yet) are
        # refused with the reason; FP8 blocks' per-group activations run
        # over K-major weights on sm_90a, and nowhere else.
        with self.assertRaises(HummingError) as e:
            HummingLayer.from_safetensors(self.dir + "/ct-w8a8-int8-static",
                                          self.module, activations="checkpoint")
        self.assertIn("activations have a static scale, which is not read "
                      "from checkpoints yet", str(e.exception))
        layer = HummingLayer.from_safetensors(
            self.dir + "/fp8-block", "model.layers.0.mlp.experts.0.up_proj",
            activations="checkpoint")
        self.assertEqual((layer._act, layer._scaling, layer._group),
                         ("e4m3", "group", 128))
        layer.transform(chip="sm_90a", compile_only=True)
        self.assertTrue(layer.prepared)
        with self.assertRaises(HummingError) as e:
            layer.transform(chip="sm_89", compile_only=True)
        self.assertIn("per-group f8E4M3FN activation scales are applied by "
                      "sm_90a's wgmma kernels", str(e.exception))
        with self.assertRaises(HummingError) as e:
            HummingLayer.from_safetensors(self.dir + "/gptq", self.module,
                                          activations="8-bit")
        self.assertEqual(str(e.exception), "activations: expected '16-bit' "
                         "or 'checkpoint', got '8-bit'")

    def test_tensor_parallel_shards(self):
        # GPTQ 64 x 256, groups of 128: two ranks split N (32 each) or K
        # (128 each); four ranks along K would cut a group.
        for parallel, shape in (("column", (32, 256)), ("row", (64, 128))):
            for rank in (0, 1):
                layer = HummingLayer.from_safetensors(
                    self.dir + "/gptq", self.module, tp_rank=rank, tp_size=2,
                    parallel=parallel)
                self.assertEqual((layer.shape_n, layer.shape_k), shape)
                layer.transform(device="H200", compile_only=True)
        with self.assertRaises(HummingError) as e:
            HummingLayer.from_safetensors(self.dir + "/gptq", self.module,
                                          tp_rank=0, tp_size=4, parallel="row")
        self.assertEqual(str(e.exception), self.module + ": a shard of 64 "
                         "along K (K = 256 over 4 ranks) would cut a scale "
                         "group (128 along K): expected shards of a multiple "
                         "of 128")
        with self.assertRaises(HummingError) as e:
            HummingLayer.from_safetensors(self.dir + "/gptq", self.module,
                                          tp_rank=0, tp_size=2,
                                          parallel="diagonal")
        self.assertEqual(str(e.exception),
                         "parallel: expected column or row, got 'diagonal'")

    def test_load_into_a_matching_layer(self):
        layer = HummingLayer(64, 256, W4G128)
        layer.load_from_safetensors(self.dir + "/gptq", self.module)
        other = HummingLayer(64, 512, W4G128)
        with self.assertRaises(HummingError) as e:
            other.load_from_safetensors(self.dir + "/gptq", self.module)
        self.assertIn("expected the layer's", str(e.exception))
        self.assertIn("64x512, the checkpoint has", str(e.exception))

    def test_act_order_layers_gather_their_activations(self):
        # GPTQ desc_act: K is permuted at load; the layer knows the
        # permutation (g_idx sorted by group) and gathers x by it.
        layer = HummingLayer.from_safetensors(self.dir + "/gptq-act-order",
                                              self.module)
        perm = layer.input_permutation
        self.assertEqual(sorted(perm), list(range(256)))
        self.assertNotEqual(perm, list(range(256)))
        g_idx = [((i * 7) % 256) // 128 for i in range(256)]
        self.assertEqual([g_idx[c] for c in perm], sorted(g_idx))
        layer.transform(device="H200", compile_only=True)
        # Column shards keep K (and the permutation); row shards would
        # scatter it.
        shard = HummingLayer.from_safetensors(
            self.dir + "/gptq-act-order", self.module, tp_rank=1, tp_size=2,
            parallel="column")
        self.assertEqual(shard.input_permutation, perm)
        with self.assertRaises(HummingError) as e:
            HummingLayer.from_safetensors(
                self.dir + "/gptq-act-order", self.module, tp_rank=1,
                tp_size=2, parallel="row")
        self.assertIn("act-order (desc_act) permutes K, so a row shard",
                      str(e.exception))
        # The layer (16-bit activations) gathers x itself: its transform
        # compiles the gather kernel beside the GEMMs.
        stats = layer.transform_stats
        self.assertEqual(stats.compiled + stats.cached,
                         layer.kernel_count + 1)
        # Told that the caller gathers, it compiles the GEMMs alone.
        lib = humming._library()
        self.assertEqual(lib.humming_layer_set_activations_gathered(
            layer._handle, 1), 0)
        layer.transform(device="H200", compile_only=True)
        stats = layer.transform_stats
        self.assertEqual(stats.compiled + stats.cached, layer.kernel_count)

    def test_missing_module(self):
        with self.assertRaises(HummingError) as e:
            HummingLayer.from_safetensors(self.dir + "/gptq", "model.nope")
        self.assertTrue(str(e.exception))

    def test_from_tensors_is_the_checkpoint_layer(self):
        # A serving engine's loaded tensors (here read back from the files,
        # as (dtype, shape, bytes) triples) make the layer the directory
        # makes: the same canonical tensors, act-order permutation and
        # shards; the config as config.json or its quantization_config.
        for kind in ("gptq", "gptq-act-order", "ct-w8a8-int8"):
            d = self.dir + "/" + kind
            with open(d + "/config.json") as f:
                config = json.load(f)
            tensors = read_module_tensors(d, self.module)
            for tp in ({}, {"tp_rank": 1, "tp_size": 2}):
                want = HummingLayer.from_safetensors(d, self.module, **tp)
                got = HummingLayer.from_tensors(tensors, config,
                                                module=self.module, **tp)
                self.assertEqual((got.shape_n, got.shape_k),
                                 (want.shape_n, want.shape_k))
                self.assertEqual(canonical_bytes(got), canonical_bytes(want),
                                 kind)
                self.assertEqual(got.input_permutation,
                                 want.input_permutation)
        got = HummingLayer.from_tensors(
            read_module_tensors(self.dir + "/gptq", self.module),
            config={"quant_method": "gptq", "bits": 4, "group_size": 128,
                    "sym": True, "desc_act": False},
            torch_dtype="bfloat16")
        self.assertEqual(got._act, "bf16")
        # (Symmetric: the stored zero points are all 8, so none are kept;
        # the scales keep the checkpoint's f16.)
        canonical = canonical_bytes(got)
        self.assertEqual(sorted(canonical), ["scales", "weight"])
        self.assertIn(canonical["weight"][0], ("I32", "torch.int32"))
        self.assertEqual(canonical["weight"][1], (64, 32))
        self.assertIn(canonical["scales"][0], ("F16", "torch.float16"))
        self.assertEqual(canonical["scales"][1], (64, 2))
        got.transform(device="H200", compile_only=True)
        # What each bad argument says.
        tensors = read_module_tensors(self.dir + "/gptq", self.module)
        for args, why in (
                ((tensors, "gptq"), "config: expected a dict (config.json or "
                 "its quantization_config), got str"),
                (({}, {"quant_method": "gptq"}), "tensors: expected a "
                 "non-empty dict of name -> tensor"),
                (({"qweight": [1, 2]}, {"quant_method": "gptq"}),
                 "qweight: expected a torch tensor or a (dtype, shape, bytes) "
                 "triple, got list"),
                (({"qweight": ("I32", (2,), b"\0" * 4)},
                  {"quant_method": "gptq"}),
                 "tensor 0 (qweight): expected 8 bytes of I32 data, got 4"),
                ((dict(tensors, scales=("F16", (2, 64), b"")),
                  {"quant_method": "gptq", "bits": 4, "group_size": 128}),
                 "tensor 2 (scales): expected 256 bytes of F16 data, got 0")):
            with self.assertRaises(HummingError) as e:
                HummingLayer.from_tensors(*args)
            self.assertEqual(str(e.exception), why)
        with self.assertRaises(HummingError) as e:
            HummingLayer.from_tensors(tensors, {"quant_method": "gptq"},
                                      torch_dtype="float32")
        self.assertEqual(str(e.exception), "torch_dtype: expected float16 "
                         "or bfloat16, got float32")


def _cuda():
    try:
        import torch
        return torch.cuda.is_available()
    except ImportError:
        return False


def _workspace_split_tile(torch):
    """A tile whose kernel for M <= 64 splits K across 4 CTAs through a
    workspace (sm_90a), or None (the heuristics) on other chips."""
    if torch.cuda.get_device_capability() != (9, 0):
        return None
    return ("#humming.tile_config<m = [1, 64], block = [64, 256, 64], "
            "warp = [64, 32, 64], mma = wgmma, warp_specialized = true, "
            "mbarrier = true, split_k = 4, workspace_split = true>")


@unittest.skipUnless(_cuda(), "needs torch and a CUDA device")
class GpuTest(unittest.TestCase):
    def test_forward_matches_float64(self):
        import torch
        n, k = 512, 1024
        w = torch.tensor(exact_weights(n, k, 128), dtype=torch.float64)
        w = w.reshape(n, k)
        layer = HummingLayer(n, k, W4G128)
        layer.load_from_unquantized(w)
        layer.transform()
        for m in (1, 7, 33, 200):
            x = torch.rand(m, k, dtype=torch.float64, device="cuda") * 2 - 1
            x16 = x.to(torch.float16)
            y = layer(x16)
            torch.cuda.synchronize()
            ref = x16.to(torch.float64) @ w.to("cuda").T
            rel = ((y.double() - ref).norm() / ref.norm()).item()
            self.assertLess(rel, 1e-3, f"M={m}")
            self.assertFalse(torch.isnan(y).any().item())

    def test_probe_always_keeps_kernels_that_agree(self):
        # The first-use probe forced on this GPU: the layer's kernels agree
        # with the canonical kernel and are kept; forward stays right.
        import torch
        n, k = 512, 1024
        w = torch.tensor(exact_weights(n, k, 128), dtype=torch.float64)
        w = w.reshape(n, k)
        layer = HummingLayer(n, k, W4G128)
        layer.load_from_unquantized(w)
        layer.set_probe("always")
        layer.transform()
        self.assertTrue(layer.probe_result.startswith(
            "the layer's kernels agree with the canonical kernel"),
            layer.probe_result)
        x = (torch.rand(33, k, device="cuda") * 2 - 1).to(torch.float16)
        y = layer(x)
        torch.cuda.synchronize()
        ref = x.double() @ w.to("cuda").T
        self.assertLess(((y.double() - ref).norm() / ref.norm()).item(), 1e-3)

    def test_batch_invariant_rows_are_bitwise_the_same_at_every_m(self):
        # The same token's row in batches of 1 .. 700 rows with random
        # others: bitwise equal with batch_invariant (every M one K
        # decomposition), against float64 too — of weights uint4 g128
        # holds exactly (integers in [-7, 7] times 2^-6, a 7 in every
        # group), so that the reference is the layer's own weights.
        import torch
        torch.manual_seed(7)
        n, k = 4096, 4096
        w = torch.randint(-7, 8, (n, k), dtype=torch.float64) * 2.0 ** -6
        w[:, ::128] = 7 * 2.0 ** -6
        layer = HummingLayer(n, k, W4G128, batch_invariant=True)
        layer.load_from_unquantized(w)
        layer.transform()
        row = (torch.rand(1, k, device="cuda") * 2 - 1).to(torch.float16)
        first = None
        for m in (1, 5, 16, 17, 64, 129, 513, 700):
            x = (torch.rand(m, k, device="cuda") * 2 - 1).to(torch.float16)
            at = m // 2
            x[at] = row[0]
            y = layer(x)
            torch.cuda.synchronize()
            if first is None:
                first = y[at].clone()
                ref = row.double() @ w.to("cuda").T
                rel = ((first.double() - ref[0]).norm() / ref.norm()).item()
                self.assertLess(rel, 1e-3)
            self.assertTrue(torch.equal(y[at], first), f"M={m}")

    def test_streams_at_once_and_graph_capture_match_the_call_alone(self):
        # One layer from four torch streams at once (each call's output its
        # own), then captured on a fresh stream (a reserved scratch block):
        # every output equals the call made alone, bit for bit. M <= 64
        # splits K four ways through the workspace that each stream has its
        # own of (a forced tile on sm_90a; elsewhere the heuristics').
        import torch
        torch.manual_seed(11)
        n, k = 1024, 8192
        w = torch.randn(n, k, dtype=torch.float64) * 0.01
        # Scratch blocks: the default stream, the four below and torch's
        # capture stream, whose first call comes during the capture (a
        # block made with the layer; the eager streams would take the
        # default two first).
        layer = HummingLayer(n, k, W4G128, streams=6)
        layer.load_from_unquantized(w)
        layer.transform(tile_config=_workspace_split_tile(torch))
        ms = (1, 16, 7, 3)
        xs = [(torch.rand(m, k, device="cuda") * 2 - 1).to(torch.float16)
              for m in ms]
        alone = []
        for x in xs:
            alone.append(layer(x))
            torch.cuda.synchronize()
        streams = [torch.cuda.Stream() for _ in ms]
        rounds = 200
        outs = [[None] * rounds for _ in ms]
        for r in range(rounds):
            for i, (x, st) in enumerate(zip(xs, streams)):
                with torch.cuda.stream(st):
                    outs[i][r] = layer(x)
        torch.cuda.synchronize()
        for i in range(len(ms)):
            for r in range(rounds):
                self.assertTrue(torch.equal(outs[i][r], alone[i]),
                                f"stream {i}, round {r}")
        # Captured on torch's capture stream (its first call: a reserved
        # block), replayed beside eager calls on another stream.
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            captured = layer(xs[1])
        other = torch.cuda.Stream()
        for _ in range(20):
            graph.replay()
            with torch.cuda.stream(other):
                eager = layer(xs[1])
        torch.cuda.synchronize()
        self.assertTrue(torch.equal(captured, alone[1]))
        self.assertTrue(torch.equal(eager, alone[1]))

    def test_capture_without_a_free_scratch_block_says_so(self):
        import torch
        n, k = 1024, 8192
        w = torch.randn(n, k, dtype=torch.float64) * 0.01
        layer = HummingLayer(n, k, W4G128, streams=0)
        layer.load_from_unquantized(w)
        tile = _workspace_split_tile(torch)
        if tile is None:
            self.skipTest("the forced workspace_split tile is for sm_90a")
        layer.transform(tile_config=tile)
        x = torch.zeros(1, k, dtype=torch.float16, device="cuda")
        graph = torch.cuda.CUDAGraph()
        with self.assertRaisesRegex(HummingError,
                                    "captures a CUDA graph.*LayerTarget::"
                                    "streams, at least 1"):
            with torch.cuda.graph(graph):
                layer(x)

    def test_cuda_weights_quantize_on_the_device(self):
        # load_from_unquantized of a CUDA tensor quantizes on the GPU: the
        # canonical tensors equal the host's from the same values, for a
        # schema with zero points and bf16 weights; a schema the kernel
        # does not take (float codes) is quantized on the host instead.
        import torch
        torch.manual_seed(3)
        for config, dtype in (
                ({"dtype": "uint4", "group_size": 128, "scale_dtype":
                  "bfloat16", "zero_point": "int"}, torch.bfloat16),
                (W4G128, torch.float16),
                ({"dtype": "e2m1", "group_size": 32, "scale_dtype": "ue8m0"},
                 torch.float32)):
            n, k = 256, 512
            w = (torch.randn(n, k) * 0.02).to(dtype)
            on_gpu = HummingLayer(n, k, config)
            on_gpu.load_from_unquantized(w.cuda())
            on_cpu = HummingLayer(n, k, config)
            on_cpu.load_from_unquantized(w)
            self.assertEqual(canonical_bytes(on_gpu), canonical_bytes(on_cpu),
                             str(config))
            on_gpu.transform()

    def test_load_quantized_matches_float64(self):
        # Canonical tensors from torch (as a serving engine holds them,
        # here on the GPU) against the weights they stand for.
        import torch
        n, k = 256, 512
        weight, scales, w = canonical_w4(n, k, seed=4)
        layer = HummingLayer(n, k, W4G128)
        layer.load_quantized(
            torch.frombuffer(bytearray(weight), dtype=torch.int32).cuda()
            .reshape(n, k // 8),
            torch.frombuffer(bytearray(scales), dtype=torch.float16).cuda()
            .reshape(n, k // 128))
        layer.transform()
        wd = torch.tensor(w, dtype=torch.float64, device="cuda")
        for m in (1, 19):
            x = (torch.rand(m, k, dtype=torch.float64, device="cuda") * 2
                 - 1).to(torch.float16)
            y = layer(x)
            ref = x.double() @ wd.T
            rel = ((y.double() - ref).norm() / ref.norm()).item()
            self.assertLess(rel, 1e-3, f"M={m}")

    def test_int8_checkpoint_with_its_activations_matches_float64(self):
        # The W8A8-INT8 checkpoint (int8 per channel, scale 0.002, dynamic
        # per-token int8 activations) with its own activations: the layer
        # quantizes x; the reference multiplies the quantizer's codes and
        # scales by the checkpoint's weights in float64.
        import importlib.util
        import torch
        if torch.cuda.get_device_capability() != (9, 0):
            self.skipTest("8-bit activations run on sm_90a")
        d = make_checkpoint("ct-w8a8-int8")
        spec = importlib.util.spec_from_file_location("make_checkpoint",
                                                      MAKE_CHECKPOINT)
        gen = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(gen)
        n, k = 256, 512
        codes8 = torch.frombuffer(bytearray(gen.rand_bytes(n * k, 7)),
                                  dtype=torch.int8).reshape(n, k)
        w = codes8.double().to("cuda") * float(torch.tensor(0.002))
        layer = HummingLayer.from_safetensors(
            d, "model.layers.0.mlp.down_proj", activations="checkpoint")
        layer.transform()
        q = HummingQuantizer(k, "int8", "bfloat16")
        q.transform()
        for m in (1, 16, 100):
            x = (torch.rand(m, k, device="cuda") * 2 - 1).bfloat16()
            codes, scales = q(x)
            ref = (codes.double() * scales.double()) @ w.T
            y = layer(x)
            torch.cuda.synchronize()
            self.assertEqual(y.dtype, torch.bfloat16)
            rel = ((y.double() - ref).norm() / ref.norm()).item()
            self.assertLess(rel, 5e-3, f"M={m}")

    def test_fine_grained_fp8_matches_float64(self):
        # DeepSeek-V3's FP8: e4m3 weights with f32 scales per 128 x 128
        # block, e4m3 activations per token and group of 128 of K (the
        # layer quantizes 16-bit x per group, or takes the codes with
        # their [M, K / 128] scales); the reference multiplies the codes
        # and scales in float64 by the dequantized weights.
        import torch
        if torch.cuda.get_device_capability() != (9, 0):
            self.skipTest("per-group activation scales run on sm_90a")
        n, k = 512, 1024
        torch.manual_seed(11)
        w = torch.randn(n, k, dtype=torch.float32) * 0.02
        layer = HummingLayer(n, k, {"dtype": "e4m3", "granularity": "block",
                                    "group_size": 128, "block_n": 128,
                                    "scale_dtype": "float32"},
                             {"dtype": "e4m3", "scaling": "group",
                              "group_size": 128})
        layer.load_from_unquantized(w)
        layer.transform()
        # The layer's own weights, dequantized: blocks of 128 x 128.
        blocks = w.reshape(n // 128, 128, k // 128, 128)
        scale = blocks.abs().amax(dim=(1, 3), keepdim=True) / 448.0
        wq = (blocks / scale).to(torch.float8_e4m3fn).double() * scale.double()
        wd = wq.reshape(n, k).cuda()
        q = HummingQuantizer(k, "e4m3", "float16", group_size=128)
        q.transform()
        for m in (1, 16, 100, 700):
            x = (torch.rand(m, k, device="cuda") * 2 - 1).half()
            codes, scales = q(x)
            self.assertEqual(list(scales.shape), [m, k // 128])
            xd = (codes.double().reshape(m, k // 128, 128) *
                  scales.double().reshape(m, k // 128, 1)).reshape(m, k)
            ref = xd @ wd.T
            for y in (layer(x), layer(codes, scale=scales)):
                torch.cuda.synchronize()
                rel = ((y.double() - ref).norm() / ref.norm()).item()
                self.assertLess(rel, 1e-3, f"M={m}")
                self.assertFalse(torch.isnan(y).any().item())

    def test_fp8_rows_of_k_not_a_multiple_of_16_match_float64(self):
        # K = 1032: rows of 1032 e4m3 codes cannot be copied in 16-byte
        # pieces; the layer's GEMM reads rows of activation_k = 1040, the
        # 8 codes past K zero (its own quantizer writes them so, and so does
        # a HummingQuantizer made with codes_k). 16-bit x stays [M, 1032].
        import torch
        if torch.cuda.get_device_capability() < (8, 9):
            self.skipTest("fp8 activations need sm_89")
        n, k = 256, 1032
        torch.manual_seed(5)
        w = torch.randn(n, k, dtype=torch.float32) * 0.02
        layer = HummingLayer(n, k, {"dtype": "e4m3", "scale_dtype": "float32"},
                             {"dtype": "e4m3"})
        self.assertEqual(layer.activation_k, 1040)
        layer.load_from_unquantized(w)
        layer.transform()
        scale = w.abs().amax(dim=1, keepdim=True) / 448.0
        wd = ((w / scale).to(torch.float8_e4m3fn).double() *
              scale.double()).cuda()
        q = HummingQuantizer(k, "e4m3", "float16", codes_k=layer.activation_k)
        q.transform()
        for m in (1, 16, 100):
            x = (torch.rand(m, k, device="cuda") * 2 - 1).half()
            codes, scales = q(x)
            self.assertEqual(list(codes.shape), [m, 1040])
            self.assertEqual(codes[:, k:].view(torch.uint8).abs().sum().item(), 0)
            ref = (codes[:, :k].double() * scales.double()) @ wd.T
            for y in (layer(x), layer(codes, scale=scales)):
                torch.cuda.synchronize()
                rel = ((y.double() - ref).norm() / ref.norm()).item()
                self.assertLess(rel, 1e-3, f"M={m}")
                self.assertFalse(torch.isnan(y).any().item())
            with self.assertRaisesRegex(HummingError, r"\[M, 1040\]"):
                layer(codes[:, :k].contiguous(), scale=scales)

    def test_int4_activations_match_float64(self):
        # W4A4 int (si4 weights per channel, int4 activations per token):
        # the layer quantizes x (or takes the quantizer's packed codes); the
        # reference multiplies the unpacked codes and scales by the exact
        # weights in float64. sm_90 runs the int4 MMAs emulated.
        import torch
        if torch.cuda.get_device_capability() < (8, 0):
            self.skipTest("int4 MMAs need sm_80")
        n, k = 256, 512
        w = torch.tensor(exact_weights(n, k, k), dtype=torch.float64)
        w = w.reshape(n, k)
        layer = HummingLayer(n, k, {"dtype": "int4", "scale_dtype": "float16"},
                             {"dtype": "int4"})
        layer.load_from_unquantized(w)
        layer.transform()
        q = HummingQuantizer(k, "int4", "float16")
        q.transform()
        for m in (1, 16, 100):
            x = (torch.rand(m, k, device="cuda") * 2 - 1).half()
            codes, scales = q(x)
            lo = (codes & 0xF).to(torch.int16)
            hi = (codes >> 4).to(torch.int16)
            both = torch.stack((lo, hi), dim=2).reshape(m, k)
            both = torch.where(both >= 8, both - 16, both)
            ref = (both.double() * scales.double()) @ w.to("cuda").T
            for y in (layer(x), layer(codes, scale=scales)):
                torch.cuda.synchronize()
                rel = ((y.double() - ref).norm() / ref.norm()).item()
                self.assertLess(rel, 1e-3, f"M={m}")
        with self.assertRaises(HummingError) as e:
            layer(codes[:, :-1], scale=scales)
        self.assertIn(f"expected x of shape [M, {k // 2}]", str(e.exception))

    def test_act_order_layer_matches_float64(self):
        # The GPTQ desc_act checkpoint against its float64 dequantization
        # in the checkpoint's own column order (codes from qweight, zero
        # point 7 + 1, scale 0.01 of the column's g_idx group).
        import torch
        d = make_checkpoint("gptq-act-order")
        with open(os.path.join(d, "model.safetensors"), "rb") as f:
            raw = f.read()
        head = int.from_bytes(raw[:8], "little")
        meta = __import__("json").loads(raw[8:8 + head])
        t = meta["model.layers.0.mlp.down_proj.qweight"]
        lo, hi = t["data_offsets"]
        qweight = torch.frombuffer(bytearray(raw[8 + head + lo:8 + head + hi]),
                                   dtype=torch.int32).reshape(256 // 8, 64)
        shifts = torch.arange(8, dtype=torch.int32) * 4
        codes = ((qweight.unsqueeze(1) >> shifts.view(1, 8, 1)) & 0xF)
        codes = codes.reshape(256, 64).double()  # [K, N]
        scale = float(torch.tensor(0.01, dtype=torch.float16))
        w = ((codes - 8) * scale).T.contiguous().to("cuda")  # [N, K]
        layer = HummingLayer.from_safetensors(
            d, "model.layers.0.mlp.down_proj")
        layer.transform()
        for m in (1, 40):
            x = (torch.rand(m, 256, device="cuda") * 2 - 1).half()
            y = layer(x)
            torch.cuda.synchronize()
            ref = x.double() @ w.T
            rel = ((y.double() - ref).norm() / ref.norm()).item()
            self.assertLess(rel, 1e-3, f"M={m}")

    def test_tensor_parallel_ranks_add_up_to_the_layer(self):
        # The GPTQ layer against its two column shards (outputs
        # concatenated) and its two row shards (inputs split, outputs
        # summed): the same products up to the f16 output rounding.
        import torch
        d = make_checkpoint("gptq")
        module = "model.layers.0.mlp.down_proj"

        def load(**tp):
            layer = HummingLayer.from_safetensors(d, module, **tp)
            layer.transform()
            return layer
        full = load()
        cols = [load(tp_rank=r, tp_size=2, parallel="column") for r in (0, 1)]
        rows = [load(tp_rank=r, tp_size=2, parallel="row") for r in (0, 1)]
        for m in (1, 40):
            x = (torch.rand(m, 256, device="cuda") * 2 - 1).half()
            want = full(x).double()
            by_cols = torch.cat([c(x) for c in cols], dim=1).double()
            by_rows = (rows[0](x[:, :128].contiguous()).double() +
                       rows[1](x[:, 128:].contiguous()).double())
            torch.cuda.synchronize()
            for got in (by_cols, by_rows):
                rel = ((got - want).norm() / want.norm()).item()
                self.assertLess(rel, 2e-3, f"M={m}")

    def test_unaligned_sizes_are_padded_by_the_layer(self):
        # N = 1000, K = 1032 (neither a multiple of the kernels' tiles, no
        # pad_n / pad_k given): the layer pads itself and the output has
        # the logical N.
        import torch
        n, k = 1000, 1032
        w = torch.tensor(exact_weights(n, k, k), dtype=torch.float64)
        w = w.reshape(n, k)
        layer = HummingLayer(n, k, {"dtype": "uint4",
                                    "scale_dtype": "float16"})
        layer.load_from_unquantized(w)
        layer.transform()
        self.assertTrue(layer.prepared)
        for m in (1, 33, 300):
            x16 = (torch.rand(m, k, device="cuda") * 2 - 1).half()
            y = layer(x16)
            torch.cuda.synchronize()
            self.assertEqual(tuple(y.shape), (m, n))
            ref = x16.double() @ w.to("cuda").T
            rel = ((y.double() - ref).norm() / ref.norm()).item()
            self.assertLess(rel, 1e-3, f"M={m}")

    def test_forward_rejects_wrong_inputs(self):
        import torch
        layer = HummingLayer(256, 512, W4G128)
        layer.load_from_unquantized(exact_weights(256, 512, 128))
        layer.transform()
        with self.assertRaises(HummingError):
            layer(torch.zeros(4, 256, dtype=torch.float16, device="cuda"))
        with self.assertRaises(HummingError):
            layer(torch.zeros(4, 512, dtype=torch.float32, device="cuda"))
        x = torch.zeros(4, 512, dtype=torch.float16, device="cuda")
        with self.assertRaises(HummingError) as e:
            layer(x, out=torch.empty(4, 128, dtype=torch.float16, device="cuda"))
        self.assertIn("expected out to be a contiguous", str(e.exception))
        with self.assertRaises(HummingError) as e:
            layer(x, scale=torch.ones(4, 1, device="cuda"))
        self.assertIn("expected no scale: the layer takes f16 activations",
                      str(e.exception))

    def test_transform_for_another_chip_is_refused(self):
        # A device transform (not compile-only) for a chip other than the
        # current device's: named before any weights reach the device.
        import torch
        major, minor = torch.cuda.get_device_capability()
        other = "sm_80" if (major, minor) != (8, 0) else "sm_89"
        layer = HummingLayer(256, 512, W4G128)
        layer.load_from_unquantized(exact_weights(256, 512, 128))
        with self.assertRaises(HummingError) as e:
            layer.transform(chip=other)
        self.assertIn(f"the layer is transformed for {other} but the current "
                      f"device is", str(e.exception))
        self.assertIn(f"(sm_{major}{minor}); expected a target for that "
                      "device", str(e.exception))

    def test_eight_bit_activations_match_float64(self):
        # W4A8 g128 and W8A8 (channel scales), fp8 and int8: 16-bit x
        # quantized by the layer, and codes with their scales from a
        # quantizer; the reference multiplies the dequantized activations
        # in float64.
        import torch
        major, minor = torch.cuda.get_device_capability()
        if (major, minor) != (9, 0):
            self.skipTest("8-bit activations run on sm_90a")
        n, k = 512, 1024
        w = torch.tensor(exact_weights(n, k, 128), dtype=torch.float64)
        w = w.reshape(n, k)
        # int8 per channel quantizes exactly 2^-8 c, |c| <= 127, one 127
        # per row.
        gen = torch.Generator().manual_seed(2)
        w8 = torch.randint(-127, 128, (n, k), generator=gen).double()
        w8[:, 0] = 127
        w8 *= 2.0 ** -8
        int8 = {"dtype": "int8", "scale_dtype": "float16"}
        for config, act, weights in ((W4G128, "e4m3", w), (FP8, "e4m3", w),
                                     (W4G128, "int8", w), (int8, "int8", w8)):
            layer = HummingLayer(n, k, config, {"dtype": act})
            layer.load_from_unquantized(weights)
            layer.transform()
            # Each quantizes exactly: uint4 g128 (exact_weights), e4m3 per
            # channel (scale 2^-12, codes 64 c for |c| <= 7), int8 (w8).
            q = HummingQuantizer(k, act, "float16")
            q.transform()
            for m in (1, 33, 600):
                x16 = (torch.rand(m, k, device="cuda") * 2 - 1).half()
                codes, scales = q(x16)
                xq = codes.double() * scales.double()
                ref = xq @ weights.to("cuda").T
                for y in (layer(x16), layer(codes, scale=scales)):
                    torch.cuda.synchronize()
                    rel = ((y.double() - ref).norm() / ref.norm()).item()
                    self.assertLess(rel, 2e-3, f"{config} {act} M={m}")
            with self.assertRaises(HummingError) as e:
                layer(codes)
            self.assertIn("expected the codes' float32 scale", str(e.exception))
            with self.assertRaises(HummingError) as e:
                layer(codes, scale=scales[:1])
            self.assertIn("expected a float32 scale of 600 element(s)",
                          str(e.exception))
            with self.assertRaises(HummingError) as e:
                layer(x16, scale=scales)
            self.assertIn("expected no scale with 16-bit x", str(e.exception))
            with self.assertRaises(HummingError) as e:
                layer(x16.float())
            self.assertIn("expected float16 / bfloat16 x or", str(e.exception))
            with self.assertRaises(HummingError) as e:
                layer(x16.cpu())
            self.assertIn("expected a CUDA tensor", str(e.exception))

    def test_eight_bit_outputs_into_views_of_any_alignment(self):
        # The sm_90a 8-bit kernels store a block that lies inside M and N
        # through shared memory with 16-byte row stores
        # (KernelShape::stagedRows), into a 16-byte aligned output only; an
        # output view 4, 8 or 12 bytes into its buffer takes the 2-byte
        # stores: the same bits, every element written (NaN before).
        import torch
        if torch.cuda.get_device_capability() != (9, 0):
            self.skipTest("8-bit activations run on sm_90a")
        n, k = 1024, 1024
        gen = torch.Generator().manual_seed(5)
        w8 = torch.randint(-7, 8, (n, k), generator=gen).double()
        w8[:, 0] = 7
        w8 *= 2.0 ** -6
        layer = HummingLayer(n, k, FP8, {"dtype": "e4m3"})
        layer.load_from_unquantized(w8)
        layer.transform()
        q = HummingQuantizer(k, "e4m3", "float16")
        q.transform()
        for m in (2304, 4100):
            x16 = (torch.rand(m, k, device="cuda") * 2 - 1).half()
            codes, scales = q(x16)
            ref = (codes.double() * scales.double()) @ w8.to("cuda").T
            aligned = layer(codes, scale=scales)
            torch.cuda.synchronize()
            rel = ((aligned.double() - ref).norm() / ref.norm()).item()
            self.assertLess(rel, 2e-3, f"M={m}")
            buf = torch.empty(m * n + 8, dtype=aligned.dtype, device="cuda")
            for offset in (2, 4, 6, 8):
                buf.fill_(float("nan"))
                view = buf[offset:offset + m * n].view(m, n)
                y = layer(codes, out=view, scale=scales)
                torch.cuda.synchronize()
                self.assertTrue(torch.equal(y, aligned),
                                f"M={m}, {2 * offset} bytes in")

    def test_quantizer_matches_torch(self):
        # Per-token e4m3 codes and int8 groups of 128 from bf16, against
        # the same rules in torch (f32 quotient, round to nearest even,
        # saturation); a static scale is read, not written. The divisors
        # are CUDA tensors: torch turns a division by a Python number into
        # a multiplication by its reciprocal, which rounds differently.
        import torch
        x = (torch.randn(37, 4096, device="cuda") * 3).to(torch.bfloat16)
        q = HummingQuantizer(4096, "e4m3", "bfloat16")
        q.transform()
        codes, scales = q(x)
        torch.cuda.synchronize()
        xf = x.float()
        def const(v):
            return torch.tensor(v, device="cuda")
        want_s = xf.abs().amax(dim=1, keepdim=True) / const(448.0)
        self.assertTrue(torch.equal(scales, want_s))
        want = (xf / want_s).clamp(-448, 448).to(torch.float8_e4m3fn)
        self.assertTrue(torch.equal(codes.view(torch.uint8),
                                    want.view(torch.uint8)))
        g = HummingQuantizer(4096, "int8", "bfloat16", group_size=128)
        g.transform()
        codes, scales = g(x)
        torch.cuda.synchronize()
        groups = xf.view(37, 32, 128)
        want_s = groups.abs().amax(dim=2) / const(127.0)
        self.assertTrue(torch.equal(scales, want_s))
        want = torch.round(groups / want_s[:, :, None]).clamp(-128, 127)
        self.assertTrue(torch.equal(codes.view(37, 32, 128).float(), want))
        st = HummingQuantizer(4096, "e5m2", "bfloat16", static=True)
        st.transform()
        scale = torch.tensor([0.5], device="cuda")
        codes, scales = st(x, scale)
        torch.cuda.synchronize()
        self.assertEqual(scales.data_ptr(), scale.data_ptr())
        want = (xf / 0.5).clamp(-57344, 57344).to(torch.float8_e5m2)
        self.assertTrue(torch.equal(codes.view(torch.uint8),
                                    want.view(torch.uint8)))
        with self.assertRaises(HummingError):
            st(x)
        # int4: two codes per byte, the lower k in the low nibble.
        s4 = HummingQuantizer(4096, "int4", "bfloat16")
        s4.transform()
        codes, scales = s4(x)
        torch.cuda.synchronize()
        self.assertEqual(list(codes.shape), [37, 2048])
        want_s = xf.abs().amax(dim=1, keepdim=True) / const(7.0)
        self.assertTrue(torch.equal(scales, want_s))
        q = torch.round(xf / want_s).clamp(-8, 7).to(torch.int32) & 15
        want = (q[:, 0::2] | (q[:, 1::2] << 4)).to(torch.uint8)
        self.assertTrue(torch.equal(codes, want))


if __name__ == "__main__":
    unittest.main()
