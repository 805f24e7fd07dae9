//===- Passes.td - humming dialect passes ------------------*- tablegen -*-===//
//
// Keep the definitions alphabetical; test passes go in their own section.
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_DIALECT_HUMMING_TRANSFORMS_PASSES_TD
#define HUMMING_DIALECT_HUMMING_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def HummingAttachTargetPass : Pass<"humming-attach-target", "::mlir::ModuleOp"> {
  let summary = "Attach a #humming.target to the module";
  let description = [{
    Sets the module's `humming.target` attribute from the table of known
    devices, so that every humming operation below it is verified against
    that chip (activation types, MMA families, TMA, prepared layouts) and
    the tile heuristics see its facts. An unknown device, chip or PTX
    version is an error that names what is known.

    ```sh
    humming-opt --humming-attach-target="device=H200" layer.mlir
    humming-opt --humming-attach-target="device=H200 chip=sm_90 ptx-version=85" layer.mlir
    ```
  }];
  let options = [
    Option<"device", "device", "std::string", /*default=*/"\"\"",
           "Known device name, e.g. H200, A100, RTX 5090 (required)">,
    Option<"chip", "chip", "std::string", /*default=*/"\"\"",
           "Chip override, e.g. sm_90 (default: the device's chip)">,
    Option<"ptxVersion", "ptx-version", "unsigned", /*default=*/"0",
           "PTX ISA version x10, e.g. 85 (default: the chip's minimum)">,
  ];
  // The pass creates a #humming.target: on a module without humming ops the
  // dialect would otherwise not be loaded when the attribute is built.
  let dependentDialects = ["::mlir::humming::HummingDialect"];
}

