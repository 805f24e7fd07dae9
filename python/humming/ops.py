"""Humming's layers as torch custom operators (torch.ops.humming.*).

A transformed layer is called through an operator that torch.compile
(fullgraph=True) keeps as one node and CUDA graph capture records as its
kernel launches:

    import humming.ops
    layer = HummingLayer(4096, 4096, {"dtype": "uint4", "group_size": 128})
    layer.load_from_unquantized(w); layer.transform()
    y = torch.ops.humming.gemm(x, humming.ops.register(layer))
    linear = humming.ops.HummingLinear(layer)   # an nn.Module around it
    y = torch.compile(linear, fullgraph=True)(x)

Operators take the layer by the integer id register() gives (an operator's
arguments are tensors and numbers); the registry holds layers weakly, so an
id is valid while its layer lives. Their fake (meta) implementations give
the output's shape and dtype from the layer, so tracing runs no kernel.

    humming::gemm(Tensor x, int layer) -> Tensor      # [M, N], HummingLayer
    humming::moe(Tensor x, Tensor topk_ids, Tensor topk_weights,
                 int layer) -> Tensor                  # [M, H], HummingMoeLayer

Needs torch >= 2.4 (torch.library.custom_op).
"""

import itertools
import weakref

import torch

from . import HummingError, HummingLayer, HummingMoeLayer

if not hasattr(torch, "library") or not hasattr(torch.library, "custom_op"):
    raise HummingError(
        f"humming.ops needs torch.library.custom_op (torch >= 2.4), got torch "
        f"{torch.__version__}")

__all__ = ["HummingLinear", "HummingMoe", "gemm", "moe", "register"]

_layers = weakref.WeakValueDictionary()
_next_id = itertools.count(1)
_DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16}


def register(layer):
    """The id under which torch.ops.humming.* find `layer` (a transformed
    HummingLayer or HummingMoeLayer); the same id for the same layer."""
    if not isinstance(layer, (HummingLayer, HummingMoeLayer)):
        raise HummingError(f"expected a HummingLayer or HummingMoeLayer, got "
                           f"{type(layer).__name__}")
    ident = getattr(layer, "_op_id", None)
    if ident is None:
        ident = next(_next_id)
        layer._op_id = ident
        _layers[ident] = layer
    return ident


def _layer(ident, kind):
    layer = _layers.get(int(ident))
    if layer is None:
        raise HummingError(f"no live layer has id {ident}: register the layer "
                           "with humming.ops.register() and keep it alive")
    if not isinstance(layer, kind):
        raise HummingError(f"layer {ident} is a {type(layer).__name__}, "
                           f"expected a {kind.__name__}")
    return layer


def _dense(ident):
    found = _layer(ident, HummingLayer)
    if found.num_experts:
        raise HummingError("humming::gemm runs dense layers; this one has "
                           "experts (use forward_moe)")
    return found


@torch.library.custom_op("humming::gemm", mutates_args=())
def gemm(x: torch.Tensor, layer: int) -> torch.Tensor:
    """y [M, N] = x [M, K] W^T by the dense layer `layer` (an id from
    register()), on the current stream."""
    return _dense(layer)(x)


@gemm.register_fake
def _gemm_fake(x, layer):
    found = _dense(layer)
    return x.new_empty((x.shape[0], found.shape_n),
                       dtype=_DTYPES[found._output])


@torch.library.custom_op("humming::moe", mutates_args=())
def moe(x: torch.Tensor, topk_ids: torch.Tensor, topk_weights: torch.Tensor,
        layer: int) -> torch.Tensor:
    """y [M, H] of the MoE block `layer` (an id from register()) for x
    [M, H], topk_ids [M, top_k] int32 and topk_weights [M, top_k] float32."""
    return _layer(layer, HummingMoeLayer)(x, topk_ids, topk_weights)


@moe.register_fake
def _moe_fake(x, topk_ids, topk_weights, layer):
    found = _layer(layer, HummingMoeLayer)
    return x.new_empty((x.shape[0], found.hidden), dtype=_DTYPES[found._act])


class HummingLinear(torch.nn.Module):
    """An nn.Module around a transformed dense HummingLayer: forward(x) for
    x [..., K] is torch.ops.humming.gemm over its rows, [..., N]. The
    quantized weights live in the layer (prepared for its GPU), not in
    parameters."""

    def __init__(self, layer):
        super().__init__()
        if not isinstance(layer, HummingLayer) or layer.num_experts:
            raise HummingError("expected a dense HummingLayer")
        self.layer = layer
        self.layer_id = register(layer)
        self.in_features, self.out_features = layer.shape_k, layer.shape_n

    def forward(self, x):
        rows = x.reshape(-1, self.in_features)
        y = torch.ops.humming.gemm(rows, self.layer_id)
        return y.reshape(*x.shape[:-1], self.out_features)

    def extra_repr(self):
        return (f"in_features={self.in_features}, "
                f"out_features={self.out_features}, id={self.layer_id}")


class HummingMoe(torch.nn.Module):
    """An nn.Module around a transformed HummingMoeLayer:
    forward(x, topk_ids, topk_weights) is torch.ops.humming.moe."""

    def __init__(self, layer):
        super().__init__()
        if not isinstance(layer, HummingMoeLayer):
            raise HummingError("expected a HummingMoeLayer")
        self.layer = layer
        self.layer_id = register(layer)

    def forward(self, x, topk_ids, topk_weights):
        return torch.ops.humming.moe(x, topk_ids, topk_weights, self.layer_id)
