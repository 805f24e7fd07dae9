//===- Pipelines.cpp - The named humming compile pipeline -----------------===//

#include "Humming/Pipelines/Pipelines.h"
#include "Humming/Conversion/Passes.h"
#include "Humming/Dialect/Humming/IR/HummingOps.h"
#include "Humming/Dialect/Humming/Transforms/Passes.h"
#include "Humming/Target/ArchInfo.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"

using namespace mlir;
using namespace mlir::humming;
namespace hq = ::humming;

void mlir::humming::buildHummingLoweringPasses(
    OpPassManager &pm, const CompilePipelineOptions &options) {
  HummingLegalizeSchemaPassOptions legalize;
  legalize.chip = options.chip;
  pm.addPass(createHummingLegalizeSchemaPass(legalize));
  HummingSelectTilesPassOptions select;
  select.device = options.device;
  select.chip = options.chip;
  select.forceTileConfig = options.forceTileConfig;
  pm.addPass(createHummingSelectTilesPass(select));
  HummingLowerToNVVMPassOptions lower;
  lower.chip = options.chip;
  lower.ptxVersion = options.ptxVersion;
  lower.onlyKernel = options.onlyKernel;
  pm.addPass(createHummingLowerToNVVMPass(lower));
}

void mlir::humming::buildHummingCompilePipeline(
    OpPassManager &pm, const CompilePipelineOptions &options) {
  std::optional<hq::Chip> chip = hq::Chip::parse(options.chip);
  unsigned ptx = options.ptxVersion;
  if (!ptx && chip)
    ptx = chip->minPtxVersion();
  buildHummingLoweringPasses(pm, options);
  pm.addNestedPass<gpu::GPUModuleOp>(createSCFToControlFlowPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps());
  // NVVM ops that lower to PTX text (nvvm.wgmma.mma_async: the kernels over
  // K-major weights take both operands by descriptor) become inline asm.
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertNVVMToLLVMPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createHummingKernelParamsPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = "+ptx" + std::to_string(ptx);
  target.optLevel = options.optLevel;
  pm.addPass(createGpuNVVMAttachTarget(target));
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa"; // PTX text; ptxas/nvJitLink/driver next
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

void mlir::humming::registerHummingPipelines() {
  static bool registered = [] {
    PassPipelineRegistration<CompilePipelineOptions>(
        "humming-compile-pipeline",
        "humming dialect to NVVM to PTX (in a gpu.binary), the pipeline lit, "
        "humming-opt, humming-translate and the JIT share",
        buildHummingCompilePipeline);
    return true;
  }();
  (void)registered;
}

void mlir::humming::registerHummingCodegenExtensions(DialectRegistry &registry) {
  // convert-gpu-to-nvvm collects the patterns of every dialect in the
  // kernels through these interfaces.
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
  vector::registerConvertVectorToLLVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  NVVM::registerConvertGpuToNVVMInterface(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
}

LogicalResult mlir::humming::runCompilePipeline(
    ModuleOp module, const std::string &chip, unsigned ptxVersion,
    unsigned optLevel, const std::string &device,
    const std::string &forceTileConfig, int onlyKernel) {
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  CompilePipelineOptions options;
  options.chip = chip;
  // A module that names its target also names the PTX version to emit.
  if (!ptxVersion)
    if (TargetAttr target = lookupTarget(module))
      ptxVersion = target.getPtx();
  options.ptxVersion = ptxVersion;
  options.optLevel = optLevel;
  options.device = device;
  options.forceTileConfig = forceTileConfig;
  options.onlyKernel = onlyKernel;
  buildHummingCompilePipeline(pm, options);
  return pm.run(module);
}

std::string mlir::humming::collectPtx(ModuleOp module) {
  std::string ptx;
  module.walk([&](gpu::BinaryOp binary) {
    for (Attribute a : binary.getObjects())
      if (auto object = dyn_cast<gpu::ObjectAttr>(a))
        ptx += object.getObject().getValue().str();
  });
  return ptx;
}

hq::Result<std::string> mlir::humming::compileToPtx(ModuleOp module,
                                                   const std::string &chip,
                                                   unsigned ptxVersion,
                                                   unsigned optLevel,
                                                   const std::string &device,
                                                   const std::string &forceTileConfig,
                                                   int onlyKernel) {
  std::string diagnostics;
  ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &d) {
    if (d.getSeverity() == DiagnosticSeverity::Error) {
      // file:line:col: error: ..., as a SourceMgr handler starts its line.
      std::string loc;
      llvm::raw_string_ostream os(loc);
      if (auto flc = d.getLocation()->findInstanceOf<FileLineColLoc>())
        os << flc.getFilename().getValue() << ":" << flc.getLine() << ":"
           << flc.getColumn();
      else
        d.getLocation().print(os);
      diagnostics += loc + ": error: " + d.str() + "\n";
    }
    return success();
  });
  if (failed(runCompilePipeline(module, chip, ptxVersion, optLevel, device,
                                forceTileConfig, onlyKernel)))
    return hq::Error{diagnostics.empty() ? "the compile pipeline failed"
                                         : diagnostics};
  std::string ptx = collectPtx(module);
  if (ptx.empty())
    return hq::Error{kNoKernelsToCompile};
  return ptx;
}

