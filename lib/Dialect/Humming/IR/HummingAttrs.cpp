//===- HummingAttrs.cpp - humming attributes ------------------------------===//
//
// Parsers and printers of the attribute parameters, the attribute verifiers
// (which convert to the host structs and apply the rules of
// Humming/Quant/Schema.h), and #humming.target's custom syntax.
//
//===----------------------------------------------------------------------===//

#include "Humming/Dialect/Humming/IR/HummingAttrs.h"
#include "Humming/Dialect/Humming/IR/HummingDialect.h"
#include "Humming/Dialect/Humming/IR/HummingTypes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include <sstream>

using namespace mlir;
using namespace mlir::humming;
namespace hq = ::humming;

/// "3000", "0.5": doubles as people write them (raw_ostream prints %e).
static std::string formatReal(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}


//===----------------------------------------------------------------------===//
// Enum value lists
//===----------------------------------------------------------------------===//

namespace mlir::humming {
template <> ArrayRef<hq::ZeroPointKind> enumValues() {
  static const hq::ZeroPointKind v[] = {
      hq::ZeroPointKind::None, hq::ZeroPointKind::Int, hq::ZeroPointKind::Float};
  return v;
}
template <> ArrayRef<hq::SourceFormat> enumValues() {
  static const hq::SourceFormat v[] = {
      hq::SourceFormat::Canonical, hq::SourceFormat::GPTQ,
      hq::SourceFormat::GPTQv2, hq::SourceFormat::AWQ};
  return v;
}
template <> ArrayRef<hq::GemmType> enumValues() {
  static const hq::GemmType v[] = {
      hq::GemmType::Dense, hq::GemmType::Indexed,
      hq::GemmType::GroupedContiguous, hq::GemmType::GroupedMasked};
  return v;
}
template <> ArrayRef<hq::MmaKind> enumValues() {
  static const hq::MmaKind v[] = {hq::MmaKind::MmaSync, hq::MmaKind::Wgmma,
                                  hq::MmaKind::Tcgen05,
                                  hq::MmaKind::BlockScaled};
  return v;
}
template <> ArrayRef<hq::WeightOperand> enumValues() {
  static const hq::WeightOperand v[] = {
      hq::WeightOperand::Weight, hq::WeightOperand::Scales,
      hq::WeightOperand::ZeroPoints, hq::WeightOperand::GlobalScale,
      hq::WeightOperand::Bias};
  return v;
}
template <> ArrayRef<hq::Granularity> enumValues() {
  static const hq::Granularity v[] = {
      hq::Granularity::Channel, hq::Granularity::Group, hq::Granularity::Block,
      hq::Granularity::Tensor, hq::Granularity::GroupTensor};
  return v;
}
template <> ArrayRef<hq::ActScaling> enumValues() {
  static const hq::ActScaling v[] = {hq::ActScaling::None,
                                     hq::ActScaling::Token,
                                     hq::ActScaling::Group,
                                     hq::ActScaling::Static};
  return v;
}
} // namespace mlir::humming

//===----------------------------------------------------------------------===//
// Parameter parsers and printers
//===----------------------------------------------------------------------===//

FailureOr<bool> mlir::humming::parseBool(AsmParser &parser) {
  llvm::SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (succeeded(parser.parseOptionalKeyword(&keyword))) {
    if (keyword == "true")
      return true;
    if (keyword == "false")
      return false;
  }
  return parser.emitError(loc, "expected 'true' or 'false'");
}

FailureOr<int64_t> mlir::humming::parseI64(AsmParser &parser) {
  llvm::SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (succeeded(parser.parseOptionalKeyword(&keyword)))
    return parser.emitError(loc, "expected an integer, got '")
           << keyword << "'";
  int64_t value = 0;
  if (parser.parseInteger(value))
    return failure();
  return value;
}

void mlir::humming::printBool(AsmPrinter &printer, bool value) {
  printer << (value ? "true" : "false");
}