def HummingLegalizeSchemaPass
    : Pass<"humming-legalize-schema", "::mlir::ModuleOp"> {
  let summary = "Rewrite source schemas into the canonical execution schema";
  let description = [{
    Makes every `humming.gemm` and `humming.moe_gemm` one the kernels can
    run, recording each
    change and its reason in the op's `humming.legalized` attribute:

    - **Weights in a source format** (`format = gptq`, `gptq_v2`, `awq`):
      the weight-side operands must be arguments of the enclosing function
      used only by this op. Their types become the canonical layout's,
      the op's schema becomes `format = canonical`, and each argument is
      marked with `humming.source_schema` (the original schema) and
      `humming.operand`: the caller converts those tensors on the host once
      (`humming::sourceToCanonical`, Humming/Quant/Adapters.h), so no kernel
      ever reads a source layout.
    - **Activations the target cannot run**: 8- and 4-bit activations need
      tensor-core support (int8 sm_75, int4 sm_80, fp8 sm_89, fp4 sm_120)
      and kernels that take them (the mma_sync kernels take 16-bit
      activations only). Activations produced by `humming.quantize` from
      f16/bf16 values fall back to those values: the op takes the
      quantize's source, drops `input_scale`, and the quantize is erased
      when nothing else reads its result. The chip is the module's
      `humming.target`, else `chip=`.
    - **MoE weights in the canonical layout** (`humming.moe_gemm` without
      `layout`): with a chip, each of the weight, the scales and the zero
      points is rewritten on the device by a `humming.repack` into a new
      `memref.alloc` before the op (a `memref.dealloc` after it), and the
      op takes those buffers and the layout (`mma_sync` on the chip). A
      caller that keeps its weights prepares them once instead and passes
      them with `layout`.

    Anything it cannot legalize is an error that says what was expected.

    ```sh
    humming-opt --humming-legalize-schema="chip=sm_80" layer.mlir
    ```
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"\"",
           "Chip to check activations against (default: the module's target)">,
  ];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def HummingRaiseQuantizedMatmulPass
    : Pass<"humming-raise-quantized-matmul"> {
  let summary = "Raise dequantize-then-matmul IR to humming.gemm / moe_gemm";
  let description = [{
    Finds the weight dequantization frontends emit for quantized layers in
    front of a matmul, on memrefs or on tensors, and replaces the three
    operations with one `humming.gemm` whose weight schema says what the
    dequantization computed. On memrefs:

    ```
    %wd = memref.alloc() : memref<NxKxf16>
    linalg.generic {indexing_maps = [(n, k) -> (n, k), <scales>, (n, k) -> (n, k)],
                    iterator_types = ["parallel", "parallel"]}
        ins(%codes, %scales : memref<NxKxi8>, ...) outs(%wd : memref<NxKxf16>) {
      ^bb0(%c: i8, %s: f16, %o: f16):
        %f = arith.sitofp %c : i8 to f16
        %w = arith.mulf %f, %s : f16
        linalg.yield %w : f16
    }
    linalg.fill ins(%zero : f16) outs(%y : memref<?xNxf16>)
    linalg.matmul indexing_maps = [(m, n, k) -> (m, k), (m, n, k) -> (n, k), (m, n, k) -> (m, n)]
        ins(%x, %wd : memref<?xKxf16>, memref<NxKxf16>) outs(%y : memref<?xNxf16>)
    ```

    Recognised: 8-bit codes [N, K] — `arith.sitofp` / `arith.uitofp` of
    i8 (si8 / ui8) or `arith.extf` of f8E4M3FN / f8E5M2 (e4m3 / e5m2) —,
    optionally minus float zero points (`arith.subf`; unsigned codes must
    subtract a zero point or the constant 128, humming's implicit zero for
    unsigned codes without zero points), times scales of the
    weights' type, per row ([N] by (n) or [N, 1] by (n, 0)) or per group of
    g along K ([N, K / g] by (n, k floordiv g)). Codes of b = 1, 2, 4 bits
    packed into i32 words along K, least significant first (humming's
    canonical form, compressed-tensors' pack-quantized one): words
    [N, K b / 32] indexed (n, k floordiv 32 / b), the code extracted with
    integer arithmetic of the word, `linalg.index 1` and constants (shifts,
    masks, add, sub, mul, div, rem, casts in any arrangement: what it
    computes is checked by evaluating it for sample words and k), then
    `arith.uitofp` (unsigned codes, minus 2^(b-1) or a zero point) or
    `arith.sitofp` of an i<b> (signed two's complement codes), or fp4
    codes packed the same way (b = 4: the field as an i4, `arith.bitcast`
    to f4E2M1FN, `arith.extf`). Scales of the weights' type, or
    f8E8M0FNU / f8E4M3FN ones (MXFP4 / NVFP4) that the body converts with
    `arith.extf` before the product (the gemm takes them as they are);
    NVFP4's global scale as a last input [1] of f32 read at 0, truncated
    to the weights' type and multiplied into the scaled code last
    (a `group_tensor` schema with the gemm's `global_scale`).
    Their zero
    points may be float ones as above or integers packed the same way along
    N (compressed-tensors' weight_zero_point): words [N b / 32, G] indexed
    (n floordiv 32 / b, k floordiv g), extracted with `linalg.index 0`,
    converted with `arith.uitofp` and subtracted. The matmul transposed-B
    (`output = input * W^T`, W [N, K] indexed (n, k)) or plain (`output =
    input * W`, W [K, N] indexed (k, n), the generic's loops then (k, n):
    every map and `linalg.index` above is read with the two swapped), or a
    `linalg.batch_matmul` whose weights the batch shares (B [K, N] by
    (k, n), as upstream broadcasts it, or [N, K] by (n, k); A [B, M, K],
    C [B, M, N], run as B M rows through `memref.collapse_shape` views),
    or a `linalg.batch_matmul` with one weight matrix per batch element
    (B [B, N, K] by (b, n, k) or [B, K, N] by (b, k, n); the
    dequantization's loops then (b, n, k) or (b, k, n), every weight-side
    input [B, ...] indexed (b, ...) — read as above without b, its
    `linalg.index` one further — and the global scale [B] by (b)), which
    becomes a `humming.moe_gemm` with one expert per batch element:
    `grouped_masked` over the B M rows without counts (every expert has
    all of its M rows), canonical weights (no GPTQ / AWQ tensors) that
    the prepared layout holds (`humming-legalize-schema` prepares them on
    the device),
    f16 or bf16 throughout, its output zeroed by
    a `linalg.fill` of 0 just before (humming.gemm overwrites where
    linalg.matmul adds), the dequantized weights read by nothing else. The
    codes are passed as they are (`humming.gemm` takes 8-bit codes
    unpacked and packed words as they are); the dequantization, the fill
    and the buffer go. A dequantization of elementwise arith on whole
    tensors is read after `convert-elementwise-to-linalg` and
    `linalg-fuse-elementwise-ops` made it one `linalg.generic`.

    GPTQ's own tensors are taken too: qweight [K b / 32, N] indexed
    (k floordiv 32 / b, n) (the codes packed along K as above, stored
    transposed), scales [K / g, N] by (k floordiv g, n) or [1, N] by (0, n),
    and qzeros [G, N b / 32] by (k floordiv g, n floordiv 32 / b) or none
    (unsigned codes minus 2^(b-1)). A dequantization adding 1 to the stored
    zero point (checkpoint_format gptq: qzeros store z - 1) becomes a gemm
    in `format = gptq`, one using it as stored `format = gptq_v2`;
    `humming-legalize-schema` then makes the kernel's arguments canonical
    and records the host conversion. AWQ's likewise (`format = awq`):
    4-bit qweight [K, N / 8] indexed (k, n floordiv 8) and qzeros
    [G, N / 8] by (k floordiv g, n floordiv 8), both packed along N in
    AWQ's nibble order (column j of eight in nibble (j mod 2) 4 + j
    floordiv 2; the extraction is evaluated against it), scales [K / g, N].

    On tensors (what frontends emit before bufferization) the same three
    operations in value form: the `linalg.generic`'s result is the matmul's
    B and read by nothing else, the matmul's init a `linalg.fill` of 0.
    `humming.gemm` is a memref operation, so the tensors it reads are
    handed over by `bufferization.to_buffer ... read_only`, it writes a new
    `memref.alloc` of the output's shape, and `bufferization.to_tensor
    ... restrict writable` of that buffer replaces the matmul's result;
    one-shot bufferization (`--one-shot-bufferize=bufferize-function-boundaries`
    in humming-opt) then leaves memrefs for `humming-compile-pipeline`.

    Anything else is left as it is, with a remark on the matmul that says
    what was expected (a matmul whose weights no `linalg.generic` writes is
    a plain one and gets no remark). Not recognised yet: GPTQ's act-order
    (g_idx), integer zero points of 8-bit codes, 3/5/6/7-bit codes and a
    zero point plus 1 as a float addition.
  }];
  let dependentDialects = ["::mlir::humming::HummingDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::tensor::TensorDialect"];
}

def HummingSelectTilesPass : Pass<"humming-select-tiles", "::mlir::ModuleOp"> {
  let summary = "Choose the tile configurations of prepared-weight GEMMs";
  let description = [{
    Writes `tile_configs` (one `#humming.tile_config` per M range) on every
    `humming.gemm` whose weights are prepared (`layout`) and that has none,
    from the heuristics of Humming/Target/TileHeuristics.h: pure functions
    of the schema, the padded N and K and the device's facts. The device is
    the module's `humming.target`, else `device=`, else the representative
    device of `chip=` (sm_80: A100, sm_86: A10, sm_89: L40S, sm_90a: H100).
    `force-tile-config` replaces the choice with one configuration (its M
    range is widened to every M); configurations already on an op are kept
    unless forced. Canonical-weight GEMMs run one fixed kernel and are left
    alone.

    ```sh
    humming-opt --humming-select-tiles="device=H200" layer.mlir
    humming-opt --humming-select-tiles="chip=sm_90a force-tile-config='#humming.tile_config<block = [16, 64, 256], warp = [16, 64, 32], stages = 4>'" layer.mlir
    ```
  }];
  let options = [
    Option<"device", "device", "std::string", /*default=*/"\"\"",
           "Known device whose facts to use (default: the module's target)">,
    Option<"target", "target", "std::string", /*default=*/"\"\"",
           "The same as device= (the spelling the design documents use)">,
    Option<"chip", "chip", "std::string", /*default=*/"\"\"",
           "Chip whose representative device to use when no device is known">,
    Option<"forceTileConfig", "force-tile-config", "std::string",
           /*default=*/"\"\"",
           "A #humming.tile_config used for every M instead of the heuristics">,
  ];
}

#endif // HUMMING_DIALECT_HUMMING_TRANSFORMS_PASSES_TD
