//===- CanonicalKernel.cpp - mma.sync over canonical weights --------------===//
//
// Builds the body of the mma_sync GEMM kernel over weights in the canonical
// layout (every weight, scale and zero-point kind) for one humming.gemm: a grid
// of 16 x 64 output tiles, four warps per block, each warp two m16n8k16 MMAs
// per k-step with fp32 accumulators. Weights are read in the canonical layout
// (bit stream along K) and dequantized in registers; per-k scales (group,
// block) are applied to the dequantized weights in the activation type, as
// the original does for 16-bit activations; per-channel, tensor and global
// scales and the bias are applied to the fp32 accumulators in the epilogue.
//
// Fragment layouts follow the PTX ISA, "Matrix Fragments for mma.m16n8k16
// with floating point type" (9.7.14.5.8).
//
//===----------------------------------------------------------------------===//

#include "EmitterBase.h"
#include "Kernels.h"

#include "Humming/Target/KernelABI.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#define DEBUG_TYPE "humming-lower-to-nvvm"

using namespace mlir;
using namespace mlir::humming;
namespace hq = ::humming;
using Tile = hq::abi::MmaSyncTile;

/// k-steps per loop iteration of a warp group.
constexpr int64_t kUnroll = 2;

namespace {

/// Emits the kernel body with an implicit-location builder.
class KernelEmitter : EmitterBase {
public:
  KernelEmitter(ImplicitLocOpBuilder &b, const GemmKernelSpec &spec,
                ArrayRef<Value> params, Value workspace)
      : EmitterBase(b, params), spec(spec), workspace(workspace) {}

  void emit();

private:
  /// A thread's place: its lane, warp column, K group, row of the fragment
  /// (group) and k pair (quad); M; its two rows and the warp's first column.
  struct Frame {
    Value lane, warpN, warpK, group, quad, m, row0, row1, nWarp;
  };
  /// One k-step of 16 at column k0 (i32): the A pairs, the dequantized B
  /// pairs of the warp's two n8 tiles, two m16n8k16 MMAs into `accs`.
  void kStep(const Frame &fr, Value k0, SmallVector<Value> &accs);
  /// Split-K inside the block: warp groups 1.. leave their partial sums in
  /// shared memory, group 0 (`isLeader`) adds them.
  SmallVector<Value> reduceWarpGroups(const Frame &fr, ArrayRef<Value> acc,
                                      Value isLeader);
  /// Warp group 0's epilogue: scales, bias, conversion, predicated stores.
  void storeOutputs(const Frame &fr, ArrayRef<Value> acc, Value isLeader);
  /// The b-bit code at bit offset `bit` of a word stream whose last word is
  /// `lastWord`; `stride` separates consecutive words (1 along a row, G for
  /// the N-packed zero points).
  Value extractCode(Value base, Value firstWordIndex, Value bitInWord,
                    Value nextWordIndex, unsigned bits);

  /// The 16-bit bits of the dequantized weights (n, k) and (n, k + 1) in
  /// the activation type (k even). With magic-number dequantization the first
  /// value is the packed pair (i32) and the second is null.
  std::pair<Value, Value> dequantizedPair(Value n, Value k);

  /// Whether unsigned codes dequantize with the magic-number trick: the code
  /// fits the activation's mantissa and any per-k scale is already in the
  /// activation type.
  bool useMagicNumbers() const {
    const hq::WeightSchema &w = spec.weight;
    if (!w.type.isInt() || w.type.isSigned)
      return false;
    if (spec.input.type == hq::ScalarType::bf16() && w.type.bits > 7)
      return false;
    return !hasPerKScales() ||
           (w.scaleType == spec.input.type && !foldsGlobalScale());
  }

  bool hasPerKScales() const { return spec.weight.hasPerKScales(); }
  /// Whether the global scale multiplies the per-k scales (in f32, on the
  /// weights) instead of the accumulators.
  bool foldsGlobalScale() const {
    return spec.weight.hasGlobalScale() && hasPerKScales();
  }
  /// The global scale, loaded once at the kernel's start.
  Value globalScale() const { return global; }