/// Parses `<int, int, ...>` with exactly `count` positive integers.
static LogicalResult parseAngledInts(AsmParser &parser, StringRef what,
                                     MutableArrayRef<int64_t> out) {
  if (parser.parseLess())
    return failure();
  for (size_t i = 0; i < out.size(); ++i) {
    if (i && parser.parseComma())
      return failure();
    llvm::SMLoc loc = parser.getCurrentLocation();
    if (parser.parseInteger(out[i]))
      return failure();
    if (out[i] <= 0)
      return parser.emitError(loc, "expected a positive ")
             << what << " size, got " << out[i];
  }
  return parser.parseGreater();
}

FailureOr<ScaleGranularity> mlir::humming::parseGranularity(AsmParser &parser) {
  FailureOr<hq::Granularity> kind = parseEnumKeyword<hq::Granularity>(parser);
  if (failed(kind))
    return failure();
  ScaleGranularity g;
  g.kind = *kind;
  switch (*kind) {
  case hq::Granularity::Group:
  case hq::Granularity::GroupTensor: {
    int64_t k[1];
    if (failed(parseAngledInts(parser, "group", k)))
      return failure();
    g.k = k[0];
    break;
  }
  case hq::Granularity::Block: {
    int64_t nk[2];
    if (failed(parseAngledInts(parser, "block", nk)))
      return failure();
    g.n = nk[0];
    g.k = nk[1];
    break;
  }
  default:
    break;
  }
  return g;
}

void mlir::humming::printGranularity(AsmPrinter &printer,
                                     const ScaleGranularity &g) {
  printer << hq::toString(g.kind);
  if (g.kind == hq::Granularity::Block)
    printer << "<" << g.n << ", " << g.k << ">";
  else if (g.kind == hq::Granularity::Group ||
           g.kind == hq::Granularity::GroupTensor)
    printer << "<" << g.k << ">";
}

FailureOr<ActivationScaling> mlir::humming::parseActScaling(AsmParser &parser) {
  FailureOr<hq::ActScaling> kind = parseEnumKeyword<hq::ActScaling>(parser);
  if (failed(kind))
    return failure();
  ActivationScaling s;
  s.kind = *kind;
  if (*kind == hq::ActScaling::Group) {
    int64_t k[1];
    if (failed(parseAngledInts(parser, "group", k)))
      return failure();
    s.k = k[0];
  }
  return s;
}

void mlir::humming::printActScaling(AsmPrinter &printer,
                                    const ActivationScaling &s) {
  printer << hq::toString(s.kind);
  if (s.kind == hq::ActScaling::Group)
    printer << "<" << s.k << ">";
}

FailureOr<MRange> mlir::humming::parseMRange(AsmParser &parser) {
  MRange r;
  if (parser.parseLSquare())
    return failure();
  llvm::SMLoc loc = parser.getCurrentLocation();
  if (parser.parseInteger(r.lo))
    return failure();
  if (r.lo < 1)
    return parser.emitError(loc, "expected the M range to start at >= 1, got ")
           << r.lo;
  if (parser.parseComma())
    return failure();
  loc = parser.getCurrentLocation();
  if (succeeded(parser.parseOptionalKeyword("inf"))) {
    r.hi = 0;
  } else {
    if (parser.parseInteger(r.hi))
      return failure();
    if (r.hi < r.lo)
      return parser.emitError(loc, "expected the M range end >= ")
             << r.lo << " (or 'inf'), got " << r.hi;
  }
  if (parser.parseRSquare())
    return failure();
  return r;
}

void mlir::humming::printMRange(AsmPrinter &printer, const MRange &r) {
  printer << "[" << r.lo << ", ";
  if (r.hi == 0)
    printer << "inf";
  else
    printer << r.hi;
  printer << "]";
}

FailureOr<Dim3> mlir::humming::parseDim3(AsmParser &parser) {
  Dim3 d;
  if (parser.parseLSquare() || parser.parseInteger(d.m) ||
      parser.parseComma() || parser.parseInteger(d.n) || parser.parseComma() ||
      parser.parseInteger(d.k) || parser.parseRSquare())
    return failure();
  return d;
}

