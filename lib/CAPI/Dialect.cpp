//===- Dialect.cpp - The humming dialect's C API --------------------------===//

#include "humming-c/Dialect.h"

#include "Humming/Dialect/Humming/IR/HummingAttrs.h"
#include "Humming/Dialect/Humming/IR/HummingDialect.h"
#include "Humming/Dialect/Humming/IR/HummingTypes.h"
#include "Humming/Registration.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"

using namespace mlir;
using namespace mlir::humming;
namespace hq = ::humming;

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(Humming, humming, HummingDialect)

void mlirHummingRegisterAllDialects(MlirDialectRegistry registry) {
  registerHummingDialects(*unwrap(registry));
}

void mlirRegisterHummingPasses(void) { registerHummingPasses(); }

namespace {

/// Errors of the constructors go to the context's diagnostic handlers.
auto errorsOf(MLIRContext *ctx) {
  return [ctx] { return emitError(UnknownLoc::get(ctx)); };
}

/// The host scalar of a C-given type; reports one Humming does not know.
std::optional<hq::ScalarType> scalarOf(MLIRContext *ctx, MlirType t,
                                       const char *field) {
  if (mlirTypeIsNull(t)) {
    emitError(UnknownLoc::get(ctx)) << field << ": expected a type, got null";
    return std::nullopt;
  }
  std::optional<hq::ScalarType> s = toScalarType(unwrap(t));
  if (!s)
    emitError(UnknownLoc::get(ctx))
        << field << ": expected an element type humming knows (ui1..ui8, "
                    "si4, si8, f16, bf16, f32, f8E4M3FN, f8E5M2, ...), got "
        << unwrap(t);
  return s;
}

} // namespace

//===----------------------------------------------------------------------===//
// #humming.weight_schema
//===----------------------------------------------------------------------===//

bool mlirAttributeIsAHummingWeightSchema(MlirAttribute a) {
  return isa<WeightSchemaAttr>(unwrap(a));
}

MlirAttribute mlirHummingWeightSchemaAttrGet(
    MlirContext ctx, const MlirHummingWeightSchema *schema) {
  MLIRContext *c = unwrap(ctx);
  if (!schema) {
    emitError(UnknownLoc::get(c)) << "expected a weight schema, got NULL";
    return MlirAttribute{nullptr};
  }
  std::optional<hq::ScalarType> type = scalarOf(c, schema->type, "type");
  std::optional<hq::ScalarType> scale = scalarOf(c, schema->scale, "scale");
  if (!type || !scale)
    return MlirAttribute{nullptr};
  if (unsigned(schema->granularity) > MlirHummingGranularityGroupTensor ||
      unsigned(schema->zeroPoint) > MlirHummingZeroPointFloat ||
      unsigned(schema->format) > MlirHummingFormatAWQ) {
    emitError(UnknownLoc::get(c))
        << "expected granularity 0-4, zero point 0-2 and format 0-3, got "
        << int(schema->granularity) << ", " << int(schema->zeroPoint) << ", "
        << int(schema->format);
    return MlirAttribute{nullptr};
  }
  hq::WeightSchema w;
  w.type = *type;
  w.scaleType = *scale;
  w.granularity = hq::Granularity(schema->granularity);
  w.groupN = schema->groupN;
  w.groupK = schema->groupK;
  w.zeroPoint = hq::ZeroPointKind(schema->zeroPoint);
  w.globalScale = schema->globalScale;
  w.bias = schema->bias;
  w.experts = schema->experts;
  w.padN = schema->padN;
  w.padK = schema->padK;
  w.format = hq::SourceFormat(schema->format);
  return wrap(WeightSchemaAttr::fromHost(errorsOf(c), c, w));
}

