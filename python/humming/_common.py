"""The C bindings (libhumming.so through ctypes) and the configuration
helpers the layer classes share."""

from __future__ import annotations

from typing import Dict, Optional

import collections
import ctypes
import os

TransformStats = collections.namedtuple(
    "TransformStats",
    "compiled cached kernel_seconds slowest_kernel_seconds weight_seconds")


class _CTransformStats(ctypes.Structure):
    _fields_ = [("compiled", ctypes.c_int), ("cached", ctypes.c_int),
                ("kernel_seconds", ctypes.c_double),
                ("slowest_kernel_seconds", ctypes.c_double),
                ("weight_seconds", ctypes.c_double)]


class _CTensor(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_char_p),
                ("rank", ctypes.c_int64),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("data", ctypes.c_void_p), ("bytes", ctypes.c_size_t)]


# torch dtypes by safetensors name, and back (float8 types where this torch
# has them; F8_E8M0 scales travel as their bytes).
_ST_TORCH = {"I32": "int32", "I16": "int16", "I64": "int64", "I8": "int8",
             "U8": "uint8", "F16": "float16", "BF16": "bfloat16",
             "F32": "float32", "F64": "float64", "BOOL": "bool",
             "F8_E4M3": "float8_e4m3fn", "F8_E5M2": "float8_e5m2",
             "F8_E8M0": "float8_e8m0fnu"}


def _safetensors_dtype(torch, dtype):
    for name, attr in _ST_TORCH.items():
        if getattr(torch, attr, None) == dtype:
            return name
    raise HummingError(f"expected a tensor of a safetensors dtype "
                       f"({', '.join(_ST_TORCH)}), got {dtype}")


class HummingError(RuntimeError):
    """A humming call failed; the message says what was expected and found."""


class _WeightSchema(ctypes.Structure):
    _fields_ = [
        ("type", ctypes.c_char_p),
        ("scale_type", ctypes.c_char_p),
        ("granularity", ctypes.c_char_p),
        ("group_k", ctypes.c_int64),
        ("group_n", ctypes.c_int64),
        ("zero_point", ctypes.c_char_p),
        ("bias", ctypes.c_int),
        ("pad_n", ctypes.c_int64),
        ("pad_k", ctypes.c_int64),
    ]


def library_path() -> str:
    """Where libhumming.so is loaded from."""
    env = os.environ.get("HUMMING_LIBRARY")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    for candidate in (os.path.join(here, "libhumming.so"),
                      os.path.join(here, "..", "..", "build", "lib",
                                   "libhumming.so")):
        if os.path.exists(candidate):
            return os.path.normpath(candidate)
    raise HummingError(
        "libhumming.so not found: set HUMMING_LIBRARY or build the "
        "'humming' target (scripts/humming build)")


_lib = None


