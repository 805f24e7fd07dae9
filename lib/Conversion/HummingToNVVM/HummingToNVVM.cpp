//===- HummingToNVVM.cpp - humming-lower-to-nvvm --------------------------===//
//
// Replaces each humming.gemm by a gpu.launch_func of a generated kernel. What
// is not lowered yet is diagnosed at the op, never miscompiled.
//
//===----------------------------------------------------------------------===//

#include "Humming/Conversion/Passes.h"
#include "Humming/Dialect/Humming/IR/HummingOps.h"
#include "Humming/Target/KernelABI.h"
#include "MmaSync.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

#define DEBUG_TYPE "humming-lower-to-nvvm"

namespace mlir::humming {
#define GEN_PASS_DEF_HUMMINGLOWERTONVVMPASS
#include "Humming/Conversion/Passes.h.inc"
} // namespace mlir::humming

using namespace mlir;
using namespace mlir::humming;
namespace hq = ::humming;

namespace {

constexpr StringLiteral kKernelModule = "humming_kernels";

/// Checks that the mma_sync family can lower `op`; reports why not.
LogicalResult checkSupported(GemmOp op, const hq::Chip &chip) {
  hq::InputSchema in = op.getInputSchema().toHost();
  if (in.type.bits != 16)
    return op.emitOpError() << "the mma_sync lowering supports 16-bit "
                               "activations so far, got "
                            << op.getInputSchema().getType();
  if (op.getLayoutAttr())
    return op.emitOpError("prepared layouts are not lowered yet; pass "
                          "canonical weights (no 'layout')");
  if (op.getWeightSchema().toHost().format != hq::SourceFormat::Canonical)
    return op.emitOpError() << "expected canonical weights to lower, got format "
                            << hq::toString(op.getWeightSchema().getFormat())
                            << " (convert with the host adapters first)";
  if (ArrayAttr tiles = op.getTileConfigsAttr(); tiles && !tiles.empty())
    return op.emitOpError()
           << "tile_configs are not honoured by the mma_sync lowering yet (it "
              "emits one fixed kernel: "
           << hq::abi::MmaSyncTile::kBlockM << "x"
           << hq::abi::MmaSyncTile::kBlockN << " output blocks, "
           << hq::abi::MmaSyncTile::kKSplit
           << "-way in-block split-K); remove 'tile_configs'";
  if (ComputeAttr compute = op.getComputeAttr()) {
    if (compute.getF16Accumulation())
      return op.emitOpError("f16 accumulation is not lowered yet (the "
                            "mma_sync kernels accumulate in f32); drop "
                            "'f16_accumulation'");
    // Batch invariance holds: the K decomposition is fixed and each token's
    // row depends on nothing else.
  }
  if (chip.sm < 80)
    return op.emitOpError() << "the mma_sync lowering needs sm_80 or newer "
                               "(m16n8k16), got "
                            << chip.str();
  for (Value v : op->getOperands()) {
    auto t = cast<MemRefType>(v.getType());
    if (!t.getLayout().isIdentity())
      return op.emitOpError() << "expected identity-layout memrefs, got " << t;
  }
  return success();
}

/// A device pointer (!llvm.ptr<1>) to the data of `memref`, or null.
Value devicePointer(ImplicitLocOpBuilder &b, Value memref) {
  auto ptrType = LLVM::LLVMPointerType::get(b.getContext(), 1);
  if (!memref)
    return LLVM::ZeroOp::create(b, ptrType);
  Value index = memref::ExtractAlignedPointerAsIndexOp::create(b, memref);
  Value i64 = arith::IndexCastOp::create(b, b.getI64Type(), index);
  return LLVM::IntToPtrOp::create(b, ptrType, i64);
}

struct LowerToNVVMPass
    : public mlir::humming::impl::HummingLowerToNVVMPassBase<LowerToNVVMPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<hq::Chip> parsed = hq::Chip::parse(chip);
    if (!parsed) {
      module.emitError() << "humming-lower-to-nvvm: expected a chip among "
                         << hq::knownChipNames() << ", got '" << chip << "'";
      return signalPassFailure();
    }
    // The chip is the one the pipeline attaches to the gpu.module and emits
    // PTX for; a module that names its device must agree with it, or the
    // checks below would be made for one chip and the code built for another.
    if (TargetAttr target = lookupTarget(module);
        target && !(target.getHostChip() == *parsed)) {
      module.emitError() << "humming-lower-to-nvvm: the module's "
                            "humming.target ("
                         << target.getDevice() << ") is "
                         << target.getHostChip().str()
                         << "; expected chip=" << target.getHostChip().str()
                         << ", got chip=" << parsed->str();
      return signalPassFailure();
    }
    // LLVM aborts on intrinsics a PTX version cannot express: check first.
    if (ptxVersion && (ptxVersion < parsed->minPtxVersion() ||
                       ptxVersion > hq::kMaxPtxVersion)) {
      module.emitError() << "humming-lower-to-nvvm: expected a PTX ISA version "
                            "between "
                         << parsed->minPtxVersion() << " and "
                         << hq::kMaxPtxVersion << " for " << parsed->str()
                         << ", got " << static_cast<unsigned>(ptxVersion);
      return signalPassFailure();
    }

