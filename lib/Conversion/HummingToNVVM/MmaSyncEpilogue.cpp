//===- MmaSyncEpilogue.cpp - The mma.sync kernels' epilogue ---------------===//
//
// After the mma.sync main loop (MmaSyncEmitter.h): the in-block split-K
// reduction spread over the warp groups, the split-K across CTAs (through
// the workspace, or a cluster's distributed shared memory) and the output
// stores, one unit (a row's two adjacent columns) at a time.
//
//===----------------------------------------------------------------------===//

#include "MmaSyncEmitter.h"

using namespace mlir;
using namespace mlir::humming;
namespace hq = ::humming;
namespace L = ::humming::layout;

void MmaSyncEmitter::storeUnit(int64_t unit, Value v0, Value v1) {
  const hq::WeightSchema &w = spec.weight;
  const int64_t i = unit / 16, j = (unit / 2) % 8, half = unit % 2;
  bool outBF16 = spec.output == hq::ScalarType::bf16();
  Type outType = outBF16 ? Type(b.getBF16Type()) : Type(b.getF16Type());
  bool pairedStores = spec.nOut % 2 == 0;
  Value nBase = arith::MulIOp::create(b, nTile, c32(64));
  // Columns 64 nTile + 8 j + 2 quad + {0, 1}: their per-column factors.
  Value col = arith::AddIOp::create(
      b, nBase,
      arith::AddIOp::create(b, c32(8 * j),
                            arith::MulIOp::create(b, quad, c32(2))));
  Value colOk =
      arith::CmpIOp::create(b, arith::CmpIPredicate::slt, col, c32(spec.nOut));
  Value local = arith::AddIOp::create(
      b, rowBase, arith::AddIOp::create(b, grp, c32(16 * i + 8 * half)));
  auto [row, rowOk] = destRow(local);
  Value vals[2] = {v0, v1};
  // 8-bit activations: the row's activation scale (clamped to a real row).
  // MoE: the router weight multiplies the row after its bias.
  Value routed = routerWeight(row);
  if (Value scale = activationScale(sourceOf(row)))
    for (Value &v : vals)
      v = arith::MulFOp::create(b, v, scale);
  SmallVector<Value> outs;
  for (int64_t e = 0; e < 2; ++e) {
    Value c = arith::AddIOp::create(b, col, c32(e));
    Value cc = arith::MinSIOp::create(b, c, c32(spec.nOut - 1));
    Value factor, bias;
    if (w.granularity == hq::Granularity::Channel && !loopChannelScales) {
      // Prepared [1, N] scales, permuted: column 8 j + 2 quad + e of the
      // n-tile is stored at 8 (2 quad + e) + j.
      Value stored = arith::AddIOp::create(
          b, nBase,
          arith::AddIOp::create(
              b,
              arith::MulIOp::create(
                  b,
                  arith::AddIOp::create(
                      b, arith::MulIOp::create(b, quad, c32(2)), c32(e)),
                  c32(8)),
              c32(j)));
      factor =
          loadAsF32(param(hq::abi::ParamScales), ext64(stored), w.scaleType);
    }
    outputFactors(factor, bias, cc);
    outs.push_back(arith::ExtUIOp::create(
        b, i32, outputBits(vals[e], factor, bias, outType, routed)));
  }
  Value index = arith::AddIOp::create(
      b, arith::MulIOp::create(b, sext64(row), c64(spec.nOut)), ext64(col));
  if (pairedStores) {
    // Both columns in range together (col even, N even): one 32-bit store.
    auto ifOp = scf::IfOp::create(b, arith::AndIOp::create(b, rowOk, colOk),
                                  /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value packed = arith::OrIOp::create(
        b, outs[0], arith::ShLIOp::create(b, outs[1], c32(16)));
    store(packed, param(hq::abi::ParamOutput),
          arith::ShRUIOp::create(b, index, c64(1)));
    return;
  }
  for (int64_t e = 0; e < 2; ++e) {
    Value c = arith::AddIOp::create(b, col, c32(e));
    Value ok = arith::AndIOp::create(
        b, rowOk,
        arith::CmpIOp::create(b, arith::CmpIPredicate::slt, c, c32(spec.nOut)));
    auto ifOp = scf::IfOp::create(b, ok, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    store(arith::TruncIOp::create(b, i16, outs[e]), param(hq::abi::ParamOutput),
          arith::AddIOp::create(b, index, c64(e)));
  }
}

Value MmaSyncEmitter::owns(int64_t unit) {
  if (tile.kSplit == 1)
    return arith::ConstantIntOp::create(b, i1, 1);
  return arith::CmpIOp::create(b, arith::CmpIPredicate::eq, warpK,
                               c32(unit % tile.kSplit));
}

SmallVector<Value>
MmaSyncEmitter::ifOwned(int64_t unit, function_ref<SmallVector<Value>()> body) {
  auto ifOp = scf::IfOp::create(b, TypeRange{f32, f32}, owns(unit),
                                /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  scf::YieldOp::create(b, body());
  b.setInsertionPointToStart(ifOp.elseBlock());
  Value zero = cf(0.0);
  scf::YieldOp::create(b, ValueRange{zero, zero});
  return SmallVector<Value>(ifOp.getResults().begin(), ifOp.getResults().end());
}

void MmaSyncEmitter::finish(ArrayRef<Value> acc, Value tid) {
  const int64_t perThread = mt * 32;
  const int64_t units = perThread / 2;
  // The output is cut into units of two accumulators (one row, two
  // adjacent columns: one 32-bit store); warp group g of the in-block K
  // split owns the units u with u % kSplit == g, adds that unit's partial
  // sums of every group (in group order, so the result does not depend on
  // timing) and stores it. Every warp does 1/kSplit of the reduction and
  // of the epilogue instead of one warp doing all of it.
  SmallVector<SmallVector<Value>> sums(static_cast<size_t>(units));
  // A static activation scale is loaded once, here, where it dominates
  // every store (the stores sit in the reduction's branches).
  if (spec.input.scaling == hq::ActScaling::Static)
    activationScale(c32(0));
  if (tile.kSplit == 1) {
    for (int64_t u = 0; u < units; ++u)
      sums[size_t(u)] = {acc[size_t(2 * u)], acc[size_t(2 * u + 1)]};
  } else {
    gpu::BarrierOp::create(b); // every warp is done with its pipeline
    // [group][warpMi][warpN][accumulator][lane]: a warp's accesses are
    // 128 contiguous bytes, free of bank conflicts.
    auto at = [&](Value group, int64_t index) {
      Value warpOfGroup = arith::AddIOp::create(
          b,
          arith::MulIOp::create(
              b,
              arith::AddIOp::create(
                  b, arith::MulIOp::create(b, group, c32(tile.warpsM)), warpMi),
              c32(tile.warpsN)),
          warpN);
      Value slot = arith::AddIOp::create(
          b,
          arith::MulIOp::create(
              b,
              arith::AddIOp::create(
                  b, arith::MulIOp::create(b, warpOfGroup, c32(perThread)),
                  c32(index)),
              c32(32)),
          lane);
      return LLVM::GEPOp::create(b, smem.getType(), f32, smem,
                                 ValueRange{slot});
    };
    for (int64_t i = 0; i < perThread; ++i)
      LLVM::StoreOp::create(b, acc[size_t(i)], at(warpK, i));
    gpu::BarrierOp::create(b);
    for (int64_t u = 0; u < units; ++u)
      sums[size_t(u)] = ifOwned(u, [&] {
        SmallVector<Value> v(2);
        for (int64_t g = 0; g < tile.kSplit; ++g)
          for (int64_t e = 0; e < 2; ++e) {
            Value x = LLVM::LoadOp::create(b, f32, at(c32(g), 2 * u + e));
            v[size_t(e)] =
                v[size_t(e)] ? arith::AddFOp::create(b, v[size_t(e)], x) : x;
          }
        return v;
      });
  }
  if (clustered())
    return reduceInCluster(sums);
  if (split.ctas > 1)
    return reduceAcrossCtas(sums, tid);
  for (int64_t u = 0; u < units; ++u) {
    auto ifOp = scf::IfOp::create(b, owns(u), /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    storeUnit(u, sums[size_t(u)][0], sums[size_t(u)][1]);
  }
}

Value MmaSyncEmitter::groupColumn() {
  return arith::AddIOp::create(
      b,
      arith::MulIOp::create(
          b,
          arith::AddIOp::create(
              b, arith::MulIOp::create(b, warpMi, c32(tile.warpsN)), warpN),
          c32(32)),
      lane);
}

void MmaSyncEmitter::reduceAcrossCtas(ArrayRef<SmallVector<Value>> sums,
                                      Value tid) {
  const int64_t S = split.ctas;
  const int64_t perThread = mt * 32;
  // One column per thread of a warp group (the groups of an in-block K
  // split own different units and share the columns).
  const int64_t threads = tile.warpsM * tile.warpsN * 32;
  const int64_t units = perThread / 2;
  // Partial sums: the thread of a warp group is [warpMi][warpN][lane].
  Value tileId = outputTile();
  Value column = groupColumn();
  auto slotAt = [&](Value s, Value index) {
    return partialAt(s, index, perThread, threads, column);
  };
  auto slot = [&](Value s, int64_t index) { return slotAt(s, c32(index)); };
  for (int64_t u = 0; u < units; ++u) {
    auto ifOp = scf::IfOp::create(b, owns(u), /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    for (int64_t e = 0; e < 2; ++e)
      LLVM::StoreOp::create(b, sums[size_t(u)][size_t(e)],
                            slot(bidZ, 2 * u + e));
  }
  // Release: the partial sums are visible device-wide before the arrival.
  LLVM::FenceOp::create(b, LLVM::AtomicOrdering::release, "device");
  gpu::BarrierOp::create(b);
  Value flag =
      LLVM::GEPOp::create(b, smem.getType(), i32, smem, ValueRange{c32(0)});
  {
    auto ifFirst = scf::IfOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, c32(0)),
        /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifFirst.thenBlock());
    Value last = arriveOnTileCounter(tileId);
    LLVM::StoreOp::create(b, arith::ExtUIOp::create(b, i32, last), flag);
  }
  gpu::BarrierOp::create(b);
  Value isLast = arith::CmpIOp::create(
      b, arith::CmpIPredicate::ne, LLVM::LoadOp::create(b, i32, flag), c32(0));
  auto ifSum = scf::IfOp::create(b, isLast, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifSum.thenBlock());
  // Acquire: the other CTAs' partial sums are visible from here on.
  LLVM::FenceOp::create(b, LLVM::AtomicOrdering::acquire, "device");
  // The thread's owned units are u = j x kSplit + warpK: every load of
  // them is issued before the first sum is needed (loads inside each
  // unit's branch waited out one L2 round trip per unit), one CTA after
  // another, summed in split order as before.
  assert(units % tile.kSplit == 0 && "every K-split group owns as many units");
  const int64_t owned = units / tile.kSplit;
  SmallVector<std::array<Value, 2>> total(static_cast<size_t>(owned));
  for (int64_t z = 0; z < S; ++z)
    for (int64_t j = 0; j < owned; ++j)
      for (int64_t e = 0; e < 2; ++e) {
        Value index = arith::AddIOp::create(
            b,
            arith::MulIOp::create(
                b, arith::AddIOp::create(b, c32(j * tile.kSplit), warpK),
                c32(2)),
            c32(e));
        // Written by other CTAs during this launch: through L2 (.cg).
        Value x = LLVM::LoadOp::create(b, f32, slotAt(c32(z), index),
                                       /*alignment=*/4, /*isVolatile=*/true);
        Value &v = total[size_t(j)][size_t(e)];
        v = z ? Value(arith::AddFOp::create(b, v, x)) : x;
      }
  for (int64_t u = 0; u < units; ++u) {
    auto ifOp = scf::IfOp::create(b, owns(u), /*withElseRegion=*/false);
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    const std::array<Value, 2> &v = total[size_t(u / tile.kSplit)];
    storeUnit(u, v[0], v[1]);
  }
}

void MmaSyncEmitter::reduceInCluster(ArrayRef<SmallVector<Value>> sums) {
  const int64_t S = split.ctas;
  const int64_t units = mt * 16;
  // One column per thread of a warp group, as in the workspace: unit u's
  // sum e of column c at word (2u + e) x threads + c (a byte offset).
  const int64_t threads = tile.warpsM * tile.warpsN * 32;
  Value column = groupColumn();
  auto wordOf = [&](int64_t index) {
    return arith::MulIOp::create(
        b, arith::AddIOp::create(b, c32(index * threads), column), c32(4));
  };
  // Every thread of the CTA is done with the pipeline's (and the in-block
  // split's) shared memory.
  clusterBarrier();
  for (int64_t u = 0; u < units; ++u) {
    auto ifOp = scf::IfOp::create(b, owns(u), /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    for (int64_t e = 0; e < 2; ++e)
      storeSharedWord(wordOf(2 * u + e), sums[size_t(u)][size_t(e)]);
  }
  // Every CTA's sums are visible to the cluster.
  clusterBarrier();
  for (int64_t u = 0; u < units; ++u) {
    // CTA r (its index along z) adds unit u where u % S = r, over the
    // CTAs in rank order (the workspace path's order: the same sums).
    Value mine = arith::AndIOp::create(
        b, owns(u),
        arith::CmpIOp::create(b, arith::CmpIPredicate::eq, bidZ, c32(u % S)));
    auto ifOp = scf::IfOp::create(b, mine, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value v[2];
    for (int64_t e = 0; e < 2; ++e)
      for (int64_t z = 0; z < S; ++z) {
        Value x = loadClusterF32(wordOf(2 * u + e), c32(z));
        v[e] = v[e] ? arith::AddFOp::create(b, v[e], x) : x;
      }
    storeUnit(u, v[0], v[1]);
  }
  // No CTA leaves while another still reads its shared memory.
  clusterBarrier();
}