MlirHummingWeightSchema mlirHummingWeightSchemaAttrGetValue(MlirAttribute a) {
  MlirHummingWeightSchema out = {};
  auto attr = dyn_cast<WeightSchemaAttr>(unwrap(a));
  if (!attr)
    return out;
  hq::WeightSchema w = attr.toHost();
  MLIRContext *ctx = attr.getContext();
  out.type = wrap(toMLIRType(ctx, w.type));
  out.scale = wrap(toMLIRType(ctx, w.scaleType));
  out.granularity = MlirHummingGranularity(w.granularity);
  out.groupN = w.groupN;
  out.groupK = w.groupK;
  out.zeroPoint = MlirHummingZeroPoint(w.zeroPoint);
  out.globalScale = w.globalScale;
  out.bias = w.bias;
  out.experts = w.experts;
  out.padN = w.padN;
  out.padK = w.padK;
  out.format = MlirHummingFormat(w.format);
  return out;
}

//===----------------------------------------------------------------------===//
// #humming.input_schema
//===----------------------------------------------------------------------===//

bool mlirAttributeIsAHummingInputSchema(MlirAttribute a) {
  return isa<InputSchemaAttr>(unwrap(a));
}

MlirAttribute mlirHummingInputSchemaAttrGet(MlirContext ctx,
                                            const MlirHummingInputSchema *schema) {
  MLIRContext *c = unwrap(ctx);
  if (!schema) {
    emitError(UnknownLoc::get(c)) << "expected an input schema, got NULL";
    return MlirAttribute{nullptr};
  }
  std::optional<hq::ScalarType> type = scalarOf(c, schema->type, "type");
  if (!type)
    return MlirAttribute{nullptr};
  if (unsigned(schema->scaling) > MlirHummingScalingStatic) {
    emitError(UnknownLoc::get(c))
        << "expected scaling 0-3, got " << int(schema->scaling);
    return MlirAttribute{nullptr};
  }
  hq::InputSchema in{*type, hq::ActScaling(schema->scaling), schema->groupK};
  return wrap(InputSchemaAttr::fromHost(errorsOf(c), c, in));
}

MlirHummingInputSchema mlirHummingInputSchemaAttrGetValue(MlirAttribute a) {
  MlirHummingInputSchema out = {};
  auto attr = dyn_cast<InputSchemaAttr>(unwrap(a));
  if (!attr)
    return out;
  hq::InputSchema in = attr.toHost();
  out.type = wrap(toMLIRType(attr.getContext(), in.type));
  out.scaling = MlirHummingScaling(in.scaling);
  out.groupK = in.groupK;
  return out;
}

//===----------------------------------------------------------------------===//
// #humming.target
//===----------------------------------------------------------------------===//

bool mlirAttributeIsAHummingTarget(MlirAttribute a) {
  return isa<TargetAttr>(unwrap(a));
}

MlirAttribute mlirHummingTargetAttrGetKnown(MlirContext ctx,
                                            MlirStringRef device,
                                            MlirStringRef chip, unsigned ptx) {
  MLIRContext *c = unwrap(ctx);
  return wrap(
      TargetAttr::getKnown(errorsOf(c), c, unwrap(device), unwrap(chip), ptx));
}

MlirStringRef mlirHummingTargetAttrGetDevice(MlirAttribute a) {
  auto attr = dyn_cast<TargetAttr>(unwrap(a));
  return attr ? wrap(attr.getDevice()) : mlirStringRefCreate(nullptr, 0);
}

MlirStringRef mlirHummingTargetAttrGetChip(MlirAttribute a) {
  auto attr = dyn_cast<TargetAttr>(unwrap(a));
  return attr ? wrap(attr.getChip()) : mlirStringRefCreate(nullptr, 0);
}

unsigned mlirHummingTargetAttrGetPtx(MlirAttribute a) {
  auto attr = dyn_cast<TargetAttr>(unwrap(a));
  return attr ? attr.getPtx() : 0;
}

int64_t mlirHummingTargetAttrGetSmCount(MlirAttribute a) {
  auto attr = dyn_cast<TargetAttr>(unwrap(a));
  return attr ? attr.getSms() : 0;
}

//===----------------------------------------------------------------------===//
// #humming.tile_config
//===----------------------------------------------------------------------===//