def _library():
    global _lib
    if _lib is None:
        lib = ctypes.CDLL(library_path())
        p = ctypes.c_void_p
        lib.humming_last_error.restype = ctypes.c_char_p
        lib.humming_layer_create.argtypes = [
            ctypes.c_int64, ctypes.c_int64, ctypes.POINTER(_WeightSchema),
            ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(p)]
        lib.humming_layer_destroy.argtypes = [p]
        lib.humming_layer_destroy.restype = None
        lib.humming_layer_quantize.argtypes = [
            p, ctypes.POINTER(ctypes.c_float), ctypes.POINTER(ctypes.c_float)]
        lib.humming_layer_quantize_on_device.argtypes = [
            p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint64,
            ctypes.c_char_p, ctypes.POINTER(ctypes.c_float)]
        lib.humming_layer_transform_tuned.argtypes = [
            p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p]
        lib.humming_layer_forward.argtypes = [
            p, p, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_int64]
        sz = ctypes.c_size_t
        lib.humming_layer_load_quantized.argtypes = [
            p, p, sz, p, sz, p, sz, p, sz, p, sz]
        lib.humming_layer_create_quantized.argtypes = [
            ctypes.c_int64, ctypes.c_int64, ctypes.POINTER(_WeightSchema),
            ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
            ctypes.POINTER(p)]
        lib.humming_layer_forward_quantized.argtypes = [
            p, p, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64,
            ctypes.c_int64]
        lib.humming_layer_load_checkpoint.argtypes = [
            p, ctypes.c_char_p, ctypes.c_char_p]
        lib.humming_layer_create_from_checkpoint_shard.argtypes = [
            ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
            ctypes.c_int64, ctypes.c_int64, ctypes.c_char_p, ctypes.POINTER(p)]
        lib.humming_layer_create_from_tensors.argtypes = [
            ctypes.c_char_p, ctypes.POINTER(_CTensor), ctypes.c_int64,
            ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int64, ctypes.c_int64,
            ctypes.c_char_p, ctypes.POINTER(p)]
        lib.humming_layer_canonical_tensor.argtypes = [
            p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p),
            ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_int64),
            p, ctypes.c_int64]
        lib.humming_layer_canonical_tensor.restype = ctypes.c_int64
        lib.humming_layer_input_permutation.argtypes = [
            p, ctypes.POINTER(ctypes.c_int32), ctypes.c_int64]
        lib.humming_layer_input_permutation.restype = ctypes.c_int64
        lib.humming_layer_set_activations_gathered.argtypes = [p, ctypes.c_int]
        lib.humming_layer_set_batch_invariant.argtypes = [p, ctypes.c_int]
        lib.humming_layer_set_streams.argtypes = [p, ctypes.c_int64]
        lib.humming_layer_batch_invariant.argtypes = [p]
        lib.humming_layer_forward_gathering.argtypes = [
            p, p, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64,
            ctypes.c_int64]
        lib.humming_layer_set_input_permutation.argtypes = [
            p, ctypes.POINTER(ctypes.c_int32), ctypes.c_int64]
        lib.humming_layer_activation.argtypes = [p]
        lib.humming_layer_activation.restype = ctypes.c_char_p
        lib.humming_layer_activation_scaling.argtypes = [p]
        lib.humming_layer_activation_scaling.restype = ctypes.c_char_p
        lib.humming_layer_activation_group.argtypes = [p]
        lib.humming_layer_activation_group.restype = ctypes.c_int64
        lib.humming_layer_n.argtypes = [p]
        lib.humming_layer_n.restype = ctypes.c_int64
        lib.humming_layer_k.argtypes = [p]
        lib.humming_layer_k.restype = ctypes.c_int64
        lib.humming_layer_activation_k.argtypes = [p]
        lib.humming_layer_activation_k.restype = ctypes.c_int64
        lib.humming_layer_transform_stats.argtypes = [
            p, ctypes.POINTER(_CTransformStats)]
        lib.humming_layer_compiler_reports.argtypes = [p]
        lib.humming_layer_compiler_reports.restype = ctypes.c_char_p
        lib.humming_layer_set_probe.argtypes = [p, ctypes.c_int]
        lib.humming_layer_probe.argtypes = [p]
        lib.humming_layer_probe.restype = ctypes.c_char_p
        lib.humming_compiler.restype = ctypes.c_char_p
        lib.humming_device_facts.argtypes = [
            ctypes.c_char_p, ctypes.c_char_p,
            ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_double)]
        lib.humming_layer_kernel_count.argtypes = [p]
        lib.humming_layer_is_prepared.argtypes = [p]
        lib.humming_quantizer_create.argtypes = [
            ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int64, ctypes.c_char_p,
            ctypes.c_int64, ctypes.POINTER(p)]
        lib.humming_quantizer_destroy.argtypes = [p]
        lib.humming_quantizer_destroy.restype = None
        lib.humming_quantizer_set_codes_k.argtypes = [p, ctypes.c_int64]
        lib.humming_quantizer_transform.argtypes = [
            p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int]
        lib.humming_quantizer_forward.argtypes = [
            p, p, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64,
            ctypes.c_int64]
        lib.humming_moe_layer_create.argtypes = [
            ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
            ctypes.c_int64, ctypes.POINTER(_WeightSchema),
            ctypes.POINTER(_WeightSchema), ctypes.c_char_p,
            ctypes.POINTER(p)]
        lib.humming_moe_layer_create_quantized.argtypes = [
            ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
            ctypes.c_int64, ctypes.POINTER(_WeightSchema),
            ctypes.POINTER(_WeightSchema), ctypes.c_char_p, ctypes.c_char_p,
            ctypes.c_char_p, ctypes.POINTER(p)]
        lib.humming_moe_layer_create_from_checkpoint.argtypes = [
            ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int64, ctypes.c_int64,
            ctypes.c_int64, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
            ctypes.POINTER(p)]
        lib.humming_moe_layer_create_from_tensors.argtypes = [
            ctypes.c_char_p, ctypes.POINTER(_CTensor), ctypes.c_int64,
            ctypes.c_char_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
            ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
            ctypes.POINTER(p)]
        lib.humming_moe_layer_destroy.argtypes = [p]
        lib.humming_moe_layer_hidden.argtypes = [p]
        lib.humming_moe_layer_hidden.restype = ctypes.c_int64
        lib.humming_moe_layer_intermediate.argtypes = [p]
        lib.humming_moe_layer_intermediate.restype = ctypes.c_int64
        lib.humming_moe_layer_activation.argtypes = [p]
        lib.humming_moe_layer_activation.restype = ctypes.c_char_p
        lib.humming_moe_layer_destroy.restype = None
        lib.humming_moe_layer_quantize.argtypes = [
            p, ctypes.POINTER(ctypes.c_float), ctypes.POINTER(ctypes.c_float)]
        lib.humming_layer_create_moe.argtypes = [
            ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
            ctypes.POINTER(_WeightSchema), ctypes.c_char_p, ctypes.c_char_p,
            ctypes.c_int64, ctypes.c_int64, ctypes.c_int, ctypes.POINTER(p)]
        lib.humming_layer_create_batched.argtypes = [
            ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
            ctypes.POINTER(_WeightSchema), ctypes.c_char_p, ctypes.POINTER(p)]
        lib.humming_layer_moe_block_size.argtypes = [p, ctypes.c_int64]
        lib.humming_layer_moe_block_size.restype = ctypes.c_int64
        lib.humming_layer_forward_moe.argtypes = [
            p, p, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_int64,
            ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_int64,
            ctypes.c_int64, ctypes.c_uint64, ctypes.c_uint64]
        lib.humming_layer_create_moe_quantized.argtypes = [
            ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
            ctypes.POINTER(_WeightSchema), ctypes.c_char_p, ctypes.c_char_p,
            ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int64, ctypes.c_int64,
            ctypes.c_int, ctypes.POINTER(p)]
        lib.humming_layer_forward_moe_quantized.argtypes = [
            p, p, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64,
            ctypes.c_int64, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64,
            ctypes.c_int64, ctypes.c_int64, ctypes.c_uint64, ctypes.c_uint64]
        lib.humming_moe_layer_set_activation.argtypes = [
            p, ctypes.c_double, ctypes.c_double, ctypes.c_double]
        lib.humming_moe_layer_set_streams.argtypes = [p, ctypes.c_int64]
        lib.humming_moe_layer_transform.argtypes = [
            p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int64]
        lib.humming_moe_layer_forward.argtypes = [
            p, p, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64,
            ctypes.c_uint64, ctypes.c_int64]
        i64, u64 = ctypes.c_int64, ctypes.c_uint64
        lib.humming_moe_grouping_create.argtypes = [
            i64, i64, i64, ctypes.POINTER(i64), i64, ctypes.POINTER(p)]
        lib.humming_moe_grouping_destroy.argtypes = [p]
        lib.humming_moe_grouping_destroy.restype = None
        lib.humming_moe_grouping_transform.argtypes = [
            p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int]
        lib.humming_moe_grouping_rows.argtypes = [p, i64]
        lib.humming_moe_grouping_rows.restype = i64
        lib.humming_moe_grouping_layout_size.argtypes = [p]
        lib.humming_moe_grouping_layout_size.restype = i64
        lib.humming_moe_grouping_forward.argtypes = [p, p, u64, i64, u64, u64]
        lib.humming_moe_grouping_scatter.argtypes = [
            p, p, i64, u64, i64, u64, u64]
        lib.humming_moe_grouping_scatter_weights.argtypes = [
            p, p, u64, i64, u64, u64]
        lib.humming_moe_grouping_gather.argtypes = [
            p, p, i64, u64, i64, u64, u64]
        _lib = lib
    return _lib