void mlir::humming::printDim3(AsmPrinter &printer, const Dim3 &d) {
  printer << "[" << d.m << ", " << d.n << ", " << d.k << "]";
}

namespace {
struct TmaName {
  uint32_t bit;
  const char *name;
};
constexpr TmaName kTmaNames[] = {{hq::TmaA, "a"},
                                 {hq::TmaB, "b"},
                                 {hq::TmaC, "c"},
                                 {hq::TmaScales, "scales"},
                                 {hq::TmaZeroPoints, "zero_points"},
                                 {hq::TmaBias, "bias"}};
} // namespace

FailureOr<uint32_t> mlir::humming::parseTmaMask(AsmParser &parser) {
  uint32_t mask = 0;
  auto parseOne = [&]() -> ParseResult {
    llvm::SMLoc loc = parser.getCurrentLocation();
    StringRef keyword;
    if (parser.parseKeyword(&keyword))
      return failure();
    for (const TmaName &t : kTmaNames) {
      if (keyword != t.name)
        continue;
      if (mask & t.bit)
        return parser.emitError(loc, "operand '") << keyword
                                                  << "' is listed twice";
      mask |= t.bit;
      return success();
    }
    return parser.emitError(loc, "expected a TMA operand 'a', 'b', 'c', "
                                 "'scales', 'zero_points' or 'bias', got '")
           << keyword << "'";
  };
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseOne))
    return failure();
  return mask;
}

void mlir::humming::printTmaMask(AsmPrinter &printer, uint32_t mask) {
  printer << "[";
  bool first = true;
  for (const TmaName &t : kTmaNames) {
    if (!(mask & t.bit))
      continue;
    printer << (first ? "" : ", ") << t.name;
    first = false;
  }
  printer << "]";
}

#define GET_ATTRDEF_CLASSES
#include "Humming/Dialect/Humming/IR/HummingAttrs.cpp.inc"

void HummingDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "Humming/Dialect/Humming/IR/HummingAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Conversions to the host structs
//===----------------------------------------------------------------------===//

/// Element type of a schema, or a diagnostic for types Humming does not know.
static FailureOr<hq::ScalarType>
scalarOf(function_ref<InFlightDiagnostic()> emitError, Type t,
         StringRef what) {
  if (std::optional<hq::ScalarType> s = toScalarType(t))
    return *s;
  return emitError() << "expected a supported " << what << " type, got " << t;
}

static hq::WeightSchema makeWeightSchema(hq::ScalarType type,
                                         hq::ScalarType scale,
                                         ScaleGranularity granularity,
                                         hq::ZeroPointKind zeroPoint,
                                         bool globalScale, bool bias,
                                         int64_t experts, int64_t padN,
                                         int64_t padK,
                                         hq::SourceFormat format) {
  hq::WeightSchema w;
  w.type = type;
  w.scaleType = scale;
  w.granularity = granularity.kind;
  w.groupN = granularity.n;
  w.groupK = granularity.k;
  w.zeroPoint = zeroPoint;
  w.globalScale = globalScale;
  w.bias = bias;
  w.experts = experts;
  w.padN = padN;
  w.padK = padK;
  w.format = format;
  return w;
}

hq::WeightSchema WeightSchemaAttr::toHost() const {
  return makeWeightSchema(*toScalarType(getType()), *toScalarType(getScale()),
                          getGranularity(), getZeroPoint(), getGlobalScale(),
                          getBias(), getExperts(), getPadN(), getPadK(),
                          getFormat());
}

WeightSchemaAttr
WeightSchemaAttr::fromHost(function_ref<InFlightDiagnostic()> emitError,
                           MLIRContext *ctx, const hq::WeightSchema &w) {
  return getChecked(emitError, ctx, toMLIRType(ctx, w.type),
                    toMLIRType(ctx, w.scaleType),
                    ScaleGranularity{w.granularity, w.groupN, w.groupK},
                    w.zeroPoint, w.globalScale, w.bias, w.experts, w.padN,
                    w.padK, w.format);
}

