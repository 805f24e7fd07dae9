//===- PreparedRouting.cpp - Mixture-of-experts rows of a block -----------===//
//
// The MoE part of the prepared kernels (PreparedEmitter.h): each block
// finds its expert and its rows from the routing tensors of
// humming.moe_gemm (Humming/Target/KernelABI.h MoeParam) and keeps the row
// ids in a table in shared memory, through which the activation copies
// gather and the epilogue scatters. The routing tensors are other kernels'
// outputs: every read of them is an ordinary load after
// griddepcontrol.wait, and every value read is bounded before use, so that
// no routing, however wrong, makes a block read or write outside its
// tensors.
//
//===----------------------------------------------------------------------===//

#include "PreparedEmitter.h"

#include <functional>

using namespace mlir;
using namespace mlir::humming;
namespace hq = ::humming;
namespace L = ::humming::layout;
namespace abi = ::humming::abi;

namespace {
/// A plain (not invariant) load of element `index` (i64) at `base`: the
/// routing is written by the kernel before this one on the stream.
Value loadRouting(ImplicitLocOpBuilder &b, Type type, Value base,
                  Value index) {
  auto ptr = LLVM::LLVMPointerType::get(b.getContext(), 1);
  Value addr = LLVM::GEPOp::create(b, ptr, type, base, ValueRange{index});
  return LLVM::LoadOp::create(b, type, addr);
}

/// The integer arithmetic of the routing, by value (the row functions of
/// BlockRouting keep a copy).
struct RouteOps {
  ImplicitLocOpBuilder &b;
  Value cmp(arith::CmpIPredicate p, Value x, Value y) const {
    return arith::CmpIOp::create(b, p, x, y);
  }
  Value add(Value x, Value y) const { return arith::AddIOp::create(b, x, y); }
  Value mul(Value x, Value y) const { return arith::MulIOp::create(b, x, y); }
  Value sel(Value c, Value x, Value y) const {
    return arith::SelectOp::create(b, c, x, y);
  }
  Value clamp(Value v, Value lo, Value hi) const {
    return arith::MinSIOp::create(b, arith::MaxSIOp::create(b, v, lo), hi);
  }
};
} // namespace

scf::IfOp PreparedEmitter::routeBlock() {
  if (!spec.isMoe())
    return nullptr;
  const GemmKernelSpec::Moe &moe = spec.moe;
  // Row r of the block (i32 < block_m): its id (the output row) and whether
  // it holds a token; the block's expert (uniform).
  const BlockRouting routing =
      moe.routing == abi::kRoutingIndexed      ? routeIndexed()
      : moe.routing == abi::kRoutingContiguous ? routeContiguous()
                                               : routeGroupedMasked();
  Value any = writeRowTable(routing);
  Value expert = routing.expert;
  const RouteOps o{b};
  using P = arith::CmpIPredicate;
  Value expertOk =
      arith::AndIOp::create(b, o.cmp(P::sge, expert, c32(0)),
                            o.cmp(P::slt, expert, c32(moe.experts)));
  if (moe.routing == abi::kRoutingIndexed)
    zeroRowsOffRank(any, expertOk);
  auto ifWork = scf::IfOp::create(b, arith::AndIOp::create(b, any, expertOk),
                                  /*withElseRegion=*/false);
  b.setInsertionPointToStart(ifWork.thenBlock());
  shiftToExpert(expert);
  return ifWork;
}

