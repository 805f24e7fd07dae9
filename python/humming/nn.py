"""Humming's dense layers as torch nn.Modules, in the original's shape.

    import humming.nn
    layer = humming.nn.HummingLayer(4096, 4096,
                                    {"dtype": "uint4", "group_size": 128},
                                    torch_dtype=torch.float16)
    layer.load_from_unquantized(w)           # or load_quantized / from_tensors
    sd = layer.state_dict()                  # the quantized weights
    y = layer.to("cuda")(x)                  # prepared on x's device at first use

The module's buffers are the layer's canonical quantized tensors ("weight",
"scales", "zero_points", "global_scale", "bias", as far as its schema has
them) and, for act-order layers, "input_permutation": state_dict() saves
them, load_state_dict() loads them into a module of the same
configuration, .to(device) moves them. Casts (.half(), .to(torch.bfloat16))
leave them as they are: quantized state has its own types, and the
activation type is the module's torch_dtype. The weights are prepared for
the GPU (transform) on the first forward on a device, or explicitly by
transform() / humming.nn.transform_all(model) — which a model needs before
torch.compile or CUDA graph capture, where nothing is compiled. forward(x)
takes x [..., K] on that device and runs torch.ops.humming.gemm.
"""

import torch

from . import HummingError
from . import HummingLayer as _CLayer
from . import ops as _ops
from . import transform_all as _transform_all

__all__ = ["HummingLayer", "transform_all"]

_CANONICAL = ("weight", "scales", "zero_points", "global_scale", "bias")


def _dtype_name(dtype):
    if dtype in (torch.float16, "float16", "half"):
        return "float16"
    if dtype in (torch.bfloat16, "bfloat16"):
        return "bfloat16"
    raise HummingError(f"torch_dtype: expected torch.float16 or "
                       f"torch.bfloat16, got {dtype}")