namespace {
/// The error diagnostics of `ctx` while it lives, one per line, for the
/// module builders' errors.
struct ErrorCollector {
  explicit ErrorCollector(MLIRContext &ctx)
      : handler(&ctx, [this](Diagnostic &d) {
          if (d.getSeverity() == DiagnosticSeverity::Error)
            text += d.str() + "\n";
          return success();
        }) {}
  /// `what`, followed by the diagnostics when there were any.
  hq::Error fail(const char *what) const {
    return hq::Error{text.empty() ? std::string(what)
                                  : std::string(what) + ": " + text};
  }
  std::string text;
  ScopedDiagnosticHandler handler;
};
} // namespace

hq::Result<OwningOpRef<ModuleOp>>
mlir::humming::buildLayerModule(MLIRContext &ctx, const LayerSpec &spec) {
  ErrorCollector errors(ctx);
  auto fail = [&](const char *what) { return errors.fail(what); };
  OpBuilder b(&ctx);
  Location loc = UnknownLoc::get(&ctx);
  auto emitError = [&] { return mlir::emitError(loc); };
  auto ws = WeightSchemaAttr::fromHost(emitError, &ctx, spec.weight);
  auto is = InputSchemaAttr::fromHost(emitError, &ctx, spec.input);
  if (!ws || !is)
    return fail("invalid schema");
  const hq::WeightSchema &w = spec.weight;
  int64_t np = spec.n + w.padN, kp = spec.k + w.padK;
  auto memref = [&](ArrayRef<int64_t> shape, Type elem) {
    return MemRefType::get(shape, elem);
  };
  std::string shapeError;
  auto shapeOf = [&](hq::WeightOperand op) {
    hq::ShapeOrDiag s =
        hq::expectedShape(op, w, spec.input, np, kp, spec.prepared);
    if (s.error && shapeError.empty())
      shapeError = *s.error;
    return s.shape;
  };
  Type act = toMLIRType(&ctx, spec.input.type);
  Type out = toMLIRType(&ctx, spec.output);
  SmallVector<Type> types = {memref({ShapedType::kDynamic, spec.k}, act),
                             memref(shapeOf(hq::WeightOperand::Weight),
                                    b.getI32Type())};
  int scalesArg = -1, zpArg = -1, globalArg = -1, biasArg = -1;
  if (w.hasScaleTensor()) {
    scalesArg = int(types.size());
    types.push_back(memref(shapeOf(hq::WeightOperand::Scales),
                           toMLIRType(&ctx, w.scaleType)));
  }
  if (w.zeroPoint != hq::ZeroPointKind::None) {
    zpArg = int(types.size());
    types.push_back(memref(shapeOf(hq::WeightOperand::ZeroPoints),
                           w.zeroPoint == hq::ZeroPointKind::Int
                               ? Type(b.getI32Type())
                               : out));
  }
  if (w.hasGlobalScale()) {
    globalArg = int(types.size());
    types.push_back(memref(shapeOf(hq::WeightOperand::GlobalScale),
                           b.getF32Type()));
  }
  if (w.bias) {
    biasArg = int(types.size());
    types.push_back(memref(shapeOf(hq::WeightOperand::Bias), out));
  }
  if (!shapeError.empty())
    return hq::Error{shapeError};
  // 8-bit activations' f32 scales: [M, 1] per token, [1] static.
  int inputScaleArg = -1;
  if (spec.input.scaling != hq::ActScaling::None) {
    hq::ShapeOrDiag s = hq::expectedInputScaleShape(
        spec.input, ShapedType::kDynamic, spec.k);
    if (s.error)
      return hq::Error{*s.error};
    inputScaleArg = int(types.size());
    types.push_back(memref(s.shape, b.getF32Type()));
  }
  types.push_back(memref({ShapedType::kDynamic, spec.n}, out));
  // MoE: the routing tensors after the output (humming.moe_gemm).
  const bool moe = spec.moeRouting != hq::GemmType::Dense;
  int sortedArg = -1, expertIdsArg = -1, paddedArg = -1, layoutArg = -1,
      routerArg = -1;
  if (moe) {
    Type i32 = b.getI32Type();
    if (spec.moeRouting == hq::GemmType::Indexed) {
      sortedArg = int(types.size());
      types.push_back(memref({ShapedType::kDynamic}, i32));
      expertIdsArg = int(types.size());
      types.push_back(memref({ShapedType::kDynamic}, i32));
      paddedArg = int(types.size());
      types.push_back(memref({1}, i32));
    } else if (!spec.allRows) {
      layoutArg = int(types.size());
      types.push_back(memref(
          {w.experts + (spec.moeRouting == hq::GemmType::GroupedContiguous)},
          i32));
    }
    if (spec.routerWeights) {
      routerArg = int(types.size());
      types.push_back(memref({ShapedType::kDynamic}, b.getF32Type()));
    }
  }
  const unsigned outputArg = unsigned(types.size() - 1 -
                                      (moe ? (sortedArg >= 0   ? 3
                                              : layoutArg >= 0 ? 1
                                                               : 0) +
                                                 (routerArg >= 0 ? 1 : 0)
                                           : 0));
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(b, loc, "layer", b.getFunctionType(types, {}));
  Block *body = func.addEntryBlock();
  b.setInsertionPointToStart(body);
  auto arg = [&](int i) { return i < 0 ? Value() : body->getArgument(unsigned(i)); };
  LayoutAttr layout;
  if (spec.prepared)
    layout = LayoutAttr::get(&ctx, hq::MmaKind::MmaSync, spec.chip);
  ComputeAttr compute;
  if (spec.compute.f16Accumulation || spec.compute.batchInvariant ||
      spec.compute.gemm != hq::GemmType::Dense)
    compute = ComputeAttr::fromHost(&ctx, spec.compute);
  if (moe) {
    hq::ComputeOptions c = spec.compute;
    c.gemm = spec.moeRouting;
    compute = ComputeAttr::fromHost(&ctx, c);
    const bool indexed = spec.moeRouting == hq::GemmType::Indexed;
    MoeGemmOp::create(
        b, loc, arg(0), arg(1), arg(scalesArg), arg(zpArg), arg(globalArg),
        arg(biasArg), arg(inputScaleArg), arg(sortedArg), arg(expertIdsArg),
        arg(paddedArg), arg(layoutArg), arg(routerArg),
        body->getArgument(outputArg), ws, is, compute,
        indexed ? b.getI64IntegerAttr(spec.topK) : IntegerAttr(),
        indexed ? b.getI64IntegerAttr(spec.blockSize) : IntegerAttr(), layout,
        ArrayAttr());
  } else {
    GemmOp::create(b, loc, arg(0), arg(1), arg(scalesArg), arg(zpArg),
                   arg(globalArg), arg(biasArg), arg(inputScaleArg),
                   body->getArgument(outputArg), ws, is, compute, layout,
                   ArrayAttr());
  }
  func::ReturnOp::create(b, loc);
  if (failed(verify(*module)))
    return fail("the layer does not verify");
  return std::move(module);
}

