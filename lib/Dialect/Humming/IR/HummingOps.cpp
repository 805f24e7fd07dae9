//===- HummingOps.cpp - humming operations --------------------------------===//
//
// Operation verifiers. The rules themselves live in Humming/Quant/Schema.h and
// Humming/Target/ArchInfo.h; this file gathers each op's operands, asks for
// the expected shapes and element types, and reports mismatches against the
// operand by name.
//
//===----------------------------------------------------------------------===//

#include "Humming/Dialect/Humming/IR/HummingOps.h"
#include "Humming/Quant/PreparedLayout.h"

#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/SmallString.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::humming;
namespace hq = ::humming;

#define GET_OP_CLASSES
#include "Humming/Dialect/Humming/IR/HummingOps.cpp.inc"

namespace {

/// A memref's shape with -1 for dynamic sizes (the host convention).
std::vector<int64_t> hostShape(MemRefType t) {
  std::vector<int64_t> s;
  for (int64_t d : t.getShape())
    s.push_back(ShapedType::isDynamic(d) ? -1 : d);
  return s;
}

/// Whether `t` is the host scalar type `s` (signless integers are signed).
bool isScalar(Type t, const hq::ScalarType &s) {
  std::optional<hq::ScalarType> st = toScalarType(t);
  return st && *st == s;
}

bool isI32(Type t) { return t.isSignlessInteger(32); }


/// Checks operand `name` against an expected shape and element type.
/// `elemOk` decides the element type; `elemWhat` describes it.
LogicalResult checkOperand(Operation *op, StringRef name, Value v,
                           const hq::ShapeOrDiag &expected,
                           function_ref<bool(Type)> elemOk,
                           const std::string &elemWhat) {
  if (expected.error)
    return op->emitOpError() << "operand '" << name << "': " << *expected.error;
  auto type = cast<MemRefType>(v.getType());
  std::vector<int64_t> actual = hostShape(type);
  if (actual != expected.shape)
    return op->emitOpError() << "expected '" << name << "' of shape "
                             << hq::formatShape(expected.shape) << ", got "
                             << type;
  if (!elemOk(type.getElementType()))
    return op->emitOpError() << "expected '" << name << "' element type "
                             << elemWhat << ", got "
                             << type.getElementType();
  return success();
}

/// Checks unpacked 8-bit codes `v` (operand `name`): [E?, N, K] (padded
/// sizes) of i8 for integer codes, else of the codes' own type.
LogicalResult checkUnpackedCodes(Operation *op, StringRef name, Value v,
                                 const hq::WeightSchema &w, int64_t n,
                                 int64_t k) {
  hq::ShapeOrDiag shape{{n, k}, std::nullopt};
  if (w.experts > 0)
    shape.shape.insert(shape.shape.begin(), w.experts);
  return checkOperand(
      op, name, v, shape,
      [&](Type t) {
        return w.type.isInt() ? t.isSignlessInteger(8) : isScalar(t, w.type);
      },
      w.type.isInt() ? std::string("i8 (unpacked 8-bit codes)")
                     : w.type.str() + " (unpacked 8-bit codes)");
}

/// Presence of an optional operand must match what the schema implies.
LogicalResult checkPresence(Operation *op, StringRef name, Value v,
                            bool required, StringRef why) {
  if (required && !v)
    return op->emitOpError() << "expected operand '" << name << "' (" << why
                             << ")";
  if (!required && v)
    return op->emitOpError() << "unexpected operand '" << name << "' (" << why
                             << ")";
  return success();
}

/// Why the schema does or does not imply each weight-side operand.
std::string scaleReason(const hq::WeightSchema &w) {
  return std::string("the schema has ") + hq::toString(w.granularity) +
         " scales";
}
std::string zeroPointReason(const hq::WeightSchema &w) {
  return std::string("the schema has zero_point = ") +
         hq::toString(w.zeroPoint);
}
std::string globalReason(const hq::WeightSchema &w) {
  return w.hasGlobalScale() ? std::string("the schema has a global scale")
                            : std::string("the schema has no global scale");
}
std::string biasReason(const hq::WeightSchema &w) {
  return std::string("the schema has bias = ") + (w.bias ? "true" : "false");
}

/// Element type of a weight-side operand: packed codes in i32, scales in the
/// schema's scale type, int zero points packed in i32, float zero points and
/// bias in the output type, global scales in f32.
struct ElemRule {
  std::function<bool(Type)> ok;
  std::string what;
};
ElemRule weightSideElem(hq::WeightOperand which, const hq::WeightSchema &w,
                        Type outputElem) {
  switch (which) {
  case hq::WeightOperand::Weight:
    return {isI32, "i32 (packed codes)"};
  case hq::WeightOperand::Scales:
    return {[s = w.scaleType](Type t) { return isScalar(t, s); },
            w.scaleType.str() + " (the schema's scale type)"};
  case hq::WeightOperand::ZeroPoints:
    if (w.zeroPoint == hq::ZeroPointKind::Int)
      return {isI32, "i32 (packed codes)"};
    if (outputElem)
      return {[outputElem](Type t) { return t == outputElem; },
              "equal to the output type"};
    return {[](Type t) { return t.isF16() || t.isBF16(); }, "f16 or bf16"};
  case hq::WeightOperand::GlobalScale:
    return {[](Type t) { return t.isF32(); }, "f32"};
  case hq::WeightOperand::Bias:
    if (outputElem)
      return {[outputElem](Type t) { return t == outputElem; },
              "equal to the output type"};
    return {[](Type t) { return t.isF16() || t.isBF16(); }, "f16 or bf16"};
  }
  return {[](Type) { return false; }, "?"};
}

/// Checks the scales/zero_points/global_scale operands (and bias when
/// `withBias`) of a layer with padded sizes n x k.
LogicalResult checkWeightSide(Operation *op, const hq::WeightSchema &w,
                              const hq::InputSchema &in, int64_t n, int64_t k,
                              bool prepared, Value scales, Value zeroPoints,
                              Value globalScale, Value bias, bool withBias,
                              Type outputElem) {
  struct Item {
    hq::WeightOperand which;
    StringRef name;
    Value v;
    bool required;
    std::string why;
  };
  SmallVector<Item> items = {
      {hq::WeightOperand::Scales, "scales", scales, w.hasScaleTensor(),
       scaleReason(w)},
      {hq::WeightOperand::ZeroPoints, "zero_points", zeroPoints,
       w.zeroPoint != hq::ZeroPointKind::None, zeroPointReason(w)},
      {hq::WeightOperand::GlobalScale, "global_scale", globalScale,
       w.hasGlobalScale(), globalReason(w)},
  };
  if (withBias)
    items.push_back(
        {hq::WeightOperand::Bias, "bias", bias, w.bias, biasReason(w)});
  for (const Item &item : items) {
    if (failed(checkPresence(op, item.name, item.v, item.required, item.why)))
      return failure();
    if (!item.v)
      continue;
    ElemRule rule = weightSideElem(item.which, w, outputElem);
    if (failed(checkOperand(op, item.name, item.v,
                            hq::expectedShape(item.which, w, in, n, k, prepared),
                            rule.ok, rule.what)))
      return failure();
  }
  return success();
}

std::vector<hq::TileConfig> hostTiles(ArrayAttr tiles) {
  std::vector<hq::TileConfig> out;
  if (tiles)
    for (Attribute a : tiles)
      out.push_back(cast<TileConfigAttr>(a).toHost());
  return out;
}

/// Checks the prepared layout and the tile configurations against each other
/// and, under a module with humming.target, against the chip.
LogicalResult checkTargetAndTiles(Operation *op, const hq::WeightSchema &w,
                                  const hq::InputSchema &in,
                                  const hq::ComputeOptions &c, int64_t n,
                                  int64_t k, LayoutAttr layout,
                                  ArrayAttr tileAttrs) {
  std::vector<hq::TileConfig> tiles = hostTiles(tileAttrs);
  if (tileAttrs && tiles.empty())
    return op->emitOpError("expected at least one tile configuration");
  if (hq::Diag d = hq::verifyTileRanges(tiles))
    return op->emitOpError() << *d;
  for (size_t i = 0; i < tiles.size(); ++i)
    if (hq::Diag d = hq::verifyTileForProblem(tiles[i], w, in, c, n, k))
      return op->emitOpError() << "tile_configs[" << i << "]: " << *d;

  std::optional<hq::MmaKind> layoutMma;
  std::optional<hq::Chip> layoutChip;
  if (layout) {
    layoutMma = layout.getMma();
    layoutChip = layout.getHostChip();
    // 8-bit weights the activation MMA takes as they are lie K-major on a
    // wgmma chip (layout::TileOrder::KMajor): only wgmma reads them.
    if (hq::layout::tileOrder(w, in, layoutChip->readsKMajorEightBit()) ==
        hq::layout::TileOrder::KMajor)
      for (size_t i = 0; i < tiles.size(); ++i)
        if (!hq::mmaGeneration(tiles[i].mma).readsKMajorEightBit)
          return op->emitOpError()
                 << "tile_configs[" << i << "]: " << w.type.str()
                 << " weights prepared for " << layoutChip->str() << " with "
                 << in.type.str()
                 << " activations lie K-major, as wgmma reads them from "
                    "shared memory; expected mma = wgmma, got mma = "
                 << hq::toString(tiles[i].mma);
  }
  if (TargetAttr target = lookupTarget(op)) {
    if (hq::Diag d = hq::verifyOnChip(target.getHostChip(), in, tiles,
                                      layoutMma, layoutChip))
      return op->emitOpError() << *d;
    return success();
  }
  // Without a target the layout still fixes the MMA family of the tiles.
  if (layoutChip)
    if (hq::Diag d =
            hq::verifyOnChip(*layoutChip, in, tiles, layoutMma, std::nullopt))
      return op->emitOpError() << *d;
  return success();
}

/// What the lowering needs beyond the schemas, the shapes and the tiles, so
/// that what verifies compiles (tools/humming-contract checks it over the
/// support matrix): sm_80 or newer on the chip (the kernels' mma.sync
/// m16n8k16 and cp.async); the prepared layout (layout::supports) for
/// prepared weights, for MoE weights (prepared on the device where they
/// come canonical) and for 8- or 4-bit activations (their kernels read
/// prepared weights; canonical ones are prepared on the device), unless a
/// humming.quantize earlier writes those activations from 16-bit values
/// (legalize-schema then falls back to them), with the rules of those
/// kernels (preparedKernelsSupport: f32 sums, f16 accumulation's scales,
/// batch-invariant groups, the mma_sync 8-bit rules). The chip is the module
/// target's, else the prepared layout's; without either only the
/// chip-independent rules apply (the pipeline names the chip).
LogicalResult checkLowerable(Operation *op, const hq::WeightSchema &w,
                             const hq::InputSchema &in,
                             const hq::ComputeOptions &c, int64_t n, int64_t k,
                             LayoutAttr layout, Value input) {
  std::optional<hq::Chip> chip;
  if (TargetAttr target = lookupTarget(op))
    chip = target.getHostChip();
  else if (layout)
    chip = layout.getHostChip();
  if (chip && chip->sm < 80)
    return op->emitOpError()
           << "the GEMM kernels need sm_80 or newer (mma.sync m16n8k16 and "
              "cp.async), got "
           << chip->str();
  const bool quantized = in.type.bits < 16;
  const bool moe = isa<MoeGemmOp>(op);
  if (!layout && !moe && !quantized) {
    // The canonical-weight kernel (f32 sums only).
    if (c.f16Accumulation)
      return op->emitOpError()
             << "f16 accumulation is lowered for prepared weights (the fast "
                "mma_sync kernels); the canonical-weight kernel accumulates "
                "in f32: prepare the weights ('layout') or drop "
                "'f16_accumulation'";
    return success();
  }
  if (moe && w.format != hq::SourceFormat::Canonical)
    return op->emitOpError()
           << "expected canonical weights: per-expert source formats are "
              "converted by the host adapters (humming::loadLayer), got "
              "format "
           << hq::toString(w.format);
  bool chipRule = false;
  hq::Diag d =
      hq::preparedKernelsSupport(w, in, c, n, k, chip, &chipRule);
  if (!d)
    return success();
  if (!layout && !moe && findActivationQuantize(op, input))
    return success();
  auto diag = op->emitOpError();
  if (moe && !layout)
    diag << "cannot prepare the experts' canonical weights"
         << (chip ? " for " + chip->str() : std::string()) << " on the device: "
         << *d;
  else if (layout && quantized)
    diag << *d << "; the weights are prepared for " << in.type.str()
         << " activations, which the 16-bit fallback cannot read: prepare "
            "them for 16-bit activations or pass canonical weights";
  else if (layout)
    diag << *d << " (the weights are prepared)";
  else
    diag << *d << "; " << in.type.str()
         << " activations run over prepared weights (made on the device from "
            "canonical ones), or over the 16-bit values a humming.quantize "
            "earlier in the block quantized them from";
  if (chipRule)
    diag << " (on " << chip->str() << ")";
  return diag;
}

/// The operands and attributes shared by humming.gemm and humming.moe_gemm.
struct LayerView {
  Value input, weight, scales, zeroPoints, globalScale, bias, inputScale,
      output;
  WeightSchemaAttr weightSchema;
  InputSchemaAttr inputSchema;
  ComputeAttr compute;
  LayoutAttr layout;
  ArrayAttr tileConfigs;
};

/// Everything but the routing: returns the logical N and K in `nOut`, `kOut`.
LogicalResult verifyLayer(Operation *op, const LayerView &l, int64_t &nOut,
                          int64_t &kOut) {
  hq::WeightSchema w = l.weightSchema.toHost();
  hq::InputSchema in = l.inputSchema.toHost();
  hq::ComputeOptions c =
      l.compute ? l.compute.toHost() : hq::ComputeOptions{};

  auto inputType = cast<MemRefType>(l.input.getType());
  auto outputType = cast<MemRefType>(l.output.getType());
  if (inputType.getRank() != 2)
    return op->emitOpError() << "expected 'input' to be a rank-2 memref "
                                "[M, K], got "
                             << inputType;
  if (outputType.getRank() != 2)
    return op->emitOpError() << "expected 'output' to be a rank-2 memref "
                                "[M, N], got "
                             << outputType;
  if (inputType.isDynamicDim(1))
    return op->emitOpError() << "expected a static K in 'input', got "
                             << inputType;
  if (outputType.isDynamicDim(1))
    return op->emitOpError() << "expected a static N in 'output', got "
                             << outputType;
  if (!isScalar(inputType.getElementType(), in.type))
    return op->emitOpError()
           << "expected 'input' element type " << l.inputSchema.getType()
           << " (the input schema's type), got "
           << inputType.getElementType();
  Type outputElem = outputType.getElementType();
  std::optional<hq::ScalarType> outScalar = toScalarType(outputElem);
  if (!outScalar)
    return op->emitOpError() << "expected output type f16 or bf16, got "
                             << outputElem;

  if (hq::Diag d = hq::verifyCompatibility(w, in, c, outScalar))
    return op->emitOpError() << *d;

  int64_t kLogical = inputType.getDimSize(1);
  int64_t nLogical = outputType.getDimSize(1);
  int64_t n = nLogical + w.padN, k = kLogical + w.padK;
  if (hq::Diag d = hq::verifyPadding(w, in, n, k))
    return op->emitOpError() << *d;

  bool prepared = static_cast<bool>(l.layout);
  if (prepared && w.format != hq::SourceFormat::Canonical)
    return op->emitOpError() << "expected format = canonical with a prepared "
                                "layout, got "
                             << hq::toString(w.format);
  // 8-bit codes in the canonical format may also come unpacked, [E?, N, K]
  // of their own 8-bit type: the same bytes as the packed [E?, N, K / 4]
  // i32 (LSB first along K), e.g. what humming-raise-quantized-matmul
  // finds.
  auto weightType = cast<MemRefType>(l.weight.getType());
  const bool unpacked8 = !prepared && w.type.bits == 8 &&
                         w.format == hq::SourceFormat::Canonical &&
                         weightType.getElementTypeBitWidth() == 8;
  if (unpacked8) {
    if (failed(checkUnpackedCodes(op, "weight", l.weight, w, n, k)))
      return failure();
  } else if (failed(checkOperand(
                 op, "weight", l.weight,
                 hq::expectedShape(hq::WeightOperand::Weight, w, in, n, k,
                                   prepared),
                 isI32, "i32 (packed codes)"))) {
    return failure();
  }
  if (failed(checkWeightSide(op, w, in, n, k, prepared, l.scales,
                             l.zeroPoints, l.globalScale, l.bias,
                             /*withBias=*/true, outputElem)))
    return failure();

  bool needsInputScale = in.scaling != hq::ActScaling::None;
  if (failed(checkPresence(
          op, "input_scale", l.inputScale, needsInputScale,
          std::string("the input schema has scaling = ") +
              hq::toString(in.scaling))))
    return failure();
  if (l.inputScale &&
      failed(checkOperand(op, "input_scale", l.inputScale,
                          hq::expectedInputScaleShape(
                              in, hostShape(inputType)[0], kLogical),
                          [](Type t) { return t.isF32(); }, "f32")))
    return failure();

  if (failed(checkTargetAndTiles(op, w, in, c, n, k, l.layout,
                                 l.tileConfigs)) ||
      failed(checkLowerable(op, w, in, c, n, k, l.layout, l.input)))
    return failure();
  nOut = nLogical;
  kOut = kLogical;
  return success();
}

/// Rows of 'output' must be `expected` (-1: dynamic).
LogicalResult checkOutputRows(Operation *op, Value output, int64_t expected,
                              StringRef why) {
  auto t = cast<MemRefType>(output.getType());
  int64_t actual = hostShape(t)[0];
  if (actual != expected) {
    auto diag = op->emitOpError() << "expected 'output' to have ";
    if (expected < 0)
      diag << "a dynamic number of rows";
    else
      diag << expected << " rows";
    return diag << " (" << why << "), got " << t;
  }
  return success();
}

LogicalResult checkIndexVector(Operation *op, StringRef name, Value v,
                               std::optional<int64_t> size, bool allowI64) {
  auto t = cast<MemRefType>(v.getType());
  Type e = t.getElementType();
  bool elemOk = isI32(e) || (allowI64 && e.isSignlessInteger(64));
  if (t.getRank() != 1 || !elemOk ||
      (size && (t.isDynamicDim(0) || t.getDimSize(0) != *size))) {
    auto diag = op->emitOpError() << "expected '" << name << "' to be ";
    if (size)
      diag << "memref<" << *size << "x" << (allowI64 ? "i32 or i64" : "i32")
           << ">";
    else
      diag << "a 1-D memref of i32";
    return diag << ", got " << t;
  }
  return success();
}

/// The indexed routing (vLLM's moe_align_block_size layout): sorted_ids
/// and expert_ids 1-D i32, num_tokens_padded memref<1xi32>.
LogicalResult checkIndexedRouting(Operation *op, Value sortedIds,
                                  Value expertIds, Value numTokensPadded) {
  if (failed(checkIndexVector(op, "sorted_ids", sortedIds, std::nullopt,
                              false)) ||
      failed(checkIndexVector(op, "expert_ids", expertIds, std::nullopt,
                              false)))
    return failure();
  return checkIndexVector(op, "num_tokens_padded", numTokensPadded, 1, false);
}

} // namespace

