"""HummingLayer: one quantized linear (or MoE GEMM) layer, and
transform_all."""

from __future__ import annotations

import ctypes
from typing import (TYPE_CHECKING, Any, Dict, Iterable, List, Mapping,
                    Optional, Sequence, Union)

if TYPE_CHECKING:
    import os

    import torch


from . import _common
from ._common import (HummingError, TransformStats, _CTransformStats,
                      _EIGHT_BIT, _INPUT_KEYS, _as_tensor, _c_string,
                      _c_scaling, _check, _check_keys, _dtype_name, _floats,
                      _for_target, _library, _tensor_array, _weight_schema)
from .quantizer import HummingQuantizer


class HummingLayer:
    """A dense quantized linear layer y = x W^T (+ bias).

    weight_config: dtype ("uint4", "int8", "e4m3", "e2m1", ...), group_size
    (0 or absent: per channel), scale_dtype ("float16", "bfloat16", "e4m3",
    "ue8m0", "float32"), granularity (default "group" with a group size,
    else "channel"), zero_point (None, "int", "float"), has_bias, block_n,
    pad_n, pad_k. input_config: dtype "float16" or "bfloat16", or 8-bit
    activations (fp8 from sm_89, int8 from sm_80): dtype "e4m3" / "float8_e4m3fn", "e5m2" /
    "float8_e5m2" or "int8" (integer weights only) with scaling "token"
    (default) or "static" (then "scale": the float32 scale used to
    quantize 16-bit inputs) and output_dtype "float16" (default) or
    "bfloat16"; "int4" (W4A4: 4-bit integer weights without zero points,
    int4 tensor cores of sm_80-sm_89) takes codes packed two per byte.
    Such a layer takes 16-bit activations (quantized on the GPU
    first, as the original's quant_input) or codes with their scales
    (layer(codes, scale=scales)). Sizes the kernels cannot take as they are
    are padded by the layer (pad_n / pad_k are optional).

    num_experts = E > 0 makes it a mixture-of-experts GEMM (the original's
    HummingLayer(..., num_experts=E)): E experts of shape_n x shape_k, 16-bit
    activations, run by forward_moe() with the routing `moe` describes:
    {"gemm_type": "indexed" (default; vLLM's moe_align_block_size layout) |
    "grouped_contiguous" | "grouped_masked", "top_k": 1, "block_size": 0
    (indexed: chosen per M, moe_block_size(M)), "router_weights": False}.
    """

    def __init__(self, shape_n: int, shape_k: int,
                 weight_config: Mapping[str, Any],
                 input_config: Optional[Mapping[str, Any]] = None,
                 f16_accumulation: bool = False, num_experts: int = 0,
                 moe: Optional[Mapping[str, Any]] = None,
                 batch_invariant: bool = False,
                 streams: Optional[int] = None) -> None:
        input_config = input_config or {"dtype": "float16"}
        _check_keys(input_config, _INPUT_KEYS, "input_config")
        self.shape_n, self.shape_k = int(shape_n), int(shape_k)
        self.num_experts = int(num_experts)
        self.has_bias = bool(weight_config.get("has_bias", False))
        self._act = _dtype_name(input_config.get("dtype", "float16"))
        keep = []  # the C strings must outlive the call

        def c(s):
            return _c_string(s, keep)
        # Scales default to the 16-bit type (of the activations, or of the
        # output with 8-bit activations).
        default_scale = input_config.get("dtype", "float16")
        if self._act in _EIGHT_BIT:
            default_scale = input_config.get("output_dtype", "float16")
        schema = _weight_schema(weight_config, default_scale, keep)
        handle = ctypes.c_void_p()
        self._scaling = None
        self._output = self._act
        if self.num_experts:
            if self._act == "int4":
                raise HummingError(
                    "expected 16-bit or 8-bit activations in a MoE "
                    "HummingLayer (no MoE kernel takes int4 ones), got int4")
            moe = dict(moe or {})
            unknown = set(moe) - {"gemm_type", "top_k", "block_size",
                                  "router_weights", "all_rows"}
            if unknown:
                raise HummingError(f"unknown moe keys: {sorted(unknown)}")
            self._moe = {"gemm_type": str(moe.get("gemm_type", "indexed")),
                         "top_k": int(moe.get("top_k", 1)),
                         "block_size": int(moe.get("block_size", 0)),
                         "router_weights": bool(moe.get("router_weights",
                                                        False)),
                         "all_rows": bool(moe.get("all_rows", False))}
            if self._moe["all_rows"]:
                # A batch of matmuls, one weight matrix per batch element
                # (grouped_masked without counts).
                if (self._moe["gemm_type"] != "grouped_masked" or
                        self._moe["top_k"] != 1 or
                        self._moe["block_size"] or
                        self._moe["router_weights"]):
                    raise HummingError(
                        "expected all_rows only with gemm_type "
                        "grouped_masked (top_k 1, no block_size or router "
                        f"weights), got {self._moe}")
                _check(_library().humming_layer_create_batched(
                    self.shape_n, self.shape_k, self.num_experts,
                    ctypes.byref(schema), c(self._act),
                    ctypes.byref(handle)))
            elif self._act in _EIGHT_BIT:
                # 8-bit activations: per token or per group (the layer
                # quantizes 16-bit x, or takes codes with their scales).
                scaling = self._eight_bit_config(input_config)
                _check(_library().humming_layer_create_moe_quantized(
                    self.shape_n, self.shape_k, self.num_experts,
                    ctypes.byref(schema), _EIGHT_BIT[self._act][0],
                    c(scaling), c(self._output),
                    c(self._moe["gemm_type"]), self._moe["top_k"],
                    self._moe["block_size"], int(self._moe["router_weights"]),
                    ctypes.byref(handle)))
            else:
                _check(_library().humming_layer_create_moe(
                    self.shape_n, self.shape_k, self.num_experts,
                    ctypes.byref(schema), c(self._act),
                    c(self._moe["gemm_type"]), self._moe["top_k"],
                    self._moe["block_size"], int(self._moe["router_weights"]),
                    ctypes.byref(handle)))
        elif moe is not None:
            raise HummingError("expected num_experts > 0 with moe")
        elif self._act in _EIGHT_BIT:
            if f16_accumulation:
                raise HummingError("f16_accumulation applies to 16-bit "
                                   "activations")
            scaling = self._eight_bit_config(input_config)
            _check(_library().humming_layer_create_quantized(
                self.shape_n, self.shape_k, ctypes.byref(schema),
                _EIGHT_BIT[self._act][0],
                c(scaling), c(self._output), ctypes.byref(handle)))
        else:
            _check(_library().humming_layer_create(
                self.shape_n, self.shape_k, ctypes.byref(schema),
                c(self._act), int(bool(f16_accumulation)),
                ctypes.byref(handle)))
        self._handle = handle
        self._transformed = False
        self._quantizers = {}
        if batch_invariant:
            self.set_batch_invariant(True)
        if streams is not None:
            self.set_streams(streams)

    def set_streams(self, streams: int) -> None:
        """Streams whose first call may come during CUDA graph capture
        (LayerTarget::streams, default 2): a layer may be called from any
        number of streams at once, each with its own scratch block (split-K
        workspace, quantized activations) made at its first call; a stream
        that first calls it while capturing takes one of these blocks,
        made at transform(). Before transform()."""
        _check(_library().humming_layer_set_streams(self._handle,
                                                    int(streams)))
        self._transformed = False

    _PROBE_MODES = {"auto": 0, "always": 1, "never": 2}

    def set_probe(self, mode: str) -> None:
        """The first-use probe (LayerTarget::probe): "auto" (the default:
        on a chip Humming's GPU suite has not run on, transform() checks
        its kernels on the GPU against a simpler family and uses that one
        where they disagree), "always" or "never". The environment variable
        HUMMING_PROBE replaces it when set. Before transform()."""
        if mode not in self._PROBE_MODES:
            raise HummingError(
                f"expected probe mode auto, always or never, got {mode!r}")
        _check(_library().humming_layer_set_probe(
            self._handle, self._PROBE_MODES[mode]))
        self._transformed = False

    @property
    def probe_result(self) -> str:
        """What the first-use probe of the last transform() found (the
        kernels it compared, at which M, how far apart, what the layer
        kept) or why it did not run; "" after a compile-only one."""
        text = _library().humming_layer_probe(self._handle)
        return (text or b"").decode()

    def set_batch_invariant(self, on: bool = True) -> None:
        """Batch invariance (the original's use_batch_invariant): one K
        decomposition for every M, so that a row's output is bitwise the
        same whatever else the batch holds. Before transform() (a
        transformed layer must be transformed again); a MoE layer refuses
        it."""
        changed = bool(on) != self.batch_invariant
        _check(_library().humming_layer_set_batch_invariant(
            self._handle, int(bool(on))))
        if changed:
            self._transformed = False

    @property
    def batch_invariant(self) -> bool:
        return bool(_library().humming_layer_batch_invariant(self._handle))

    def _eight_bit_config(self, input_config):
        """The scaling, output type and static scale of an 8-bit
        input_config (on self); returns the C API's scaling string ("token",
        "static" or "group<g>")."""
        self._scaling = input_config.get("scaling", "token")
        self._output = _dtype_name(input_config.get("output_dtype",
                                                    "float16"))
        self._static_scale = input_config.get("scale")
        if self._scaling == "static" and self._static_scale is None:
            raise HummingError("expected input_config['scale'] (the "
                               "static activation scale)")
        # Per group of K (DeepSeek-V3's FP8: group_size 128).
        self._group = int(input_config.get("group_size", 0))
        return _c_scaling(input_config)

    @classmethod
    def from_safetensors(cls, path: Union[str, "os.PathLike[str]"],
                         module: str, activations: str = "16-bit",
                         tp_rank: int = 0, tp_size: int = 1,
                         parallel: str = "column") -> "HummingLayer":
        """The layer `module` ("model.layers.0.mlp.down_proj") of a checkpoint
        directory (config.json + safetensors: GPTQ, AWQ, compressed-tensors,
        FP8, ModelOpt, Quark, MXFP4 ...), with the model's 16-bit type.
        activations="checkpoint": with the checkpoint's own 8-bit
        activations instead (FP8 / W8A8-INT8 checkpoints with dynamic
        per-token scales; sm_90a): the layer quantizes 16-bit x itself or
        takes codes with their scales, as a layer made with an 8-bit
        input_config. tp_rank / tp_size / parallel: rank tp_rank's shard
        under tensor parallelism, "column" (N split: q/k/v, gate/up) or
        "row" (K split: o, down; the bias stays with rank 0). Act-order
        checkpoints (GPTQ desc_act) load too: the layer gathers x's columns
        by the permutation before its kernels (input_permutation)."""
        if activations not in ("16-bit", "checkpoint"):
            raise HummingError("activations: expected '16-bit' or "
                               f"'checkpoint', got {activations!r}")
        handle = ctypes.c_void_p()
        _check(_library().humming_layer_create_from_checkpoint_shard(
            str(path).encode(), str(module).encode(), str(parallel).encode(),
            int(tp_rank), int(tp_size), activations.encode(),
            ctypes.byref(handle)))
        import json
        import os
        try:
            with open(os.path.join(str(path), "config.json")) as f:
                dtype = json.load(f).get("torch_dtype", "float16")
        except (OSError, ValueError):
            dtype = "float16"
        return cls._adopt(handle, dtype, activations)

    @classmethod
    def from_tensors(cls, tensors: Mapping[str, Any],
                     config: Union[str, Mapping[str, Any]],
                     module: Optional[str] = None, torch_dtype: Any = None,
                     activations: str = "16-bit", tp_rank: int = 0,
                     tp_size: int = 1,
                     parallel: str = "column") -> "HummingLayer":
        """A layer from tensors already loaded (a serving engine's weight
        loader, or a state dict) in the checkpoint's own format: `tensors`
        maps the module's tensor names ("qweight", "qzeros", "scales",
        "g_idx"; compressed-tensors' "weight_packed", "weight_scale" ...) to
        torch tensors (any device; copied) or to (dtype, shape, bytes)
        triples with safetensors dtypes ("I32", "F16" ...). `config` is the
        model's config.json as a dict, or its quantization_config alone
        (then `torch_dtype`, default "float16", is the model's 16-bit type).
        `module`: the module's name, for per-module rules in the config
        (ignored modules, dynamic overrides). The rest as from_safetensors:
        every format it reads, act-order, tensor-parallel shards."""
        config, array, keep = _tensor_array(tensors, config, torch_dtype)
        import json
        if activations not in ("16-bit", "checkpoint"):
            raise HummingError("activations: expected '16-bit' or "
                               f"'checkpoint', got {activations!r}")
        handle = ctypes.c_void_p()
        _check(_library().humming_layer_create_from_tensors(
            json.dumps(config).encode(), array, len(tensors),
            str(module).encode() if module else None,
            str(parallel).encode(), int(tp_rank), int(tp_size),
            activations.encode(), ctypes.byref(handle)))
        return cls._adopt(handle, config.get("torch_dtype", "float16"),
                          activations)

    def canonical_tensors(self) -> Dict[str, Any]:
        """The canonical tensors the layer holds (padded sizes; what
        load_quantized takes back): {"weight", "scales", "zero_points",
        "global_scale", "bias"} as far as the schema has them, as CPU torch
        tensors (without torch: (dtype, shape, bytes) triples)."""
        lib = _library()
        out = {}
        for which in ("weight", "scales", "zero_points", "global_scale",
                      "bias"):
            dtype = ctypes.c_char_p()
            shape = (ctypes.c_int64 * 8)()
            rank = ctypes.c_int64()
            size = lib.humming_layer_canonical_tensor(
                self._handle, which.encode(), ctypes.byref(dtype), shape,
                ctypes.byref(rank), None, 0)
            if size < 0:
                raise HummingError(lib.humming_last_error().decode())
            if rank.value < 0:
                continue
            buf = ctypes.create_string_buffer(max(1, size))
            _check(0 if lib.humming_layer_canonical_tensor(
                self._handle, which.encode(), None, None, None, buf,
                size) == size else 1)
            dims = tuple(shape[i] for i in range(rank.value))
            out[which] = _as_tensor(dtype.value.decode(), dims,
                                    buf.raw[:size])
        return out

    @classmethod
    def _adopt(cls, handle, torch_dtype, activations):
        """A HummingLayer around a C layer made from a checkpoint (its
        model's 16-bit type `torch_dtype`, activations "16-bit" or
        "checkpoint")."""
        self = cls.__new__(cls)
        self._handle = handle
        self._transformed = False
        self.shape_n = _library().humming_layer_n(handle)
        self.shape_k = _library().humming_layer_k(handle)
        self.has_bias = None
        self.num_experts = 0
        self._act = "bf16" if torch_dtype == "bfloat16" else "f16"
        self._scaling = None
        self._output = self._act
        if activations == "checkpoint":
            act = _library().humming_layer_activation(handle).decode()
            self._act = {"f8E4M3FN": "e4m3", "f8E5M2": "e5m2",
                         "si8": "int8", "si4": "int4"}[act]
            self._scaling = _library().humming_layer_activation_scaling(
                handle).decode()
            self._group = int(_library().humming_layer_activation_group(
                handle))
            self._static_scale = None
        self._quantizers = {}
        self._take_permutation()
        return self

    def _take_permutation(self):
        """The layer's act-order permutation (None: natural order). 16-bit
        activations: the C layer gathers x's columns with its own kernel
        (forward_gathering); 8-bit codes: __call__ gathers them (the C
        layer is told so)."""
        lib = _library()
        count = lib.humming_layer_input_permutation(self._handle, None, 0)
        self.input_permutation = None
        self._perm_on = {}
        if count > 0:
            buf = (ctypes.c_int32 * count)()
            lib.humming_layer_input_permutation(self._handle, buf, count)
            self.input_permutation = list(buf)
        _check(lib.humming_layer_set_activations_gathered(
            self._handle, int(count > 0 and self._act not in ("f16", "bf16"))))

    def set_input_permutation(self, perm: Sequence[int]) -> None:
        """Sets the act-order permutation (a saved layer's
        input_permutation; None or [] for the natural order): column j of
        the weights is input column perm[j], and the layer gathers x by it."""
        perm = [int(c) for c in (perm if perm is not None else [])]
        lib = _library()
        buf = (ctypes.c_int32 * max(1, len(perm)))(*perm)
        _check(lib.humming_layer_set_input_permutation(self._handle, buf,
                                                       len(perm)))
        self._transformed = False
        self._take_permutation()

    def _gathered(self, torch, x):
        """x's columns in the weights' order (act-order layers), else x."""
        perm = getattr(self, "input_permutation", None)
        if perm is None:
            return x
        index = self._perm_on.get(x.device)
        if index is None:
            index = torch.tensor(perm, dtype=torch.int64, device=x.device)
            self._perm_on[x.device] = index
        if x.element_size() == 1 and x.is_floating_point():
            # (fp8 codes: gathered as bytes.)
            return x.view(torch.uint8).index_select(1, index).view(x.dtype)
        return x.index_select(1, index)

    def load_from_safetensors(self, path: Union[str, "os.PathLike[str]"],
                              module: str) -> None:
        """Loads the weights of `module` from a checkpoint directory into
        this layer (its shape and schema must be the checkpoint's)."""
        _check(_library().humming_layer_load_checkpoint(
            self._handle, str(path).encode(), str(module).encode()))
        self._transformed = False
        self._take_permutation()

    def __del__(self):
        handle = getattr(self, "_handle", None)
        # (At interpreter exit the library may be gone already.)
        if handle and _common._lib is not None:
            _common._lib.humming_layer_destroy(handle)
            self._handle = None

    def load_quantized(self, weight: "torch.Tensor",
                       scales: Optional["torch.Tensor"] = None,
                       zero_points: Optional["torch.Tensor"] = None,
                       global_scale: Optional["torch.Tensor"] = None,
                       bias: Optional["torch.Tensor"] = None) -> None:
        """Loads already quantized tensors in the humming standard format at
        the schema's padded sizes (weight int32 [N, K*b/32] of codes packed
        LSB first along K; scales [N, K/g] or [N, 1] in the scale type;
        int zero points int32 [N*b/32, K/g], float ones [N, K/g]; global
        scale float32 [1]; bias [N]): torch tensors on any device, or
        bytes-like objects holding the raw little-endian data. Each size is
        checked against the schema."""
        if getattr(self, "num_experts", 0):
            raise HummingError("load_quantized loads dense layers; a MoE "
                               "layer quantizes float weights "
                               "(load_from_unquantized)")
        keep = []

        def raw(t, name):
            if t is None:
                return None, 0
            try:
                import torch
                if isinstance(t, torch.Tensor):
                    t = t.detach().contiguous().cpu()
                    keep.append(t)
                    return t.data_ptr(), t.numel() * t.element_size()
            except ImportError:
                pass
            try:
                data = bytes(memoryview(t))
            except TypeError:
                raise HummingError(f"{name}: expected a torch tensor or a "
                                   f"bytes-like object, got "
                                   f"{type(t).__name__}") from None
            keep.append(data)
            return data, len(data)
        args = []
        for t, name in ((weight, "weight"), (scales, "scales"),
                        (zero_points, "zero_points"),
                        (global_scale, "global_scale"), (bias, "bias")):
            args.extend(raw(t, name))
        _check(_library().humming_layer_load_quantized(self._handle, *args))
        self._transformed = False

    def load_from_unquantized(self, weight: "torch.Tensor",
                              bias: Optional["torch.Tensor"] = None) -> None:
        """Quantizes float weights [N, K] (a torch tensor, or anything that
        flattens to N*K floats; a MoE layer's [E, N, K]) and, when the layer
        has one, a bias [N] ([E, N]). A CUDA tensor of f16, bf16 or f32 is
        quantized on its GPU where the kernel takes the schema (integer or
        float codes; group, channel, tensor, global or block scales: all but
        blocks that do not tile the padded K, and zero points with a global
        scale): the same tensors, bit for bit."""
        e = max(1, getattr(self, "num_experts", 0))
        b = None
        if bias is not None:
            b = _floats(bias, e * self.shape_n, "bias")
        if self._quantize_on_device(weight, e, b):
            self._transformed = False
            return
        w = _floats(weight, e * self.shape_n * self.shape_k, "weight")
        _check(_library().humming_layer_quantize(self._handle, w, b))
        self._transformed = False

    def _quantize_on_device(self, weight, experts, bias):
        """Weights already on a CUDA device (f16, bf16 or f32) are quantized
        there (humming_layer_quantize_on_device: the host's result, bit for
        bit, in milliseconds). False where the tensor is elsewhere or the
        kernel does not take the schema (the host quantizes it then)."""
        try:
            import torch
        except ImportError:
            return False
        names = {torch.float16: b"F16", torch.bfloat16: b"BF16",
                 torch.float32: b"F32"}
        if not (isinstance(weight, torch.Tensor) and weight.is_cuda and
                weight.dtype in names):
            return False
        count = experts * self.shape_n * self.shape_k
        if weight.numel() != count:
            raise HummingError(
                f"weight: expected {count} values, got {weight.numel()}")
        flat = weight.detach().contiguous()
        try:
            with torch.cuda.device(flat.device):
                # The tensor's writes (on torch's stream) before the kernel.
                torch.cuda.current_stream().synchronize()
                def run(device, chip):
                    _check(_library().humming_layer_quantize_on_device(
                        self._handle, device.encode() if device else None,
                        chip.encode() if chip else None, flat.data_ptr(),
                        names[flat.dtype], bias))
                _for_target(run, None, None)
        except HummingError as e:
            if "quantize() runs on the host" in str(e):
                return False
            raise
        return True

    def transform(self, device: Optional[str] = None,
                  chip: Optional[str] = None, compile_only: bool = False,
                  tile_config: Optional[str] = None) -> None:
        """Prepares the weights and compiles the kernels: for the current
        CUDA device by default (its name picks the tile heuristics' facts),
        or for `device` ("H200") / `chip` ("sm_90a"). `tile_config`
        ("#humming.tile_config<...>") replaces the heuristics for every M
        (tuning; prepared layouts only)."""
        def run(device, chip):
            _check(_library().humming_layer_transform_tuned(
                self._handle, device.encode() if device else None,
                chip.encode() if chip else None, int(bool(compile_only)),
                tile_config.encode() if tile_config else None))
        _for_target(run, device, chip)
        self._transformed = not compile_only
        self._device_index = None
        if not compile_only:
            try:
                import torch
                self._device_index = torch.cuda.current_device()
            except (ImportError, RuntimeError):
                pass

    @property
    def transform_stats(self) -> TransformStats:
        """TransformStats of the last transform(): kernels the pipeline and
        a compiler made, kernels from the cache, wall seconds to get and load
        every kernel, of the slowest kernel alone, and to prepare and upload
        the weights."""
        s = _CTransformStats()
        _check(_library().humming_layer_transform_stats(
            self._handle, ctypes.byref(s)))
        return TransformStats(s.compiled, s.cached, s.kernel_seconds,
                              s.slowest_kernel_seconds, s.weight_seconds)

    @property
    def compiler_reports(self) -> List[str]:
        """The compiler's reports of lost performance for the kernels of the
        last transform() (e.g. nvJitLink ignoring setmaxnreg), as
        "kernel <i>: <line>" strings; empty when there were none."""
        text = _library().humming_layer_compiler_reports(self._handle)
        return [line for line in (text or b"").decode().split("\n") if line]

    @property
    def kernel_count(self) -> int:
        return _library().humming_layer_kernel_count(self._handle)

    @property
    def activation_k(self) -> int:
        """The width of the codes the layer takes: shape_k, or for 8- and
        4-bit activations shape_k rounded up to 16 bytes of codes (the
        codes past shape_k zero; 16-bit x is still [M, shape_k])."""
        return _library().humming_layer_activation_k(self._handle)

    @property
    def prepared(self) -> bool:
        return bool(_library().humming_layer_is_prepared(self._handle))

    def _quantizer(self, source):
        """The activation quantizer of an 8-bit layer for 16-bit `source`
        inputs (compiled on first use for the layer's device)."""
        q = self._quantizers.get(source)
        if q is None:
            q = HummingQuantizer(self.shape_k, self._act, source_dtype=source,
                                 group_size=getattr(self, "_group", 0)
                                 if self._scaling == "group" else 0,
                                 static=self._scaling == "static",
                                 codes_k=self.activation_k)
            q.transform()
            self._quantizers[source] = q
        return q

    def __call__(self, x: "torch.Tensor", out: Optional["torch.Tensor"] = None,
                 scale: Optional["torch.Tensor"] = None) -> "torch.Tensor":
        """y[M, N] = x[M, K] W^T on x's device's current CUDA stream. One
        layer may be called from several streams at once: each stream has
        its own split-K workspace (made at its first call; two are made
        with the layer, for streams whose first call is captured in a CUDA
        graph). Layers of 8-bit activations take 16-bit x (quantized first, per
        token or with the static scale) or codes x with their float32
        `scale` ([M, 1] per token, one element static). x must be on the
        device the layer was transformed for."""
        import torch
        if getattr(x, "is_cuda", False) and \
                x.device.index != torch.cuda.current_device():
            # (The launch uses the current device's context.)
            with torch.cuda.device(x.device):
                return self._call(torch, x, out, scale)
        return self._call(torch, x, out, scale)

    def _call(self, torch, x, out, scale):
        # int4 codes: [M, K / 2] bytes.
        packed = self._act == "int4" and x.dtype == torch.uint8
        codes = x.dtype not in (torch.float16, torch.bfloat16)
        width = self.activation_k if codes and self._scaling is not None \
            else self.shape_k
        cols = width // 2 if packed else width
        if x.dim() != 2 or x.shape[1] != cols:
            raise HummingError(
                f"expected x of shape [M, {cols}], got {list(x.shape)}")
        if self._scaling is not None:
            if packed and getattr(self, "input_permutation", None) is not None:
                raise HummingError("an act-order layer gathers x's columns: "
                                   "pass 16-bit x (packed int4 codes cannot "
                                   "be gathered)")
            if getattr(self, "input_permutation", None) is not None:
                # (Codes and their per-token scales gather alike.)
                x = self._gathered(torch, x)
            return self._call_quantized(torch, x, out, scale)
        if scale is not None:
            raise HummingError("expected no scale: the layer takes "
                               f"{self._act} activations")
        want = {"f16": torch.float16, "bf16": torch.bfloat16}[self._act]
        if x.dtype != want or not x.is_cuda:
            raise HummingError(
                f"expected a CUDA tensor of {want}, got {x.dtype} on {x.device}")
        index = getattr(self, "_device_index", None)
        if index is not None and x.device.index != index:
            raise HummingError(
                f"the layer was transformed on cuda:{index}; got x on {x.device}")
        x = x.contiguous()
        out = self._output_for(torch, x, want, out)
        stream = torch.cuda.current_stream(x.device).cuda_stream
        if getattr(self, "input_permutation", None) is not None:
            # Act-order: the layer's gather kernel writes x's columns in the
            # weights' order here, then its GEMM reads them.
            scratch = torch.empty_like(x)
            _check(_library().humming_layer_forward_gathering(
                self._handle, ctypes.c_void_p(stream), x.data_ptr(),
                scratch.data_ptr(), out.data_ptr(), x.shape[0]))
            return out
        _check(_library().humming_layer_forward(
            self._handle, ctypes.c_void_p(stream), x.data_ptr(),
            out.data_ptr(), x.shape[0]))
        return out

    def moe_block_size(self, m: int) -> int:
        """The indexed routing's block_size for m tokens (route with
        vLLM's moe_align_block_size at this block size); 0 before
        transform()."""
        return int(_library().humming_layer_moe_block_size(self._handle,
                                                           int(m)))

    def forward_moe(self, x: "torch.Tensor",
                    sorted_ids: Optional["torch.Tensor"] = None,
                    expert_ids: Optional["torch.Tensor"] = None,
                    num_tokens_padded: Optional["torch.Tensor"] = None,
                    expert_layout: Optional["torch.Tensor"] = None,
                    topk_weights: Optional["torch.Tensor"] = None,
                    block_size: int = 0,
                    scale: Optional["torch.Tensor"] = None) -> "torch.Tensor":
        """The MoE GEMM on the current stream: indexed (sorted_ids,
        expert_ids, num_tokens_padded int32, aligned with block_size, 0:
        moe_block_size(M) for a layer that chooses it per M, else the
        layer's) gives [M * top_k, N]; grouped (expert_layout: offsets [E +
        1] int32 / int64, or counts [E] int32) [M, N]; a layer made with
        moe={"gemm_type": "grouped_masked", "all_rows": True} (a batch of
        matmuls, one weight matrix per batch element) takes no routing:
        x [E * rows, K] gives [E * rows, N]. topk_weights: float32 per
        output row when the layer has router weights. Rows no expert takes
        are zero. A layer of 8-bit activations takes 16-bit x (quantized
        first) or its codes with their float32 `scale` ([M, 1] per token,
        [M, K / group] per group), as layer(x) does."""
        if not getattr(self, "num_experts", 0):
            raise HummingError("forward_moe runs MoE layers (num_experts > "
                               "0); this one is dense: call it as layer(x)")
        import torch
        out_type = self._output if self._act in _EIGHT_BIT else self._act
        want = {"f16": torch.float16, "bf16": torch.bfloat16}[out_type]
        if self._act in _EIGHT_BIT:
            code = getattr(torch, _EIGHT_BIT[self._act][1])
            if x.dtype in (torch.float16, torch.bfloat16):
                if scale is not None:
                    raise HummingError("expected no scale with 16-bit x (the "
                                       "layer quantizes it)")
                if not x.is_cuda:
                    raise HummingError(
                        f"expected a CUDA tensor, got x on {x.device}")
                x, scale = self._quantizer(
                    "float16" if x.dtype == torch.float16 else "bfloat16")(x)
            elif x.dtype != code or scale is None:
                raise HummingError(
                    f"expected float16 / bfloat16 x, or {code} codes with "
                    f"their float32 scale, got {x.dtype}"
                    f"{'' if scale is not None else ' without a scale'}")
        elif scale is not None:
            raise HummingError("expected no scale: the layer takes "
                               f"{self._act} activations")
        if (x.dim() != 2 or x.shape[1] != self.shape_k or not x.is_cuda or
                (self._act not in _EIGHT_BIT and x.dtype != want)):
            raise HummingError(
                f"expected a CUDA tensor [M, {self.shape_k}] of {want}, got "
                f"{list(x.shape)} {x.dtype} on {x.device}")
        m = x.shape[0]
        indexed = self._moe["gemm_type"] == "indexed"

        def ptr(t, name, dtypes):
            if t is None:
                return 0, 0
            if not t.is_cuda or t.dtype not in dtypes:
                raise HummingError(
                    f"{name}: expected a CUDA tensor of "
                    f"{' or '.join(str(d) for d in dtypes)}, got {t.dtype} "
                    f"on {t.device}")
            t = t.contiguous()
            keep.append(t)
            return t.data_ptr(), t.numel()
        keep = []
        sid, length = ptr(sorted_ids, "sorted_ids", (torch.int32,))
        eid, _ = ptr(expert_ids, "expert_ids", (torch.int32,))
        ntp, _ = ptr(num_tokens_padded, "num_tokens_padded", (torch.int32,))
        lay, _ = ptr(expert_layout, "expert_layout",
                     (torch.int32, torch.int64))
        rw, _ = ptr(topk_weights, "topk_weights", (torch.float32,))
        if indexed and not block_size and not self._moe["block_size"]:
            block_size = self.moe_block_size(m)
        rows = m * self._moe["top_k"] if indexed else m
        x = x.contiguous()
        out = torch.zeros(rows, self.shape_n, dtype=want, device=x.device)
        stream = torch.cuda.current_stream(x.device).cuda_stream
        if scale is not None:
            scale = scale.contiguous()
            _check(_library().humming_layer_forward_moe_quantized(
                self._handle, ctypes.c_void_p(stream), x.data_ptr(),
                scale.data_ptr(), out.data_ptr(), m, sid, eid, ntp, length,
                int(block_size), lay, rw))
            return out
        _check(_library().humming_layer_forward_moe(
            self._handle, ctypes.c_void_p(stream), x.data_ptr(),
            out.data_ptr(), m, sid, eid, ntp, length, int(block_size), lay,
            rw))
        return out

    def _output_for(self, torch, x, want, out):
        """`out` checked for x's rows (a new [M, N] tensor of `want` when
        None)."""
        if out is None:
            return torch.empty((x.shape[0], self.shape_n), dtype=want,
                               device=x.device)
        if (tuple(out.shape) != (x.shape[0], self.shape_n) or
                out.dtype != want or out.device != x.device or
                not out.is_contiguous()):
            raise HummingError(
                f"expected out to be a contiguous {want} tensor of shape "
                f"[{x.shape[0]}, {self.shape_n}] on {x.device}, got "
                f"{out.dtype} {list(out.shape)} on {out.device}")
        return out

    def _call_quantized(self, torch, x, out, scale):
        code = getattr(torch, _EIGHT_BIT[self._act][1])
        if not x.is_cuda:
            raise HummingError(f"expected a CUDA tensor, got x on {x.device}")
        index = getattr(self, "_device_index", None)
        if index is not None and x.device.index != index:
            raise HummingError(
                f"the layer was transformed on cuda:{index}; got x on {x.device}")
        m = x.shape[0]
        if x.dtype in (torch.float16, torch.bfloat16):
            if scale is not None:
                raise HummingError("expected no scale with 16-bit x (the "
                                   "layer quantizes it)")
            static = None
            if self._scaling == "static":
                static = torch.tensor([float(self._static_scale)],
                                      dtype=torch.float32, device=x.device)
            x, scale = self._quantizer(
                "float16" if x.dtype == torch.float16 else "bfloat16")(
                    x, static)
        elif x.dtype != code:
            raise HummingError(
                f"expected float16 / bfloat16 x or {code} codes, got {x.dtype}")
        elif scale is None:
            raise HummingError(f"expected the codes' float32 scale with {code} x")
        rows = (m if self._scaling == "token" else
                m * -(-self.shape_k // self._group) if self._scaling == "group"
                else 1)
        if (not isinstance(scale, torch.Tensor) or
                scale.dtype != torch.float32 or scale.numel() != rows or
                scale.device != x.device):
            raise HummingError(
                f"expected a float32 scale of {rows} element(s) on {x.device} "
                f"({self._scaling} scaling), got "
                f"{getattr(scale, 'dtype', type(scale).__name__)} "
                f"{list(getattr(scale, 'shape', []))}")
        x, scale = x.contiguous(), scale.contiguous()
        want = {"f16": torch.float16, "bf16": torch.bfloat16}[self._output]
        out = self._output_for(torch, x, want, out)
        stream = torch.cuda.current_stream(x.device).cuda_stream
        _check(_library().humming_layer_forward_quantized(
            self._handle, ctypes.c_void_p(stream), x.data_ptr(),
            scale.data_ptr(), out.data_ptr(), m))
        return out




def transform_all(layers: Iterable[Any], progress: Any = None,
                  **target: Any) -> Dict[str, Any]:
    """Transforms every layer (a model's worth) with the same target
    arguments as HummingLayer.transform, showing progress on one terminal
    line: layers done, kernels compiled and from the cache. `progress`: a
    text stream, True (stderr), False (silent) or None (stderr where it is
    a terminal). Returns the totals {"layers", "compiled", "cached",
    "seconds"}."""
    import sys
    import time
    if progress is None:
        progress = sys.stderr if sys.stderr.isatty() else False
    elif progress is True:
        progress = sys.stderr
    layers = list(layers)
    totals = {"layers": 0, "compiled": 0, "cached": 0, "seconds": 0.0}
    start = time.perf_counter()
    for layer in layers:
        layer.transform(**target)
        stats = layer.transform_stats
        totals["layers"] += 1
        totals["compiled"] += stats.compiled
        totals["cached"] += stats.cached
        totals["seconds"] = time.perf_counter() - start
        if progress:
            progress.write(f"\r[humming] {totals['layers']}/{len(layers)} "
                           f"layers, {totals['compiled']} kernels compiled, "
                           f"{totals['cached']} cached, "
                           f"{totals['seconds']:.1f} s")
            progress.flush()
    if progress and layers:
        progress.write("\n")
    return totals
