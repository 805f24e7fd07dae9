//===- LoweringState.cpp - What the lowering patterns share --------------===//
//
// KernelLoweringState (the kernel module, the kernels' names and the kernel
// table), the launch helpers of every pattern, and the entry points that
// gather the families' patterns and checks.
//
//===----------------------------------------------------------------------===//

#include "Humming/Conversion/HummingToNVVM.h"
#include "Kernels.h"
#include "Lowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::humming;
namespace hq = ::humming;

namespace {
constexpr StringLiteral kKernelModule = "humming_kernels";
} // namespace

KernelLoweringState::KernelLoweringState(ModuleOp module, const hq::Chip &chip,
                                         int64_t onlyKernel)
    : module_(module), chip_(chip), onlyKernel_(onlyKernel),
      builder_(module.getContext()) {}

gpu::GPUModuleOp KernelLoweringState::kernelModule() {
  if (kernels_)
    return kernels_;
  module_->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                   builder_.getUnitAttr());
  kernels_ = module_.lookupSymbol<gpu::GPUModuleOp>(kKernelModule);
  if (!kernels_) {
    OpBuilder::InsertionGuard guard(builder_);
    builder_.setInsertionPointToEnd(module_.getBody());
    kernels_ =
        gpu::GPUModuleOp::create(builder_, module_.getLoc(), kKernelModule);
  }
  symbols_ = std::make_unique<SymbolTable>(kernels_);
  return kernels_;
}

std::string KernelLoweringState::kernelName(Operation *op, StringRef what) {
  auto parent = op->getParentOfType<FunctionOpInterface>();
  return (parent ? parent.getName().str() : std::string("layer")) + "_" +
         what.str() + std::to_string(counter_++);
}

void KernelLoweringState::addKernel(gpu::GPUFuncOp kernel) {
  kernelModule();
  symbols_->insert(kernel);
}

void KernelLoweringState::addLaunch(const hq::abi::KernelLaunch &launch) {
  table_.push_back(lowering::launchAttr(builder_, launch));
}

hq::abi::KernelLaunch KernelLoweringState::smallLaunch(gpu::GPUFuncOp kernel,
                                                       int64_t blockN,
                                                       int64_t kind) {
  addKernel(kernel);
  hq::abi::KernelLaunch l;
  l.name = kernel.getName().str();
  l.blockM = 1;
  l.blockN = blockN;
  l.threads = kElementwiseThreads;
  l.kind = kind;
  return l;
}

void KernelLoweringState::writeKernelTable() {
  module_->setAttr(hq::abi::kKernelTableAttr, builder_.getArrayAttr(table_));
}

DictionaryAttr
mlir::humming::lowering::launchAttr(OpBuilder &b,
                                    const hq::abi::KernelLaunch &l) {
  SmallVector<NamedAttribute> fields = {
      b.getNamedAttr("name", b.getStringAttr(l.name))};
  for (const hq::abi::KernelField &f : hq::abi::kKernelFields)
    if ((!f.moeOnly || l.routing != hq::abi::kRoutingDense) &&
        (!f.onlyIfSet || l.*f.member != 0))
      fields.push_back(b.getNamedAttr(f.key, b.getI64IntegerAttr(l.*f.member)));
  return b.getDictionaryAttr(fields);
}

Value mlir::humming::lowering::devicePointer(ImplicitLocOpBuilder &b,
                                             Value memref) {
  auto ptrType = LLVM::LLVMPointerType::get(b.getContext(), 1);
  if (!memref)
    return LLVM::ZeroOp::create(b, ptrType);
  Value index = memref::ExtractAlignedPointerAsIndexOp::create(b, memref);
  Value i64 = arith::IndexCastOp::create(b, b.getI64Type(), index);
  return LLVM::IntToPtrOp::create(b, ptrType, i64);
}