/// A module of one function @`name`(`types`) whose body `build` fills
/// (before the return), verified: otherwise "`what`: <diagnostics>".
static hq::Result<OwningOpRef<ModuleOp>> singleFunctionModule(
    MLIRContext &ctx, StringRef name, ArrayRef<Type> types, const char *what,
    function_ref<void(OpBuilder &, Location, Block *)> build) {
  ErrorCollector errors(ctx);
  OpBuilder b(&ctx);
  Location loc = UnknownLoc::get(&ctx);
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(b, loc, name, b.getFunctionType(types, {}));
  Block *body = func.addEntryBlock();
  b.setInsertionPointToStart(body);
  build(b, loc, body);
  func::ReturnOp::create(b, loc);
  if (failed(verify(*module)))
    return errors.fail(what);
  return std::move(module);
}

hq::Result<OwningOpRef<ModuleOp>>
mlir::humming::buildMoeAlignModule(MLIRContext &ctx, const MoeAlignSpec &spec) {
  Type i32 = IntegerType::get(&ctx, 32);
  SmallVector<Type> types = {
      MemRefType::get({ShapedType::kDynamic, spec.topK}, i32),
      MemRefType::get({ShapedType::kDynamic}, i32),
      MemRefType::get({ShapedType::kDynamic}, i32), MemRefType::get({1}, i32)};
  return singleFunctionModule(
      ctx, "route", types, "the routing does not verify",
      [&](OpBuilder &b, Location loc, Block *body) {
        MoeAlignOp::create(b, loc, body->getArgument(0), body->getArgument(1),
                           body->getArgument(2), body->getArgument(3),
                           uint64_t(spec.experts), uint64_t(spec.blockSize));
      });
}