LogicalResult WeightSchemaAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, Type type, Type scale,
    ScaleGranularity granularity, hq::ZeroPointKind zeroPoint, bool globalScale,
    bool bias, int64_t experts, int64_t padN, int64_t padK,
    hq::SourceFormat format) {
  FailureOr<hq::ScalarType> t = scalarOf(emitError, type, "weight element");
  if (failed(t))
    return failure();
  FailureOr<hq::ScalarType> s = scalarOf(emitError, scale, "scale");
  if (failed(s))
    return failure();
  hq::WeightSchema w =
      makeWeightSchema(*t, *s, granularity, zeroPoint, globalScale, bias,
                       experts, padN, padK, format);
  if (hq::Diag d = hq::verifyWeightSchema(w))
    return emitError() << *d;
  return success();
}

hq::InputSchema InputSchemaAttr::toHost() const {
  hq::InputSchema in;
  in.type = *toScalarType(getType());
  in.scaling = getScaling().kind;
  in.groupK = getScaling().k;
  return in;
}

InputSchemaAttr
InputSchemaAttr::fromHost(function_ref<InFlightDiagnostic()> emitError,
                          MLIRContext *ctx, const hq::InputSchema &in) {
  return getChecked(emitError, ctx, toMLIRType(ctx, in.type),
                    ActivationScaling{in.scaling, in.groupK});
}

LogicalResult
InputSchemaAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        Type type, ActivationScaling scaling) {
  FailureOr<hq::ScalarType> t = scalarOf(emitError, type, "activation");
  if (failed(t))
    return failure();
  hq::InputSchema in;
  in.type = *t;
  in.scaling = scaling.kind;
  in.groupK = scaling.k;
  if (hq::Diag d = hq::verifyInputSchema(in))
    return emitError() << *d;
  return success();
}

hq::ComputeOptions ComputeAttr::toHost() const {
  hq::ComputeOptions c;
  c.gemm = getGemm();
  c.f16Accumulation = getF16Accumulation();
  c.batchInvariant = getBatchInvariant();
  return c;
}

ComputeAttr ComputeAttr::fromHost(MLIRContext *ctx,
                                  const hq::ComputeOptions &c) {
  return get(ctx, c.gemm, c.f16Accumulation, c.batchInvariant);
}

LogicalResult ComputeAttr::verify(function_ref<InFlightDiagnostic()>,
                                  hq::GemmType, bool, bool) {
  // Every combination is well-formed on its own; f16 accumulation depends on
  // the schemas and is checked on the ops.
  return success();
}

/// Parses a chip name with a diagnostic that lists the known chips.
static FailureOr<hq::Chip>
parseChipName(function_ref<InFlightDiagnostic()> emitError, StringRef name) {
  if (std::optional<hq::Chip> chip = hq::Chip::parse(name))
    return *chip;
  return emitError() << "expected a chip among " << hq::knownChipNames()
                     << ", got '" << name << "'";
}

hq::Chip LayoutAttr::getHostChip() const {
  return *hq::Chip::parse(getChip());
}

LogicalResult LayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 hq::MmaKind mma, StringRef chipName) {
  FailureOr<hq::Chip> chip = parseChipName(emitError, chipName);
  if (failed(chip))
    return failure();
  if (!chip->supportsMma(mma))
    return emitError() << "expected an MMA family available on " << chipName
                       << ", got " << hq::toString(mma);
  return success();
}