//===----------------------------------------------------------------------===//
// humming.gemm
//===----------------------------------------------------------------------===//

LogicalResult GemmOp::verify() {
  ComputeAttr compute = getComputeAttr();
  if (compute && compute.getGemm() != hq::GemmType::Dense)
    return emitOpError() << "expected gemm = dense in humming.gemm (use "
                            "humming.moe_gemm for MoE), got "
                         << hq::toString(compute.getGemm());
  if (getWeightSchema().getExperts() != 0)
    return emitOpError() << "expected experts = 0 in humming.gemm (use "
                            "humming.moe_gemm for MoE), got "
                         << getWeightSchema().getExperts();
  LayerView l{getInput(),       getWeight(),         getScales(),
              getZeroPoints(),  getGlobalScale(),    getBias(),
              getInputScale(),  getOutput(),         getWeightSchema(),
              getInputSchema(), compute,             getLayoutAttr(),
              getTileConfigsAttr()};
  int64_t n = 0, k = 0;
  if (failed(verifyLayer(*this, l, n, k)))
    return failure();
  auto inputType = cast<MemRefType>(getInput().getType());
  return checkOutputRows(*this, getOutput(), hostShape(inputType)[0],
                         "one per input row");
}

//===----------------------------------------------------------------------===//
// humming.moe_gemm
//===----------------------------------------------------------------------===//

