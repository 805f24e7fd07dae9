#!/usr/bin/env python3
"""Writes small quantized checkpoints for the humming-inspect tests.

Pure Python (struct + json), so the tests need no numpy or torch:
  make_checkpoint.py <dir> <kind>
kinds: gptq, gptq-act-order, awq, ct-pack, nvfp4, fp8-block, gptq-bad-scales,
bad-config, gptq-bad-utf8, ct-w8a8-int8, ct-w8a8-fp8, ct-w8a8-int8-static,
ct-w4a4 (fuzz/make_seeds.py turns the good ones into fuzzing seeds)
"""
import json
import os
import random
import struct
import sys

DTYPE_BYTES = {"I32": 4, "F16": 2, "BF16": 2, "F32": 4, "U8": 1, "I8": 1,
               "F8_E4M3": 1, "I64": 8}


def write_safetensors(path, tensors, raw_name=None):
    """tensors: list of (name, dtype, shape, bytes); raw_name replaces the
    first tensor's name in the header bytes (to write one that is not UTF-8)."""
    header, offset, blobs = {}, 0, []
    for name, dtype, shape, data in tensors:
        n = 1
        for d in shape:
            n *= d
        assert len(data) == n * DTYPE_BYTES[dtype], (name, len(data))
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header).encode()
    if raw_name is not None:
        text = text.replace(json.dumps(tensors[0][0]).encode(), b'"' + raw_name + b'"', 1)
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def rand_bytes(n, seed, lo=0, hi=255):
    r = random.Random(seed)
    return bytes(r.randint(lo, hi) for _ in range(n))


def f16(values):
    return struct.pack("<%de" % len(values), *values)


def f32(values):
    return struct.pack("<%df" % len(values), *values)