hq::TileConfig TileConfigAttr::toHost() const {
  hq::TileConfig t;
  t.mMin = getM().lo;
  t.mMax = getM().hi;
  t.blockM = getBlock().m;
  t.blockN = getBlock().n;
  t.blockK = getBlock().k;
  t.warpM = getWarp().m;
  t.warpN = getWarp().n;
  t.warpK = getWarp().k;
  t.stages = getStages();
  t.mma = getMma();
  t.warpSpecialized = getWarpSpecialized();
  t.streamK = getStreamK();
  t.mbarrier = getMbarrier();
  t.cpAsync = getCpAsync();
  t.tma = getTma();
  t.multicastA = getMulticastA();
  t.multicastB = getMulticastB();
  t.ctasPerSm = getCtasPerSm();
  t.gridCap = getGridCap();
  t.writeSplits = getWriteSplits();
  t.splitK = getSplitK();
  t.blockCopies = getBlockCopies();
  t.scaleAfterMma = getScaleAfterMma();
  t.clusterSplit = getClusterSplit();
  t.workspaceSplit = getWorkspaceSplit();
  t.cooperativeSplit = getCooperativeSplit();
  t.wgmmaInFlight = getWgmmaInFlight();
  t.l2Prefetch = getL2Prefetch();
  t.shareActivations = getShareActivations();
  t.rasterM = getRasterM();
  t.persistent = getPersistent();
  t.promotionInterval = getPromotionInterval();
  t.weightMap = getWeightMap();
  t.stagedWeights = getStagedWeights();
  return t;
}

TileConfigAttr
TileConfigAttr::fromHost(function_ref<InFlightDiagnostic()> emitError,
                         MLIRContext *ctx, const hq::TileConfig &t) {
  return getChecked(
      emitError, ctx, MRange{t.mMin, t.mMax},
      Dim3{t.blockM, t.blockN, t.blockK}, Dim3{t.warpM, t.warpN, t.warpK},
      t.stages, t.mma, t.warpSpecialized, t.streamK, t.mbarrier, t.cpAsync,
      t.tma, t.multicastA, t.multicastB, t.ctasPerSm, t.gridCap, t.writeSplits,
      t.splitK, t.blockCopies, t.scaleAfterMma, t.clusterSplit,
      t.workspaceSplit, t.cooperativeSplit, t.wgmmaInFlight, t.l2Prefetch,
      t.shareActivations, t.rasterM, t.persistent, t.promotionInterval,
      t.weightMap, t.stagedWeights);
}

LogicalResult TileConfigAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, MRange m, Dim3 block,
    Dim3 warp, int64_t stages, hq::MmaKind mma, bool warpSpecialized,
    bool streamK, bool mbarrier, bool cpAsync, uint32_t tma, int64_t multicastA,
    int64_t multicastB, int64_t ctasPerSm, int64_t gridCap, int64_t writeSplits,
    int64_t splitK, bool blockCopies, bool scaleAfterMma, bool clusterSplit,
    bool workspaceSplit, bool cooperativeSplit, int64_t wgmmaInFlight,
    int64_t l2Prefetch, bool shareActivations, int64_t rasterM,
    int64_t persistent, int64_t promotionInterval, bool weightMap,
    bool stagedWeights) {
  hq::TileConfig t;
  t.mMin = m.lo;
  t.mMax = m.hi;
  t.blockM = block.m;
  t.blockN = block.n;
  t.blockK = block.k;
  t.warpM = warp.m;
  t.warpN = warp.n;
  t.warpK = warp.k;
  t.stages = stages;
  t.mma = mma;
  t.warpSpecialized = warpSpecialized;
  t.streamK = streamK;
  t.mbarrier = mbarrier;
  t.cpAsync = cpAsync;
  t.tma = tma;
  t.multicastA = multicastA;
  t.multicastB = multicastB;
  t.ctasPerSm = ctasPerSm;
  t.gridCap = gridCap;
  t.writeSplits = writeSplits;
  t.splitK = splitK;
  t.blockCopies = blockCopies;
  t.scaleAfterMma = scaleAfterMma;
  t.clusterSplit = clusterSplit;
  t.workspaceSplit = workspaceSplit;
  t.cooperativeSplit = cooperativeSplit;
  t.wgmmaInFlight = wgmmaInFlight;
  t.l2Prefetch = l2Prefetch;
  t.shareActivations = shareActivations;
  t.rasterM = rasterM;
  t.persistent = persistent;
  t.promotionInterval = promotionInterval;
  t.weightMap = weightMap;
  t.stagedWeights = stagedWeights;
  if (hq::Diag d = hq::verifyTileConfig(t))
    return emitError() << *d;
  return success();
}