LogicalResult MoeGemmOp::verify() {
  hq::GemmType gemm = getCompute().getGemm();
  int64_t experts = getWeightSchema().getExperts();
  if (gemm == hq::GemmType::Dense)
    return emitOpError() << "expected gemm = indexed, grouped_contiguous or "
                            "grouped_masked in humming.moe_gemm, got dense";
  if (experts < 1)
    return emitOpError() << "expected experts >= 1 in the weight schema of "
                            "humming.moe_gemm, got "
                         << experts;

  // Routing operands first: they decide how rows are interpreted.
  bool indexed = gemm == hq::GemmType::Indexed;
  std::string why = std::string("gemm = ") + hq::toString(gemm);
  if (failed(checkPresence(*this, "sorted_ids", getSortedIds(), indexed,
                           why)) ||
      failed(checkPresence(*this, "expert_ids", getExpertIds(), indexed,
                           why)) ||
      failed(checkPresence(*this, "num_tokens_padded", getNumTokensPadded(),
                           indexed, why)) ||
      // (grouped_masked: optional, see below.)
      (gemm != hq::GemmType::GroupedMasked &&
       failed(checkPresence(*this, "expert_layout", getExpertLayout(),
                            !indexed, why))))
    return failure();
  if (indexed && !getTopK())
    return emitOpError("expected a 'top_k' attribute with gemm = indexed");
  if (indexed && !getBlockSize())
    return emitOpError("expected a 'block_size' attribute with gemm = indexed "
                       "(sorted_ids pads each expert to a multiple of it)");
  if (!indexed && getBlockSize())
    return emitOpError() << "unexpected 'block_size' attribute with " << why
                         << " (only sorted_ids are padded per expert)";
  if (indexed && *getBlockSize() % 16 != 0)
    return emitOpError() << "expected block_size to be a multiple of 16 (the "
                            "kernels' blocks of 16, 32, 64 or 128 rows divide "
                            "it), got "
                         << *getBlockSize();
  if (!indexed && getTopK())
    return emitOpError() << "unexpected 'top_k' attribute with " << why
                         << " (rows are already per expert)";
  if (indexed) {
    if (failed(checkIndexedRouting(*this, getSortedIds(), getExpertIds(),
                                   getNumTokensPadded())))
      return failure();
  } else if (gemm == hq::GemmType::GroupedContiguous) {
    if (failed(checkIndexVector(*this, "expert_layout", getExpertLayout(),
                                experts + 1, true)))
      return failure();
  } else if (getExpertLayout()) {
    // grouped_masked: counts [E]; without them every expert has all of its
    // max_tokens rows (a batch of E matmuls, as
    // humming-raise-quantized-matmul raises one).
    if (failed(checkIndexVector(*this, "expert_layout", getExpertLayout(),
                                experts, false)))
      return failure();
  }

  LayerView l{getInput(),       getWeight(),      getScales(),
              getZeroPoints(),  getGlobalScale(), getBias(),
              getInputScale(),  getOutput(),      getWeightSchema(),
              getInputSchema(), getCompute(),     getLayoutAttr(),
              getTileConfigsAttr()};
  int64_t n = 0, k = 0;
  if (failed(verifyLayer(*this, l, n, k)))
    return failure();

  int64_t m = hostShape(cast<MemRefType>(getInput().getType()))[0];
  int64_t outRows = hostShape(cast<MemRefType>(getOutput().getType()))[0];
  if (Value rw = getTopkWeights()) {
    auto t = cast<MemRefType>(rw.getType());
    int64_t count = t.hasStaticShape() ? t.getNumElements() : -1;
    if (!t.getElementType().isF32() || t.getRank() < 1 || t.getRank() > 2 ||
        (count >= 0 && outRows >= 0 && count != outRows))
      return emitOpError() << "expected 'topk_weights' to be a 1-D or 2-D "
                              "memref of f32 with one weight per output row"
                           << (outRows >= 0 ? " (" + std::to_string(outRows) +
                                                  ")"
                                            : std::string())
                           << ", got " << t;
  }
  if (indexed) {
    int64_t topK = *getTopK();
    return checkOutputRows(*this, getOutput(), m < 0 ? -1 : m * topK,
                           "M * top_k");
  }
  if (gemm == hq::GemmType::GroupedMasked && m >= 0 && m % experts != 0)
    return emitOpError() << "expected the rows of 'input' to be E * "
                            "max_tokens with E = "
                         << experts << ", got " << m;
  return checkOutputRows(*this, getOutput(), m, "one per input row");
}