hq::Result<OwningOpRef<ModuleOp>>
mlir::humming::buildMoeGroupModule(MLIRContext &ctx, const MoeGroupSpec &spec) {
  Type i32 = IntegerType::get(&ctx, 32);
  SmallVector<Type> types = {
      MemRefType::get({ShapedType::kDynamic, spec.topK}, i32),
      MemRefType::get({ShapedType::kDynamic}, i32),
      MemRefType::get({spec.maxTokens ? spec.experts : spec.experts + 1},
                      i32)};
  return singleFunctionModule(
      ctx, "group", types, "the grouped routing does not verify",
      [&](OpBuilder &b, Location loc, Block *body) {
        MoeGroupOp::create(b, loc, body->getArgument(0), body->getArgument(1),
                           body->getArgument(2), uint64_t(spec.experts),
                           spec.maxTokens ? b.getI64IntegerAttr(spec.maxTokens)
                                          : IntegerAttr());
      });
}

hq::Result<OwningOpRef<ModuleOp>>
mlir::humming::buildMoePermuteModule(MLIRContext &ctx,
                                     const MoePermuteSpec &spec) {
  Type i32 = IntegerType::get(&ctx, 32);
  auto rows = MemRefType::get({ShapedType::kDynamic, spec.words}, i32);
  SmallVector<Type> types = {rows, MemRefType::get({ShapedType::kDynamic}, i32),
                             rows};
  return singleFunctionModule(
      ctx, "permute", types, "the row permutation does not verify",
      [&](OpBuilder &b, Location loc, Block *body) {
        MoePermuteOp::create(b, loc, body->getArgument(0), body->getArgument(1),
                             body->getArgument(2),
                             spec.gather ? IntegerAttr()
                                         : b.getI64IntegerAttr(spec.topK),
                             spec.gather);
      });
}

hq::Result<OwningOpRef<ModuleOp>>
mlir::humming::buildGatherColumnsModule(MLIRContext &ctx,
                                        const GatherColumnsSpec &spec) {
  Type t = toMLIRType(&ctx, spec.type);
  auto rows = MemRefType::get({ShapedType::kDynamic, spec.columns}, t);
  SmallVector<Type> types = {
      rows, MemRefType::get({spec.columns}, IntegerType::get(&ctx, 32)), rows};
  return singleFunctionModule(
      ctx, "gather", types, "the column gather does not verify",
      [&](OpBuilder &b, Location loc, Block *body) {
        GatherColumnsOp::create(b, loc, body->getArgument(0),
                                body->getArgument(1), body->getArgument(2));
      });
}