//===----------------------------------------------------------------------===//
// #humming.target
//===----------------------------------------------------------------------===//

hq::Chip TargetAttr::getHostChip() const {
  return *hq::Chip::parse(getChip());
}

hq::DeviceInfo TargetAttr::toHost() const {
  hq::DeviceInfo d;
  d.name = getDevice().str();
  d.chip = getChip().str();
  d.smCount = getSms();
  d.memoryBandwidthGBs = getBandwidth();
  d.smemPerSmKB = getSmem();
  d.l2MB = getL2();
  d.tflopsF16 = getF16();
  d.tflopsBF16 = getBf16();
  d.tflopsFP8 = getFp8();
  d.tflopsINT8 = getInt8();
  d.tflopsINT4 = getInt4();
  d.tflopsFP4 = getFp4();
  return d;
}

TargetAttr TargetAttr::getKnown(function_ref<InFlightDiagnostic()> emitError,
                                MLIRContext *ctx, StringRef device,
                                StringRef chipName, unsigned ptx) {
  const hq::DeviceInfo *d = hq::lookupDevice(device);
  if (!d) {
    emitError() << "unknown device '" << device << "'; expected one of "
                << hq::knownDeviceNames();
    return {};
  }
  std::string chip = chipName.empty() ? d->chip : chipName.str();
  if (!ptx)
    if (std::optional<hq::Chip> c = hq::Chip::parse(chip))
      ptx = c->minPtxVersion();
  return getChecked(emitError, ctx, d->name, chip, ptx, d->smCount,
                    d->memoryBandwidthGBs, d->smemPerSmKB, d->l2MB,
                    d->tflopsF16, d->tflopsBF16, d->tflopsFP8, d->tflopsINT8,
                    d->tflopsINT4, d->tflopsFP4);
}

namespace {
/// The fields of #humming.target in printing order.
enum class TargetField {
  Device, Chip, Ptx, Sms, Bandwidth, Smem, L2, F16, BF16, FP8, INT8, INT4, FP4
};
struct TargetFieldName {
  TargetField field;
  const char *name;
};
constexpr TargetFieldName kTargetFields[] = {
    {TargetField::Device, "device"}, {TargetField::Chip, "chip"},
    {TargetField::Ptx, "ptx"},       {TargetField::Sms, "sms"},
    {TargetField::Bandwidth, "bandwidth"}, {TargetField::Smem, "smem"},
    {TargetField::L2, "l2"},         {TargetField::F16, "f16"},
    {TargetField::BF16, "bf16"},     {TargetField::FP8, "fp8"},
    {TargetField::INT8, "int8"},     {TargetField::INT4, "int4"},
    {TargetField::FP4, "fp4"}};
} // namespace

