//===- HummingAttrs.td - humming attributes ----------------*- tablegen -*-===//
//
// The enums of these attributes are the plain C++ enums of the host numerics
// layer (Humming/Quant/Schema.h), so the dialect, the runtime and the
// checkpoint adapters share one definition and one set of rules.
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_DIALECT_HUMMING_IR_HUMMINGATTRS_TD
#define HUMMING_DIALECT_HUMMING_IR_HUMMINGATTRS_TD

include "Humming/Dialect/Humming/IR/HummingDialect.td"
include "mlir/IR/AttrTypeBase.td"

class Humming_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Humming_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Parameters with their own syntax
//===----------------------------------------------------------------------===//

class Humming_CustomParam<string cppType, string name, string dflt, string desc>
    : AttrParameter<cppType, desc> {
  let parser = "::mlir::humming::parse" # name # "($_parser)";
  let printer = "::mlir::humming::print" # name # "($_printer, $_self)";
  let defaultValue = dflt;
}

/// `true` or `false`.
class Humming_BoolParam<string dflt, string desc>
    : Humming_CustomParam<"bool", "Bool", dflt, desc>;

/// A keyword naming a value of a host enum, e.g. `zero_point = int`.
class Humming_EnumParam<string enumName, string dflt, string desc>
    : AttrParameter<"::humming::" # enumName, desc> {
  let parser = "::mlir::humming::parseEnumKeyword<::humming::" # enumName #
               ">($_parser)";
  let printer = "$_printer << ::humming::toString($_self)";
  let defaultValue = dflt;
}

/// An integer; `true` / `false`, which MLIR's integer parser reads as -1 /
/// 0, are refused.
class Humming_I64Param<string dflt, string desc>
    : DefaultValuedParameter<"int64_t", dflt, desc> {
  let parser = "::mlir::humming::parseI64($_parser)";
}

//===----------------------------------------------------------------------===//
// #humming.weight_schema
//===----------------------------------------------------------------------===//

