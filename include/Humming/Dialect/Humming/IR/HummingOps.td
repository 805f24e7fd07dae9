//===- HummingOps.td - humming operations ------------------*- tablegen -*-===//

#ifndef HUMMING_DIALECT_HUMMING_IR_HUMMINGOPS_TD
#define HUMMING_DIALECT_HUMMING_IR_HUMMINGOPS_TD

include "Humming/Dialect/Humming/IR/HummingDialect.td"
include "Humming/Dialect/Humming/IR/HummingAttrs.td"
include "Humming/Dialect/Humming/IR/HummingTypes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/CommonAttrConstraints.td"

def Humming_TileConfigArrayAttr
    : TypedArrayAttrBase<Humming_TileConfigAttr, "array of #humming.tile_config">;

class Humming_In<string desc> : Arg<AnyMemRef, desc, [MemRead]>;
class Humming_OptIn<string desc> : Arg<Optional<AnyMemRef>, desc, [MemRead]>;
class Humming_Out<string desc> : Arg<AnyMemRef, desc, [MemWrite]>;

// The optional weight-side operands, printed as `keyword(%v : type)`.
defvar Humming_WeightSideFormat = [{
  (`scales` `(` $scales^ `:` type($scales) `)`)?
  (`zero_points` `(` $zero_points^ `:` type($zero_points) `)`)?
  (`global_scale` `(` $global_scale^ `:` type($global_scale) `)`)?
  (`bias` `(` $bias^ `:` type($bias) `)`)?
}];

//===----------------------------------------------------------------------===//
// humming.gemm
//===----------------------------------------------------------------------===//