Attribute TargetAttr::parse(AsmParser &parser, Type) {
  llvm::SMLoc startLoc = parser.getCurrentLocation();
  std::string device, chip;
  std::optional<int64_t> ptx, sms, smem, l2;
  std::optional<double> bandwidth, tf[6];
  llvm::StringSet<> seen;

  auto parseField = [&]() -> ParseResult {
    llvm::SMLoc loc = parser.getCurrentLocation();
    StringRef key;
    if (parser.parseKeyword(&key))
      return failure();
    const TargetFieldName *field = nullptr;
    for (const TargetFieldName &f : kTargetFields)
      if (key == f.name)
        field = &f;
    if (!field) {
      std::string names;
      for (const TargetFieldName &f : kTargetFields)
        names += (names.empty() ? "" : ", ") + std::string(f.name);
      return parser.emitError(loc, "unknown #humming.target field '")
             << key << "'; expected one of " << names;
    }
    if (!seen.insert(key).second)
      return parser.emitError(loc, "field '") << key << "' is given twice";
    if (parser.parseEqual())
      return failure();
    llvm::SMLoc valueLoc = parser.getCurrentLocation();
    auto parsePositiveInt = [&](std::optional<int64_t> &out) -> ParseResult {
      int64_t v;
      if (parser.parseInteger(v))
        return failure();
      if (v <= 0)
        return parser.emitError(valueLoc, "expected a positive '")
               << key << "', got " << v;
      out = v;
      return success();
    };
    auto parseNonNegFloat = [&](std::optional<double> &out) -> ParseResult {
      double v;
      if (parser.parseFloat(v))
        return failure();
      if (!(v >= 0))
        return parser.emitError(valueLoc, "expected a non-negative '")
               << key << "', got " << formatReal(v);
      out = v;
      return success();
    };
    switch (field->field) {
    case TargetField::Device:
      return parser.parseString(&device);
    case TargetField::Chip:
      return parser.parseString(&chip);
    case TargetField::Ptx:
      return parsePositiveInt(ptx);
    case TargetField::Sms:
      return parsePositiveInt(sms);
    case TargetField::Smem:
      return parsePositiveInt(smem);
    case TargetField::L2:
      return parsePositiveInt(l2);
    case TargetField::Bandwidth:
      if (failed(parseNonNegFloat(bandwidth)))
        return failure();
      if (*bandwidth <= 0)
        return parser.emitError(valueLoc, "expected a positive 'bandwidth'");
      return success();
    case TargetField::F16:
    case TargetField::BF16:
    case TargetField::FP8:
    case TargetField::INT8:
    case TargetField::INT4:
    case TargetField::FP4:
      return parseNonNegFloat(
          tf[int(field->field) - int(TargetField::F16)]);
    }
    return failure();
  };
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::LessGreater,
                                     parseField))
    return {};

  // Start from the known device, then apply the explicit fields.
  hq::DeviceInfo base;
  if (!device.empty()) {
    if (const hq::DeviceInfo *known = hq::lookupDevice(device)) {
      base = *known;
    } else if (!chip.size() || !sms || !bandwidth || !smem || !l2 || !tf[0]) {
      parser.emitError(startLoc, "unknown device '")
          << device << "' (known: " << hq::knownDeviceNames()
          << "); an unknown device must give chip, sms, bandwidth, smem, l2 "
             "and at least f16";
      return {};
    } else {
      base.name = device;
    }
  } else if (chip.empty() || !sms || !bandwidth || !smem || !l2 || !tf[0]) {
    parser.emitError(startLoc,
                     "expected a known 'device' or the fields chip, sms, "
                     "bandwidth, smem, l2 and at least f16");
    return {};
  }
  if (!chip.empty())
    base.chip = chip;
  if (sms)
    base.smCount = *sms;
  if (bandwidth)
    base.memoryBandwidthGBs = *bandwidth;
  if (smem)
    base.smemPerSmKB = *smem;
  if (l2)
    base.l2MB = *l2;
  double *tfOut[6] = {&base.tflopsF16,  &base.tflopsBF16, &base.tflopsFP8,
                      &base.tflopsINT8, &base.tflopsINT4, &base.tflopsFP4};
  for (int i = 0; i < 6; ++i)
    if (tf[i])
      *tfOut[i] = *tf[i];

  unsigned ptxVersion = ptx ? unsigned(*ptx) : 0;
  if (!ptx)
    if (std::optional<hq::Chip> c = hq::Chip::parse(base.chip))
      ptxVersion = c->minPtxVersion();
  return getChecked([&] { return parser.emitError(startLoc); },
                    parser.getContext(), base.name, base.chip, ptxVersion,
                    base.smCount, base.memoryBandwidthGBs, base.smemPerSmKB,
                    base.l2MB, base.tflopsF16, base.tflopsBF16, base.tflopsFP8,
                    base.tflopsINT8, base.tflopsINT4, base.tflopsFP4);
}