def compiler() -> str:
    """The kernel compiler every transform of this process uses, with its
    version: e.g. "nvjitlink+ptxas (nvJitLink 13.0 / ptxas 13.0.88)" (the
    default sends the kernels that use setmaxnreg to ptxas). Kernel speed
    depends on it; humming.bench records it."""
    lib = _library()
    text = lib.humming_compiler()
    if text is None:
        raise HummingError(lib.humming_last_error().decode())
    return text.decode()


def device_facts(device: Optional[str] = None,
                 chip: Optional[str] = None) -> Dict[str, float]:
    """The facts the tile heuristics use for `device` ("H200") or `chip`
    ("sm_90a"), by default the current CUDA device's (by its name, else its
    chip's representative, as transform() does): {"sm_count",
    "memory_gbs"} (peak memory bandwidth, GB/s: the floor of a decode
    kernel is its bytes over it)."""
    if device is None and chip is None:
        device, chip = _current_device()
    sms, gbs = ctypes.c_int64(), ctypes.c_double()
    _check(_library().humming_device_facts(
        device.encode() if device else None, chip.encode() if chip else None,
        ctypes.byref(sms), ctypes.byref(gbs)))
    return {"sm_count": sms.value, "memory_gbs": gbs.value}


def _check(rc):
    if rc != 0:
        raise HummingError(_library().humming_last_error().decode())


