"""HummingMoeLayer (a whole mixture-of-experts block) and
HummingMoeGrouping (the rows moved around a grouped MoE GEMM)."""

from __future__ import annotations

import ctypes
from typing import (TYPE_CHECKING, Any, Mapping, Optional, Sequence,
                    Tuple, Union)

if TYPE_CHECKING:
    import os

    import torch


from ._common import (_EIGHT_BIT, HummingError, _c_scaling, _check,
                      _check_keys, _dtype_name, _floats, _for_target,
                      _library, _tensor_array, _weight_schema)


class HummingMoeLayer:
    """A whole mixture-of-experts block (Qwen3-MoE, Mixtral, DeepSeek
    style): y = sum over the token's top_k experts e of
    topk_weight * down_e(silu(gate_e(x)) * up_e(x)).

    hidden (H), intermediate (I, each expert's), num_experts (E, at most
    1024), top_k; weight_config as HummingLayer's (dense: it applies to
    every expert; down_weight_config, when given, to the down projection);
    input_config {"dtype": "float16" | "bfloat16"}, or 8-bit activations
    {"dtype": "e4m3" | "e5m2" | "int8" (integer weights), "scaling":
    "token" (default) | "group" with "group_size" g, "output_dtype":
    "float16" (default) | "bfloat16"}: each GEMM quantizes its own input
    (x, then the gated intermediate) on the GPU, and x and y are of the
    output type; block_size: the
    routing's padding per expert — 0 (default) chooses it per call from the
    tokens per expert (16 at decode, 64 / 128 rows for prefill), else a
    fixed multiple of 16.

        moe = HummingMoeLayer(2048, 768, 128, 8, {"dtype": "uint4",
                              "group_size": 128})
        moe.quantize(gate_up, down)   # [E, 2I, H] (gate rows, then up), [E, H, I]
        moe.transform(max_tokens=4096)
        y = moe(x, topk_ids, topk_weights)  # [M, H], int32 / float32 [M, top_k]
    """

    def __init__(self, hidden: int, intermediate: int, num_experts: int,
                 top_k: int, weight_config: Mapping[str, Any],
                 input_config: Optional[Mapping[str, Any]] = None,
                 block_size: int = 0,
                 down_weight_config: Optional[Mapping[str, Any]] = None,
                 activation: Any = "silu",
                 streams: Optional[int] = None) -> None:
        input_config = input_config or {"dtype": "float16"}
        _check_keys(input_config, ("dtype", "scaling", "group_size",
                                   "output_dtype"), "input_config")
        self.hidden, self.intermediate = int(hidden), int(intermediate)
        self.num_experts, self.top_k = int(num_experts), int(top_k)
        act = _dtype_name(input_config.get("dtype", "float16"))
        keep = []
        # Scales default to the 16-bit type of x (the output's with 8-bit
        # activations).
        dtype = input_config.get("dtype", "float16")
        eight_bit = act in _EIGHT_BIT and act != "int4"
        if eight_bit:
            dtype = input_config.get("output_dtype", "float16")
        elif set(input_config) - {"dtype"}:
            raise HummingError(
                "expected only 'dtype' in the input_config of 16-bit "
                f"activations, got {sorted(input_config)}")
        gate_up = _weight_schema(weight_config, dtype, keep)
        down = _weight_schema(down_weight_config or weight_config, dtype, keep)
        handle = ctypes.c_void_p()
        if eight_bit:
            scaling = _c_scaling(input_config)
            self._act = _dtype_name(dtype)
            _check(_library().humming_moe_layer_create_quantized(
                self.hidden, self.intermediate, self.num_experts, self.top_k,
                int(block_size), ctypes.byref(gate_up), ctypes.byref(down),
                _EIGHT_BIT[act][0], scaling.encode(), self._act.encode(),
                ctypes.byref(handle)))
        else:
            self._act = act
            _check(_library().humming_moe_layer_create(
                self.hidden, self.intermediate, self.num_experts, self.top_k,
                int(block_size), ctypes.byref(gate_up), ctypes.byref(down),
                self._act.encode(), ctypes.byref(handle)))
        self._handle = handle
        self._transformed = False
        self.max_tokens = 0
        self.set_activation(activation)
        if streams is not None:
            self.set_streams(streams)

    def set_streams(self, streams: int) -> None:
        """Scratch blocks made at transform() (default 2): each stream that
        calls the layer has its own routing and intermediate rows for
        max_tokens tokens, made at its first call; a stream whose first
        call comes during CUDA graph capture takes one of these. 1 or 0
        saves their memory where no such stream exists. Before
        transform()."""
        _check(_library().humming_moe_layer_set_streams(self._handle,
                                                        int(streams)))
        self._transformed = False

    # The gated activations by name: (alpha, up_offset, limit).
    _ACTIVATIONS = {"silu": (1.0, 0.0, 0.0), "gpt_oss": (1.702, 1.0, 7.0)}

    def set_activation(self, activation: Any) -> None:
        """The activation between the GEMMs: "silu" (SiLU(gate) * up),
        "gpt_oss" (clamped SwiGLU) or (alpha, up_offset, limit): gate g, up u,
        g / (1 + e^(-alpha g)) * (u + up_offset), g <= limit and |u| <= limit
        where limit > 0. Transform again after changing it."""
        if isinstance(activation, str):
            if activation not in self._ACTIVATIONS:
                raise HummingError(
                    f"expected activation 'silu', 'gpt_oss' or (alpha, "
                    f"up_offset, limit), got {activation!r}")
            activation = self._ACTIVATIONS[activation]
        try:
            alpha, up_offset, limit = (float(v) for v in activation)
        except (TypeError, ValueError):
            raise HummingError(
                f"expected activation 'silu', 'gpt_oss' or (alpha, "
                f"up_offset, limit), got {activation!r}") from None
        _check(_library().humming_moe_layer_set_activation(
            self._handle, alpha, up_offset, limit))
        self._transformed = False

    @classmethod
    def from_safetensors(cls, path: Union[str, "os.PathLike[str]"],
                         pattern: str, num_experts: int, top_k: int,
                         block_size: int = 0, gate: str = "gate_proj",
                         up: str = "up_proj",
                         down: str = "down_proj") -> "HummingMoeLayer":
        """The MoE block whose expert e's projections are the modules
        pattern.replace("{e}", e) + "." + gate / up / down of a checkpoint
        directory (GPTQ, AWQ, compressed-tensors, FP8 ...; Mixtral: gate="w1",
        up="w3", down="w2"), with the model's 16-bit type. A pattern without
        "{e}" names the module holding every expert (gpt-oss MXFP4:
        "model.layers.0.mlp.experts", its gate_up_proj and down; the
        activation is gpt-oss's where config.json has swiglu_limit)."""
        handle = ctypes.c_void_p()
        _check(_library().humming_moe_layer_create_from_checkpoint(
            str(path).encode(), str(pattern).encode(), int(num_experts),
            int(top_k), int(block_size), gate.encode(), up.encode(),
            down.encode(), ctypes.byref(handle)))
        return cls._adopt(handle, num_experts, top_k)

    @classmethod
    def from_tensors(cls, tensors: Mapping[str, Any],
                     config: Union[str, Mapping[str, Any]], pattern: str,
                     num_experts: int, top_k: int, torch_dtype: Any = None,
                     block_size: int = 0, gate: str = "gate_proj",
                     up: str = "up_proj",
                     down: str = "down_proj") -> "HummingMoeLayer":
        """The MoE block from tensors a host holds, named as a checkpoint
        names them relative to the block ("experts.0.gate_proj.qweight"
        with pattern "experts.{e}"): torch tensors or (dtype, shape, bytes)
        triples; `config` as HummingLayer.from_tensors takes it."""
        config, array, keep = _tensor_array(tensors, config, torch_dtype)
        import json
        handle = ctypes.c_void_p()
        _check(_library().humming_moe_layer_create_from_tensors(
            json.dumps(config).encode(), array, len(tensors),
            str(pattern).encode(), int(num_experts), int(top_k),
            int(block_size), gate.encode(), up.encode(), down.encode(),
            ctypes.byref(handle)))
        return cls._adopt(handle, num_experts, top_k)

    @classmethod
    def _adopt(cls, handle, num_experts, top_k):
        self = cls.__new__(cls)
        self._handle = handle
        self._transformed = False
        self.max_tokens = 0
        self.num_experts, self.top_k = int(num_experts), int(top_k)
        lib = _library()
        self.hidden = lib.humming_moe_layer_hidden(handle)
        self.intermediate = lib.humming_moe_layer_intermediate(handle)
        self._act = lib.humming_moe_layer_activation(handle).decode()
        return self

    def __del__(self):
        handle = getattr(self, "_handle", None)
        if handle:
            _library().humming_moe_layer_destroy(handle)
            self._handle = None

    def quantize(self, gate_up: "torch.Tensor", down: "torch.Tensor") -> None:
        """Float weights: gate_up [E, 2I, H] (each expert's gate rows, then
        its up rows), down [E, H, I]."""
        per = self.num_experts * self.hidden * self.intermediate
        _check(_library().humming_moe_layer_quantize(
            self._handle, _floats(gate_up, 2 * per, "gate_up"),
            _floats(down, per, "down")))
        self._transformed = False

    def transform(self, device: Optional[str] = None,
                  chip: Optional[str] = None, compile_only: bool = False,
                  max_tokens: int = 4096) -> None:
        """Compiles every kernel (for the current CUDA device by default)
        and makes the workspace for up to max_tokens tokens."""
        def run(device, chip):
            _check(_library().humming_moe_layer_transform(
                self._handle, device.encode() if device else None,
                chip.encode() if chip else None, int(bool(compile_only)),
                int(max_tokens)))
        _for_target(run, device, chip)
        self._transformed = not compile_only
        self.max_tokens = int(max_tokens)

    def __call__(self, x: "torch.Tensor", topk_ids: "torch.Tensor",
                 topk_weights: "torch.Tensor") -> "torch.Tensor":
        """y [M, H] for x [M, H] (the layer's 16-bit type), topk_ids [M,
        top_k] (int32; ids outside 0 .. E-1 contribute nothing) and
        topk_weights [M, top_k] (float32), on the current stream."""
        import torch
        act = {"f16": torch.float16, "bf16": torch.bfloat16}[self._act]
        if x.dim() != 2 or x.shape[1] != self.hidden or x.dtype != act:
            raise HummingError(f"expected x of shape [M, {self.hidden}] and "
                               f"dtype {act}, got {list(x.shape)} {x.dtype}")
        m = x.shape[0]
        want = [m, self.top_k]
        if list(topk_ids.shape) != want or topk_ids.dtype != torch.int32:
            raise HummingError(f"expected topk_ids of shape {want} and dtype "
                               f"int32, got {list(topk_ids.shape)} "
                               f"{topk_ids.dtype}")
        if (list(topk_weights.shape) != want or
                topk_weights.dtype != torch.float32):
            raise HummingError(f"expected topk_weights of shape {want} and "
                               "dtype float32, got "
                               f"{list(topk_weights.shape)} "
                               f"{topk_weights.dtype}")
        x, ids, w = (t.contiguous() for t in (x, topk_ids, topk_weights))
        y = torch.empty((m, self.hidden), dtype=act, device=x.device)
        stream = torch.cuda.current_stream(x.device).cuda_stream
        _check(_library().humming_moe_layer_forward(
            self._handle, ctypes.c_void_p(stream), x.data_ptr(),
            ids.data_ptr(), w.data_ptr(), y.data_ptr(), m))
        return y