//===----------------------------------------------------------------------===//
// humming.moe_align
//===----------------------------------------------------------------------===//

/// The router's top-k ids of humming.moe_align and humming.moe_group:
/// memref<?x{top_k}xi32>, at most 1024 experts (one thread of the routing
/// block each), 1 <= top_k <= experts. Returns top_k.
static FailureOr<int64_t> checkTopkIds(Operation *op, Value topkIds,
                                       int64_t experts) {
  auto ids = cast<MemRefType>(topkIds.getType());
  if (ids.getRank() != 2 || !isI32(ids.getElementType()) ||
      ids.isDynamicDim(1))
    return op->emitOpError() << "expected 'topk_ids' to be a "
                                "memref<?x{top_k}xi32> with a static top_k, "
                                "got "
                             << ids;
  const int64_t topK = ids.getDimSize(1);
  if (experts > 1024)
    return op->emitOpError() << "expected at most 1024 experts (one thread "
                                "of the routing block each), got "
                             << experts;
  if (topK < 1 || topK > experts)
    return op->emitOpError() << "expected top_k (the second dimension of "
                                "'topk_ids') in 1 .. "
                             << experts << ", got " << topK;
  return topK;
}

LogicalResult MoeAlignOp::verify() {
  const int64_t experts = getExperts(), block = getBlockSize();
  FailureOr<int64_t> topKOr = checkTopkIds(*this, getTopkIds(), experts);
  if (failed(topKOr))
    return failure();
  const int64_t topK = *topKOr;
  auto ids = cast<MemRefType>(getTopkIds().getType());
  if (block % 16 != 0 || block > 1024)
    return emitOpError() << "expected block_size to be a multiple of 16 in 16 "
                            ".. 1024, got "
                         << block;
  if (failed(checkIndexedRouting(*this, getSortedIds(), getExpertIds(),
                                 getNumTokensPadded())))
    return failure();
  auto sorted = cast<MemRefType>(getSortedIds().getType());
  auto blocks = cast<MemRefType>(getExpertIds().getType());
  if (!ids.isDynamicDim(0) && !sorted.isDynamicDim(0)) {
    int64_t need = ids.getDimSize(0) * topK + experts * (block - 1);
    if (sorted.getDimSize(0) < need)
      return emitOpError() << "expected 'sorted_ids' to hold at least M * "
                              "top_k + experts * (block_size - 1) = "
                           << need << " ids, got " << sorted;
  }
  if (!sorted.isDynamicDim(0) && !blocks.isDynamicDim(0) &&
      blocks.getDimSize(0) < (sorted.getDimSize(0) + block - 1) / block)
    return emitOpError() << "expected 'expert_ids' to hold at least "
                         << (sorted.getDimSize(0) + block - 1) / block
                         << " blocks (the sorted ids / block_size, rounded "
                            "up), got "
                         << blocks;
  return success();
}