# The original's names for dtypes -> ours.
_DTYPES = {"float16": "f16", "bfloat16": "bf16", "float32": "f32",
           "float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2",
           "float8_e8m0fnu": "ue8m0"}


# 8- and 4-bit activation dtypes -> (the C API's name, the torch dtype of
# codes: int4 codes two per byte, [M, K / 2] uint8, the lower k in the low
# nibble).
_EIGHT_BIT = {"e4m3": (b"f8E4M3FN", "float8_e4m3fn"),
              "e5m2": (b"f8E5M2", "float8_e5m2"),
              "int8": (b"si8", "int8"),
              "int4": (b"si4", "uint8")}


def _dtype_name(value):
    if value is None:
        return None
    name = str(value)
    if name.startswith("torch."):
        name = name[len("torch."):]
    return _DTYPES.get(name, name)



def _torch_dtype_name(dtype):
    """"float16" / "bfloat16" for a torch dtype or its name."""
    name = str(dtype).replace("torch.", "")
    if name in ("float16", "half", "f16"):
        return "float16"
    if name in ("bfloat16", "bf16"):
        return "bfloat16"
    raise HummingError(f"torch_dtype: expected float16 or bfloat16, got "
                       f"{dtype}")


def _tensor_array(tensors, config, torch_dtype):
    """(config.json dict, C array of humming_tensor, what must outlive the
    call) for from_tensors' arguments."""
    if not isinstance(config, dict):
        raise HummingError(f"config: expected a dict (config.json or its "
                           f"quantization_config), got "
                           f"{type(config).__name__}")
    if "quantization_config" not in config:
        config = {"quantization_config": config}
    if torch_dtype is not None or "torch_dtype" not in config:
        config = dict(config)
        config["torch_dtype"] = _torch_dtype_name(torch_dtype or "float16")
    if not isinstance(tensors, dict) or not tensors:
        raise HummingError("tensors: expected a non-empty dict of name -> "
                           "tensor")
    keep = []
    array = (_CTensor * len(tensors))()
    for i, (name, t) in enumerate(tensors.items()):
        dtype, shape, data, size = _raw_tensor(t, str(name), keep)
        dims = (ctypes.c_int64 * max(1, len(shape)))(*shape)
        keep.extend((dims, str(name).encode(), dtype.encode()))
        array[i] = _CTensor(keep[-2], keep[-1], len(shape), dims, data, size)
    return config, array, keep


def _raw_tensor(t, name, keep):
    """(safetensors dtype, shape, data pointer, bytes) of a torch tensor
    (copied to contiguous host memory, kept alive in `keep`) or of a
    (dtype, shape, bytes) triple."""
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None and isinstance(t, torch.Tensor):
        dtype = _safetensors_dtype(torch, t.dtype)
        host = t.detach().contiguous().cpu()
        keep.append(host)
        return (dtype, list(host.shape), host.data_ptr(),
                host.numel() * host.element_size())
    if isinstance(t, tuple) and len(t) == 3:
        dtype, shape, data = t
        try:
            data = bytes(memoryview(data))
        except TypeError:
            raise HummingError(f"{name}: expected bytes as the triple's "
                               f"third item, got {type(data).__name__}") \
                from None
        buf = ctypes.create_string_buffer(data, max(1, len(data)))
        keep.append(buf)
        return (str(dtype), [int(d) for d in shape],
                ctypes.cast(buf, ctypes.c_void_p).value, len(data))
    raise HummingError(f"{name}: expected a torch tensor or a (dtype, shape, "
                       f"bytes) triple, got {type(t).__name__}")