void TargetAttr::print(AsmPrinter &printer) const {
  const hq::DeviceInfo *known =
      getDevice().empty() ? nullptr : hq::lookupDevice(getDevice());
  std::optional<hq::Chip> chip = hq::Chip::parse(getChip());
  bool first = true;
  auto sep = [&]() -> AsmPrinter & {
    printer << (first ? "" : ", ");
    first = false;
    return printer;
  };
  auto printFloat = [&](const char *name, double v, double ref) {
    if (!known || v != ref) {
      sep() << name << " = ";
      printer.printFloat(llvm::APFloat(v));
    }
  };
  printer << "<";
  if (!getDevice().empty()) {
    sep() << "device = ";
    printer.printString(getDevice());
  }
  if (!known || getChip() != known->chip) {
    sep() << "chip = ";
    printer.printString(getChip());
  }
  if (!chip || getPtx() != chip->minPtxVersion())
    sep() << "ptx = " << getPtx();
  if (!known || getSms() != known->smCount)
    sep() << "sms = " << getSms();
  printFloat("bandwidth", getBandwidth(),
             known ? known->memoryBandwidthGBs : 0);
  if (!known || getSmem() != known->smemPerSmKB)
    sep() << "smem = " << getSmem();
  if (!known || getL2() != known->l2MB)
    sep() << "l2 = " << getL2();
  printFloat("f16", getF16(), known ? known->tflopsF16 : 0);
  printFloat("bf16", getBf16(), known ? known->tflopsBF16 : 0);
  printFloat("fp8", getFp8(), known ? known->tflopsFP8 : 0);
  printFloat("int8", getInt8(), known ? known->tflopsINT8 : 0);
  printFloat("int4", getInt4(), known ? known->tflopsINT4 : 0);
  printFloat("fp4", getFp4(), known ? known->tflopsFP4 : 0);
  printer << ">";
}

LogicalResult TargetAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 StringRef device, StringRef chipName,
                                 unsigned ptx, int64_t sms, Real bandwidth,
                                 int64_t smem, int64_t l2, Real f16, Real bf16,
                                 Real fp8, Real int8, Real int4, Real fp4) {
  FailureOr<hq::Chip> chip = parseChipName(emitError, chipName);
  if (failed(chip))
    return failure();
  if (ptx < chip->minPtxVersion() || ptx > hq::kMaxPtxVersion)
    return emitError() << "expected a PTX ISA version between "
                       << chip->minPtxVersion() << " and "
                       << hq::kMaxPtxVersion << " for " << chipName << ", got "
                       << ptx;
  if (sms <= 0 || smem <= 0 || l2 <= 0 || !(bandwidth.value > 0))
    return emitError() << "expected positive sms, bandwidth, smem and l2, got "
                       << sms << ", " << formatReal(bandwidth) << ", " << smem << ", "
                       << l2;
  int64_t maxSmemKB = chip->maxSharedMemoryPerBlock() / 1024;
  if (smem > maxSmemKB)
    return emitError() << "expected smem <= " << maxSmemKB << " KiB on "
                       << chipName << ", got " << smem;
  for (double v : {f16.value, bf16.value, fp8.value, int8.value,
                   int4.value, fp4.value})
    if (!(v >= 0))
      return emitError() << "expected non-negative throughputs, got "
                         << formatReal(v);
  if (!(f16.value > 0))
    return emitError() << "expected a positive f16 throughput, got "
                       << formatReal(f16);
  return success();
}

TargetAttr mlir::humming::lookupTarget(Operation *op) {
  for (Operation *cur = op; cur; cur = cur->getParentOp())
    if (auto t = cur->getAttrOfType<TargetAttr>(HummingDialect::kTargetAttrName))
      return t;
  return {};
}