//===----------------------------------------------------------------------===//
// humming.moe_group, humming.moe_permute
//===----------------------------------------------------------------------===//

LogicalResult MoeGroupOp::verify() {
  const int64_t experts = getExperts();
  FailureOr<int64_t> topKOr = checkTopkIds(*this, getTopkIds(), experts);
  if (failed(topKOr))
    return failure();
  const int64_t topK = *topKOr;
  auto ids = cast<MemRefType>(getTopkIds().getType());
  std::optional<uint64_t> maxTokens = getMaxTokens();
  if (maxTokens && *maxTokens > uint64_t(std::numeric_limits<int32_t>::max() / experts))
    return emitOpError() << "expected experts * max_tokens to fit in i32 (at "
                            "most 2^31 - 1 grouped rows), got "
                         << experts << " * " << *maxTokens;
  if (failed(checkIndexVector(*this, "positions", getPositions(),
                              std::nullopt, false)) ||
      failed(checkIndexVector(*this, "expert_layout", getExpertLayout(),
                              maxTokens ? experts : experts + 1, false)))
    return failure();
  auto pos = cast<MemRefType>(getPositions().getType());
  if (!ids.isDynamicDim(0) && !pos.isDynamicDim(0) &&
      pos.getDimSize(0) < ids.getDimSize(0) * topK)
    return emitOpError() << "expected 'positions' to hold at least M * top_k "
                            "= "
                         << ids.getDimSize(0) * topK << " ids, got " << pos;
  return success();
}