    SmallVector<GemmOp> gemms;
    bool failedAny = false;
    module.walk([&](Operation *op) {
      if (auto gemm = dyn_cast<GemmOp>(op))
        gemms.push_back(gemm);
      else if (isa_and_nonnull<HummingDialect>(op->getDialect())) {
        op->emitOpError("is not lowered by humming-lower-to-nvvm yet (only "
                        "humming.gemm is)");
        failedAny = true;
      }
    });
    if (failedAny)
      return signalPassFailure();
    if (gemms.empty())
      return;
    for (GemmOp op : gemms)
      failedAny |= failed(checkSupported(op, *parsed));
    if (failedAny)
      return signalPassFailure();

    OpBuilder builder(module.getContext());
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    builder.getUnitAttr());
    auto kernels = module.lookupSymbol<gpu::GPUModuleOp>(kKernelModule);
    if (!kernels) {
      builder.setInsertionPointToEnd(module.getBody());
      kernels = gpu::GPUModuleOp::create(builder, module.getLoc(), kKernelModule);
    }
    SymbolTable kernelSymbols(kernels);

    unsigned counter = 0;
    for (GemmOp op : gemms) {
      hq::WeightSchema w = op.getWeightSchema().toHost();
      auto inputType = cast<MemRefType>(op.getInput().getType());
      auto outputType = cast<MemRefType>(op.getOutput().getType());
      GemmKernelSpec spec;
      spec.weight = w;
      spec.input = op.getInputSchema().toHost();
      spec.output = *toScalarType(outputType.getElementType());
      spec.kAct = inputType.getDimSize(1);
      spec.nOut = outputType.getDimSize(1);
      spec.np = spec.nOut + w.padN;
      spec.kp = spec.kAct + w.padK;

      auto parent = op->getParentOfType<FunctionOpInterface>();
      std::string name = (parent ? parent.getName().str() : std::string("layer")) +
                         "_gemm" + std::to_string(counter++);
      gpu::GPUFuncOp kernel =
          buildMmaSyncGemmKernel(builder, op.getLoc(), kernels, name, spec);
      kernelSymbols.insert(kernel);

      // The launch: grid from M at run time, pointers from the memrefs.
      ImplicitLocOpBuilder b(op.getLoc(), op);
      Value m = memref::DimOp::create(b, op.getInput(), 0);
      Value gridX = arith::ConstantIndexOp::create(
          b, hq::ceilDiv(spec.np, hq::abi::MmaSyncTile::kBlockN));
      Value blockM = arith::ConstantIndexOp::create(b, hq::abi::MmaSyncTile::kBlockM);
      Value gridY = arith::CeilDivUIOp::create(b, m, blockM);
      Value one = arith::ConstantIndexOp::create(b, 1);
      Value threads =
          arith::ConstantIndexOp::create(b, hq::abi::MmaSyncTile::kThreads);
      SmallVector<Value> args = {
          devicePointer(b, op.getInput()),       devicePointer(b, op.getWeight()),
          devicePointer(b, op.getScales()),      devicePointer(b, op.getZeroPoints()),
          devicePointer(b, op.getGlobalScale()), devicePointer(b, op.getBias()),
          devicePointer(b, op.getOutput()),
          arith::IndexCastOp::create(b, b.getI32Type(), m)};
      gpu::LaunchFuncOp::create(b, kernel, gpu::KernelDim3{gridX, gridY, one},
                                gpu::KernelDim3{threads, one, one},
                                /*dynamicSharedMemorySize=*/Value(), args);
      op.erase();
    }
  }
};
} // namespace
