"""A serving engine's quantization method, built only on torch.

Shaped like vLLM's LinearMethodBase, so that an engine's plugin is a thin
shim: the engine makes a layer module, asks the method for its parameters
(the checkpoint's own tensors, at this rank's partition sizes, with the
attributes vLLM's weight loaders shard by), loads the checkpoint into them,
then lets the method turn them into a Humming layer prepared for the GPU,
and calls apply() in forward:

    from humming.serving import HummingLinearMethod, load_weight
    method = HummingLinearMethod(config["quantization_config"],
                                 torch_dtype=torch.float16)
    layer = torch.nn.Module()
    method.create_weights(layer, input_size_per_partition=K // tp,
                          output_partition_sizes=[N], input_size=K,
                          output_size=N, params_dtype=torch.float16)
    for name, param in layer.named_parameters():       # the engine's loader
        load_weight(param, checkpoint[prefix + name], tp_rank, tp_size)
    method.process_weights_after_loading(layer)         # -> Humming layer
    y = method.apply(layer, x, bias)                    # torch.ops.humming.gemm

Mixture-of-experts blocks have HummingMoeMethod (vLLM's FusedMoE method
shape: stacked w13_* / w2_* parameters, load_expert_weight for the
engine's per-expert loads, apply(layer, x, topk_weights, topk_ids)); it
takes GPTQ checkpoints (without act-order, which a MoE kernel cannot
gather per expert).

Formats: GPTQ (2/3/4/8-bit, gptq and gptq_v2 zero points, act-order
desc_act with column parallelism or none), AWQ (4-bit GEMM), compressed-
tensors pack-quantized integer weights (group / channel, symmetric or not)
and FP8 with block scales (quant_method "fp8", weight_block_size). Row
parallelism of an act-order GPTQ layer is refused (its columns are
scattered over the whole input); so are formats not listed, with the
reason. Parameters carry vLLM's attributes: input_dim, output_dim,
packed_dim, packed_factor, and any extra_weight_attrs (weight_loader).
"""

import torch

from . import HummingError
from . import HummingLayer as _CLayer
from . import HummingMoeLayer as _CMoeLayer
from . import ops as _ops

__all__ = ["HummingLinearMethod", "HummingMoeMethod", "load_weight",
           "load_expert_weight"]


def _target_device(where):
    """The GPU to prepare a layer for: its parameters' when they are on
    one, else the current CUDA device (parameters loaded on the host);
    None without a GPU (the layer is then not prepared, and apply says
    so)."""
    if where.type == "cuda":
        return where
    if torch.cuda.is_available():
        return torch.device("cuda", torch.cuda.current_device())
    return None


def _install(layer, humming, where, **transform):
    """`humming` (a HummingLayer or HummingMoeLayer made from `layer`'s
    parameters, which lived on `where`) prepared for its GPU
    (_target_device) and put in their place."""
    device = _target_device(where)
    if device is not None:
        with torch.cuda.device(device):
            humming.transform(**transform)
    for name in list(layer._parameters):
        delattr(layer, name)
    layer.humming_layer = humming
    layer.humming_id = _ops.register(humming)


def _prepared_id(layer):
    """The operator id of `layer`'s Humming layer, or why apply cannot run."""
    if getattr(layer, "humming_layer", None) is None:
        raise HummingError("apply: call process_weights_after_loading "
                           "first")
    if not layer.humming_layer._transformed:
        raise HummingError("apply: the layer is not prepared for a GPU "
                           "(there was none at "
                           "process_weights_after_loading)")
    return layer.humming_id


def _param(layer, name, shape, dtype, **attrs):
    if any(int(d) <= 0 for d in shape):
        raise HummingError(f"{name}: the partition gives an empty or "
                           f"negative shape {list(shape)}")
    p = torch.nn.Parameter(torch.empty(*shape, dtype=dtype),
                           requires_grad=False)
    for key, value in attrs.items():
        setattr(p, key, value)
    layer.register_parameter(name, p)
    return p


