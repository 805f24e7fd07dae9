"""HummingQuantizer: 16-bit activations to 8- or 4-bit codes and scales on
the GPU."""

from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING, Optional, Tuple

if TYPE_CHECKING:
    import torch


from ._common import (HummingError, _check, _dtype_name, _for_target,
                      _library)


_CODE_TYPES = {"e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2", "int8": "int8",
               "int4": "uint8", "e2m1": "uint8"}


class HummingQuantizer:
    """Quantizes activations [M, K] to 8- or 4-bit codes and f32 scales on the GPU
    (the original's quant_input), bit for bit as the host reference does:
    scale = absmax / largest code (per token, per group of `group_size`, or
    the given static scale), code = x / scale rounded to nearest even and
    saturated.

    dtype: "e4m3" ("float8_e4m3fn"), "e5m2" ("float8_e5m2"), "int8", or
    "int4" / "e2m1" (uint8 [M, K / 2], two codes per byte, the lower k in
    the low nibble);
    source_dtype: "float16", "bfloat16" or "float32"; group_size 0 for per
    token scales (or, with static=True, one given scale); codes_k: the
    codes per row (0: shape_k; more, per token or static, for a layer whose
    activation_k rounds K up to 16 bytes of codes: those past K are zero)."""

    def __init__(self, shape_k: int, dtype: str,
                 source_dtype: str = "float16", group_size: int = 0,
                 static: bool = False, codes_k: int = 0) -> None:
        code = _dtype_name(dtype)
        if code == "int8" or code == "si8":
            code = "int8"
        scaling = "static" if static else "group" if group_size else "token"
        if static and group_size:
            raise HummingError("expected group_size = 0 with a static scale, "
                               f"got {group_size}")
        handle = ctypes.c_void_p()
        _check(_library().humming_quantizer_create(
            str(code).encode(), scaling.encode(), int(group_size),
            str(_dtype_name(source_dtype)).encode(), int(shape_k),
            ctypes.byref(handle)))
        self._handle = handle
        if codes_k:
            _check(_library().humming_quantizer_set_codes_k(handle,
                                                            int(codes_k)))
        self.shape_k = int(shape_k)
        self.codes_k = int(codes_k) or self.shape_k
        self._code = code
        self._source = _dtype_name(source_dtype)
        self._scaling = scaling
        self._group = int(group_size)
        self._transformed = False

    def __del__(self):
        handle = getattr(self, "_handle", None)
        if handle:
            _library().humming_quantizer_destroy(handle)
            self._handle = None

    def transform(self, device: Optional[str] = None,
                  chip: Optional[str] = None,
                  compile_only: bool = False) -> None:
        """Compiles the kernel: for the current CUDA device by default, or
        for `device` ("H200") / `chip` ("sm_90a")."""
        def run(device, chip):
            _check(_library().humming_quantizer_transform(
                self._handle, device.encode() if device else None,
                chip.encode() if chip else None, int(bool(compile_only))))
        _for_target(run, device, chip)
        self._transformed = not compile_only

    def __call__(self, x: "torch.Tensor",
                 scale: Optional["torch.Tensor"] = None
                 ) -> Tuple["torch.Tensor", "torch.Tensor"]:
        """(codes [M, codes_k] (4-bit: [M, codes_k / 2]), scales) for x [M, K] on the current stream;
        scales are [M, 1] per token, [M, K / group_size] per group, or, with
        a static scale, the given one-element float32 tensor."""
        import torch
        src = {"f16": torch.float16, "bf16": torch.bfloat16,
               "f32": torch.float32}[self._source]
        if x.dim() != 2 or x.shape[1] != self.shape_k:
            raise HummingError(
                f"expected x of shape [M, {self.shape_k}], got {list(x.shape)}")
        if x.dtype != src or not x.is_cuda:
            raise HummingError(
                f"expected a CUDA tensor of {src}, got {x.dtype} on {x.device}")
        x = x.contiguous()
        m = x.shape[0]
        # 4-bit codes: two per byte, the lower k in the low nibble.
        cols = self.codes_k // 2 if self._code in ("int4", "e2m1") else self.codes_k
        codes = torch.empty((m, cols),
                            dtype=getattr(torch, _CODE_TYPES[self._code]),
                            device=x.device)
        if self._scaling == "static":
            if (scale is None or not isinstance(scale, torch.Tensor) or
                    scale.numel() != 1 or scale.dtype != torch.float32 or
                    scale.device != x.device):
                raise HummingError(
                    "expected the static scale as a one-element float32 "
                    f"tensor on {x.device}")
            scales = scale.contiguous()
        else:
            if scale is not None:
                raise HummingError(
                    f"expected no scale with {self._scaling} scaling (the "
                    "kernel computes it)")
            cols = 1 if self._scaling == "token" else self.shape_k // self._group
            scales = torch.empty((m, cols), dtype=torch.float32,
                                 device=x.device)
        stream = torch.cuda.current_stream(x.device).cuda_stream
        _check(_library().humming_quantizer_forward(
            self._handle, ctypes.c_void_p(stream), x.data_ptr(),
            codes.data_ptr(), scales.data_ptr(), m))
        return codes, scales