LogicalResult GatherColumnsOp::verify() {
  auto in = cast<MemRefType>(getInput().getType());
  auto out = cast<MemRefType>(getOutput().getType());
  Type elem = in.getElementType();
  const unsigned bits = elem.isIntOrFloat() ? elem.getIntOrFloatBitWidth() : 0;
  if (in.getRank() != 2 || in.isDynamicDim(1) || in.getDimSize(1) < 1 ||
      (bits != 8 && bits != 16 && bits != 32))
    return emitOpError() << "expected 'input' to be a memref<?x{K}x{type}> "
                            "with a static K and an 8-, 16- or 32-bit "
                            "element type, got "
                         << in;
  const int64_t k = in.getDimSize(1);
  if (out.getRank() != 2 || out.getElementType() != elem ||
      out.isDynamicDim(1) || out.getDimSize(1) != k)
    return emitOpError() << "expected 'output' to have the rows of 'input' ("
                         << k << " x " << elem << "), got " << out;
  if (!in.isDynamicDim(0) && !out.isDynamicDim(0) &&
      in.getDimSize(0) != out.getDimSize(0))
    return emitOpError() << "expected 'output' to have the " << in.getDimSize(0)
                         << " rows of 'input', got " << out;
  auto cols = cast<MemRefType>(getColumns().getType());
  return checkIndexVector(*this, "columns", getColumns(),
                          cols.isDynamicDim(0) ? std::nullopt
                                               : std::optional<int64_t>(k),
                          false);
}

LogicalResult MoePermuteOp::verify() {
  auto in = cast<MemRefType>(getInput().getType());
  auto out = cast<MemRefType>(getOutput().getType());
  Type elem = in.getElementType();
  auto rowOk = [&](MemRefType t) {
    return t.getRank() == 2 && !t.isDynamicDim(1) && t.getDimSize(1) > 0 &&
           (isa<FloatType>(t.getElementType()) ||
            t.getElementType().isSignlessInteger()) &&
           t.getElementTypeBitWidth() % 8 == 0 &&
           t.getDimSize(1) * t.getElementTypeBitWidth() % 32 == 0;
  };
  if (!rowOk(in))
    return emitOpError() << "expected 'input' to be a memref<?x{N}x{type}> "
                            "with a static N, rows a whole number of 4-byte "
                            "words, got "
                         << in;
  if (out.getRank() != 2 || out.getElementType() != elem ||
      out.isDynamicDim(1) || out.getDimSize(1) != in.getDimSize(1))
    return emitOpError() << "expected 'output' to have the rows of 'input' ("
                         << in.getDimSize(1) << " x " << elem << "), got "
                         << out;
  if (failed(checkIndexVector(*this, "positions", getPositions(),
                              std::nullopt, false)))
    return failure();
  auto pos = cast<MemRefType>(getPositions().getType());
  if (getGather()) {
    if (getTopK())
      return emitOpError() << "expected no top_k with gather (each output "
                              "row takes one input row)";
    if (!pos.isDynamicDim(0) && !out.isDynamicDim(0) &&
        out.getDimSize(0) != pos.getDimSize(0))
      return emitOpError() << "expected 'output' to have one row per "
                              "position ("
                           << pos.getDimSize(0) << "), got " << out;
    return success();
  }
  const int64_t topK = getTopK().value_or(1);
  if (!pos.isDynamicDim(0) && !in.isDynamicDim(0) &&
      pos.getDimSize(0) != in.getDimSize(0) * topK)
    return emitOpError() << "expected 'positions' to hold rows of 'input' * "
                            "top_k = "
                         << in.getDimSize(0) * topK << " ids, got " << pos;
  return success();
}

//===----------------------------------------------------------------------===//
// humming.silu_and_mul, humming.moe_sum
//===----------------------------------------------------------------------===//

/// Rank-2 memrefs of one 16-bit float type with a static, even number of
/// columns: the elementwise ops' operands.
static LogicalResult checkRows(Operation *op, StringRef name, Value v,
                               Type elem, int64_t columns) {
  auto t = cast<MemRefType>(v.getType());
  bool ok = t.getRank() == 2 && !t.isDynamicDim(1) &&
            (elem ? t.getElementType() == elem
                  : (t.getElementType().isF16() || t.getElementType().isBF16()));
  if (ok && columns >= 0)
    ok = t.getDimSize(1) == columns;
  if (ok && t.getDimSize(1) % 2 != 0)
    ok = false;
  if (ok)
    return success();
  auto diag = op->emitOpError() << "expected '" << name << "' to be a memref<?x";
  if (columns >= 0)
    diag << columns;
  else
    diag << "{even N}";
  diag << "x";
  if (elem) {
    std::string name;
    llvm::raw_string_ostream os(name);
    os << elem;
    diag << name;
  } else {
    diag << "f16 or bf16";
  }
  return diag << ">, got " << t;
}