def _divide(what, size, by):
    if size % by:
        raise HummingError(f"{what}: expected a multiple of {by}, got {size}")
    return size // by


class HummingLinearMethod:
    """Linear layers of one checkpoint's quantization_config (a dict, as
    config.json holds it)."""

    def __init__(self, quant_config, torch_dtype=torch.float16):
        if not isinstance(quant_config, dict):
            raise HummingError(f"quant_config: expected a dict, got "
                               f"{type(quant_config).__name__}")
        self.config = dict(quant_config)
        self.torch_dtype = torch_dtype
        method = str(self.config.get("quant_method", "")).lower()
        self.method = method
        if method == "gptq":
            self.bits = int(self.config.get("bits", 4))
            self.group = int(self.config.get("group_size", 128))
            self.act_order = bool(self.config.get("desc_act", False))
        elif method == "awq":
            self.bits = int(self.config.get("bits", 4))
            self.group = int(self.config.get("group_size", 128))
        elif method == "compressed-tensors":
            self._compressed_tensors()
        elif method == "fp8":
            block = self.config.get("weight_block_size")
            if not block:
                raise HummingError(
                    "fp8: expected weight_block_size (per-tensor FP8 scales "
                    "of merged layers are one per shard in vLLM's layout, "
                    "which this adapter does not take yet; load such "
                    "checkpoints with humming.nn.HummingLayer."
                    "from_safetensors)")
            self.block = [int(b) for b in block]
        else:
            raise HummingError(
                f"quant_method: expected gptq, awq, compressed-tensors or fp8 "
                f"(the serving adapter's formats; the rest load through "
                f"from_safetensors), got {method!r}")

    def _compressed_tensors(self):
        fmt = self.config.get("format")
        groups = self.config.get("config_groups") or {}
        linear = [g for g in groups.values()
                  if "Linear" in (g.get("targets") or [])]
        if fmt != "pack-quantized" or len(linear) != 1:
            raise HummingError(
                "compressed-tensors: expected format pack-quantized with one "
                f"config group targeting Linear, got format {fmt!r} and "
                f"{len(linear)} such groups")
        w = linear[0].get("weights") or {}
        if w.get("type", "int") != "int" or w.get("strategy") not in (
                "group", "channel"):
            raise HummingError(
                "compressed-tensors: expected integer weights with strategy "
                f"group or channel, got type {w.get('type')!r}, strategy "
                f"{w.get('strategy')!r}")
        self.bits = int(w.get("num_bits", 4))
        self.group = int(w.get("group_size") or 0) \
            if w.get("strategy") == "group" else 0
        self.symmetric = bool(w.get("symmetric", True))

    # -- the engine's calls -----------------------------------------------
    def create_weights(self, layer, input_size_per_partition,
                       output_partition_sizes, input_size, output_size,
                       params_dtype, **extra_weight_attrs):
        """Registers this rank's parameters on `layer` in the checkpoint's
        names and layout."""
        k, n = int(input_size_per_partition), int(sum(output_partition_sizes))
        row_split = k != int(input_size)
        extra = dict(extra_weight_attrs)
        layer.humming_partition = (n, k)
        layer.humming_layer = None
        if self.method in ("gptq", "awq", "compressed-tensors"):
            if 32 % self.bits and self.method != "gptq":
                raise HummingError(f"{self.method}: expected 2, 4 or 8 bits, "
                                   f"got {self.bits}")
            pack = 32 / self.bits
            groups = 1 if self.group <= 0 else _divide(
                f"input_size_per_partition ({k}) over group_size", k,
                self.group)
            # Scales and zero points split along K only with groups.
            k_dim = None if self.group <= 0 else 0
        if self.method == "gptq":
            if self.act_order and row_split:
                raise HummingError(
                    "gptq: an act-order (desc_act) layer cannot be split by "
                    "rows: its K is permuted over the whole input; shard it "
                    "by columns or not at all")
            words = _divide(f"input_size_per_partition ({k}) * bits / 32",
                            k * self.bits, 32)
            _param(layer, "qweight", (words, n), torch.int32, input_dim=0,
                   output_dim=1, packed_dim=0, packed_factor=pack, **extra)
            _param(layer, "g_idx", (k,), torch.int32, input_dim=0, **extra)
            _param(layer, "qzeros", (groups, _divide(
                f"output partition ({n}) * bits / 32", n * self.bits, 32)),
                torch.int32, input_dim=k_dim, output_dim=1, packed_dim=1,
                packed_factor=pack, **extra)
            _param(layer, "scales", (groups, n), params_dtype,
                   input_dim=k_dim, output_dim=1, **extra)
        elif self.method == "awq":
            cols = _divide(f"output partition ({n}) * bits / 32",
                           n * self.bits, 32)
            _param(layer, "qweight", (k, cols), torch.int32, input_dim=0,
                   output_dim=1, packed_dim=1, packed_factor=pack, **extra)
            _param(layer, "qzeros", (groups, cols), torch.int32,
                   input_dim=k_dim, output_dim=1, packed_dim=1,
                   packed_factor=pack, **extra)
            _param(layer, "scales", (groups, n), params_dtype,
                   input_dim=k_dim, output_dim=1, **extra)
        elif self.method == "compressed-tensors":
            s_dim = None if self.group <= 0 else 1
            _param(layer, "weight_packed", (n, _divide(
                f"input_size_per_partition ({k}) * bits / 32",
                k * self.bits, 32)), torch.int32, input_dim=1, output_dim=0,
                packed_dim=1, packed_factor=pack, **extra)
            _param(layer, "weight_scale", (n, groups), params_dtype,
                   input_dim=s_dim, output_dim=0, **extra)
            if not self.symmetric:
                _param(layer, "weight_zero_point", (_divide(
                    f"output partition ({n}) * bits / 32", n * self.bits,
                    32), groups), torch.int32, input_dim=s_dim, output_dim=0,
                    packed_dim=0, packed_factor=pack, **extra)
            _param(layer, "weight_shape", (2,), torch.int64, **extra)
        else:  # fp8 blocks
            bn, bk = self.block
            # A shard must hold whole scale blocks.
            if n != int(output_size):
                _divide(f"the output partition ({n}) over the scale block",
                        n, bn)
            if row_split:
                _divide(f"the input partition ({k}) over the scale block", k,
                        bk)
            _param(layer, "weight", (n, k), torch.float8_e4m3fn, input_dim=1,
                   output_dim=0, **extra)
            _param(layer, "weight_scale_inv", (-(-n // bn), -(-k // bk)),
                   torch.float32, input_dim=1, output_dim=0, **extra)

    def process_weights_after_loading(self, layer):
        """Turns the loaded parameters into a Humming layer prepared for
        their GPU (the current one for parameters on the host) and drops
        them."""
        tensors = {name: p.data for name, p in layer.named_parameters(
            recurse=False)}
        if not tensors:
            raise HummingError("expected the parameters create_weights "
                               "registered, found none")
        if "weight_shape" in tensors:
            n, k = layer.humming_partition
            tensors["weight_shape"] = torch.tensor([n, k], dtype=torch.int64)
        if self.method == "gptq" and not self.act_order:
            tensors.pop("g_idx", None)  # (trivial: group of k is k // g)
        where = next(iter(tensors.values())).device
        _install(layer, _CLayer.from_tensors(
            tensors, {"quantization_config": self.config},
            torch_dtype=self.torch_dtype), where)

    def apply(self, layer, x, bias=None):
        """y [..., N] = x [..., K] W^T (+ bias) by torch.ops.humming.gemm."""
        ident = _prepared_id(layer)
        n, k = layer.humming_partition
        y = torch.ops.humming.gemm(x.reshape(-1, k), ident)
        y = y.reshape(*x.shape[:-1], n)
        return y if bias is None else y + bias


def load_weight(param, loaded, tp_rank=0, tp_size=1):
    """Copies the checkpoint tensor `loaded` (the whole layer's) into
    `param`, rank tp_rank's slice of it along the parameter's output_dim or
    input_dim (vLLM's column / row parallel loaders; the parameter's shape
    says which: the dimension that is tp_size times smaller). A size that
    does not divide says so."""
    if tuple(loaded.shape) == tuple(param.shape) or tp_size == 1:
        if tuple(loaded.shape) != tuple(param.shape) and \
                loaded.numel() != param.numel():
            raise HummingError(f"expected a tensor of shape "
                               f"{list(param.shape)}, got "
                               f"{list(loaded.shape)}")
        param.data.copy_(loaded.reshape(param.shape))
        return
    for attr in ("output_dim", "input_dim"):
        d = getattr(param, attr, None)
        if d is None or loaded.shape[d] == param.shape[d]:
            continue
        if loaded.shape[d] != param.shape[d] * tp_size:
            raise HummingError(
                f"{attr} {d}: expected {param.shape[d]} x {tp_size} ranks, "
                f"got {loaded.shape[d]}")
        loaded = loaded.narrow(d, tp_rank * param.shape[d], param.shape[d])
    if tuple(loaded.shape) != tuple(param.shape):
        raise HummingError(f"expected a tensor of shape {list(param.shape)} "
                           f"after sharding, got {list(loaded.shape)}")
    param.data.copy_(loaded)


class HummingMoeMethod:
    """Mixture-of-experts blocks of a GPTQ checkpoint's
    quantization_config: stacked parameters as vLLM's GPTQ MoE method names
    them — w13_qweight [E, H * b / 32, 2 I], w13_qzeros [E, H / g,
    2 I * b / 32], w13_scales [E, H / g, 2 I] (each expert's gate columns,
    then its up columns) and w2_* [E, I ..., H] — with I this rank's
    intermediate size."""

    def __init__(self, quant_config, torch_dtype=torch.float16):
        if not isinstance(quant_config, dict):
            raise HummingError(f"quant_config: expected a dict, got "
                               f"{type(quant_config).__name__}")
        method = str(quant_config.get("quant_method", "")).lower()
        if method != "gptq":
            raise HummingError(
                f"quant_method: expected gptq (the MoE serving method's "
                f"format; the rest load through HummingMoeLayer."
                f"from_safetensors), got {method!r}")
        if quant_config.get("desc_act", False):
            raise HummingError(
                "gptq: expected desc_act false for a MoE block (its kernels "
                "read whole rows per expert; an act-order permutation per "
                "expert cannot be gathered)")
        self.config = dict(quant_config)
        self.torch_dtype = torch_dtype
        self.bits = int(self.config.get("bits", 4))
        self.group = int(self.config.get("group_size", 128))

    def create_weights(self, layer, num_experts, hidden_size,
                       intermediate_size_per_partition, params_dtype,
                       top_k, **extra_weight_attrs):
        e, h, i = (int(num_experts), int(hidden_size),
                   int(intermediate_size_per_partition))
        extra = dict(extra_weight_attrs)
        pack = 32 / self.bits

        def groups(k):
            return 1 if self.group <= 0 else _divide(
                f"{k} over group_size", k, self.group)

        def words(size, what):
            return _divide(f"{what} ({size}) * bits / 32", size * self.bits,
                           32)
        k_dim = None if self.group <= 0 else 1
        _param(layer, "w13_qweight", (e, words(h, "hidden_size"), 2 * i),
               torch.int32, input_dim=1, output_dim=2, packed_dim=1,
               packed_factor=pack, **extra)
        _param(layer, "w13_qzeros", (e, groups(h), words(2 * i, "2 I")),
               torch.int32, input_dim=k_dim, output_dim=2, packed_dim=2,
               packed_factor=pack, **extra)
        _param(layer, "w13_scales", (e, groups(h), 2 * i), params_dtype,
               input_dim=k_dim, output_dim=2, **extra)
        _param(layer, "w2_qweight", (e, words(i, "the intermediate size"), h),
               torch.int32, input_dim=1, output_dim=2, packed_dim=1,
               packed_factor=pack, **extra)
        _param(layer, "w2_qzeros", (e, groups(i), words(h, "hidden_size")),
               torch.int32, input_dim=k_dim, output_dim=2, packed_dim=2,
               packed_factor=pack, **extra)
        _param(layer, "w2_scales", (e, groups(i), h), params_dtype,
               input_dim=k_dim, output_dim=2, **extra)
        layer.humming_moe_shape = (e, h, i, int(top_k))
        layer.humming_layer = None

    def process_weights_after_loading(self, layer, max_tokens=4096):
        """Turns the stacked parameters into a HummingMoeLayer prepared for
        their GPU (up to max_tokens tokens per call) and drops them."""
        e, h, i, top_k = layer.humming_moe_shape
        p = {name: t.data for name, t in layer.named_parameters(
            recurse=False)}
        words = i * self.bits // 32
        tensors = {}
        for x in range(e):
            base = f"experts.{x}."
            for proj, cols, zcols in (("gate_proj", slice(0, i),
                                       slice(0, words)),
                                      ("up_proj", slice(i, 2 * i),
                                       slice(words, 2 * words))):
                tensors[base + proj + ".qweight"] = p["w13_qweight"][x][:, cols]
                tensors[base + proj + ".qzeros"] = p["w13_qzeros"][x][:, zcols]
                tensors[base + proj + ".scales"] = p["w13_scales"][x][:, cols]
            tensors[base + "down_proj.qweight"] = p["w2_qweight"][x]
            tensors[base + "down_proj.qzeros"] = p["w2_qzeros"][x]
            tensors[base + "down_proj.scales"] = p["w2_scales"][x]
        _install(layer, _CMoeLayer.from_tensors(
            tensors, {"quantization_config": self.config}, "experts.{e}", e,
            top_k, torch_dtype=self.torch_dtype), p["w13_qweight"].device,
            max_tokens=max_tokens)

    def apply(self, layer, x, topk_weights, topk_ids):
        """y [M, H] of the block for x [M, H] and the router's choice
        (topk_ids [M, top_k], topk_weights [M, top_k])."""
        return torch.ops.humming.moe(x, topk_ids.to(torch.int32),
                                     topk_weights.to(torch.float32),
                                     _prepared_id(layer))


def load_expert_weight(param, loaded, expert, shard, tp_rank=0, tp_size=1):
    """Copies expert `expert`'s checkpoint tensor `loaded` (its gate, up or
    down projection: `shard` "w1", "w3" or "w2", as vLLM's FusedMoE loader
    names them) into the stacked MoE parameter `param`: gate into the first
    half of the output columns, up into the second, each rank's share of the
    intermediate size along the output (w1 / w3) or input (w2) dimension."""
    if shard not in ("w1", "w3", "w2"):
        raise HummingError(f"shard: expected w1, w3 or w2, got {shard!r}")
    target = param.data[expert]
    if shard == "w2":
        d = getattr(param, "input_dim", None)
        if d is not None and tp_size > 1:
            d -= 1  # (the expert dimension is gone)
            size = target.shape[d]
            if loaded.shape[d] != size * tp_size:
                raise HummingError(f"input_dim {d}: expected {size} x "
                                   f"{tp_size} ranks, got {loaded.shape[d]}")
            loaded = loaded.narrow(d, tp_rank * size, size)
    else:
        d = param.output_dim - 1
        half = target.shape[d] // 2
        target = target.narrow(d, 0 if shard == "w1" else half, half)
        if loaded.shape[d] != half * tp_size:
            raise HummingError(f"output_dim {d}: expected {half} x "
                               f"{tp_size} ranks, got {loaded.shape[d]}")
        loaded = loaded.narrow(d, tp_rank * half, half)
    if tuple(loaded.shape) != tuple(target.shape):
        raise HummingError(f"expected a tensor of shape {list(target.shape)}, "
                           f"got {list(loaded.shape)}")
    target.copy_(loaded)