PreparedEmitter::BlockRouting PreparedEmitter::routeIndexed() {
  const GemmKernelSpec::Moe &moe = spec.moe;
  const int64_t bm = tile.blockM();
  const RouteOps o{b};
  using P = arith::CmpIPredicate;
  Value start = o.mul(bidY, c32(bm));
  // Blocks from num_tokens_padded on are padding; so is every block past
  // sorted_ids (the grid holds floor(P / block_m) of them).
  Value gridRows =
      o.mul(index32(gpu::GridDimOp::create(b, gpu::Dimension::y)), c32(bm));
  Value limit = arith::MinSIOp::create(
      b, loadRouting(b, i32, param(abi::ParamRowsPadded), c64(0)), gridRows);
  // The routing's block_size is a launch parameter (any multiple of
  // block_m: the caller routes for the kernel of its M); another value
  // leaves the block without an expert (zero rows), never a block that
  // straddles two experts or a division by zero.
  Value routingBlock = param(abi::ParamRoutingBlock);
  Value blockOk = arith::AndIOp::create(
      b, o.cmp(P::sgt, routingBlock, c32(0)),
      o.cmp(P::eq, arith::RemUIOp::create(b, routingBlock, c32(bm)), c32(0)));
  Value inRange =
      arith::AndIOp::create(b, o.cmp(P::slt, start, limit), blockOk);
  Value block =
      arith::DivUIOp::create(b, start, o.sel(blockOk, routingBlock, c32(bm)));
  Value expert = o.sel(inRange,
                       loadRouting(b, i32, param(abi::ParamBlockExperts),
                                   ext64(o.sel(inRange, block, c32(0)))),
                       c32(-1));
  Value total = o.mul(m, c32(moe.topK));
  auto rowOf = [=](Value local) -> std::pair<Value, Value> {
    Value r = o.add(start, local);
    Value rowOk = o.cmp(P::slt, r, limit);
    Value raw = loadRouting(b, i32, param(abi::ParamRowIds),
                            ext64(o.sel(rowOk, r, c32(0))));
    // Ids at or past M x top_k (the sentinel) and negative ones hold no
    // token.
    return {raw, arith::AndIOp::create(
                     b, rowOk,
                     arith::AndIOp::create(b, o.cmp(P::sge, raw, c32(0)),
                                           o.cmp(P::slt, raw, total)))};
  };
  return {expert, rowOf};
}

