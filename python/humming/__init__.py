"""Humming: quantized GEMM layers compiled for the GPU they run on.

A thin ctypes layer over the C API (libhumming.so, include/humming-c). The
shape of the original's API::

    from humming import HummingLayer
    layer = HummingLayer(shape_n=4096, shape_k=4096,
                         weight_config={"dtype": "uint4", "group_size": 128,
                                        "scale_dtype": "float16"},
                         input_config={"dtype": "float16"})
    layer.load_from_unquantized(w)      # torch tensor [N, K]
    layer.transform()                   # prepare + compile for this GPU
    y = layer(x)                        # x [M, K] on the GPU -> y [M, N]

The library is found through $HUMMING_LIBRARY, next to this package, or in
the build tree (build/lib/libhumming.so).
"""

# Equal to HUMMING_VERSION in CMakeLists.txt and python/pyproject.toml.
__version__ = "0.1.0"

__all__ = ["HummingError", "HummingLayer", "HummingMoeGrouping",
           "HummingMoeLayer", "HummingQuantizer", "TransformStats",
           "compiler", "device_facts", "library_path", "transform_all"]

# The package in modules: _common (the C bindings and configuration
# helpers), layer (HummingLayer, transform_all), quantizer, moe
# (HummingMoeLayer, HummingMoeGrouping); ops, nn, serving and bench build on
# them.
from ._common import (HummingError, TransformStats, compiler, device_facts,
                      library_path)
from ._common import _check, _library  # noqa: F401 (tests and tools use them)
from .layer import HummingLayer, transform_all
from .moe import HummingMoeGrouping, HummingMoeLayer
from .quantizer import HummingQuantizer