def _as_tensor(dtype, shape, data):
    """A CPU torch tensor of safetensors `dtype` (bytes for a type this
    torch lacks: uint8 with a last dimension of bytes), or the triple when
    torch is not installed."""
    try:
        import torch
    except ImportError:
        return (dtype, shape, data)
    t = torch.frombuffer(bytearray(data), dtype=torch.uint8) if data else \
        torch.empty(0, dtype=torch.uint8)
    attr = getattr(torch, _ST_TORCH.get(dtype, ""), None)
    if attr is None:
        return t.reshape(*shape, -1) if shape else t
    return t.view(attr).reshape(shape)


_WEIGHT_KEYS = ("dtype", "scale_dtype", "granularity", "group_size",
                "block_n", "zero_point", "has_bias", "pad_n", "pad_k")
_INPUT_KEYS = ("dtype", "scaling", "output_dtype", "scale", "group_size")


def _c_scaling(input_config) -> str:
    """The C API's scaling string of an 8-bit input_config: its "scaling"
    ("token" by default, or "static"), or "group<g>" for scaling "group"
    with group_size g > 0 (DeepSeek-V3's FP8: 128)."""
    scaling = str(input_config.get("scaling", "token"))
    if scaling != "group":
        return scaling
    group = int(input_config.get("group_size", 0))
    if group <= 0:
        raise HummingError("expected input_config['group_size'] (the "
                           "activation group along K) with group scaling")
    return f"group<{group}>"


def _check_keys(config, allowed, what):
    """Refuses a key of `config` outside `allowed` (a typo would otherwise
    be ignored: {"grp_size": 128} would make a per-channel layer), naming
    the closest allowed key."""
    import difflib
    for key in config:
        if key not in allowed:
            close = difflib.get_close_matches(str(key), allowed, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise HummingError(f"{what}: unknown key '{key}'{hint}; expected "
                               f"some of {', '.join(allowed)}")


def _c_string(s, keep):
    """`s` as a C string (None stays NULL), kept alive in `keep` for as long
    as the call that takes it."""
    if s is None:
        return None
    b = str(s).encode()
    keep.append(b)
    return b


def _weight_schema(weight_config, default_scale, keep):
    """The C weight schema of a weight_config (HummingLayer's keys); the
    C strings are appended to `keep`, which must outlive its use."""
    _check_keys(weight_config, _WEIGHT_KEYS, "weight_config")
    if "dtype" not in weight_config:
        raise HummingError("weight_config: expected 'dtype' (the weights' "
                           "code type, e.g. 'uint4')")
    def c(s):
        return _c_string(s, keep)
    group = int(weight_config.get("group_size") or 0)
    granularity = weight_config.get(
        "granularity", "group" if group > 0 else "channel")
    return _WeightSchema(
        c(_dtype_name(weight_config["dtype"])),
        c(_dtype_name(weight_config.get("scale_dtype", default_scale))),
        c(granularity), group, int(weight_config.get("block_n", 0)),
        c(weight_config.get("zero_point") or "none"),
        int(bool(weight_config.get("has_bias", False))),
        int(weight_config.get("pad_n", 0)),
        int(weight_config.get("pad_k", 0)))


def _floats(value, count, name):
    try:
        import torch
        if isinstance(value, torch.Tensor):
            flat = value.detach().to("cpu", torch.float32).contiguous()
            if flat.numel() != count:
                raise HummingError(
                    f"{name}: expected {count} values, got {flat.numel()}")
            buf = (ctypes.c_float * count)()
            ctypes.memmove(buf, flat.data_ptr(), 4 * count)
            return buf
    except ImportError:
        pass
    values = list(value)
    if len(values) != count:
        raise HummingError(f"{name}: expected {count} values, got {len(values)}")
    return (ctypes.c_float * count)(*values)



def _for_target(run, device, chip):
    """run(device, chip) for the given target, or for the current CUDA
    device: by its name, else (a device the tables do not know) by its chip,
    whose representative facts then choose the tiles."""
    if device is not None or chip is not None:
        run(device, chip)
        return
    device, chip = _current_device()
    try:
        run(device, chip)
    except HummingError as e:
        if "expected a device among" not in str(e):
            raise
        run(None, chip)


def _current_device():
    import torch
    if not torch.cuda.is_available():
        raise HummingError("no CUDA device: pass device= or chip= with "
                           "compile_only=True to compile without one")
    name = torch.cuda.get_device_name()
    major, minor = torch.cuda.get_device_capability()
    if name.startswith("NVIDIA "):
        name = name[len("NVIDIA "):]
    chip = f"sm_{major}{minor}" + ("a" if major in (9, 10, 12) else "")
    return name, chip