PreparedEmitter::BlockRouting PreparedEmitter::routeContiguous() {
  const GemmKernelSpec::Moe &moe = spec.moe;
  const int64_t bm = tile.blockM();
  const RouteOps o{b};
  using P = arith::CmpIPredicate;
  const int64_t experts = moe.experts;
  const int64_t tableByte = L::moeRowTableOffset(spec.weight, tile);
  auto loadShared = [&](int64_t byte) {
    return LLVM::LoadOp::create(b, i32, smemAt(c32(byte)), /*alignment=*/4);
  };
  // Warp 0 finds the expert whose blocks hold block bidY: lane l takes
  // experts 32 c + l, counts their blocks (offsets clamped into 0 .. M,
  // so disordered ones give empty experts), scans the counts across the
  // warp and keeps the hit; lane 0 publishes (expert, first row, end).
  Value warp0 = o.cmp(P::ult, tid, c32(32));
  auto ifWarp0 = scf::IfOp::create(b, warp0, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifWarp0.thenBlock());
    Type offType = moe.layout64 ? i64 : i32;
    auto offset = [&](Value e) {
      Value v = loadRouting(b, offType, param(abi::ParamRowIds), ext64(e));
      if (moe.layout64)
        v = arith::TruncIOp::create(
            b, i32,
            arith::MinSIOp::create(b, arith::MaxSIOp::create(b, v, c64(0)),
                                   arith::ExtSIOp::create(b, i64, m)));
      return o.clamp(v, c32(0), m);
    };
    const int64_t chunks = hq::ceilDiv(experts, 32);
    Value none = c32(-1);
    auto loop = scf::ForOp::create(b, c32(0), c32(chunks), c32(1),
                                   ValueRange{c32(0), none, none, none});
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(loop.getBody());
      Value chunk = loop.getInductionVar();
      Value base = loop.getRegionIterArg(0);
      Value e = o.add(o.mul(chunk, c32(32)), lane);
      Value inE = o.cmp(P::slt, e, c32(experts));
      Value lo = offset(arith::MinSIOp::create(b, e, c32(experts)));
      Value hi =
          offset(arith::MinSIOp::create(b, o.add(e, c32(1)), c32(experts)));
      Value count = o.sel(
          inE,
          arith::MaxSIOp::create(b, arith::SubIOp::create(b, hi, lo), c32(0)),
          c32(0));
      Value blocks =
          arith::DivUIOp::create(b, o.add(count, c32(bm - 1)), c32(bm));
      Value incl = blocks;
      for (int64_t d = 1; d < 32; d *= 2) {
        Value up = gpu::ShuffleOp::create(b, incl, c32(d), c32(32),
                                          gpu::ShuffleMode::UP)
                       .getShuffleResult();
        incl = o.add(incl, o.sel(o.cmp(P::uge, lane, c32(d)), up, c32(0)));
      }
      Value first = o.add(base, arith::SubIOp::create(b, incl, blocks));
      Value hit = arith::AndIOp::create(b, o.cmp(P::sge, bidY, first),
                                        o.cmp(P::slt, bidY, o.add(base, incl)));
      Value rowStart =
          o.add(lo, o.mul(arith::SubIOp::create(b, bidY, first), c32(bm)));
      Value total = gpu::ShuffleOp::create(b, incl, c32(31), c32(32),
                                           gpu::ShuffleMode::IDX)
                        .getShuffleResult();
      scf::YieldOp::create(
          b, ValueRange{o.add(base, total),
                        o.sel(hit, e, loop.getRegionIterArg(1)),
                        o.sel(hit, rowStart, loop.getRegionIterArg(2)),
                        o.sel(hit, hi, loop.getRegionIterArg(3))});
    }
    // One lane at most hit: the others hold -1, a maximum finds it.
    SmallVector<Value> found = {loop.getResult(1), loop.getResult(2),
                                loop.getResult(3)};
    for (Value &v : found)
      for (int64_t d = 16; d >= 1; d /= 2)
        v = arith::MaxSIOp::create(
            b, v,
            gpu::ShuffleOp::create(b, v, c32(d), c32(32), gpu::ShuffleMode::XOR)
                .getShuffleResult());
    auto ifLane0 = scf::IfOp::create(b, o.cmp(P::eq, lane, c32(0)),
                                     /*withElseRegion=*/false);
    b.setInsertionPointToStart(ifLane0.thenBlock());
    for (int64_t i = 0; i < 3; ++i)
      storeSharedWord(c32(tableByte + 4 * bm + 4 * i), found[size_t(i)]);
  }
  gpu::BarrierOp::create(b);
  Value expert = loadShared(tableByte + 4 * bm);
  Value rowStart = loadShared(tableByte + 4 * bm + 4);
  Value rowEnd = loadShared(tableByte + 4 * bm + 8);
  auto rowOf = [=](Value local) -> std::pair<Value, Value> {
    Value id = o.add(rowStart, local);
    return {id, arith::AndIOp::create(b, o.cmp(P::sge, expert, c32(0)),
                                      o.cmp(P::slt, id, rowEnd))};
  };
  return {expert, rowOf};
}

PreparedEmitter::BlockRouting PreparedEmitter::routeGroupedMasked() {
  const GemmKernelSpec::Moe &moe = spec.moe;
  const int64_t bm = tile.blockM();
  const RouteOps o{b};
  using P = arith::CmpIPredicate;
  const int64_t experts = moe.experts;
  // grouped_masked: E x max_tokens rows, block bidY the (bidY mod
  // blocks-per-expert)-th of expert bidY / blocks-per-expert; counts
  // clamped into 0 .. max_tokens (without counts, `moe.uniform`: all
  // max_tokens rows of every expert).
  Value maxTokens = arith::DivUIOp::create(b, m, c32(experts));
  Value perExpert =
      arith::DivUIOp::create(b, o.add(maxTokens, c32(bm - 1)), c32(bm));
  Value divisor = arith::MaxUIOp::create(b, perExpert, c32(1));
  Value expert = arith::DivUIOp::create(b, bidY, divisor);
  Value inE = o.cmp(P::ult, expert, c32(experts));
  Value sub = arith::SubIOp::create(b, bidY, o.mul(expert, divisor));
  Value count = moe.uniform
                    ? maxTokens
                    : o.clamp(loadRouting(b, i32, param(abi::ParamRowIds),
                                          ext64(arith::MinUIOp::create(
                                              b, expert, c32(experts - 1)))),
                              c32(0), maxTokens);
  auto rowOf = [=](Value local) -> std::pair<Value, Value> {
    Value r = o.add(o.mul(sub, c32(bm)), local);
    return {o.add(o.mul(expert, maxTokens), r),
            arith::AndIOp::create(b, inE, o.cmp(P::slt, r, count))};
  };
  return {expert, rowOf};
}