namespace {
MlirHummingTileConfig toC(const hq::TileConfig &t) {
  MlirHummingTileConfig c = {};
  c.mMin = t.mMin;
  c.mMax = t.mMax;
  c.blockM = t.blockM;
  c.blockN = t.blockN;
  c.blockK = t.blockK;
  c.warpM = t.warpM;
  c.warpN = t.warpN;
  c.warpK = t.warpK;
  c.stages = t.stages;
  c.mma = MlirHummingMma(t.mma);
  c.warpSpecialized = t.warpSpecialized;
  c.streamK = t.streamK;
  c.mbarrier = t.mbarrier;
  c.cpAsync = t.cpAsync;
  c.tma = t.tma;
  c.multicastA = t.multicastA;
  c.multicastB = t.multicastB;
  c.ctasPerSm = t.ctasPerSm;
  c.gridCap = t.gridCap;
  c.writeSplits = t.writeSplits;
  c.splitK = t.splitK;
  c.blockCopies = t.blockCopies;
  c.shareActivations = t.shareActivations;
  c.scaleAfterMma = t.scaleAfterMma;
  c.clusterSplit = t.clusterSplit;
  c.workspaceSplit = t.workspaceSplit;
  c.cooperativeSplit = t.cooperativeSplit;
  c.wgmmaInFlight = t.wgmmaInFlight;
  c.l2Prefetch = t.l2Prefetch;
  c.rasterM = t.rasterM;
  c.persistent = t.persistent;
  c.promotionInterval = t.promotionInterval;
  c.weightMap = t.weightMap;
  c.stagedWeights = t.stagedWeights;
  return c;
}
} // namespace

MlirHummingTileConfig mlirHummingTileConfigDefault(void) {
  return toC(hq::TileConfig{});
}

bool mlirAttributeIsAHummingTileConfig(MlirAttribute a) {
  return isa<TileConfigAttr>(unwrap(a));
}

MlirAttribute mlirHummingTileConfigAttrGet(MlirContext ctx,
                                           const MlirHummingTileConfig *c) {
  MLIRContext *context = unwrap(ctx);
  if (!c) {
    emitError(UnknownLoc::get(context)) << "expected a tile config, got NULL";
    return MlirAttribute{nullptr};
  }
  if (unsigned(c->mma) > MlirHummingMmaBlockScaled) {
    emitError(UnknownLoc::get(context))
        << "expected mma 0-3, got " << int(c->mma);
    return MlirAttribute{nullptr};
  }
  hq::TileConfig t;
  t.mMin = c->mMin;
  t.mMax = c->mMax;
  t.blockM = c->blockM;
  t.blockN = c->blockN;
  t.blockK = c->blockK;
  t.warpM = c->warpM;
  t.warpN = c->warpN;
  t.warpK = c->warpK;
  t.stages = c->stages;
  t.mma = hq::MmaKind(c->mma);
  t.warpSpecialized = c->warpSpecialized;
  t.streamK = c->streamK;
  t.mbarrier = c->mbarrier;
  t.cpAsync = c->cpAsync;
  t.tma = c->tma;
  t.multicastA = c->multicastA;
  t.multicastB = c->multicastB;
  t.ctasPerSm = c->ctasPerSm;
  t.gridCap = c->gridCap;
  t.writeSplits = c->writeSplits;
  t.splitK = c->splitK;
  t.blockCopies = c->blockCopies;
  t.shareActivations = c->shareActivations;
  t.scaleAfterMma = c->scaleAfterMma;
  t.clusterSplit = c->clusterSplit;
  t.workspaceSplit = c->workspaceSplit;
  t.cooperativeSplit = c->cooperativeSplit;
  t.wgmmaInFlight = c->wgmmaInFlight;
  t.l2Prefetch = c->l2Prefetch;
  t.rasterM = c->rasterM;
  t.persistent = c->persistent;
  t.promotionInterval = c->promotionInterval;
  t.weightMap = c->weightMap;
  t.stagedWeights = c->stagedWeights;
  return wrap(TileConfigAttr::fromHost(errorsOf(context), context, t));
}

MlirHummingTileConfig mlirHummingTileConfigAttrGetValue(MlirAttribute a) {
  auto attr = dyn_cast<TileConfigAttr>(unwrap(a));
  return attr ? toC(attr.toHost()) : MlirHummingTileConfig{};
}