  // ---- State ---------------------------------------------------------------
  const GemmKernelSpec &spec;
  /// Shared memory for the split-K partial sums.
  Value workspace;
  /// The layer's global scale (f32), when it has one.
  Value global;
};

Value KernelEmitter::extractCode(Value base, Value firstWordIndex,
                                 Value bitInWord, Value nextWordIndex,
                                 unsigned bits) {
  Value lo = ext64(load(i32, base, firstWordIndex));
  Value hi = ext64(load(i32, base, nextWordIndex));
  Value window =
      arith::OrIOp::create(b, arith::ShLIOp::create(b, hi, c64(32)), lo);
  Value shifted = arith::ShRUIOp::create(b, window, ext64(bitInWord));
  Value code = arith::TruncIOp::create(b, i32, shifted);
  return arith::AndIOp::create(b, code, c32((int64_t(1) << bits) - 1));
}

std::pair<Value, Value> KernelEmitter::dequantizedPair(Value n, Value k) {
  const hq::WeightSchema &w = spec.weight;
  const unsigned bits = w.type.bits;
  const int64_t wordsPerRow = spec.kp * bits / 32;
  // Codes k and k+1 of row n: 2*bits <= 16 bits from bit k*b, inside one
  // 64-bit window of two consecutive words.
  Value bit = arith::MulIOp::create(b, k, c64(bits));
  // Clamped: unrolled k-steps past K read a valid word, and their MMA
  // operands are zeroed by the caller.
  Value word = arith::MinSIOp::create(b, arith::ShRUIOp::create(b, bit, c64(5)),
                                      c64(wordsPerRow - 1));
  Value inWord =
      arith::TruncIOp::create(b, i32, arith::AndIOp::create(b, bit, c64(31)));
  Value rowBase = arith::MulIOp::create(b, n, c64(wordsPerRow));
  Value next = arith::MinSIOp::create(b, arith::AddIOp::create(b, word, c64(1)),
                                      c64(wordsPerRow - 1));
  Value pair = extractCode(param(hq::abi::ParamWeight),
                           arith::AddIOp::create(b, rowBase, word), inWord,
                           arith::AddIOp::create(b, rowBase, next), 2 * bits);
  Value mask = c32((int64_t(1) << bits) - 1);
  Value code0 = arith::AndIOp::create(b, pair, mask);
  Value code1 = arith::AndIOp::create(
      b, arith::ShRUIOp::create(b, pair, c32(bits)), mask);
  // k and k+1 share their scale group, zero point and block (groups are
  // powers of two >= 16, and k is even).
  Value zero, scale;
  int64_t groupsK = w.groupsAlongK(spec.kp);
  Value kIn = arith::MinSIOp::create(b, k, c64(spec.kp - 1));
  Value group = w.granularity == hq::Granularity::Channel ||
                        w.granularity == hq::Granularity::Tensor
                    ? c64(0)
                    : arith::DivUIOp::create(b, kIn, c64(w.groupK));
  if (w.type.isInt() && !w.type.isSigned) {
    switch (w.zeroPoint) {
    case hq::ZeroPointKind::None:
      zero = cf(double(1u << (bits - 1)));
      break;
    case hq::ZeroPointKind::Int: {
      // [N*b/32, G], each group's column a bit stream along N.
      int64_t zRows = spec.np * bits / 32;
      Value zbit = arith::MulIOp::create(b, n, c64(bits));
      Value zword = arith::ShRUIOp::create(b, zbit, c64(5));
      Value zIn = arith::TruncIOp::create(
          b, i32, arith::AndIOp::create(b, zbit, c64(31)));
      Value znext = arith::MinSIOp::create(
          b, arith::AddIOp::create(b, zword, c64(1)), c64(zRows - 1));
      Value first = arith::AddIOp::create(
          b, arith::MulIOp::create(b, zword, c64(groupsK)), group);
      Value second = arith::AddIOp::create(
          b, arith::MulIOp::create(b, znext, c64(groupsK)), group);
      zero =
          arith::UIToFPOp::create(b, f32,
                                  extractCode(param(hq::abi::ParamZeroPoints),
                                              first, zIn, second, bits));
      break;
    }
    case hq::ZeroPointKind::Float: {
      Value index = arith::AddIOp::create(
          b, arith::MulIOp::create(b, n, c64(groupsK)), group);
      zero = loadAsF32(param(hq::abi::ParamZeroPoints), index, spec.output);
      break;
    }
    }
  }
  // Per-k scales go on the weight (group, group_tensor, block).
  if (w.granularity == hq::Granularity::Group ||
      w.granularity == hq::Granularity::GroupTensor) {
    Value index = arith::AddIOp::create(
        b, arith::MulIOp::create(b, n, c64(groupsK)), group);
    scale = loadAsF32(param(hq::abi::ParamScales), index, w.scaleType);
  } else if (w.granularity == hq::Granularity::Block) {
    int64_t cols = hq::ceilDiv(spec.kp, w.groupK);
    Value index = arith::AddIOp::create(
        b,
        arith::MulIOp::create(b, arith::DivUIOp::create(b, n, c64(w.groupN)),
                              c64(cols)),
        arith::DivUIOp::create(b, kIn, c64(w.groupK)));
    scale = loadAsF32(param(hq::abi::ParamScales), index, w.scaleType);
  }
  // A global scale with per-k scales is folded into them in f32 (group
  // scales alone may exceed the 16-bit range, e.g. e5m2 group scales of an
  // NVFP4-style group_tensor schema).
  if (scale && foldsGlobalScale())
    scale = arith::MulFOp::create(b, scale, globalScale());
  Type act = spec.input.type == hq::ScalarType::bf16() ? Type(b.getBF16Type())
                                                       : Type(b.getF16Type());
  if (useMagicNumbers()) {
    // Both codes in the mantissas of 1024.0 (f16) or 128.0 (bf16): the lanes
    // hold exactly magic + code, so one packed subtraction of magic + zero
    // gives q - z exactly, and one packed multiply applies a 16-bit scale
    // (the product rounds once, as the float path does).
    bool isBF16 = spec.input.type == hq::ScalarType::bf16();
    double magic = isBF16 ? 128.0 : 1024.0;
    uint32_t magicBits = isBF16 ? 0x43004300u : 0x64006400u;
    VectorType vec = VectorType::get({2}, act);
    Value lanes = arith::OrIOp::create(
        b,
        arith::OrIOp::create(b, code0,
                             arith::ShLIOp::create(b, code1, c32(16))),
        c32(int64_t(magicBits)));
    Value v = LLVM::BitcastOp::create(b, vec, lanes);
    auto splat = [&](Value f) -> Value {
      Value h = arith::TruncFOp::create(b, act, f);
      return vector::BroadcastOp::create(b, vec, h);
    };
    if (w.zeroPoint == hq::ZeroPointKind::Float) {
      v = arith::SubFOp::create(b, v, splat(cf(magic)));
      v = arith::SubFOp::create(b, v, splat(zero));
    } else {
      v = arith::SubFOp::create(
          b, v, splat(arith::AddFOp::create(b, zero, cf(magic))));
    }
    if (scale)
      v = arith::MulFOp::create(b, v, splat(scale));
    Value packed = LLVM::BitcastOp::create(b, i32, v);
    return {packed, Value()};
  }
  auto dequant = [&](Value code) -> Value {
    Value value;
    if (w.type.isFloat()) {
      value = smallFloatToF32(code, w.type);
    } else if (w.type.isSigned) {
      Value shift = c32(32 - bits);
      value = arith::SIToFPOp::create(
          b, f32,
          arith::ShRSIOp::create(b, arith::ShLIOp::create(b, code, shift),
                                 shift));
    } else {
      value =
          arith::SubFOp::create(b, arith::UIToFPOp::create(b, f32, code), zero);
    }
    if (scale)
      value = arith::MulFOp::create(b, value, scale);
    Value half = arith::TruncFOp::create(b, act, value);
    return arith::BitcastOp::create(b, i16, half);
  };
  return {dequant(code0), dequant(code1)};
}

void KernelEmitter::emit() {
  Value tid = index32(gpu::ThreadIdOp::create(b, gpu::Dimension::x));
  Value bidX = index32(gpu::BlockIdOp::create(b, gpu::Dimension::x));
  Value bidY = index32(gpu::BlockIdOp::create(b, gpu::Dimension::y));
  Value lane = arith::AndIOp::create(b, tid, c32(31));
  Value warp = arith::ShRUIOp::create(b, tid, c32(5));
  Frame fr;
  fr.lane = lane;
  fr.warpN = arith::AndIOp::create(b, warp, c32(Tile::kWarpsN - 1));
  fr.warpK = arith::DivUIOp::create(b, warp, c32(Tile::kWarpsN));
  fr.group = arith::ShRUIOp::create(b, lane, c32(2)); // row / column
  fr.quad = arith::AndIOp::create(b, lane, c32(3));   // k pair
  fr.m = param(hq::abi::ParamM);
  if (spec.weight.hasGlobalScale())
    global = load(f32, param(hq::abi::ParamGlobalScale), c64(0));

  Value m0 = arith::MulIOp::create(b, bidY, c32(Tile::kBlockM));
  fr.row0 = arith::AddIOp::create(b, m0, fr.group);
  fr.row1 = arith::AddIOp::create(b, fr.row0, c32(8));
  fr.nWarp = arith::AddIOp::create(
      b, arith::MulIOp::create(b, bidX, c32(Tile::kBlockN)),
      arith::MulIOp::create(b, fr.warpN, c32(16)));

  // The K loop: warp group warpK takes k-steps warpK, warpK + kKSplit, ...
  // Two accumulator tiles of four f32 each.
  SmallVector<Value> zeros(8, cf(0.0));
  Value lb = arith::IndexCastOp::create(
      b, b.getIndexType(),
      arith::MulIOp::create(b, fr.warpK, c32(Tile::kBlockK)));
  Value ub = arith::ConstantIndexOp::create(b, spec.kp);
  Value step = arith::ConstantIndexOp::create(b, Tile::kBlockK * Tile::kKSplit *
                                                     kUnroll);
  auto loop = scf::ForOp::create(b, lb, ub, step, zeros);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    // kUnroll k-steps per iteration: one basic block, so ptxas can issue
    // every load of the unrolled steps before the first MMA needs them.
    SmallVector<Value> accs(loop.getRegionIterArgs().begin(),
                            loop.getRegionIterArgs().end());
    Value kBase = index32(loop.getInductionVar());
    for (int64_t u = 0; u < kUnroll; ++u)
      kStep(fr,
            arith::AddIOp::create(b, kBase,
                                  c32(u * Tile::kBlockK * Tile::kKSplit)),
            accs);
    SmallVector<Value> results = accs;
    scf::YieldOp::create(b, results);
  }
  SmallVector<Value> acc(loop.getResults().begin(), loop.getResults().end());
  Value isLeader =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, fr.warpK, c32(0));
  acc = reduceWarpGroups(fr, acc, isLeader);
  storeOutputs(fr, acc, isLeader);
}