Value PreparedEmitter::writeRowTable(const BlockRouting &routing) {
  const int64_t bm = tile.blockM();
  const RouteOps o{b};
  using P = arith::CmpIPredicate;
  const int64_t tableByte = L::moeRowTableOffset(spec.weight, tile);
  // The table: each row's id, -1 where it holds no token; thread t fills
  // rows t, t + threads, ... (a block may have fewer threads than rows).
  // The barrier that publishes it also tells every thread whether the block
  // has a row.
  Value anyHere = arith::ConstantIntOp::create(b, i1, 0);
  Value highHere = anyHere;
  for (int64_t j = 0; j * tile.threads() < bm; ++j) {
    Value local = o.add(tid, c32(j * tile.threads()));
    Value inBlock = o.cmp(P::ult, local, c32(bm));
    auto ifRow = scf::IfOp::create(b, TypeRange{i1}, inBlock,
                                   /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifRow.thenBlock());
      auto [id, valid] = routing.rowOf(local);
      storeSharedWord(o.add(c32(tableByte), o.mul(local, c32(4))),
                      o.sel(valid, id, c32(-1)));
      scf::YieldOp::create(b, valid);
      b.setInsertionPointToStart(ifRow.elseBlock());
      scf::YieldOp::create(b, Value(arith::ConstantIntOp::create(b, i1, 0)));
    }
    anyHere = arith::OrIOp::create(b, anyHere, ifRow.getResult(0));
    if (moeTransposed)
      highHere = arith::OrIOp::create(
          b, highHere,
          arith::AndIOp::create(b, ifRow.getResult(0),
                                o.cmp(P::uge, local, c32(8))));
  }
  if (moeTransposed)
    highRows =
        o.cmp(P::ne,
              ptx.barrierReduceOr(0, tile.threads(),
                                  arith::ExtUIOp::create(b, i32, highHere)),
              c32(0));
  Value any =
      o.cmp(P::ne,
            ptx.barrierReduceOr(0, tile.threads(),
                                arith::ExtUIOp::create(b, i32, anyHere)),
            c32(0));
  return any;
}