LogicalResult SiluAndMulOp::verify() {
  if (failed(checkRows(*this, "input", getInput(), Type(), -1)))
    return failure();
  auto in = cast<MemRefType>(getInput().getType());
  if (in.getDimSize(1) % 4 != 0)
    return emitOpError() << "expected 'input' to have 2I columns with I even, "
                            "got "
                         << in;
  if (failed(checkRows(*this, "output", getOutput(), in.getElementType(),
                       in.getDimSize(1) / 2)))
    return failure();
  auto out = cast<MemRefType>(getOutput().getType());
  if (!in.isDynamicDim(0) && !out.isDynamicDim(0) &&
      in.getDimSize(0) != out.getDimSize(0))
    return emitOpError() << "expected as many output rows as input rows ("
                         << in.getDimSize(0) << "), got " << out;
  auto value = [](FloatAttr a) -> std::optional<double> {
    if (!a)
      return std::nullopt;
    return a.getValueAsDouble();
  };
  if (std::optional<double> a = value(getAlphaAttr());
      a && !(*a > 0 && std::isfinite(*a)))
    return emitOpError() << "expected a positive finite alpha, got " << *a;
  if (std::optional<double> o = value(getUpOffsetAttr());
      o && !std::isfinite(*o))
    return emitOpError() << "expected a finite up_offset, got " << *o;
  if (std::optional<double> l = value(getLimitAttr());
      l && !(*l > 0 && std::isfinite(*l)))
    return emitOpError() << "expected a positive finite limit, got " << *l;
  return success();
}

LogicalResult MoeSumOp::verify() {
  if (failed(checkRows(*this, "input", getInput(), Type(), -1)))
    return failure();
  auto in = cast<MemRefType>(getInput().getType());
  if (failed(checkRows(*this, "output", getOutput(), in.getElementType(),
                       in.getDimSize(1))))
    return failure();
  auto out = cast<MemRefType>(getOutput().getType());
  const int64_t topK = int64_t(getTopK());
  if (!in.isDynamicDim(0) && !out.isDynamicDim(0) &&
      in.getDimSize(0) != out.getDimSize(0) * topK)
    return emitOpError() << "expected M * top_k = " << out.getDimSize(0) * topK
                         << " input rows, got " << in;
  return success();
}

//===----------------------------------------------------------------------===//
// humming.quantize
//===----------------------------------------------------------------------===//

static bool isFpSource(Type t) { return t.isF16() || t.isBF16() || t.isF32(); }

QuantizeOp mlir::humming::findActivationQuantize(Operation *user,
                                                 Value input) {
  if (auto q = input.getDefiningOp<QuantizeOp>())
    return q;
  // Memrefs: the humming.quantize writing into the input earlier in the
  // same block.
  QuantizeOp found;
  for (Operation *other : input.getUsers())
    if (auto q = dyn_cast<QuantizeOp>(other);
        q && q.getDest() == input && q->getBlock() == user->getBlock() &&
        q->isBeforeInBlock(user) && isa<InputSchemaAttr>(q.getSchema()))
      found = q;
  return found;
}

LogicalResult QuantizeOp::verify() {
  auto srcType = cast<MemRefType>(getSource().getType());
  if (!isFpSource(srcType.getElementType()))
    return emitOpError() << "expected 'source' element type f16, bf16 or "
                            "f32, got "
                         << srcType.getElementType();

  if (auto in = dyn_cast<InputSchemaAttr>(getSchema())) {
    hq::InputSchema schema = in.toHost();
    if (schema.scaling == hq::ActScaling::None)
      return emitOpError() << "expected an 8- or 4-bit activation schema, got "
                           << in.getType()
                           << " (16-bit activations are used as they are)";
    if (srcType.getRank() != 2 || srcType.isDynamicDim(1))
      return emitOpError() << "expected 'source' to be a rank-2 memref "
                              "[M, K] with a static K, got "
                           << srcType;
    std::vector<int64_t> shape = hostShape(srcType);
    // The codes may have more columns than K (per token or static scaling):
    // those past K are the code of zero (rows padded to 16 bytes for the
    // GEMM's copies).
    std::vector<int64_t> codes = shape;
    auto destType = dyn_cast<MemRefType>(getDest().getType());
    if (destType && destType.getRank() == 2 && !destType.isDynamicDim(1) &&
        destType.getDimSize(1) > shape[1]) {
      if (schema.scaling == hq::ActScaling::Group)
        return emitOpError()
               << "expected 'dest' of K = " << shape[1]
               << " columns with per-group scales (K is a multiple of the "
                  "group: nothing to pad), got "
               << destType;
      codes[1] = destType.getDimSize(1);
    }
    hq::ShapeOrDiag destShape{codes, std::nullopt};
    if (failed(checkOperand(
            *this, "dest", getDest(), destShape,
            [&](Type t) { return isScalar(t, schema.type); },
            schema.type.str() + " (the input schema's type)")))
      return failure();
    if (failed(checkPresence(*this, "scales", getScales(), true,
                             "activations are scaled")) ||
        failed(checkPresence(*this, "zero_points", getZeroPoints(), false,
                             "activations have no zero point")) ||
        failed(checkPresence(*this, "global_scale", getGlobalScale(), false,
                             "activations have no global scale")))
      return failure();
    return checkOperand(*this, "scales", getScales(),
                        hq::expectedInputScaleShape(schema, shape[0],
                                                    shape[1]),
                        [](Type t) { return t.isF32(); }, "f32");
  }

  auto ws = cast<WeightSchemaAttr>(getSchema());
  hq::WeightSchema w = ws.toHost();
  if (w.format != hq::SourceFormat::Canonical)
    return emitOpError() << "expected format = canonical for quantized "
                            "weights, got "
                         << hq::toString(w.format);
  int64_t rank = w.experts > 0 ? 3 : 2;
  if (srcType.getRank() != rank || !srcType.hasStaticShape())
    return emitOpError() << "expected 'source' to be a static rank-" << rank
                         << " memref " << (rank == 3 ? "[E, N, K]" : "[N, K]")
                         << ", got " << srcType;
  if (rank == 3 && srcType.getDimSize(0) != w.experts)
    return emitOpError() << "expected " << w.experts
                         << " experts in 'source', got " << srcType;
  int64_t n = srcType.getDimSize(rank - 2) + w.padN;
  int64_t k = srcType.getDimSize(rank - 1) + w.padK;
  hq::InputSchema unused;
  if (failed(checkOperand(
          *this, "dest", getDest(),
          hq::expectedShape(hq::WeightOperand::Weight, w, unused, n, k, false),
          isI32, "i32 (packed codes)")))
    return failure();
  return checkWeightSide(*this, w, unused, n, k, false, getScales(),
                         getZeroPoints(), getGlobalScale(), Value(),
                         /*withBias=*/false, Type());
}