void KernelEmitter::kStep(const Frame &fr, Value k0, SmallVector<Value> &accs) {
  const bool bf16 = spec.input.type == hq::ScalarType::bf16();
  Value group = fr.group, quad = fr.quad, m = fr.m, row0 = fr.row0,
        row1 = fr.row1, nWarp = fr.nWarp;
  Value inK =
      arith::CmpIOp::create(b, arith::CmpIPredicate::slt, k0, c32(spec.kp));
  Value col0 =
      arith::AddIOp::create(b, k0, arith::MulIOp::create(b, quad, c32(2)));
  Value col8 = arith::AddIOp::create(b, col0, c32(8));

  // A elements (r, c) and (r, c + 1) as one 32-bit load (c even; K is a
  // multiple of 8), zero outside [0, M) x [0, K).
  auto aPair = [&](Value r, Value c) -> Value {
    Value inRows = arith::CmpIOp::create(b, arith::CmpIPredicate::slt, r, m);
    Value inCols =
        arith::CmpIOp::create(b, arith::CmpIPredicate::slt, c, c32(spec.kAct));
    Value ok = arith::AndIOp::create(b, inRows, inCols);
    Value index = arith::AddIOp::create(
        b, arith::MulIOp::create(b, sext64(r), c64(spec.kAct / 2)),
        sext64(arith::ShRUIOp::create(b, c, c32(1))));
    Value safe = arith::SelectOp::create(b, ok, index, c64(0));
    Value v = load(i32, param(hq::abi::ParamInput), safe);
    return arith::SelectOp::create(b, ok, v, c32(0));
  };
  auto pack = [&](Value lo, Value hi) -> Value {
    if (!hi)
      return lo; // already packed (magic-number path)
    Value l = arith::ExtUIOp::create(b, i32, lo);
    Value h =
        arith::ShLIOp::create(b, arith::ExtUIOp::create(b, i32, hi), c32(16));
    return arith::OrIOp::create(b, l, h);
  };
  SmallVector<Value> a = {aPair(row0, col0), aPair(row1, col0),
                          aPair(row0, col8), aPair(row1, col8)};

  // MMA operands: f16 as vector<2xf16>, bf16 as i32 (NVVM's convention).
  VectorType f16x2 = VectorType::get({2}, b.getF16Type());
  auto operand = [&](Value packed) -> Value {
    if (bf16)
      return packed;
    return LLVM::BitcastOp::create(b, f16x2, packed);
  };
  SmallVector<Value> aOps;
  for (Value v : a)
    aOps.push_back(operand(v));

  Type accStruct = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                                    SmallVector<Type>(4, f32));
  for (int tile = 0; tile < 2; ++tile) {
    Value n = arith::AddIOp::create(
        b, nWarp, arith::AddIOp::create(b, c32(tile * 8), group));
    Value n64 = ext64(n);
    auto [w0, w1] = dequantizedPair(n64, ext64(col0));
    auto [w8, w9] = dequantizedPair(n64, ext64(col8));
    // Past K the weights are zeroed too, so 0 * garbage never adds NaN.
    auto guarded = [&](Value packed) {
      return operand(arith::SelectOp::create(b, inK, packed, c32(0)));
    };
    SmallVector<Value> bOps = {guarded(pack(w0, w1)), guarded(pack(w8, w9))};
    SmallVector<Value> acc(accs.begin() + tile * 4,
                           accs.begin() + tile * 4 + 4);
    auto types = bf16 ? std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16,
                                                      NVVM::MMATypes::bf16}
                      : std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::f16,
                                                      NVVM::MMATypes::f16};
    auto mma = NVVM::MmaOp::create(
        b, accStruct, aOps, bOps, acc, ArrayRef<int64_t>{16, 8, 16},
        std::nullopt, std::nullopt, types,
        std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                       NVVM::MMALayout::col});
    for (int64_t i = 0; i < 4; ++i)
      accs[tile * 4 + i] = LLVM::ExtractValueOp::create(b, mma.getResult(), i);
  }
}