class HummingMoeGrouping:
    """The router's top-k ids into a grouped routing on the GPU, and the
    rows moved around a grouped MoE GEMM (HummingLayer(..., num_experts=E,
    moe={"gemm_type": "grouped_contiguous" or "grouped_masked"})).

    max_tokens 0 (default): grouped_contiguous, rows sorted by expert with
    offsets [E + 1]; else grouped_masked, max_tokens rows per expert with
    counts [E] (then M <= max_tokens). row_bytes: the widths in bytes of the
    rows scatter() and gather() move (e.g. 2 * K and 2 * N for 16-bit
    activations and outputs).

        g = HummingMoeGrouping(128, 8, row_bytes=[2 * 2048, 2 * 1536])
        g.transform()
        positions, offsets = g.route(topk_ids)  # int32 [M * top_k], [E + 1]
        xs = g.scatter(x, positions)            # [g.rows(M), K] by expert
        ys = gemm.forward_moe(xs, expert_layout=offsets)
        y = g.gather(ys, positions)             # [M * top_k, N] by token
    """

    def __init__(self, num_experts: int, top_k: int, max_tokens: int = 0,
                 row_bytes: Sequence[int] = ()) -> None:
        self.num_experts, self.top_k = int(num_experts), int(top_k)
        self.max_tokens = int(max_tokens)
        widths = [int(b) for b in row_bytes]
        array = (ctypes.c_int64 * max(1, len(widths)))(*widths)
        handle = ctypes.c_void_p()
        _check(_library().humming_moe_grouping_create(
            self.num_experts, self.top_k, self.max_tokens, array, len(widths),
            ctypes.byref(handle)))
        self._handle = handle

    def __del__(self):
        handle = getattr(self, "_handle", None)
        if handle:
            _library().humming_moe_grouping_destroy(handle)
            self._handle = None

    def transform(self, device: Optional[str] = None,
                  chip: Optional[str] = None,
                  compile_only: bool = False) -> None:
        """Compiles the routing kernel and the row moves (for the current
        CUDA device by default)."""
        def run(device, chip):
            _check(_library().humming_moe_grouping_transform(
                self._handle, device.encode() if device else None,
                chip.encode() if chip else None, int(bool(compile_only))))
        _for_target(run, device, chip)

    def rows(self, m: int) -> int:
        """The grouped GEMM's rows for m tokens."""
        return _library().humming_moe_grouping_rows(self._handle, int(m))

    def _tensor(self, t, name, dtypes, shape=None):
        import torch
        if not isinstance(t, torch.Tensor) or not t.is_cuda or (
                dtypes and t.dtype not in dtypes) or (
                shape is not None and list(t.shape) != shape):
            want = " or ".join(str(d) for d in dtypes) if dtypes else "rows"
            got = (f"{list(t.shape)} {t.dtype} on {t.device}"
                   if isinstance(t, torch.Tensor) else type(t).__name__)
            raise HummingError(
                f"{name}: expected a CUDA tensor of {want}"
                f"{f' of shape {shape}' if shape is not None else ''}, "
                f"got {got}")
        return t.contiguous()

    def _stream(self, t):
        import torch
        return ctypes.c_void_p(torch.cuda.current_stream(t.device).cuda_stream)

    def route(self, topk_ids: "torch.Tensor"
              ) -> Tuple["torch.Tensor", "torch.Tensor"]:
        """(positions [M * top_k] int32, expert layout int32 [E + 1] offsets
        or [E] counts) for topk_ids [M, top_k] int32."""
        import torch
        ids = self._tensor(topk_ids, "topk_ids", (torch.int32,))
        if ids.dim() != 2 or ids.shape[1] != self.top_k:
            raise HummingError(f"topk_ids: expected [M, {self.top_k}], got "
                               f"{list(ids.shape)}")
        m = ids.shape[0]
        positions = torch.empty(m * self.top_k, dtype=torch.int32,
                                device=ids.device)
        layout = torch.empty(
            _library().humming_moe_grouping_layout_size(self._handle),
            dtype=torch.int32, device=ids.device)
        _check(_library().humming_moe_grouping_forward(
            self._handle, self._stream(ids), ids.data_ptr(), m,
            positions.data_ptr(), layout.data_ptr()))
        return positions, layout

    def _positions(self, positions):
        import torch
        pos = self._tensor(positions, "positions", (torch.int32,))
        if pos.dim() != 1 or pos.numel() % self.top_k:
            raise HummingError(f"positions: expected [M * {self.top_k}] "
                               f"(route()'s), got {list(pos.shape)}")
        return pos, pos.numel() // self.top_k

    def scatter(self, x: "torch.Tensor",
                positions: "torch.Tensor") -> "torch.Tensor":
        """x [M, ...] into the grouped rows [rows(M), ...] (rows no id
        names are left unwritten)."""
        import torch
        pos, m = self._positions(positions)
        x = self._tensor(x, "x", None)
        if x.dim() != 2 or x.shape[0] != m:
            raise HummingError(f"x: expected [{m}, columns] (one row per "
                               f"token of positions), got {list(x.shape)}")
        out = torch.empty((self.rows(m), x.shape[1]), dtype=x.dtype,
                          device=x.device)
        _check(_library().humming_moe_grouping_scatter(
            self._handle, self._stream(x), x.shape[1] * x.element_size(),
            x.data_ptr(), m, pos.data_ptr(), out.data_ptr()))
        return out

    def scatter_weights(self, topk_weights: "torch.Tensor",
                        positions: "torch.Tensor") -> "torch.Tensor":
        """The router weights [M, top_k] float32 into the grouped rows'
        order [rows(M)] (a grouped down projection's topk_weights)."""
        import torch
        pos, m = self._positions(positions)
        w = self._tensor(topk_weights, "topk_weights", (torch.float32,),
                         [m, self.top_k])
        out = torch.zeros(self.rows(m), dtype=torch.float32, device=w.device)
        _check(_library().humming_moe_grouping_scatter_weights(
            self._handle, self._stream(w), w.data_ptr(), m, pos.data_ptr(),
            out.data_ptr()))
        return out

    def gather(self, grouped: "torch.Tensor",
               positions: "torch.Tensor") -> "torch.Tensor":
        """The grouped rows back to [M * top_k, ...] in token order (zero
        rows for ids of no expert)."""
        import torch
        pos, m = self._positions(positions)
        g = self._tensor(grouped, "grouped", None)
        if g.dim() != 2 or g.shape[0] != self.rows(m):
            raise HummingError(f"grouped: expected [{self.rows(m)}, columns] "
                               f"(rows({m})), got {list(g.shape)}")
        out = torch.empty((m * self.top_k, g.shape[1]), dtype=g.dtype,
                          device=g.device)
        _check(_library().humming_moe_grouping_gather(
            self._handle, self._stream(g), g.shape[1] * g.element_size(),
            g.data_ptr(), m, pos.data_ptr(), out.data_ptr()))
        return out