//===----------------------------------------------------------------------===//
// humming.dequantize
//===----------------------------------------------------------------------===//

LogicalResult DequantizeOp::verify() {
  hq::WeightSchema w = getWeightSchema().toHost();
  auto destType = cast<MemRefType>(getDest().getType());
  int64_t rank = w.experts > 0 ? 3 : 2;
  if (destType.getRank() != rank || !destType.hasStaticShape() ||
      !isFpSource(destType.getElementType()))
    return emitOpError() << "expected 'dest' to be a static rank-" << rank
                         << " memref " << (rank == 3 ? "[E, N, K]" : "[N, K]")
                         << " of f16, bf16 or f32, got " << destType;
  if (rank == 3 && destType.getDimSize(0) != w.experts)
    return emitOpError() << "expected " << w.experts
                         << " experts in 'dest', got " << destType;
  bool prepared = static_cast<bool>(getLayoutAttr());
  if (prepared && !getInputSchemaAttr())
    return emitOpError("expected an 'input_schema' with a prepared layout "
                       "(the activation width fixes the packing)");
  if (prepared && w.format != hq::SourceFormat::Canonical)
    return emitOpError() << "expected format = canonical with a prepared "
                            "layout, got "
                         << hq::toString(w.format);
  hq::InputSchema in;
  if (InputSchemaAttr inAttr = getInputSchemaAttr()) {
    in = inAttr.toHost();
    if (hq::Diag d = hq::verifyCompatibility(w, in, {}, std::nullopt))
      return emitOpError() << *d;
  }
  int64_t n = destType.getDimSize(rank - 2) + w.padN;
  int64_t k = destType.getDimSize(rank - 1) + w.padK;
  if (failed(checkOperand(
          *this, "weight", getWeight(),
          hq::expectedShape(hq::WeightOperand::Weight, w, in, n, k, prepared),
          isI32, "i32 (packed codes)")))
    return failure();
  return checkWeightSide(*this, w, in, n, k, prepared, getScales(),
                         getZeroPoints(), getGlobalScale(), Value(),
                         /*withBias=*/false, Type());
}

//===----------------------------------------------------------------------===//
// humming.repack
//===----------------------------------------------------------------------===//

LogicalResult RepackOp::verify() {
  hq::WeightSchema w = getWeightSchema().toHost();
  hq::InputSchema in = getInputSchema().toHost();
  hq::WeightOperand which = getOperand().getValue();
  if (which == hq::WeightOperand::GlobalScale)
    return emitOpError("expected operand weight, scales, zero_points or bias "
                       "(a global scale is not repacked), got global_scale");
  if (hq::Diag d = hq::verifyCompatibility(w, in, {}, std::nullopt))
    return emitOpError() << *d;
  int64_t n = getN() + w.padN, k = getK() + w.padK;
  if (hq::Diag d = hq::verifyPadding(w, in, n, k))
    return emitOpError() << *d;
  if (hq::Diag d = hq::verifyOnChip(getLayout().getHostChip(), in, {},
                                    std::nullopt, std::nullopt))
    return emitOpError() << *d;
  if (TargetAttr target = lookupTarget(*this))
    if (!(target.getHostChip() == getLayout().getHostChip()))
      return emitOpError() << "expected a layout for the target "
                           << target.getChip() << ", got one for "
                           << getLayout().getChip();

  // Bias and float zero points are in the model's fp type; accept f16/bf16.
  ElemRule rule = weightSideElem(which, w, Type());
  const char *name = hq::toString(which);
  auto srcElem = cast<MemRefType>(getSource().getType()).getElementType();
  auto dstElem = cast<MemRefType>(getDest().getType()).getElementType();
  // 8-bit codes may come unpacked, [E?, N, K] of their own type: the bytes
  // of the packed i32 words (as humming.gemm and humming.moe_gemm take).
  const bool unpacked8 = which == hq::WeightOperand::Weight &&
                         w.type.bits == 8 &&
                         srcElem.getIntOrFloatBitWidth() == 8;
  if (unpacked8) {
    if (failed(checkUnpackedCodes(*this, "source weight", getSource(), w, n,
                                  k)))
      return failure();
  } else if (failed(checkOperand(*this, (Twine("source ") + name).str(),
                                 getSource(),
                                 hq::expectedShape(which, w, in, n, k, false),
                                 rule.ok, rule.what))) {
    return failure();
  }
  if (failed(checkOperand(*this, (Twine("dest ") + name).str(), getDest(),
                          hq::expectedShape(which, w, in, n, k, true), rule.ok,
                          rule.what)))
    return failure();
  if (!unpacked8 && srcElem != dstElem)
    return emitOpError() << "expected 'dest' element type " << srcElem
                         << " (as 'source'), got " << dstElem;
  return success();
}