SmallVector<Value> KernelEmitter::reduceWarpGroups(const Frame &fr,
                                                   ArrayRef<Value> accIn,
                                                   Value isLeader) {
  Value slot =
      arith::AddIOp::create(b, arith::MulIOp::create(b, fr.warpN, c32(32 * 8)),
                            arith::MulIOp::create(b, fr.lane, c32(8)));
  auto indexOf = [&](Value i32v) {
    return arith::IndexCastOp::create(b, b.getIndexType(), i32v);
  };
  return reduceSplitK(
      accIn, fr.warpK, isLeader, Tile::kKSplit, slot, Tile::kWarpsN * 32 * 8,
      [&](Value v, Value i) {
        memref::StoreOp::create(b, v, workspace, ValueRange{indexOf(i)});
      },
      [&](Value i) -> Value {
        return memref::LoadOp::create(b, workspace, ValueRange{indexOf(i)});
      });
}

void KernelEmitter::storeOutputs(const Frame &fr, ArrayRef<Value> acc,
                                 Value isLeader) {
  const hq::WeightSchema &w = spec.weight;
  Value quad = fr.quad, m = fr.m, row0 = fr.row0, row1 = fr.row1,
        nWarp = fr.nWarp;
  // Epilogue (warp group 0): per-channel, tensor and global scales, bias,
  // conversion, predicated stores.
  auto epilogue = scf::IfOp::create(b, isLeader, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard epilogueGuard(b);
  b.setInsertionPointToStart(epilogue.thenBlock());
  bool outBF16 = spec.output == hq::ScalarType::bf16();
  Type outType = outBF16 ? Type(b.getBF16Type()) : Type(b.getF16Type());
  for (int tile = 0; tile < 2; ++tile) {
    for (int half = 0; half < 2; ++half) {
      Value row = half ? row1 : row0;
      for (int j = 0; j < 2; ++j) {
        Value v = acc[tile * 4 + half * 2 + j];
        Value col = arith::AddIOp::create(
            b, nWarp,
            arith::AddIOp::create(b, c32(tile * 8 + j),
                                  arith::MulIOp::create(b, quad, c32(2))));
        Value col64 = ext64(col);
        if (w.granularity == hq::Granularity::Channel)
          v = arith::MulFOp::create(
              b, v, loadAsF32(param(hq::abi::ParamScales), col64, w.scaleType));
        if (global && !foldsGlobalScale())
          v = arith::MulFOp::create(b, v, global);
        if (w.bias)
          v = arith::AddFOp::create(
              b, v, loadAsF32(param(hq::abi::ParamBias), col64, spec.output));
        Value out = arith::TruncFOp::create(b, outType, v);
        Value ok = arith::AndIOp::create(
            b, arith::CmpIOp::create(b, arith::CmpIPredicate::slt, row, m),
            arith::CmpIOp::create(b, arith::CmpIPredicate::slt, col,
                                  c32(spec.nOut)));
        auto ifOp = scf::IfOp::create(b, ok, /*withElseRegion=*/false);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifOp.thenBlock());
        Value index = arith::AddIOp::create(
            b, arith::MulIOp::create(b, sext64(row), c64(spec.nOut)), col64);
        store(arith::BitcastOp::create(b, i16, out),
              param(hq::abi::ParamOutput), index);
      }
    }
  }
}

} // namespace

