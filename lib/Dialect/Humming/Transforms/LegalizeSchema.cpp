//===- LegalizeSchema.cpp - humming-legalize-schema -----------------------===//
//
// Rewrites what the kernels cannot run into what they can: weights in a
// source format become canonical function arguments (converted once on the
// host), and activations the target cannot multiply fall back to the 16-bit
// values they were quantized from. Every change is recorded on the op.
//
//===----------------------------------------------------------------------===//

#include "Humming/Dialect/Humming/IR/HummingOps.h"
#include "Humming/Dialect/Humming/Transforms/Passes.h"
#include "Humming/Quant/PreparedLayout.h"
#include "Humming/Target/ArchInfo.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::humming {
#define GEN_PASS_DEF_HUMMINGLEGALIZESCHEMAPASS
#include "Humming/Dialect/Humming/Transforms/Passes.h.inc"
} // namespace mlir::humming

using namespace mlir;
using namespace mlir::humming;
namespace hq = ::humming;

namespace {

/// Appends `reason` to the op's humming.legalized list.
void record(Operation *op, StringRef reason) {
  Builder b(op->getContext());
  SmallVector<Attribute> list;
  if (auto old = op->getAttrOfType<ArrayAttr>(HummingDialect::kLegalizedAttrName))
    list.append(old.begin(), old.end());
  list.push_back(b.getStringAttr(reason));
  op->setAttr(HummingDialect::kLegalizedAttrName, b.getArrayAttr(list));
}

/// Weights in a source format: the weight-side operands become canonical
/// arguments of the enclosing function, marked for the host conversion.
LogicalResult legalizeFormat(GemmOp op) {
  WeightSchemaAttr schema = op.getWeightSchema();
  hq::WeightSchema w = schema.toHost();
  if (w.format == hq::SourceFormat::Canonical)
    return success();
  auto func = op->getParentOfType<func::FuncOp>();
  if (!func || func.isExternal())
    return op.emitOpError() << "expected to be inside a func.func whose "
                               "arguments carry the "
                            << hq::toString(w.format)
                            << " weights (the caller converts them)";
  // The argument types change: callers in this module would no longer
  // match (the host that calls the compiled function converts instead).
  if (auto module = func->getParentOfType<ModuleOp>();
      module && !SymbolTable::symbolKnownUseEmpty(func, module))
    return op.emitOpError() << "expected @" << func.getName()
                            << " to have no callers in the module: its "
                            << hq::toString(w.format)
                            << " arguments become canonical ones";
  hq::WeightSchema canonical = w;
  canonical.format = hq::SourceFormat::Canonical;
  auto inType = cast<MemRefType>(op.getInput().getType());
  auto outType = cast<MemRefType>(op.getOutput().getType());
  const int64_t n = outType.getDimSize(1) + w.padN;
  const int64_t k = inType.getDimSize(1) + w.padK;
  hq::InputSchema in = op.getInputSchema().toHost();

  struct Operand {
    Value value;
    hq::WeightOperand which;
  };
  SmallVector<Operand> operands = {{op.getWeight(), hq::WeightOperand::Weight}};
  if (Value s = op.getScales())
    operands.push_back({s, hq::WeightOperand::Scales});
  if (Value z = op.getZeroPoints())
    operands.push_back({z, hq::WeightOperand::ZeroPoints});

  // Check everything before changing anything.
  SmallVector<std::pair<BlockArgument, MemRefType>> changes;
  for (const Operand &o : operands) {
    const char *name = hq::toString(o.which);
    auto arg = dyn_cast<BlockArgument>(o.value);
    if (!arg || arg.getOwner() != &func.getBody().front())
      return op.emitOpError()
             << "expected the " << hq::toString(w.format) << " '" << name
             << "' to be an argument of @" << func.getName()
             << " (the caller converts it to the canonical layout on the "
                "host), got a value defined by "
             << (arg ? StringRef("a nested block")
                     : o.value.getDefiningOp()->getName().getStringRef());
    if (!o.value.hasOneUse())
      return op.emitOpError()
             << "expected the " << hq::toString(w.format) << " '" << name
             << "' (argument #" << arg.getArgNumber()
             << ") to be used only by this op: its type changes to the "
                "canonical layout";
    // The op verifier's padding rules (K a multiple of 32 for 16-bit
    // activations, N*b of 32 for packed zero points) make every canonical
    // shape exist; this guards IR that skipped verification (test:
    // legalize-schema-unverified.mlir) and a verifier change.
    hq::ShapeOrDiag shape = hq::expectedShape(o.which, canonical, in, n, k,
                                              /*prepared=*/false);
    if (shape.error)
      return op.emitOpError() << "cannot hold '" << name
                              << "' in the canonical layout: " << *shape.error;
    auto type = cast<MemRefType>(o.value.getType());
    changes.push_back(
        {arg, MemRefType::get(shape.shape, type.getElementType())});
  }

  MLIRContext *ctx = op.getContext();
  std::string args;
  for (auto [i, change] : llvm::enumerate(changes)) {
    auto [arg, type] = change;
    arg.setType(type);
    unsigned index = arg.getArgNumber();
    func.setArgAttr(index, HummingDialect::kSourceSchemaAttrName, schema);
    func.setArgAttr(index, HummingDialect::kOperandAttrName,
                    WeightOperandAttr::get(ctx, operands[i].which));
    args += (args.empty() ? "#" : ", #") + std::to_string(index);
  }
  func.setFunctionType(FunctionType::get(
      ctx, func.getBody().front().getArgumentTypes(),
      func.getFunctionType().getResults()));
  op.setWeightSchemaAttr(WeightSchemaAttr::fromHost(
      [&] { return op.emitOpError(); }, ctx, canonical));
  record(op, (Twine("weights: ") + hq::toString(w.format) +
              " -> canonical; the caller converts arguments " + args +
              " on the host (humming::sourceToCanonical)")
                 .str());
  return success();
}

template <typename OpT>
LogicalResult prepareWeightsOnDevice(OpT op, std::optional<hq::Chip> chip,
                                     StringRef whose);

/// 8- and 4-bit activations: over canonical weights that a kernel of the
/// chip takes once prepared, the weights are prepared on the device
/// (prepareWeightsOnDevice); where the target cannot run them, the GEMM
/// falls back to the 16-bit values they were quantized from.
LogicalResult legalizeActivations(GemmOp op, std::optional<hq::Chip> chip) {
  hq::InputSchema in = op.getInputSchema().toHost();
  if (in.type.bits == 16)
    return success();
  std::string reason;
  unsigned minSm = hq::minSmForActivation(in.type);
  // 8-bit activations stay where the k32 kernels take them: prepared
  // weights that the layout holds with them, on sm_90a (wgmma) or on a chip
  // with the m16n8k32 MMA of the type (sm_80 for si8, sm_89 for fp8; the
  // mma_sync kernels also need 16-bit group scales).
  // si4: the m16n8k64 s4 kernels (sm_80 and later; prepared for them).
  std::optional<std::string> layoutProblem;
  // Canonical weights are prepared on the device for them (unless a
  // humming.quantize of 16-bit values wrote the activations: those values
  // run over the canonical weights as they are, no repack per run).
  QuantizeOp quantize = findActivationQuantize(op, op.getInput());
  if (chip && chip->sm >= std::max(80u, minSm) &&
      (op.getLayoutAttr() || !quantize) &&
      (in.type.bits == 8 || hq::layout::computesInFourBits(in.type))) {
    auto inType = cast<MemRefType>(op.getInput().getType());
    auto outType = cast<MemRefType>(op.getOutput().getType());
    hq::WeightSchema w = op.getWeightSchema().toHost();
    hq::ComputeOptions compute;
    if (ComputeAttr c = op.getComputeAttr())
      compute = c.toHost();
    layoutProblem = hq::preparedKernelsSupport(
        w, in, compute, outType.getDimSize(1) + w.padN,
        inType.getDimSize(1) + w.padK, chip);
    if (!layoutProblem)
      return prepareWeightsOnDevice(op, chip, "the layer's");
  }
  const bool narrow = hq::layout::computesInEightBits(in.type) ||
                      hq::layout::computesInFourBits(in.type);
  const std::string width = std::to_string(in.type.bits) + "-bit";
  if (chip && chip->sm < minSm)
    reason = chip->str() + " has no " + in.type.str() +
             " tensor cores (needs sm_" + std::to_string(minSm) + ")";
  else if (layoutProblem)
    reason = *layoutProblem;
  else if (!narrow)
    reason = "no kernel takes " + in.type.str() + " activations yet";
  else if (!chip)
    reason = "the kernels of " + width +
             " activations are chosen per chip and the module has none (" +
             in.type.str() +
             " activations stay with a humming.target or chip=)";
  else if (chip->sm >= 80)
    reason = "the canonical-weight kernel takes 16-bit activations only (" +
             in.type.str() + " activations run over prepared weights: "
             "'layout')";
  else
    reason = "the kernels of " + width +
             " activations need sm_80 or newer (m16n8k32 / m16n8k64), got " +
             chip->str();

  // Prepared weights are laid out for their activations' width
  // (layout::preparedRow, the [K / kPack, ...] shape): the 16-bit kernels
  // cannot read weights prepared for 8-bit activations.
  if (op.getLayoutAttr())
    return op.emitOpError()
           << reason << "; the weights are prepared for " << in.type.str()
           << " activations, which the 16-bit fallback cannot read: prepare "
              "them for 16-bit activations or pass canonical weights";
  if (!quantize)
    return op.emitOpError()
           << reason << "; expected the " << in.type.str()
           << " activations to be written by a humming.quantize of 16-bit "
              "values earlier in the block, to use those values instead";
  Type srcElem = cast<MemRefType>(quantize.getSource().getType()).getElementType();
  if (!srcElem.isF16() && !srcElem.isBF16())
    return op.emitOpError() << reason
                            << "; expected the quantized activations' source "
                               "to be f16 or bf16 to fall back to, got "
                            << srcElem;
  hq::InputSchema fallback{srcElem.isF16() ? hq::ScalarType::f16()
                                           : hq::ScalarType::bf16(),
                           hq::ActScaling::None, 0};
  hq::WeightSchema w = op.getWeightSchema().toHost();
  hq::ComputeOptions compute;
  if (ComputeAttr c = op.getComputeAttr())
    compute = c.toHost();
  auto outType = cast<MemRefType>(op.getOutput().getType());
  std::optional<hq::ScalarType> out =
      outType.getElementType().isBF16() ? hq::ScalarType::bf16()
                                        : hq::ScalarType::f16();
  if (hq::Diag d = hq::verifyCompatibility(w, fallback, compute, out))
    return op.emitOpError() << reason << "; the fallback to "
                            << fallback.type.str()
                            << " activations is not possible: " << *d;

  MLIRContext *ctx = op.getContext();
  Value quantized = op.getInput();
  op.getInputMutable().assign(quantize.getSource());
  op.getInputScaleMutable().clear();
  op.setInputSchemaAttr(InputSchemaAttr::fromHost(
      [&] { return op.emitOpError(); }, ctx, fallback));
  record(op, "activations: " + in.type.str() + " -> " + fallback.type.str() +
                 " (the values humming.quantize read): " + reason);
  // Nothing else reads the quantized activations: drop the quantize.
  if (llvm::all_of(quantized.getUsers(),
                   [&](Operation *u) { return u == quantize.getOperation(); }))
    quantize.erase();
  return success();
}

/// Canonical weights where the kernels read prepared ones (MoE weights;
/// a humming.gemm's with 8- or 4-bit activations): each of the weight, the
/// scales and the zero points is rewritten by a humming.repack on the
/// device into a new buffer right before the op (and freed right after
/// it); the op takes the buffers and the layout (bias and global scale stay
/// as they are: the prepared layout keeps them). Without a chip the op
/// stays as it is (humming-lower-to-nvvm says what it needs).
template <typename OpT>
LogicalResult prepareWeightsOnDevice(OpT op, std::optional<hq::Chip> chip,
                                     StringRef whose) {
  if (op.getLayoutAttr() || !chip)
    return success();
  hq::WeightSchema w = op.getWeightSchema().toHost();
  hq::InputSchema in = op.getInputSchema().toHost();
  auto inType = cast<MemRefType>(op.getInput().getType());
  auto outType = cast<MemRefType>(op.getOutput().getType());
  const int64_t n = outType.getDimSize(1), k = inType.getDimSize(1);
  const int64_t np = n + w.padN, kp = k + w.padK;
  if (hq::Diag d = hq::layout::supports(w, in, np, kp))
    return op.emitOpError()
           << "cannot prepare " << whose << " canonical weights for "
           << chip->str() << " on the device: " << *d;
  MLIRContext *ctx = op.getContext();
  auto layout = LayoutAttr::get(ctx, hq::MmaKind::MmaSync, chip->str());
  struct Operand {
    OpOperand *use;
    hq::WeightOperand which;
  };
  SmallVector<Operand> operands = {
      {&op.getWeightMutable(), hq::WeightOperand::Weight}};
  if (!op.getScalesMutable().empty())
    operands.push_back({&op.getScalesMutable()[0], hq::WeightOperand::Scales});
  if (!op.getZeroPointsMutable().empty())
    operands.push_back(
        {&op.getZeroPointsMutable()[0], hq::WeightOperand::ZeroPoints});
  // Every prepared shape first: nothing changes unless all exist.
  SmallVector<MemRefType> prepared;
  for (const Operand &o : operands) {
    hq::ShapeOrDiag s = hq::expectedShape(o.which, w, in, np, kp,
                                          /*prepared=*/true);
    if (s.error)
      return op.emitOpError() << "cannot hold '" << hq::toString(o.which)
                              << "' in the prepared layout: " << *s.error;
    // (Prepared codes are i32 words, also of unpacked 8-bit ones.)
    Type elem = o.which == hq::WeightOperand::Weight
                    ? Type(IntegerType::get(op.getContext(), 32))
                    : cast<MemRefType>(o.use->get().getType()).getElementType();
    prepared.push_back(MemRefType::get(s.shape, elem));
  }
  OpBuilder b(op);
  Location loc = op.getLoc();
  SmallVector<Value> buffers;
  for (auto [o, type] : llvm::zip(operands, prepared)) {
    Value buffer = memref::AllocOp::create(b, loc, type);
    RepackOp::create(b, loc, o.use->get(), buffer,
                     WeightOperandAttr::get(ctx, o.which), uint64_t(n),
                     uint64_t(k), op.getWeightSchemaAttr(),
                     op.getInputSchemaAttr(), layout);
    o.use->set(buffer);
    buffers.push_back(buffer);
  }
  op.setLayoutAttr(layout);
  b.setInsertionPointAfter(op);
  for (Value buffer : buffers)
    memref::DeallocOp::create(b, loc, buffer);
  record(op, "weights: canonical -> prepared for " + chip->str() +
                 " by humming.repack on the device before each run (a "
                 "caller that keeps the weights prepares them once and "
                 "passes them with 'layout')");
  return success();
}

struct LegalizeSchemaPass
    : public mlir::humming::impl::HummingLegalizeSchemaPassBase<
          LegalizeSchemaPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<hq::Chip> target;
    if (TargetAttr t = lookupTarget(module))
      target = t.getHostChip();
    if (!chip.empty()) {
      std::optional<hq::Chip> parsed = hq::Chip::parse(chip);
      if (!parsed) {
        module.emitError() << "humming-legalize-schema: expected a chip among "
                           << hq::knownChipNames() << ", got '" << chip << "'";
        return signalPassFailure();
      }
      target = parsed;
    }
    bool failed = false;
    module.walk([&](Operation *op) {
      if (auto gemm = dyn_cast<GemmOp>(op)) {
        failed |= mlir::failed(legalizeFormat(gemm)) ||
                  mlir::failed(legalizeActivations(gemm, target));
      } else if (auto moe = dyn_cast<MoeGemmOp>(op)) {
        if (moe.getWeightSchema().toHost().format !=
            hq::SourceFormat::Canonical) {
          moe.emitOpError("expected canonical weights: per-expert source "
                          "formats are converted by the host adapters "
                          "(humming::loadLayer)");
          failed = true;
        } else {
          failed |= mlir::failed(
              prepareWeightsOnDevice(moe, target, "the experts'"));
        }
      }
    });
    if (failed)
      signalPassFailure();
  }
};

} // namespace