def Humming_WeightSchemaAttr : Humming_Attr<"WeightSchema", "weight_schema"> {
  let summary = "What a quantized weight tensor is";
  let description = [{
    Describes quantized weights completely: element type, scale type and
    granularity, zero point, optional global (secondary) scale, bias, number
    of experts, padding of N and K, and the source tensor layout.

    - `type`: integer `uiN`/`siN` (N = 1..8; signless `iN` means signed), or a
      signed float of at most 8 bits (`f8E4M3FN`, `f8E5M2`, `f6E2M3FN`,
      `f6E3M2FN`, `f4E2M1FN`, `!humming.float<eXmY>`). Unsigned weights
      without a zero point are centred at 2^(N-1).
    - `scale`: scale element type; `f16`, `bf16`, `f8E4M3FN`, `f8E5M2`,
      `f8E8M0FNU` for channel/group scales, `f32` for channel, block and
      tensor scales.
    - `granularity`: `channel` (default), `group<k>`, `block<n, k>`,
      `tensor` (a global fp32 scale only), `group_tensor<k>` (groups plus a
      global fp32 scale).
    - `zero_point`: `none` (default), `int` (same width as the weight,
      packed along N), `float` (in the output type; 16-bit activations only).
    - `global_scale`: an fp32 secondary scale per expert (implied by `tensor`
      and `group_tensor`).
    - `bias`: a bias in the output type.
    - `experts`: 0 for a dense layer, else the number of experts E; every
      weight-side operand then has a leading E dimension.
    - `pad_n`, `pad_k`: weights are stored padded to N + pad_n rows and
      K + pad_k columns; activations and outputs keep the logical sizes.
    - `format`: `canonical` (default; the Humming standard format),
      `gptq` / `gptq_v2` (qweight [K*b/32, N]; v1 qzeros store z-1), `awq`
      (qweight [K, N*b/32] in AWQ nibble order). Other checkpoint formats
      are converted to canonical on the host.

    ```mlir
    #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>,
                           zero_point = int, format = gptq_v2>
    #humming.weight_schema<type = f4E2M1FN, scale = f8E4M3FN,
                           granularity = group_tensor<16>, experts = 256>
    ```
  }];
  let parameters = (ins
    "::mlir::Type":$type,
    "::mlir::Type":$scale,
    Humming_CustomParam<"::mlir::humming::ScaleGranularity", "Granularity",
        "::mlir::humming::ScaleGranularity{}",
        "channel, group<k>, block<n, k>, tensor or group_tensor<k>">:$granularity,
    Humming_EnumParam<"ZeroPointKind", "::humming::ZeroPointKind::None",
        "none, int or float">:$zero_point,
    Humming_BoolParam<"false", "explicit global scale">:$global_scale,
    Humming_BoolParam<"false", "has a bias">:$bias,
    Humming_I64Param<"0", "number of experts (0: dense)">:$experts,
    Humming_I64Param<"0", "padding rows of N">:$pad_n,
    Humming_I64Param<"0", "padding columns of K">:$pad_k,
    Humming_EnumParam<"SourceFormat", "::humming::SourceFormat::Canonical",
        "tensor layout of the operands">:$format
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let extraClassDeclaration = [{
    /// The host-side description (element types must be valid).
    ::humming::WeightSchema toHost() const;
    /// The attribute for a host schema; null (with a diagnostic through
    /// `emitError`) when the schema breaks a rule.
    static WeightSchemaAttr fromHost(
        ::llvm::function_ref<::mlir::InFlightDiagnostic()> emitError,
        ::mlir::MLIRContext *ctx, const ::humming::WeightSchema &schema);
  }];
}

//===----------------------------------------------------------------------===//
// #humming.input_schema
//===----------------------------------------------------------------------===//

def Humming_InputSchemaAttr : Humming_Attr<"InputSchema", "input_schema"> {
  let summary = "What the activations are";
  let description = [{
    The activation element type and how 8- and 4-bit activations are scaled:
    `none` (16-bit activations), per `token` ([M, 1] fp32), per `group<k>`
    along K ([M, K/k] fp32, k a power of two >= 256/bits) or one `static`
    fp32 scale.

    ```mlir
    #humming.input_schema<type = f16>
    #humming.input_schema<type = f8E4M3FN, scaling = group<128>>
    ```
  }];
  let parameters = (ins
    "::mlir::Type":$type,
    Humming_CustomParam<"::mlir::humming::ActivationScaling", "ActScaling",
        "::mlir::humming::ActivationScaling{}",
        "none, token, group<k> or static">:$scaling
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let extraClassDeclaration = [{
    ::humming::InputSchema toHost() const;
    static InputSchemaAttr fromHost(
        ::llvm::function_ref<::mlir::InFlightDiagnostic()> emitError,
        ::mlir::MLIRContext *ctx, const ::humming::InputSchema &schema);
  }];
}

//===----------------------------------------------------------------------===//
// #humming.compute
//===----------------------------------------------------------------------===//

def Humming_ComputeAttr : Humming_Attr<"Compute", "compute"> {
  let summary = "How the product is computed";
  let description = [{
    The GEMM type (`dense`, or for MoE `indexed`, `grouped_contiguous`,
    `grouped_masked`), accumulation in f16 (fp16 activations, or e4m3
    activations with integer or at most 4-exponent-bit weights) and batch
    invariance (a token's result does not depend on the batch: fixed K
    decomposition, no stream-K).

    ```mlir
    #humming.compute<gemm = indexed, batch_invariant = true>
    ```
  }];
  let parameters = (ins
    Humming_EnumParam<"GemmType", "::humming::GemmType::Dense",
        "dense, indexed, grouped_contiguous or grouped_masked">:$gemm,
    Humming_BoolParam<"false", "accumulate in f16">:$f16_accumulation,
    Humming_BoolParam<"false", "batch-invariant results">:$batch_invariant
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let extraClassDeclaration = [{
    ::humming::ComputeOptions toHost() const;
    static ComputeAttr fromHost(::mlir::MLIRContext *ctx,
                                const ::humming::ComputeOptions &options);
  }];
}

//===----------------------------------------------------------------------===//
// #humming.layout
//===----------------------------------------------------------------------===//

def Humming_LayoutAttr : Humming_Attr<"Layout", "layout"> {
  let summary = "A prepared (transformed) weight layout";
  let description = [{
    Weights prepared by `humming.repack` for an MMA family on a chip: the
    weight becomes [E?, K/P, N*P*b/32] int32 with P = 256/activation bits,
    scales [E?, K/g, N], integer zero points [E?, K/g, N*zb/32] (zb = 4 for
    b <= 4, else 8). A prepared weight is only valid for that layout: an op
    whose target or tile configurations differ is rejected.

    ```mlir
    #humming.layout<mma = wgmma, chip = "sm_90a">
    ```
  }];
  let parameters = (ins
    Humming_EnumParam<"MmaKind", "::humming::MmaKind::MmaSync",
        "mma_sync, wgmma, tcgen05 or block_scaled">:$mma,
    StringRefParameter<"chip, e.g. sm_90a">:$chip
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let extraClassDeclaration = [{
    ::humming::Chip getHostChip() const;
  }];
}

//===----------------------------------------------------------------------===//
// #humming.target
//===----------------------------------------------------------------------===//

def Humming_TargetAttr : Humming_Attr<"Target", "target"> {
  let summary = "The device kernels are compiled for, with its facts";
  let description = [{
    The chip (`sm_75` ... `sm_121a`), the PTX ISA version (x10; default: the
    chip's minimum) and the device facts the tile heuristics use: SM count,
    memory bandwidth (GB/s), shared memory per block (KiB), L2 (MiB) and
    dense tensor-core throughput per activation type (TFLOP/s).

    Known devices (T4, A100, A800, A10, RTX 3090, Orin, L4, L40S, RTX 4090,
    H20, H100, H800, H200, B200, B300, RTX 5090, RTX PRO 6000, DGX Spark) are
    a table: `#humming.target<device = "H200">` fills in everything, and
    any field may still be overridden. An unknown device must give the chip
    and every fact.

    ```mlir
    #humming.target<device = "H200">
    #humming.target<device = "H20", ptx = 85>
    #humming.target<chip = "sm_89", sms = 84, bandwidth = 960.0, smem = 99,
                    l2 = 64, f16 = 150.0, bf16 = 150.0, fp8 = 300.0,
                    int8 = 300.0, int4 = 0.0, fp4 = 0.0>
    ```
  }];
  let parameters = (ins
    StringRefParameter<"device name">:$device,
    StringRefParameter<"chip">:$chip,
    "unsigned":$ptx,
    "int64_t":$sms,
    "::mlir::humming::Real":$bandwidth,
    "int64_t":$smem,
    "int64_t":$l2,
    "::mlir::humming::Real":$f16,
    "::mlir::humming::Real":$bf16,
    "::mlir::humming::Real":$fp8,
    "::mlir::humming::Real":$int8,
    "::mlir::humming::Real":$int4,
    "::mlir::humming::Real":$fp4
  );
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = [{
    ::humming::Chip getHostChip() const;
    ::humming::DeviceInfo toHost() const;
    /// The target of a known device, optionally with another chip and PTX
    /// version (0: the chip's minimum); reports an unknown device or an
    /// invalid chip/PTX through `emitError` and returns null.
    static TargetAttr getKnown(
        ::llvm::function_ref<::mlir::InFlightDiagnostic()> emitError,
        ::mlir::MLIRContext *ctx, ::llvm::StringRef device,
        ::llvm::StringRef chip = "", unsigned ptx = 0);
  }];
}

//===----------------------------------------------------------------------===//
// #humming.tile_config
//===----------------------------------------------------------------------===//

def Humming_TileConfigAttr : Humming_Attr<"TileConfig", "tile_config"> {
  let summary = "The tuning choice of one kernel for a range of M";
  let description = [{
    Written by `humming-select-tiles`, read by the lowering, overridable by
    hand. `m = [lo, hi]` is the inclusive token range the kernel serves
    (`inf` for open-ended); `block` and `warp` are [M, N, K] tile shapes
    (block a power-of-two multiple of warp: block_n / warp_n warps side by
    side along N, block_k / warp_k warp groups splitting K inside the block,
    and with mma_sync block_m / warp_m warp rows along M whose block copies
    its tiles together); `stages` the shared-memory
    pipeline depth; `mma` the tensor-core family; `warp_specialized` adds a
    producer warpgroup; `stream_k` splits K across CTAs for small M; `tma`
    lists the operands fetched by TMA (`a`, `b`, `c`, `scales`,
    `zero_points`, `bias`; the prepared kernels fetch the activations `a`
    and the weights `b`, in warp-specialized wgmma kernels, completing on
    the slot's full mbarrier: `b` one bulk copy per k-tile, `a` two 2-D
    tensor copies per k-tile through a tensor map the runtime encodes per
    launch and passes by value after M; in a humming.moe_gemm kernel `a`
    keeps that layout but its producers gather the block's token rows
    into it with cp.async, no tensor map); `multicast_a`/`multicast_b` share a tile across a
    cluster of 2; `ctas_per_sm` (with mma_sync: the blocks per SM ptxas
    must fit in the registers, `.minnctapersm`), `grid_cap` (0 = every SM) and
    `write_splits` (1 or 2) shape the launch; `split_k` CTAs split K and add
    their fp32 partial sums in a fixed order (mma_sync: through a global
    workspace, bounded M ranges only; wgmma: 2, 4 or 8 CTAs of a thread
    block cluster, through distributed shared memory, any M range; mma_sync
    with `cluster_split = true` too, on sm_90 and later; wgmma with
    `workspace_split = true` through the global workspace instead, bounded
    M ranges only, so that no cluster has to be co-scheduled;
    `cooperative_split = true` on top launches the kernel cooperatively —
    every CTA resident at once — and has each CTA of an output tile wait
    for the others and add its own share of the tile's rows of eight
    tokens, split_k dividing them, instead of the last to arrive adding
    every row; dense layers only);
    `wgmma_in_flight = 1` (warp-specialized wgmma) keeps an iteration's
    wgmmas running until the next iteration's first k-tile is issued;
    `l2_prefetch = d` (cp.async pipelines and the warp-specialized wgmma
    producer of dense layers, sm_90 and later) has each iteration (fill)
    ask L2 for the weights d iterations beyond those it copies into shared
    memory; `raster_m = g` orders the grid so that consecutive
    CTAs take g blocks of rows (tokens) for each block of columns before
    the next block of columns (a wave covers a compact region of the
    output whose activations and weights stay in L2; 1: the launch's own
    row-by-row order); `persistent = w` (warp-specialized wgmma, dense,
    8-bit activations, `tma = [a, b]`, no split_k, multicast or
    l2_prefetch) launches at most w waves of CTAs (w x ctas_per_sm per SM),
    each taking output tiles in turn in that order, so that its producer
    fills the next tile's slots while its consumers store the last one's
    outputs; `promotion_interval = p` (warp-specialized wgmma whose 8-bit
    activation sums promote: fp8, or int8 with per-K scales; weights read
    by descriptor) sums the wgmmas of p consecutive iterations into one
    set of fresh sums before they join the running f32 sums, each slot
    released once its own wgmmas are done: `block_k = 64` with p = 2 keeps
    128 of K between promotions over twice as many half-sized slots;
    `weight_map = true` (warp-specialized wgmma over K-major 8-bit weights
    with `tma = [b]`, dense) brings each iteration's weights by one 3-D
    tensor copy (the block's 64-column tiles by the iteration's k-tiles)
    through a tensor map of the prepared weights, instead of one bulk copy
    per k-tile;
    `staged_weights = true` (warp-specialized wgmma with 8-bit activations
    over weights the MMA does not take as stored, e.g. W4A8) makes each
    consumer warpgroup convert an iteration's weights into a shared-memory
    stage of its own one iteration ahead of its wgmmas, which read them by
    descriptor instead of from registers;
    `block_copies` (mma_sync) makes the block copy each stage's activation
    and weight tiles together and share them among its warps, as blocks of
    several warp rows always do (block_m > warp_m); `share_activations`
    (mma_sync, one warp row, no block_copies) lets the warps along N of
    each K group share the activation copies, each copying an equal share,
    synchronised by a named barrier of the group; `scale_after_mma`
    (mma_sync, group scales) multiplies the f32 sums of a warp's k-tiles of
    an iteration by their group's scales after the MMAs instead of scaling
    every dequantized weight pair. With `mma = wgmma` (sm_90a) over prepared
    weights the product is transposed: `warp_m` is the tokens of one wgmma
    (its n, up to 256), four warps along N form a warpgroup, and each warp's
    `warp_n` is 16 rows of each of its group's `warp_n / 16` 64-column
    weight tiles (`block = [128, 256, 32], warp = [128, 32, 32]`: two
    warpgroups of 128 tokens x 128 columns).

    ```mlir
    #humming.tile_config<m = [1, 16], block = [16, 256, 64], warp = [16, 32, 64],
                         stages = 4, mma = wgmma, warp_specialized = true,
                         mbarrier = true, tma = [a, b], stream_k = true>
    ```
  }];
  let parameters = (ins
    Humming_CustomParam<"::mlir::humming::MRange", "MRange",
        "::mlir::humming::MRange{}", "token range [lo, hi]">:$m,
    Humming_CustomParam<"::mlir::humming::Dim3", "Dim3", "",
        "block shape [M, N, K]">:$block,
    Humming_CustomParam<"::mlir::humming::Dim3", "Dim3", "",
        "warp shape [M, N, K]">:$warp,
    Humming_I64Param<"4", "pipeline stages">:$stages,
    Humming_EnumParam<"MmaKind", "::humming::MmaKind::MmaSync",
        "MMA family">:$mma,
    Humming_BoolParam<"false", "producer warpgroup">:$warp_specialized,
    Humming_BoolParam<"false", "stream-K">:$stream_k,
    Humming_BoolParam<"false", "mbarrier synchronisation">:$mbarrier,
    Humming_BoolParam<"true", "cp.async loads">:$cp_async,
    Humming_CustomParam<"uint32_t", "TmaMask", "0u",
        "operands loaded by TMA">:$tma,
    Humming_I64Param<"1", "cluster multicast of A">:$multicast_a,
    Humming_I64Param<"1", "cluster multicast of B">:$multicast_b,
    Humming_I64Param<"1", "CTAs per SM">:$ctas_per_sm,
    Humming_I64Param<"0", "grid cap (0: every SM)">:$grid_cap,
    Humming_I64Param<"1", "epilogue write splits">:$write_splits,
    Humming_I64Param<"1", "CTAs splitting K">:$split_k,
    Humming_BoolParam<"false", "the block copies its tiles together">:$block_copies,
    Humming_BoolParam<"false", "group scales applied after the MMAs">:$scale_after_mma,
    Humming_BoolParam<"false", "split_k CTAs add their sums in a cluster">:$cluster_split,
    Humming_BoolParam<"false", "wgmma split_k CTAs add their sums through the workspace">:$workspace_split,
    Humming_BoolParam<"false", "workspace split launched cooperatively, each CTA adding a share">:$cooperative_split,
    Humming_I64Param<"0", "wgmma groups kept in flight across iterations">:$wgmma_in_flight,
    Humming_I64Param<"0", "iterations of weights prefetched to L2 beyond the pipeline">:$l2_prefetch,
    Humming_BoolParam<"false", "the warps of a K group share the activation copies">:$share_activations,
    Humming_I64Param<"1", "blocks of rows per block of columns in the grid's order">:$raster_m,
    Humming_I64Param<"0", "waves of CTAs that loop over the output tiles (0: a CTA per tile)">:$persistent,
    Humming_I64Param<"1", "iterations whose 8-bit wgmma sums are added to the running f32 sums at once">:$promotion_interval,
    Humming_BoolParam<"false", "K-major weights by one tensor copy per iteration">:$weight_map,
    Humming_BoolParam<"false", "weights converted into a shared-memory stage the 8-bit wgmmas read">:$staged_weights
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let extraClassDeclaration = [{
    ::humming::TileConfig toHost() const;
    static TileConfigAttr fromHost(
        ::llvm::function_ref<::mlir::InFlightDiagnostic()> emitError,
        ::mlir::MLIRContext *ctx, const ::humming::TileConfig &config);
  }];
}

//===----------------------------------------------------------------------===//
// #humming.operand
//===----------------------------------------------------------------------===//

def Humming_WeightOperandAttr : Humming_Attr<"WeightOperand", "operand"> {
  let summary = "Names one weight-side tensor of a layer";
  let description = [{
    `weight`, `scales`, `zero_points`, `global_scale` or `bias`.

    ```mlir
    #humming.operand<scales>
    ```
  }];
  let parameters = (ins
    Humming_EnumParam<"WeightOperand", "", "the tensor">:$value
  );
  let assemblyFormat = "`<` $value `>`";
  let genVerifyDecl = 0;
}

#endif // HUMMING_DIALECT_HUMMING_IR_HUMMINGATTRS_TD