hq::Result<OwningOpRef<ModuleOp>>
mlir::humming::buildRepackModule(MLIRContext &ctx, const RepackSpec &spec) {
  ErrorCollector errors(ctx);
  Location loc = UnknownLoc::get(&ctx);
  auto emitError = [&] { return mlir::emitError(loc); };
  auto ws = WeightSchemaAttr::fromHost(emitError, &ctx, spec.weight);
  auto is = InputSchemaAttr::fromHost(emitError, &ctx, spec.input);
  if (!ws || !is)
    return errors.fail("invalid schema");
  const hq::WeightSchema &w = spec.weight;
  const int64_t np = spec.n + w.padN, kp = spec.k + w.padK;
  Builder b(&ctx);
  SmallVector<Type> types;
  for (hq::WeightOperand op : spec.operands) {
    Type elem = b.getI32Type();
    if (op == hq::WeightOperand::Scales)
      elem = toMLIRType(&ctx, w.scaleType);
    else if (op == hq::WeightOperand::Bias ||
             (op == hq::WeightOperand::ZeroPoints &&
              w.zeroPoint == hq::ZeroPointKind::Float))
      elem = toMLIRType(&ctx, spec.element);
    for (bool prepared : {false, true}) {
      hq::ShapeOrDiag s =
          hq::expectedShape(op, w, spec.input, np, kp, prepared);
      if (s.error)
        return hq::Error{*s.error};
      types.push_back(MemRefType::get(s.shape, elem));
    }
  }
  auto layout = LayoutAttr::get(&ctx, hq::MmaKind::MmaSync, spec.chip);
  return singleFunctionModule(
      ctx, "repack", types, "the weight repack does not verify",
      [&](OpBuilder &ob, Location l, Block *body) {
        for (size_t i = 0; i < spec.operands.size(); ++i)
          RepackOp::create(
              ob, l, body->getArgument(unsigned(2 * i)),
              body->getArgument(unsigned(2 * i + 1)),
              WeightOperandAttr::get(&ctx, spec.operands[i]),
              uint64_t(spec.n), uint64_t(spec.k), ws, is, layout);
      });
}

hq::Result<OwningOpRef<ModuleOp>>
mlir::humming::buildWeightQuantizeModule(MLIRContext &ctx,
                                         const WeightQuantizeSpec &spec) {
  ErrorCollector errors(ctx);
  Location loc = UnknownLoc::get(&ctx);
  auto emitError = [&] { return mlir::emitError(loc); };
  auto ws = WeightSchemaAttr::fromHost(emitError, &ctx, spec.weight);
  if (!ws)
    return errors.fail("invalid schema");
  const hq::WeightSchema &w = spec.weight;
  const int64_t np = spec.n + w.padN, kp = spec.k + w.padK;
  Builder b(&ctx);
  hq::InputSchema anyInput;
  SmallVector<int64_t> source = {spec.n, spec.k};
  if (w.experts > 0)
    source.insert(source.begin(), w.experts);
  SmallVector<Type> types = {
      MemRefType::get(source, toMLIRType(&ctx, spec.source))};
  auto add = [&](hq::WeightOperand op, Type elem) -> std::optional<hq::Error> {
    hq::ShapeOrDiag s = hq::expectedShape(op, w, anyInput, np, kp, false);
    if (s.error)
      return hq::Error{*s.error};
    types.push_back(MemRefType::get(s.shape, elem));
    return std::nullopt;
  };
  if (auto e = add(hq::WeightOperand::Weight, b.getI32Type()))
    return *e;
  const bool scales = w.hasScaleTensor(),
             zps = w.zeroPoint != hq::ZeroPointKind::None;
  if (scales)
    if (auto e = add(hq::WeightOperand::Scales, toMLIRType(&ctx, w.scaleType)))
      return *e;
  if (zps)
    if (auto e = add(hq::WeightOperand::ZeroPoints,
                     w.zeroPoint == hq::ZeroPointKind::Int
                         ? Type(b.getI32Type())
                         : toMLIRType(&ctx, spec.zeroPointType)))
      return *e;
  // A global scale's operand too, so that the module verifies and the
  // lowering says what it does not take.
  const bool global = w.hasGlobalScale();
  if (global)
    if (auto e = add(hq::WeightOperand::GlobalScale, b.getF32Type()))
      return *e;
  return singleFunctionModule(
      ctx, "quantize_weights", types, "the weight quantization does not verify",
      [&](OpBuilder &ob, Location l, Block *body) {
        unsigned next = 2;
        Value s = scales ? body->getArgument(next++) : Value();
        Value z = zps ? body->getArgument(next++) : Value();
        Value g = global ? body->getArgument(next++) : Value();
        QuantizeOp::create(ob, l, body->getArgument(0), s, z, g,
                           body->getArgument(1), ws);
      });
}