SmallVector<Value> mlir::humming::lowering::abiArguments(
    Value null, ArrayRef<std::pair<unsigned, Value>> given) {
  unsigned last = 0;
  for (const auto &g : given)
    last = std::max(last, g.first);
  SmallVector<Value> args(last + 1, null);
  for (auto [slot, value] : given)
    args[slot] = value;
  assert(args.size() > hq::abi::ParamM && args[hq::abi::ParamM] != null &&
         (args.size() <= hq::abi::ParamRoutingBlock ||
          args[hq::abi::ParamRoutingBlock] != null) &&
         "the ABI's i32 slots hold values");
  return args;
}

void mlir::humming::lowering::launchGridStride(ImplicitLocOpBuilder &b,
                                               gpu::GPUFuncOp kernel,
                                               Value count, int64_t perItem,
                                               ValueRange args) {
  Value threads = arith::ConstantIndexOp::create(b, kElementwiseThreads);
  Value blocks = arith::MinUIOp::create(
      b,
      arith::CeilDivUIOp::create(
          b,
          arith::MulIOp::create(b, count,
                                arith::ConstantIndexOp::create(b, perItem)),
          threads),
      arith::ConstantIndexOp::create(b, kPermuteMaxBlocks));
  Value any = arith::CmpIOp::create(b, arith::CmpIPredicate::ne, count,
                                    arith::ConstantIndexOp::create(b, 0));
  auto ifAny = scf::IfOp::create(b, any, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifAny.thenBlock());
  Value one = arith::ConstantIndexOp::create(b, 1);
  gpu::LaunchFuncOp::create(b, kernel, gpu::KernelDim3{blocks, one, one},
                            gpu::KernelDim3{threads, one, one}, Value(), args);
}

gpu::GPUFuncOp mlir::humming::lowering::buildStubKernel(
    OpBuilder &builder, Location loc, gpu::GPUModuleOp module, StringRef name,
    bool moe, bool workspace) {
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(module.getBody());
  auto func = gpu::GPUFuncOp::create(
      builder, loc, name, kernelFunctionType(builder, moe, workspace));
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                builder.getUnitAttr());
  builder.setInsertionPointToStart(&func.getBody().front());
  gpu::ReturnOp::create(builder, loc);
  return func;
}

LogicalResult mlir::humming::lowering::checkIdentityLayouts(Operation *op) {
  for (Value v : op->getOperands())
    if (auto t = cast<MemRefType>(v.getType()); !t.getLayout().isIdentity())
      return op->emitOpError() << "expected identity-layout memrefs, got " << t;
  return success();
}

void mlir::humming::populateHummingToNVVMPatterns(RewritePatternSet &patterns,
                                                  KernelLoweringState &state) {
  lowering::populateGemmPatterns(patterns, state);
  lowering::populateQuantizePatterns(patterns, state);
  lowering::populateRoutingPatterns(patterns, state);
  lowering::populateRepackPatterns(patterns, state);
  lowering::populateElementwisePatterns(patterns, state);
}

LogicalResult
mlir::humming::checkHummingLowering(Operation *op,
                                    const KernelLoweringState &state) {
  if (isa<GemmOp, MoeGemmOp>(op))
    return lowering::checkGemmLowering(op, state);
  if (auto q = dyn_cast<QuantizeOp>(op))
    return lowering::checkQuantizeLowering(q, state);
  if (auto r = dyn_cast<RepackOp>(op))
    return lowering::checkRepackLowering(r);
  if (isa<MoeAlignOp, MoeGroupOp, MoePermuteOp, GatherColumnsOp, SiluAndMulOp,
          MoeSumOp>(op))
    return lowering::checkIdentityLayouts(op);
  return op->emitOpError("is not lowered by humming-lower-to-nvvm yet (only "
                         "humming.gemm, humming.moe_gemm, humming.moe_align, "
                         "humming.moe_group, humming.moe_permute, "
                         "humming.gather_columns, humming.repack, "
                         "humming.silu_and_mul, humming.moe_sum and "
                         "humming.quantize are)");
}