FunctionType mlir::humming::kernelFunctionType(Builder &builder, bool moe,
                                               bool workspace) {
  auto global = LLVM::LLVMPointerType::get(builder.getContext(), 1);
  SmallVector<Type> args(hq::abi::ParamM, global);
  args.push_back(builder.getI32Type());
  if (moe) {
    args.append(hq::abi::ParamRoutingBlock - hq::abi::NumGemmParams, global);
    args.push_back(builder.getI32Type()); // the routing's block_size
  }
  if (workspace)
    args.push_back(global); // the split-K workspace
  return builder.getFunctionType(args, {});
}

gpu::GPUFuncOp mlir::humming::buildCanonicalKernel(OpBuilder &builder,
                                                   Location loc,
                                                   gpu::GPUModuleOp module,
                                                   StringRef name,
                                                   const GemmKernelSpec &spec) {
  MLIRContext *ctx = builder.getContext();
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(module.getBody());
  // Partial sums of the warp groups 1..kKSplit-1: 8 floats per thread.
  auto workgroup =
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  auto workspaceType = MemRefType::get(
      {std::max<int64_t>(1, (Tile::kKSplit - 1) * Tile::kWarpsN * 32 * 8)},
      builder.getF32Type(), MemRefLayoutAttrInterface(), workgroup);
  auto func =
      gpu::GPUFuncOp::create(builder, loc, name, kernelFunctionType(builder),
                             TypeRange{workspaceType});
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                builder.getUnitAttr());
  func.setKnownBlockSizeAttr(
      builder.getDenseI32ArrayAttr({int32_t(Tile::kThreads), 1, 1}));
  ImplicitLocOpBuilder b(loc, builder);
  b.setInsertionPointToStart(&func.getBody().front());
  SmallVector<Value> params(func.getArguments().begin(),
                            func.getArguments().end());
  KernelEmitter(b, spec, params, func.getWorkgroupAttributions()[0]).emit();
  gpu::ReturnOp::create(b);
  return func;
}
