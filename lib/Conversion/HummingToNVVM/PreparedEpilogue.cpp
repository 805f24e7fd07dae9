//===- PreparedEpilogue.cpp - Epilogue pieces of the prepared kernels -----===//
//
// What the generations' epilogues share: the output conversion (channel and
// global scales, bias), the split-K workspace (one f32 slot per split, sum
// and thread; one arrival counter per output tile) and the distributed
// shared memory of a cluster split.
//
//===----------------------------------------------------------------------===//

#include "PreparedEmitter.h"

using namespace mlir;
using namespace mlir::humming;
namespace hq = ::humming;
namespace L = ::humming::layout;

void PreparedEmitter::outputFactors(Value &factor, Value &bias, Value cc) {
  if (global)
    factor = factor ? arith::MulFOp::create(b, factor, global) : global;
  if (spec.weight.bias)
    bias = loadAsF32(param(hq::abi::ParamBias), ext64(cc), spec.output);
}

Value PreparedEmitter::outputBits(Value v, Value factor, Value bias,
                                  Type outType, Value post) {
  if (factor)
    v = arith::MulFOp::create(b, v, factor);
  if (bias)
    v = arith::AddFOp::create(b, v, bias);
  if (post)
    v = arith::MulFOp::create(b, v, post);
  return arith::BitcastOp::create(b, i16,
                                  arith::TruncFOp::create(b, outType, v));
}

Value PreparedEmitter::outputTile() {
  return arith::AddIOp::create(
      b, arith::MulIOp::create(b, bidY, c32(spec.np / tile.blockN())), bidX);
}

Value PreparedEmitter::partialAt(Value z, Value index, int64_t sums,
                                 int64_t threads, Value thread, Type unit) {
  Value row = arith::AddIOp::create(
      b, arith::MulIOp::create(b, ext64(outputTile()), c64(split.ctas)),
      ext64(z));
  Value idx = arith::AddIOp::create(b, arith::MulIOp::create(b, row, c64(sums)),
                                    ext64(index));
  idx = arith::AddIOp::create(b, arith::MulIOp::create(b, idx, c64(threads)),
                              ext64(thread));
  return LLVM::GEPOp::create(b, ptr, unit ? unit : Type(f32), partials,
                             ValueRange{idx});
}

Value PreparedEmitter::arriveOnTileCounter(Value tileId) {
  Value counter =
      LLVM::GEPOp::create(b, ptr, i32, arrivals, ValueRange{ext64(tileId)});
  Value before =
      LLVM::AtomicRMWOp::create(b, LLVM::AtomicBinOp::add, counter, c32(1),
                                LLVM::AtomicOrdering::acq_rel, "device");
  Value last = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, before,
                                     c32(split.ctas - 1));
  // The last arrival resets the counter for the next launch.
  auto ifLast = scf::IfOp::create(b, last, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifLast.thenBlock());
  LLVM::StoreOp::create(b, c32(0), counter);
  return last;
}

void PreparedEmitter::clusterBarrier() {
  // barrier.cluster.arrive has release, barrier.cluster.wait acquire
  // semantics by default.
  NVVM::ClusterArriveOp::create(b, /*aligned=*/UnitAttr());
  NVVM::ClusterWaitOp::create(b, /*aligned=*/UnitAttr());
}

void PreparedEmitter::storeSharedWord(Value byte, Value v) {
  LLVM::StoreOp::create(b, v, smemAt(byte), /*alignment=*/4);
}

Value PreparedEmitter::loadClusterF32(Value byte, Value rank) {
  Value remote = NVVM::MapaOp::create(
      b, LLVM::LLVMPointerType::get(b.getContext(), 7), smemAt(byte), rank);
  return LLVM::LoadOp::create(b, f32, remote, /*alignment=*/4);
}

Value PreparedEmitter::activationScale(Value token) {
  switch (spec.input.scaling) {
  case hq::ActScaling::Token: {
    Value row = arith::MinSIOp::create(
        b, token, arith::SubIOp::create(b, m, c32(1)));
    return load(f32, param(hq::abi::ParamInputScale), sext64(row));
  }
  case hq::ActScaling::Static:
    if (!staticInputScale)
      staticInputScale = load(f32, param(hq::abi::ParamInputScale), c64(0));
    return staticInputScale;
  case hq::ActScaling::None:
    return Value();
  case hq::ActScaling::Group:
    // Applied to each iteration's sums (KernelShape::groupInputScales,
    // wgmma kernels only).
    if (tile.groupInputScales)
      return Value();
    break;
  }
  llvm::report_fatal_error("humming: per-group activation scales in a "
                           "prepared kernel without groupInputScales (the "
                           "verifier refuses them there)");
}