class HummingLayer(torch.nn.Module):
    """A dense quantized linear layer y = x W^T (+ bias) as an nn.Module:
    HummingLayer(shape_n, shape_k, weight_config, input_config=None,
    torch_dtype=torch.float16) with humming.HummingLayer's weight_config
    and input_config (input_config's dtype defaults to torch_dtype)."""

    def __init__(self, shape_n, shape_k, weight_config, input_config=None,
                 torch_dtype=torch.float16):
        super().__init__()
        dtype = _dtype_name(torch_dtype)
        input_config = dict(input_config or {})
        input_config.setdefault("dtype", dtype)
        self._config = (int(shape_n), int(shape_k), dict(weight_config),
                        input_config, dtype)
        self._adopt(_CLayer(shape_n, shape_k, weight_config, input_config))

    @classmethod
    def from_tensors(cls, tensors, config, module=None, torch_dtype=None,
                     tp_rank=0, tp_size=1, parallel="column"):
        """A module from tensors in a checkpoint's own format (GPTQ's
        qweight / qzeros / scales / g_idx, AWQ's, compressed-tensors' ...,
        as an engine loaded them): humming.HummingLayer.from_tensors's
        arguments. Its buffers are the canonical tensors."""
        layer = _CLayer.from_tensors(tensors, config, module=module,
                                     torch_dtype=torch_dtype,
                                     tp_rank=tp_rank, tp_size=tp_size,
                                     parallel=parallel)
        return cls._wrap(layer)

    @classmethod
    def from_safetensors(cls, path, module, tp_rank=0, tp_size=1,
                         parallel="column"):
        """A module from a checkpoint directory (humming.HummingLayer.
        from_safetensors's arguments; 16-bit activations)."""
        return cls._wrap(_CLayer.from_safetensors(
            path, module, tp_rank=tp_rank, tp_size=tp_size,
            parallel=parallel))

    @classmethod
    def _wrap(cls, layer):
        self = cls.__new__(cls)
        torch.nn.Module.__init__(self)
        self._config = None
        self._adopt(layer)
        self._take_buffers()
        return self

    def _adopt(self, layer):
        self.layer = layer
        self.layer_id = _ops.register(layer)
        self.in_features, self.out_features = layer.shape_k, layer.shape_n
        self.torch_dtype = {"f16": torch.float16,
                            "bf16": torch.bfloat16}.get(layer._act)
        # The device the layer was last prepared for (None: not prepared
        # since its weights changed).
        self._prepared_on = None

    # -- weights ----------------------------------------------------------
    def load_from_unquantized(self, weight, bias=None):
        """Quantizes float weights [N, K] (and bias [N]) into the module."""
        self.layer.load_from_unquantized(weight, bias)
        self._take_buffers()

    def load_quantized(self, weight, scales=None, zero_points=None,
                       global_scale=None, bias=None):
        """Loads canonical tensors (humming.HummingLayer.load_quantized)."""
        self.layer.load_quantized(weight, scales, zero_points, global_scale,
                                  bias)
        self._take_buffers()

    def _buffer_device(self):
        for b in self.buffers(recurse=False):
            return b.device
        return torch.device("cpu")

    def _take_buffers(self, device=None):
        """The C layer's canonical tensors (and permutation) as buffers, on
        `device` (default: where the buffers were)."""
        device = device or self._buffer_device()
        tensors = self.layer.canonical_tensors()
        for name in _CANONICAL:
            t = tensors.get(name)
            self._buffers.pop(name, None)
            if t is not None:
                self.register_buffer(name, t.to(device))
        self._buffers.pop("input_permutation", None)
        perm = getattr(self.layer, "input_permutation", None)
        if perm is not None:
            self.register_buffer("input_permutation",
                                 torch.tensor(perm, dtype=torch.int32,
                                              device=device))
        self._prepared_on = None

    def _load_from_state_dict(self, state_dict, prefix, local_metadata,
                              strict, missing_keys, unexpected_keys,
                              error_msgs):
        names = _CANONICAL + ("input_permutation",)
        got = {n: state_dict[prefix + n] for n in names
               if prefix + n in state_dict}
        if "weight" not in got:
            missing_keys.append(prefix + "weight")
            return
        for key in state_dict:
            if key.startswith(prefix) and key[len(prefix):] not in names \
                    and "." not in key[len(prefix):]:
                unexpected_keys.append(key)
        device = got["weight"].device if not self._buffers else \
            self._buffer_device()
        try:
            self.layer.load_quantized(*(got.get(n) for n in _CANONICAL))
            perm = got.get("input_permutation")
            self.layer.set_input_permutation(
                None if perm is None else perm.tolist())
        except HummingError as e:
            error_msgs.append(f"{prefix or 'HummingLayer'}: {e}")
            return
        self._take_buffers(device)

    def _apply(self, fn, recurse=True):
        # Moves only: the quantized tensors keep their types. A move to
        # another device prepares the layer there at the next forward.
        for name, t in list(self._buffers.items()):
            if t is None:
                continue
            moved = fn(t)
            if moved.dtype != t.dtype:
                moved = t.to(moved.device)
            if moved.device != t.device:
                self._prepared_on = None
            self._buffers[name] = moved
        return self

    # -- running ----------------------------------------------------------
    def transform(self, device=None, **target):
        """Prepares the weights and compiles the kernels for `device` (a
        CUDA device; default: the buffers' device if on a GPU, else the
        current one). Other keywords: humming.HummingLayer.transform's."""
        if device is None:
            device = self._buffer_device()
            if device.type != "cuda":
                device = torch.device("cuda", torch.cuda.current_device())
        device = torch.device(device)
        if device.type != "cuda":
            raise HummingError(f"transform: expected a CUDA device, got "
                               f"{device}")
        if device.index is None:
            device = torch.device("cuda", torch.cuda.current_device())
        with torch.cuda.device(device):
            self.layer.transform(**target)
        self._prepared_on = device
        return self

    def forward(self, x):
        if x.shape[-1] != self.in_features:
            raise HummingError(f"expected x [..., {self.in_features}], got "
                               f"{list(x.shape)}")
        if self._prepared_on != x.device:
            if torch.compiler.is_compiling():
                raise HummingError(
                    f"the layer is not prepared for {x.device}: call "
                    "transform() (or humming.nn.transform_all(model)) before "
                    "torch.compile")
            if not x.is_cuda:
                raise HummingError(f"expected x on a CUDA device, got "
                                   f"{x.device}")
            self.transform(x.device)
        rows = x.reshape(-1, self.in_features)
        y = torch.ops.humming.gemm(rows, self.layer_id)
        return y.reshape(*x.shape[:-1], self.out_features)

    def extra_repr(self):
        return (f"in_features={self.in_features}, "
                f"out_features={self.out_features}, "
                f"dtype={self.torch_dtype}, id={self.layer_id}")


def transform_all(model, device=None, progress=None):
    """Prepares every humming.nn.HummingLayer in `model` for `device` (its
    buffers' device by default), with humming.transform_all's progress line
    (layers, kernels compiled and cached). Returns its totals."""
    layers = [m for m in model.modules() if isinstance(m, HummingLayer)]

    class _One:
        def __init__(self, module):
            self.module = module

        def transform(self):
            self.module.transform(device)

        @property
        def transform_stats(self):
            return self.module.layer.transform_stats
    return _transform_all([_One(m) for m in layers], progress=progress)