hq::Result<OwningOpRef<ModuleOp>>
mlir::humming::buildElementwiseModule(MLIRContext &ctx,
                                      const ElementwiseSpec &spec) {
  Type t = toMLIRType(&ctx, spec.type);
  const bool silu = spec.kind == hq::abi::kSiluAndMulKernel;
  SmallVector<Type> types = {
      MemRefType::get({ShapedType::kDynamic,
                       silu ? 2 * spec.columns : spec.columns},
                      t),
      MemRefType::get({ShapedType::kDynamic, spec.columns}, t)};
  return singleFunctionModule(
      ctx, "elementwise", types,
      silu ? "silu_and_mul does not verify" : "moe_sum does not verify",
      [&](OpBuilder &b, Location loc, Block *body) {
        if (silu) {
          auto attr = [&](double v, double none) {
            return v == none ? FloatAttr() : b.getF64FloatAttr(v);
          };
          SiluAndMulOp::create(b, loc, body->getArgument(0),
                               body->getArgument(1), attr(spec.alpha, 1.0),
                               attr(spec.upOffset, 0.0),
                               attr(spec.limit, 0.0));
        } else {
          MoeSumOp::create(b, loc, body->getArgument(0), body->getArgument(1),
                           uint64_t(spec.topK));
        }
      });
}

hq::Result<OwningOpRef<ModuleOp>>
mlir::humming::buildQuantizeModule(MLIRContext &ctx, const QuantizeSpec &spec) {
  ErrorCollector errors(ctx);
  auto fail = [&](const char *what) { return errors.fail(what); };
  OpBuilder b(&ctx);
  Location loc = UnknownLoc::get(&ctx);
  auto emitError = [&] { return mlir::emitError(loc); };
  auto is = InputSchemaAttr::fromHost(emitError, &ctx, spec.input);
  if (!is)
    return fail("invalid input schema");
  hq::ShapeOrDiag scales =
      hq::expectedInputScaleShape(spec.input, ShapedType::kDynamic, spec.k);
  if (scales.error)
    return hq::Error{*scales.error};
  SmallVector<Type> types = {
      MemRefType::get({ShapedType::kDynamic, spec.k},
                      toMLIRType(&ctx, spec.source)),
      MemRefType::get(
          {ShapedType::kDynamic, spec.codesK ? spec.codesK : spec.k},
          toMLIRType(&ctx, spec.input.type)),
      MemRefType::get(scales.shape, b.getF32Type())};
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  auto func =
      func::FuncOp::create(b, loc, "quantize", b.getFunctionType(types, {}));
  Block *body = func.addEntryBlock();
  b.setInsertionPointToStart(body);
  QuantizeOp::create(b, loc, body->getArgument(0), body->getArgument(2),
                     Value(), Value(), body->getArgument(1), is);
  func::ReturnOp::create(b, loc);
  if (failed(verify(*module)))
    return fail("the quantization does not verify");
  return std::move(module);
}

std::vector<hq::abi::KernelLaunch> mlir::humming::kernelTable(ModuleOp module) {
  std::vector<hq::abi::KernelLaunch> out;
  auto table = module->getAttrOfType<ArrayAttr>(hq::abi::kKernelTableAttr);
  if (!table)
    return out;
  for (Attribute a : table) {
    auto d = dyn_cast<DictionaryAttr>(a);
    if (!d)
      continue;
    hq::abi::KernelLaunch k;
    if (auto s = d.getAs<StringAttr>("name"))
      k.name = s.str();
    for (const hq::abi::KernelField &f : hq::abi::kKernelFields)
      if (auto i = d.getAs<IntegerAttr>(f.key))
        k.*f.member = i.getInt();
    out.push_back(k);
  }
  return out;
}