def Humming_GemmOp : Humming_Op<"gemm", [AttrSizedOperandSegments]> {
  let summary = "Dense quantized matrix multiplication C = A * dequant(W)^T";
  let description = [{
    Multiplies activations `input` [M, K] by quantized weights described by
    `weight_schema` and writes `output` [M, N] (f16 or bf16):

      output[m, n] = sum_k input[m, k] * w(n, k) * scale(n, k)
                     * global_scale (+ bias[n])

    with w(n, k) the dequantized code (minus its zero point). 8- and 4-bit
    activations carry `input_scale` as their schema says. M may be dynamic;
    N and K are static. Weight-side operands have the padded sizes
    N + pad_n, K + pad_k; without `layout` they are in the schema's source
    format, with `layout` in the prepared execution layout (see
    `#humming.layout`). 8-bit codes in the canonical format may also be
    given unpacked, [N, K] of their own type (i8, f8E4M3FN, f8E5M2): the
    same bytes as the packed [N, K / 4] i32.

    `tile_configs`, one per M range, are written by `humming-select-tiles`.
    The verifier checks the whole support matrix, the shape and element type
    of every operand, and, below a module with `humming.target`, what the
    chip can run.

    The kernels use `mma.sync` (PTX ISA 9.7.14), `wgmma.mma_async` (9.7.15)
    or `tcgen05.mma` (9.7.16):
    https://docs.nvidia.com/cuda/parallel-thread-execution/

    ```mlir
    humming.gemm %a, %w scales(%s : memref<4096x32xf16>) into %c
        {weight_schema = #humming.weight_schema<type = ui4, scale = f16,
                                                granularity = group<128>>,
         input_schema = #humming.input_schema<type = f16>}
        : memref<?x4096xf16>, memref<4096x512xi32> -> memref<?x4096xf16>
    ```
  }];
  let arguments = (ins
    Humming_In<"activations [M, K]">:$input,
    Humming_In<"quantized weights">:$weight,
    Humming_OptIn<"weight scales">:$scales,
    Humming_OptIn<"zero points">:$zero_points,
    Humming_OptIn<"global fp32 scale [1]">:$global_scale,
    Humming_OptIn<"bias [N]">:$bias,
    Humming_OptIn<"activation scales">:$input_scale,
    Humming_Out<"output [M, N]">:$output,
    Humming_WeightSchemaAttr:$weight_schema,
    Humming_InputSchemaAttr:$input_schema,
    OptionalAttr<Humming_ComputeAttr>:$compute,
    OptionalAttr<Humming_LayoutAttr>:$layout,
    OptionalAttr<Humming_TileConfigArrayAttr>:$tile_configs
  );
  let assemblyFormat = !strconcat("$input `,` $weight ", Humming_WeightSideFormat, [{
    (`input_scale` `(` $input_scale^ `:` type($input_scale) `)`)?
    `into` $output attr-dict `:` type($input) `,` type($weight) `->` type($output)
  }]);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// humming.moe_gemm
//===----------------------------------------------------------------------===//

def Humming_MoeGemmOp : Humming_Op<"moe_gemm", [AttrSizedOperandSegments]> {
  let summary = "Mixture-of-experts quantized matrix multiplication";
  let description = [{
    Like `humming.gemm`, with E experts (`weight_schema.experts` > 0, every
    weight-side operand has a leading E dimension) and tokens routed to
    experts as `compute.gemm` says:

    - `indexed` (vLLM `moe_align_block_size`): `sorted_ids` [P] i32 holds
      token*top_k+k ids grouped per expert, each expert padded to a
      multiple of `block_size` with a sentinel >= M*top_k, `expert_ids`
      [ceil(P/block_size)] i32 the expert of each block of `block_size`
      ids (one outside 0 .. E-1, e.g. -1 for an expert on another rank,
      makes its rows zero), `num_tokens_padded` [1] i32 the ids in use (a
      multiple of `block_size`). Rows of `input` [M, K] are gathered as
      id/top_k and `output` is [M*top_k, N]; rows no id names are not
      written.
    - `grouped_contiguous`: rows of `input` [M, K] and `output` [M, N] are
      sorted by expert; `expert_layout` [E+1] (i32 or i64) holds the offsets.
    - `grouped_masked`: `input` is [E*max_tokens, K], `output`
      [E*max_tokens, N] and `expert_layout` [E] i32 holds the token count of
      each expert (DeepEP low-latency layout). Without `expert_layout`
      every expert has all of its max_tokens rows: a batch of E matmuls,
      one weight matrix per batch element.

    `topk_weights` (f32, one per output row: [M*top_k] or [M, top_k]
    indexed, [rows] grouped) multiplies each output row after the bias:
    the router weights of a down projection. The kernels run over
    prepared weights (`layout`); each block serves one expert, and the
    tiles are chosen for the tokens per expert.

    ```mlir
    humming.moe_gemm %a, %w scales(%s : memref<8x1024x8xbf16>)
        expert_layout(%offs : memref<9xi32>) into %c
        {weight_schema = #humming.weight_schema<type = ui4, scale = bf16,
             granularity = group<128>, experts = 8>,
         input_schema = #humming.input_schema<type = bf16>,
         compute = #humming.compute<gemm = grouped_contiguous>}
        : memref<?x1024xbf16>, memref<8x1024x128xi32> -> memref<?x1024xbf16>
    ```
  }];
  let arguments = (ins
    Humming_In<"activations">:$input,
    Humming_In<"quantized weights [E, ...]">:$weight,
    Humming_OptIn<"weight scales">:$scales,
    Humming_OptIn<"zero points">:$zero_points,
    Humming_OptIn<"global fp32 scales [E]">:$global_scale,
    Humming_OptIn<"bias [E, N]">:$bias,
    Humming_OptIn<"activation scales">:$input_scale,
    Humming_OptIn<"indexed: sorted token ids">:$sorted_ids,
    Humming_OptIn<"indexed: expert of each m-block">:$expert_ids,
    Humming_OptIn<"indexed: padded token count [1]">:$num_tokens_padded,
    Humming_OptIn<"grouped: expert offsets [E+1] or counts [E]">:$expert_layout,
    Humming_OptIn<"router weights, f32 per output row">:$topk_weights,
    Humming_Out<"output">:$output,
    Humming_WeightSchemaAttr:$weight_schema,
    Humming_InputSchemaAttr:$input_schema,
    Humming_ComputeAttr:$compute,
    OptionalAttr<ConfinedAttr<I64Attr, [IntMinValue<1>]>>:$top_k,
    OptionalAttr<ConfinedAttr<I64Attr, [IntMinValue<1>]>>:$block_size,
    OptionalAttr<Humming_LayoutAttr>:$layout,
    OptionalAttr<Humming_TileConfigArrayAttr>:$tile_configs
  );
  let assemblyFormat = !strconcat("$input `,` $weight ", Humming_WeightSideFormat, [{
    (`input_scale` `(` $input_scale^ `:` type($input_scale) `)`)?
    (`sorted_ids` `(` $sorted_ids^ `:` type($sorted_ids) `)`)?
    (`expert_ids` `(` $expert_ids^ `:` type($expert_ids) `)`)?
    (`num_tokens_padded` `(` $num_tokens_padded^ `:` type($num_tokens_padded) `)`)?
    (`expert_layout` `(` $expert_layout^ `:` type($expert_layout) `)`)?
    (`topk_weights` `(` $topk_weights^ `:` type($topk_weights) `)`)?
    `into` $output attr-dict `:` type($input) `,` type($weight) `->` type($output)
  }]);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// humming.moe_align
//===----------------------------------------------------------------------===//

def Humming_MoeAlignOp : Humming_Op<"moe_align"> {
  let summary = "Top-k expert ids to the indexed routing of humming.moe_gemm";
  let description = [{
    vLLM's `moe_align_block_size` on the GPU: from `topk_ids` [M, top_k]
    (i32, the router's choices) writes `sorted_ids` (each expert's
    token*top_k+k ids, in no fixed order within the expert, padded to a
    multiple of `block_size` with the sentinel M*top_k), `expert_ids` (the
    expert of each block of `block_size` ids) and `num_tokens_padded` [1]
    (their total). Ids outside 0 .. `experts`-1 (an expert map's -1) are
    skipped. `sorted_ids` must hold M*top_k + experts*(block_size-1) ids and
    `expert_ids` that many divided by `block_size`, rounded up; entries past
    the total are not written. At most 1024 experts (one thread of the
    routing block each).

    ```mlir
    humming.moe_align %topk into %ids, %eids, %ntp
        {experts = 128, block_size = 64}
        : memref<?x8xi32> -> memref<?xi32>, memref<?xi32>, memref<1xi32>
    ```
  }];
  let arguments = (ins
    Humming_In<"top-k expert ids [M, top_k]">:$topk_ids,
    Humming_Out<"sorted ids">:$sorted_ids,
    Humming_Out<"expert of each block">:$expert_ids,
    Humming_Out<"padded id count [1]">:$num_tokens_padded,
    ConfinedAttr<I64Attr, [IntMinValue<1>]>:$experts,
    ConfinedAttr<I64Attr, [IntMinValue<1>]>:$block_size
  );
  let assemblyFormat = [{
    $topk_ids `into` $sorted_ids `,` $expert_ids `,` $num_tokens_padded
    attr-dict `:` type($topk_ids) `->` type($sorted_ids) `,`
    type($expert_ids) `,` type($num_tokens_padded)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// humming.moe_group, humming.moe_permute
//===----------------------------------------------------------------------===//

def Humming_MoeGroupOp : Humming_Op<"moe_group"> {
  let summary = "Top-k expert ids to a grouped routing of humming.moe_gemm";
  let description = [{
    The grouped counterpart of `humming.moe_align`, on the GPU: from
    `topk_ids` [M, top_k] (i32) writes `positions` [M * top_k] i32, the row
    that id i = token * top_k + k takes in the grouped rows, and
    `expert_layout`:

    - without `max_tokens`, `grouped_contiguous`: rows sorted by expert
      with no padding, `expert_layout` [E + 1] the offsets (expert e's rows
      are offsets[e] .. offsets[e + 1] - 1; offsets[E] the ids routed);
    - with `max_tokens` T, `grouped_masked` (DeepEP's low-latency layout):
      expert e's rows are e * T .. e * T + counts[e] - 1, `expert_layout`
      [E] the counts. An expert chosen more than T times keeps T of its ids
      (the others get position -1, the count stays T): T >= M is enough
      when no token names an expert twice.

    Ids outside 0 .. `experts` - 1 (an expert map's -1) get position -1.
    The order of the ids inside an expert varies from run to run.
    `humming.moe_permute` then moves the activations into the grouped rows
    and the GEMM's output rows back. At most 1024 experts (one thread of
    the routing block each).

    ```mlir
    humming.moe_group %topk into %pos, %offsets {experts = 128}
        : memref<?x8xi32> -> memref<?xi32>, memref<129xi32>
    humming.moe_group %topk into %pos, %counts {experts = 128, max_tokens = 64}
        : memref<?x8xi32> -> memref<?xi32>, memref<128xi32>
    ```
  }];
  let arguments = (ins
    Humming_In<"top-k expert ids [M, top_k]">:$topk_ids,
    Humming_Out<"grouped row of each id [M * top_k]">:$positions,
    Humming_Out<"offsets [E + 1] or counts [E]">:$expert_layout,
    ConfinedAttr<I64Attr, [IntMinValue<1>]>:$experts,
    OptionalAttr<ConfinedAttr<I64Attr, [IntMinValue<1>]>>:$max_tokens
  );
  let assemblyFormat = [{
    $topk_ids `into` $positions `,` $expert_layout
    attr-dict `:` type($topk_ids) `->` type($positions) `,`
    type($expert_layout)
  }];
  let hasVerifier = 1;
}

def Humming_MoePermuteOp : Humming_Op<"moe_permute"> {
  let summary = "Rows into or out of a grouped routing's order";
  let description = [{
    Moves whole rows by the `positions` of `humming.moe_group` ([P] i32,
    P = M * top_k):

    - scatter (the default): `output`[positions[i]] = `input`[i / `top_k`]
      for every i < P whose position lies in 0 .. rows of `output` - 1:
      the tokens' activations [M, K] into the grouped rows of the GEMM
      (and, with top_k = 1, the router weights [P] viewed as [P, 1] f32
      into the rows of a grouped down projection). Rows no id names are
      not written.
    - `gather`: `output`[i] = `input`[positions[i]] for i < P (`output`
      has P rows), zero where the position lies outside the rows of
      `input`: the grouped GEMM's output back to the [M * top_k, N] rows
      `humming.moe_sum` adds.

    Both sides have the same element type (any) and static row width, a
    whole number of 4-byte words; bytes are copied unchanged.

    ```mlir
    humming.moe_permute %x positions(%pos : memref<?xi32>) into %xs {top_k = 8}
        : memref<?x2048xbf16> -> memref<?x2048xbf16>
    humming.moe_permute %ys positions(%pos : memref<?xi32>) into %y {gather}
        : memref<?x2048xbf16> -> memref<?x2048xbf16>
    ```
  }];
  let arguments = (ins
    Humming_In<"rows to move">:$input,
    Humming_In<"grouped row of each id [P]">:$positions,
    Humming_Out<"moved rows">:$output,
    OptionalAttr<ConfinedAttr<I64Attr, [IntMinValue<1>]>>:$top_k,
    UnitAttr:$gather
  );
  let assemblyFormat = [{
    $input `positions` `(` $positions `:` type($positions) `)` `into` $output
    attr-dict `:` type($input) `->` type($output)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// humming.gather_columns
//===----------------------------------------------------------------------===//

def Humming_GatherColumnsOp : Humming_Op<"gather_columns"> {
  let summary = "Activation columns in an act-order layer's weight order";
  let description = [{
    `output`[r, j] = `input`[r, `columns`[j]] for every row r and column
    j < K: the activations of a layer whose K was permuted at load (GPTQ
    act-order, `desc_act`: the weights' column j is input column
    `columns`[j]) gathered into the order its GEMM reads. An index outside
    0 .. K - 1 writes zero (nothing is read outside the row). Both sides
    have the same element type of 8, 16 or 32 bits and the same static K;
    the rows are dynamic and must agree at run time (the fewer are used).
    Where a row is a whole number of 16-byte pieces the kernel writes one
    piece per step: `output` must then be 16-byte aligned (allocations
    are; a view at an odd offset is not).

    ```mlir
    humming.gather_columns %x columns(%perm : memref<4096xi32>) into %xg
        : memref<?x4096xf16> -> memref<?x4096xf16>
    ```
  }];
  let arguments = (ins
    Humming_In<"activations [M, K]">:$input,
    Humming_In<"input column of each weight column [K] i32">:$columns,
    Humming_Out<"gathered activations [M, K]">:$output
  );
  let assemblyFormat = [{
    $input `columns` `(` $columns `:` type($columns) `)` `into` $output
    attr-dict `:` type($input) `->` type($output)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// humming.silu_and_mul, humming.moe_sum
//===----------------------------------------------------------------------===//

def Humming_SiluAndMulOp : Humming_Op<"silu_and_mul"> {
  let summary = "SiLU of the gate half times the up half";
  let description = [{
    The activation between a MoE (or MLP) layer's gate_up and down
    projections: `output`[m, j] = silu(`input`[m, j]) * `input`[m, I + j]
    for `input` [M, 2I] and `output` [M, I] (f16 or bf16, I even), computed
    in f32 (silu(x) = x / (1 + e^-x)) and rounded once.

    The gated variants of other models through three optional attributes:
    with gate g and up u, `output` = g / (1 + e^(-`alpha` g)) * (u +
    `up_offset`), g first clamped to at most `limit` and u to [-`limit`,
    `limit`]. gpt-oss: alpha = 1.702, up_offset = 1, limit = 7.

    ```mlir
    humming.silu_and_mul %gu into %h : memref<?x1536xf16> -> memref<?x768xf16>
    humming.silu_and_mul %gu into %h {alpha = 1.702, up_offset = 1.0, limit = 7.0}
        : memref<?x5760xbf16> -> memref<?x2880xbf16>
    ```
  }];
  let arguments = (ins Humming_In<"gate and up [M, 2I]">:$input,
                       Humming_Out<"activation [M, I]">:$output,
                       OptionalAttr<F64Attr>:$alpha,
                       OptionalAttr<F64Attr>:$up_offset,
                       OptionalAttr<F64Attr>:$limit);
  let assemblyFormat = [{
    $input `into` $output attr-dict `:` type($input) `->` type($output)
  }];
  let hasVerifier = 1;
}

def Humming_MoeSumOp : Humming_Op<"moe_sum"> {
  let summary = "Sum of each token's top-k expert outputs";
  let description = [{
    `output`[m, n] = sum over k < `top_k` of `input`[m * top_k + k, n] for
    `input` [M * top_k, N] (the rows of an indexed humming.moe_gemm, router
    weights already applied) and `output` [M, N] (f16 or bf16, N even),
    added in f32 in k order and rounded once.

    ```mlir
    humming.moe_sum %rows into %y {top_k = 8}
        : memref<?x2048xbf16> -> memref<?x2048xbf16>
    ```
  }];
  let arguments = (ins Humming_In<"expert outputs [M * top_k, N]">:$input,
                       Humming_Out<"sums [M, N]">:$output,
                       ConfinedAttr<I64Attr, [IntMinValue<1>]>:$top_k);
  let assemblyFormat = [{
    $input `into` $output attr-dict `:` type($input) `->` type($output)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// humming.quantize
//===----------------------------------------------------------------------===//

def Humming_QuantizeOp : Humming_Op<"quantize", [AttrSizedOperandSegments]> {
  let summary = "Quantize fp weights or activations to a schema";
  let description = [{
    With a `#humming.weight_schema` (canonical format): rounds `source`
    [E?, N, K] (f16, bf16 or f32, logical sizes) to nearest (absmax for
    symmetric schemas, min-max with a zero point) into `dest`, the canonical
    packed weight [E?, N+pad_n, (K+pad_k)*b/32] i32, writing the `scales`,
    `zero_points` and `global_scale` the schema has (padding is zero).

    With a `#humming.input_schema` (8- or 4-bit activations): quantizes
    `source` [M, K] into `dest` [M, K] of the activation type and writes
    `scales` (per token [M, 1], per group [M, K/g]); with `static` scaling,
    `scales` [1] is read instead. With per-token or static scaling `dest`
    may have more columns than K: those get the code of zero (K rounded up
    to 16 bytes of codes is what a GEMM over them needs when K is not).

    ```mlir
    humming.quantize %x into %q scales(%s : memref<?x1xf32>)
        {schema = #humming.input_schema<type = f8E4M3FN, scaling = token>}
        : memref<?x4096xbf16> -> memref<?x4096xf8E4M3FN>
    ```
  }];
  let arguments = (ins
    Humming_In<"fp values">:$source,
    Humming_OptIn<"scales">:$scales,
    Humming_OptIn<"zero points">:$zero_points,
    Humming_OptIn<"global scale">:$global_scale,
    Humming_Out<"quantized values">:$dest,
    AnyAttrOf<[Humming_WeightSchemaAttr, Humming_InputSchemaAttr]>:$schema
  );
  let assemblyFormat = [{
    $source `into` $dest
    (`scales` `(` $scales^ `:` type($scales) `)`)?
    (`zero_points` `(` $zero_points^ `:` type($zero_points) `)`)?
    (`global_scale` `(` $global_scale^ `:` type($global_scale) `)`)?
    attr-dict `:` type($source) `->` type($dest)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// humming.dequantize
//===----------------------------------------------------------------------===//

def Humming_DequantizeOp : Humming_Op<"dequantize", [AttrSizedOperandSegments]> {
  let summary = "Dequantize weights to f16, bf16 or f32";
  let description = [{
    The inverse of weight quantization: reads the weight-side operands in the
    schema's source format (or the prepared `layout`) and writes `dest`
    [E?, N, K] with the logical (unpadded) sizes `n` and `k` of the dest:

      dest[e, n, k] = (w(e, n, k) - zp) * scale * global_scale

    ```mlir
    humming.dequantize %w scales(%s : memref<256x1xf16>) into %out
        {weight_schema = #humming.weight_schema<type = ui8, scale = f16>}
        : memref<256x128xi32> -> memref<256x512xf32>
    ```
  }];
  let arguments = (ins
    Humming_In<"quantized weights">:$weight,
    Humming_OptIn<"scales">:$scales,
    Humming_OptIn<"zero points">:$zero_points,
    Humming_OptIn<"global scale">:$global_scale,
    Humming_Out<"fp weights [E?, N, K]">:$dest,
    Humming_WeightSchemaAttr:$weight_schema,
    OptionalAttr<Humming_InputSchemaAttr>:$input_schema,
    OptionalAttr<Humming_LayoutAttr>:$layout
  );
  let assemblyFormat = [{
    $weight
    (`scales` `(` $scales^ `:` type($scales) `)`)?
    (`zero_points` `(` $zero_points^ `:` type($zero_points) `)`)?
    (`global_scale` `(` $global_scale^ `:` type($global_scale) `)`)?
    `into` $dest attr-dict `:` type($weight) `->` type($dest)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// humming.repack
//===----------------------------------------------------------------------===//

def Humming_RepackOp : Humming_Op<"repack"> {
  let summary = "Rewrite one weight-side tensor into a prepared layout";
  let description = [{
    Rewrites `source` (one of the layer's weight-side tensors, named by
    `operand`: `weight`, `scales`, `zero_points` or `bias`, in the schema's
    source format) into `dest` in the execution layout `layout` for the
    activations of `input_schema`. `n` and `k` are the layer's logical
    sizes; both tensors have the padded sizes of the schema. The weight
    becomes [E?, K/P, N*P*b/32] i32 in MMA-fragment order (P = 256/activation
    bits), scales and float zero points [E?, K/g, N], integer zero points
    [E?, K/g, N*zb/32].

    ```mlir
    humming.repack %w into %p {operand = weight, n = 4096, k = 4096,
        weight_schema = #humming.weight_schema<type = ui4, scale = f16>,
        input_schema = #humming.input_schema<type = f16>,
        layout = #humming.layout<mma = wgmma, chip = "sm_90a">}
        : memref<4096x512xi32> -> memref<256x8192xi32>
    ```
  }];
  let arguments = (ins
    Humming_In<"source tensor">:$source,
    Humming_Out<"prepared tensor">:$dest,
    Humming_WeightOperandAttr:$operand,
    ConfinedAttr<I64Attr, [IntMinValue<1>]>:$n,
    ConfinedAttr<I64Attr, [IntMinValue<1>]>:$k,
    Humming_WeightSchemaAttr:$weight_schema,
    Humming_InputSchemaAttr:$input_schema,
    Humming_LayoutAttr:$layout
  );
  let assemblyFormat = [{
    $source `into` $dest attr-dict `:` type($source) `->` type($dest)
  }];
  let hasVerifier = 1;
}

#endif // HUMMING_DIALECT_HUMMING_IR_HUMMINGOPS_TD