def gptq(d, bad_scales=False, act_order=False):
    n, k, g = 64, 256, 128
    cfg = {"torch_dtype": "float16", "quantization_config": {
        "quant_method": "gptq", "bits": 4, "group_size": g, "sym": True,
        "desc_act": act_order, "checkpoint_format": "gptq"}}
    json.dump(cfg, open(os.path.join(d, "config.json"), "w"))
    m = "model.layers.0.mlp.down_proj"
    scales_rows = 4 if bad_scales else k // g
    tensors = [
        (m + ".qweight", "I32", [k // 8, n], rand_bytes(k // 8 * n * 4, 1)),
        (m + ".qzeros", "I32", [k // g, n // 8], struct.pack("<I", 0x77777777) * (k // g * n // 8)),
        (m + ".scales", "F16", [scales_rows, n], f16([0.01] * (scales_rows * n))),
        ("lm_head.weight", "F16", [8, n], f16([0.5] * (8 * n))),
    ]
    if act_order:
        # Input channel i belongs to group (i * 7 mod k) // g: a permutation.
        g_idx = [((i * 7) % k) // g for i in range(k)]
        tensors.append((m + ".g_idx", "I32", [k], struct.pack("<%di" % k, *g_idx)))
    write_safetensors(os.path.join(d, "model.safetensors"), tensors)


def awq(d):
    n, k, g = 64, 128, 64
    json.dump({"torch_dtype": "float16", "quantization_config": {
        "quant_method": "awq", "bits": 4, "group_size": g, "zero_point": True,
        "version": "gemm"}}, open(os.path.join(d, "config.json"), "w"))
    m = "model.layers.0.mlp.gate_proj"
    write_safetensors(os.path.join(d, "model.safetensors"), [
        (m + ".qweight", "I32", [k, n // 8], rand_bytes(k * n // 8 * 4, 5)),
        (m + ".qzeros", "I32", [k // g, n // 8], struct.pack("<I", 0x88888888) * (k // g * n // 8)),
        (m + ".scales", "F16", [k // g, n], f16([0.02] * (k // g * n))),
    ])


def ct_pack(d):
    n, k, g = 32, 128, 32
    json.dump({"torch_dtype": "bfloat16", "quantization_config": {
        "quant_method": "compressed-tensors", "format": "pack-quantized",
        "config_groups": {"g": {"targets": ["Linear"], "weights": {
            "num_bits": 4, "type": "int", "symmetric": True, "strategy": "group",
            "group_size": g}}}, "ignore": ["lm_head"]}},
        open(os.path.join(d, "config.json"), "w"))
    m = "model.layers.0.self_attn.q_proj"
    write_safetensors(os.path.join(d, "model.safetensors"), [
        (m + ".weight_packed", "I32", [n, k // 8], rand_bytes(n * k // 8 * 4, 6)),
        (m + ".weight_scale", "F16", [n, k // g], f16([0.03] * (n * k // g))),
        (m + ".weight_shape", "I64", [2], struct.pack("<2q", n, k)),
    ])


def nvfp4(d):
    n, k = 64, 128
    json.dump({"torch_dtype": "bfloat16"}, open(os.path.join(d, "config.json"), "w"))
    json.dump({"producer": {"name": "modelopt"}, "quantization": {
        "quant_algo": "NVFP4", "group_size": 16, "exclude_modules": ["lm_head"]}},
        open(os.path.join(d, "hf_quant_config.json"), "w"))
    m = "model.layers.0.self_attn.o_proj"
    write_safetensors(os.path.join(d, "model.safetensors"), [
        (m + ".weight", "U8", [n, k // 2], rand_bytes(n * k // 2, 2)),
        (m + ".weight_scale", "F8_E4M3", [n, k // 16], rand_bytes(n * k // 16, 3, 0x30, 0x40)),
        (m + ".weight_scale_2", "F32", [], f32([0.0005])),
        (m + ".input_scale", "F32", [], f32([0.01])),
    ])


def fp8_block(d):
    n, k = 256, 256
    json.dump({"quantization_config": {"quant_method": "fp8", "fmt": "e4m3",
               "activation_scheme": "dynamic", "weight_block_size": [128, 128]}},
              open(os.path.join(d, "config.json"), "w"))
    m = "model.layers.0.mlp.experts.0.up_proj"
    write_safetensors(os.path.join(d, "model.safetensors"), [
        (m + ".weight", "F8_E4M3", [n, k], rand_bytes(n * k, 4, 0, 0x7E)),
        (m + ".weight_scale_inv", "F32", [2, 2], f32([0.001, 0.002, 0.003, 0.004])),
    ])


def ct_w8a8(d, fp8, static=False):
    """compressed-tensors W8A8 with per-channel weight scales and dynamic
    per-token activations: int8 (int-quantized) or fp8 (float-quantized,
    as the FP8-dynamic models)."""
    n, k = 256, 512
    kind = "float" if fp8 else "int"
    json.dump({"torch_dtype": "bfloat16", "quantization_config": {
        "quant_method": "compressed-tensors",
        "format": "float-quantized" if fp8 else "int-quantized",
        "config_groups": {"g": {"targets": ["Linear"], "weights": {
            "num_bits": 8, "type": kind, "symmetric": True,
            "strategy": "channel"},
            "input_activations": {"num_bits": 8, "type": kind,
                                  "symmetric": True,
                                  "strategy": "tensor" if static else "token",
                                  "dynamic": not static}}},
        "ignore": ["lm_head"]}},
        open(os.path.join(d, "config.json"), "w"))
    m = "model.layers.0.mlp.down_proj"
    write_safetensors(os.path.join(d, "model.safetensors"), [
        (m + ".weight", "F8_E4M3" if fp8 else "I8", [n, k],
         rand_bytes(n * k, 7, 0, 0x7E) if fp8 else rand_bytes(n * k, 7)),
        (m + ".weight_scale", "F32", [n, 1], f32([0.002] * n)),
    ] + ([(m + ".input_scale", "F32", [1], f32([0.05]))] if static else []))


def ct_w4a4(d):
    """compressed-tensors W4A4 int (pack-quantized): int4 weights per
    channel, dynamic per-token int4 activations."""
    n, k = 256, 512
    json.dump({"torch_dtype": "float16", "quantization_config": {
        "quant_method": "compressed-tensors", "format": "pack-quantized",
        "config_groups": {"g": {"targets": ["Linear"], "weights": {
            "num_bits": 4, "type": "int", "symmetric": True,
            "strategy": "channel"},
            "input_activations": {"num_bits": 4, "type": "int",
                                  "symmetric": True, "strategy": "token",
                                  "dynamic": True}}},
        "ignore": ["lm_head"]}},
        open(os.path.join(d, "config.json"), "w"))
    m = "model.layers.0.mlp.down_proj"
    write_safetensors(os.path.join(d, "model.safetensors"), [
        (m + ".weight_packed", "I32", [n, k // 8], rand_bytes(n * k // 8 * 4, 8)),
        (m + ".weight_scale", "F16", [n, 1], f16([0.01] * n)),
        (m + ".weight_shape", "I64", [2], struct.pack("<2q", n, k)),
    ])


def gptq_bad_utf8(d):
    gptq(d)
    write_safetensors(os.path.join(d, "model.safetensors"),
                      [("x", "F16", [1], f16([1.0]))], raw_name=b"w\xff.weight")


def bad_config(d):
    with open(os.path.join(d, "config.json"), "w") as f:
        f.write('{"quantization_config": {"quant_method": "gptq",\n "bits": 4,, }}')
    write_safetensors(os.path.join(d, "model.safetensors"), [])


def main():
    d, kind = sys.argv[1], sys.argv[2]
    os.makedirs(d, exist_ok=True)
    {"gptq": gptq, "awq": awq, "ct-pack": ct_pack, "nvfp4": nvfp4, "fp8-block": fp8_block,
     "gptq-bad-scales": lambda d: gptq(d, bad_scales=True),
     "gptq-act-order": lambda d: gptq(d, act_order=True),
     "gptq-bad-utf8": gptq_bad_utf8, "bad-config": bad_config,
     "ct-w8a8-int8": lambda d: ct_w8a8(d, fp8=False),
     "ct-w8a8-fp8": lambda d: ct_w8a8(d, fp8=True),
     "ct-w8a8-int8-static": lambda d: ct_w8a8(d, fp8=False, static=True),
     "ct-w4a4": ct_w4a4}[kind](d)


if __name__ == "__main__":
    main()