void PreparedEmitter::zeroRowsOffRank(Value any, Value expertOk) {
  const int64_t bm = tile.blockM();
  const RouteOps o{b};
  using P = arith::CmpIPredicate;
  // An expert not on this rank (vLLM's expert_map gives -1; anything
  // outside 0 .. E - 1 counts as one): its rows are zero, as the
  // reference and vLLM's kernels have them. One CTA along K writes them.
  Value zeroRows = arith::AndIOp::create(
      b,
      arith::AndIOp::create(
          b, any,
          arith::XOrIOp::create(b, expertOk,
                                arith::ConstantIntOp::create(b, i1, 1))),
      o.cmp(P::eq, bidZ, c32(0)));
  auto ifZero = scf::IfOp::create(b, zeroRows, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifZero.thenBlock());
  const int64_t bn = tile.blockN(), cells = bm * bn;
  const int64_t steps = hq::ceilDiv(cells, tile.threads());
  auto loop = scf::ForOp::create(b, c32(0), c32(steps), c32(1));
  b.setInsertionPointToStart(loop.getBody());
  Value cell = o.add(o.mul(loop.getInductionVar(), c32(tile.threads())), tid);
  Value inCells = o.cmp(P::slt, cell, c32(cells));
  Value local = arith::DivUIOp::create(
      b, arith::MinUIOp::create(b, cell, c32(cells - 1)), c32(bn));
  Value col =
      o.add(o.mul(bidX, c32(bn)), arith::RemUIOp::create(b, cell, c32(bn)));
  auto [row, rowOk] = destRow(local);
  Value ok = arith::AndIOp::create(
      b, inCells,
      arith::AndIOp::create(b, rowOk, o.cmp(P::slt, col, c32(spec.nOut))));
  auto ifStore = scf::IfOp::create(b, ok, /*withElseRegion=*/false);
  b.setInsertionPointToStart(ifStore.thenBlock());
  store(arith::ConstantIntOp::create(b, i16, 0), param(abi::ParamOutput),
        arith::AddIOp::create(
            b, arith::MulIOp::create(b, sext64(row), c64(spec.nOut)),
            ext64(col)));
}

void PreparedEmitter::shiftToExpert(Value expert) {
  const GemmKernelSpec::Moe &moe = spec.moe;
  // The expert's weights, scales, zero points, global scale and bias.
  Value e64 = ext64(expert);
  auto shift = [&](abi::GemmParam p, int64_t bytes) {
    if (bytes == 0)
      return;
    params[p] = LLVM::GEPOp::create(b, params[p].getType(), i8, params[p],
                                    ValueRange{arith::MulIOp::create(
                                        b, e64, c64(bytes))});
  };
  shift(abi::ParamWeight, moe.weightBytes);
  shift(abi::ParamScales, moe.scaleBytes);
  shift(abi::ParamZeroPoints, moe.zeroBytes);
  shift(abi::ParamBias, moe.biasBytes);
  if (spec.weight.hasGlobalScale())
    shift(abi::ParamGlobalScale, 4);
}

std::pair<Value, Value> PreparedEmitter::sourceRow(Value local) {
  auto [row, ok] = destRow(local);
  return {sourceOf(row), ok};
}

Value PreparedEmitter::sourceOf(Value row) {
  if (spec.isMoe() && spec.moe.routing == abi::kRoutingIndexed &&
      spec.moe.topK > 1)
    return arith::DivUIOp::create(b, row, c32(spec.moe.topK));
  return row;
}

std::pair<Value, Value> PreparedEmitter::destRow(Value local) {
  if (!spec.isMoe()) {
    Value row = arith::AddIOp::create(
        b, arith::MulIOp::create(b, bidY, c32(tile.blockM())), local);
    return {row, arith::CmpIOp::create(b, arith::CmpIPredicate::slt, row, m)};
  }
  // moeTransposed passes: tile row `local` < 8 is block row local +
  // rowShift; tile rows 8-15 hold no token.
  Value inPass;
  if (rowShift) {
    inPass = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, local, c32(8));
    local = arith::SelectOp::create(
        b, inPass, arith::AddIOp::create(b, local, rowShift), c32(0));
  }
  Value byte = arith::AddIOp::create(
      b, c32(L::moeRowTableOffset(spec.weight, tile)),
      arith::MulIOp::create(b, local, c32(4)));
  Value id = LLVM::LoadOp::create(b, i32, smemAt(byte), /*alignment=*/4);
  Value ok = arith::CmpIOp::create(b, arith::CmpIPredicate::sge, id, c32(0));
  if (inPass)
    ok = arith::AndIOp::create(b, ok, inPass);
  return {arith::SelectOp::create(b, ok, id, c32(0)), ok};
}

Value PreparedEmitter::routerWeight(Value row) {
  if (!spec.isMoe() || !spec.moe.routerWeights)
    return Value();
  return loadRouting(b, f32, param(abi::ParamRouterWeights), sext64(row));
}
