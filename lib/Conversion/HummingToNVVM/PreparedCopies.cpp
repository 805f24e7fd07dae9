//===- PreparedCopies.cpp - The prepared kernels' copy pipeline -----------===//
//
// How an iteration's operands reach shared memory in the prepared-layout
// kernels: the block's cooperative cp.async copies, TMA tensor copies of the
// activations and bulk copies of weights, scales and zero points (announced
// on the slot's full mbarrier), the L2 prefetch, and the pipeline loop that
// keeps `stages - lag` iterations in flight.
//
//===----------------------------------------------------------------------===//

#include "PreparedEmitter.h"

#include "Humming/Conversion/Passes.h"

using namespace mlir;
using namespace mlir::humming;
namespace hq = ::humming;
namespace L = ::humming::layout;

void PreparedEmitter::issueCopies(Value iter, Value slot, Value when,
                                  bool commit) {
  {
    OpBuilder::InsertionGuard guard(b);
    if (when) {
      auto ifOp = scf::IfOp::create(b, when, /*withElseRegion=*/false);
      b.setInsertionPointToStart(ifOp.thenBlock());
    }
    if (tile.cooperative())
      issueCooperativeCopies(iter, slot);
    else
      issueWarpCopies(iter, slot);
  }
  // Bulk fills have no cp.async copies and tracked fills' copies arrive
  // on the full barrier (nothing waits for a group).
  if (commit && !bulkFills() && !trackedFills())
    NVVM::CpAsyncCommitGroupOp::create(b);
}

void PreparedEmitter::prefetchWeightsL2(Value first, Value local,
                                        bool oneThread) {
  // Chunks of this iteration: k-tile slots of the block (cooperative) or of
  // this warp, one per thread (lane) from 0; or all of them by this thread.
  const int64_t chunks =
      tile.cooperative() ? tile.kTilesPerIteration() : tile.kTilesPerWarp;
  if (oneThread) {
    for (int64_t c = 0; c < chunks; ++c)
      prefetchWeightChunkL2(first, local, c32(c));
    return;
  }
  prefetchWeightChunkL2(first, local, tile.cooperative() ? copyTid : lane);
}

PreparedEmitter::ActivationBox PreparedEmitter::activationBox(Value iter) {
  // The iteration's first k-tile (the map's elements are 2 bytes: pairs of
  // 8-bit activations, 8 per k-tile; 16 per 16-bit one) and the block's
  // first row; with multicast_a this CTA's share of the rows (its rank in
  // the pair along x: the box is block_m / multicast_a rows).
  ActivationBox box;
  box.row = arith::MulIOp::create(b, bidY, c32(tile.blockM()));
  box.col = arith::MulIOp::create(
      b, arith::MulIOp::create(b, iter, c32(tile.kTilesPerIteration())),
      c32(act8 ? 8 : 16));
  if (tile.multicastA > 1) {
    Value rank = arith::RemUIOp::create(b, bidX, c32(tile.multicastA));
    box.shareRow =
        arith::MulIOp::create(b, rank, c32(tile.blockM() / tile.multicastA));
    box.row = arith::AddIOp::create(b, box.row, box.shareRow);
  }
  return box;
}

void PreparedEmitter::prefetchActivationsL2(Value first, Value local) {
  auto ifOp = scf::IfOp::create(
      b,
      arith::CmpIOp::create(b, arith::CmpIPredicate::slt, local,
                            c32(ctaIterations)),
      /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  // The box the fill's tensor copy reads.
  ActivationBox box = activationBox(arith::AddIOp::create(b, first, local));
  NVVM::CpAsyncBulkTensorPrefetchOp::create(
      b, inputMapAddress(), ValueRange{box.col, box.row},
      /*im2colOffsets=*/ValueRange(),
      NVVM::TMALoadModeAttr::get(b.getContext(), NVVM::TMALoadMode::TILE),
      /*l2CacheHint=*/Value());
}

void PreparedEmitter::prefetchWeightChunkL2(Value first, Value local,
                                            Value who) {
  const unsigned bits = spec.weight.type.bits;
  const int64_t chunks =
      tile.cooperative() ? tile.kTilesPerIteration() : tile.kTilesPerWarp;
  Value mine = arith::AndIOp::create(
      b, arith::CmpIOp::create(b, arith::CmpIPredicate::ult, who, c32(chunks)),
      arith::CmpIOp::create(b, arith::CmpIPredicate::slt, local,
                            c32(ctaIterations)));
  auto ifOp = scf::IfOp::create(b, mine, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  Value iter = arith::AddIOp::create(b, first, local);
  Value word, bytes;
  if (tile.cooperative()) {
    // The block's n-tiles of k-tile slot `who` (contiguous).
    Value t = arith::AddIOp::create(
        b, arith::MulIOp::create(b, iter, c32(tile.kTilesPerIteration())), who);
    word = weightWord(clampedTile(t), bidX, tile.warpsN);
    bytes = c32(tile.warpsN * 128 * bits);
  } else {
    // This warp's n-tile of its k-tile `who` of the iteration.
    word = weightWord(clampedTile(warpKTile(iter, who)), nTile, 1);
    bytes = c32(128 * bits);
  }
  Value src = LLVM::GEPOp::create(b, ptr, i32, param(hq::abi::ParamWeight),
                                  ValueRange{word});
  NVVM::CpAsyncBulkPrefetchOp::create(b, src, bytes, /*l2CacheHint=*/Value());
}

void PreparedEmitter::copyAsync(int64_t bytes, Value dstByte, Value base,
                                Value index, Value srcBytes) {
  // (.cg, L2 only, takes 16-byte copies alone.)
  Value src = LLVM::GEPOp::create(b, ptr, i32, base, ValueRange{index});
  NVVM::CpAsyncOp::create(
      b, smemAt(dstByte), src, b.getI32IntegerAttr(int32_t(bytes)),
      NVVM::LoadCacheModifierKindAttr::get(
          b.getContext(), bytes == 16 ? NVVM::LoadCacheModifierKind::CG
                                      : NVVM::LoadCacheModifierKind::CA),
      srcBytes);
}

void PreparedEmitter::forEachChunk(int64_t count,
                                   function_ref<void(Value)> copy) {
  forEachChunk(count, [&](Value c, int64_t) { copy(c); });
}

void PreparedEmitter::forEachChunk(int64_t count,
                                   function_ref<void(Value, int64_t)> copy) {
  const int64_t threads = copyThreads();
  for (int64_t first = 0; first < count; first += threads) {
    Value c = arith::AddIOp::create(b, copyTid, c32(first));
    if (first + threads <= count) {
      copy(c, first / threads);
      continue;
    }
    // The last round: only the threads with a chunk left copy.
    auto ifOp = scf::IfOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::ult, c, c32(count)),
        /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    copy(c, first / threads);
  }
}

std::pair<Value, Value> PreparedEmitter::activationSource(Value row,
                                                         Value inRows,
                                                         Value col,
                                                         Value colBytes) {
  Value bytes = arith::SelectOp::create(b, inRows, colBytes, c32(0));
  Value ok = arith::CmpIOp::create(b, arith::CmpIPredicate::sgt, bytes, c32(0));
  // The unit's first 32-bit word: element (row, col) of 1 or 2 bytes.
  const int64_t perWord = act8 ? 4 : 2;
  Value index = arith::AddIOp::create(
      b, arith::MulIOp::create(b, sext64(row), c64(spec.kAct / perWord)),
      sext64(arith::ShRUIOp::create(b, col, c32(act8 ? 2 : 1))));
  return {arith::SelectOp::create(b, ok, index, c64(0)), bytes};
}

void PreparedEmitter::cacheGatheredRows() {
  gatheredRows.clear();
  const int64_t perRow = tile.activationRowBytes() / 16;
  const int64_t chunks = tile.blockM() * perRow, threads = copyThreads();
  for (int64_t first = 0; first < chunks; first += threads) {
    // Chunk copyTid + first is row (copyTid + first) / perRow (past the
    // block in the last round's idle threads: clamped, never copied).
    Value r = arith::MinUIOp::create(
        b,
        arith::DivUIOp::create(
            b, arith::AddIOp::create(b, copyTid, c32(first)), c32(perRow)),
        c32(tile.blockM() - 1));
    auto [row, ok] = sourceRow(r);
    gatheredRows.push_back(arith::SelectOp::create(b, ok, row, c32(-1)));
  }
}

void PreparedEmitter::issueCooperativeCopies(Value iter, Value slot) {
  Value slotBase = arith::MulIOp::create(b, slot, c32(coop.total()));
  const FillPlace fill{
      iter, slot, slotBase,
      arith::AddIOp::create(b, slotBase, c32(coop.activationBytes))};
  if (tile.gatheredActivations && copiesInputs())
    copyGatheredActivations(fill);
  if (!tile.tmaActivations && copiesInputs())
    copyActivationChunks(fill);
  if (!tile.tmaWeights && copiesConstants())
    copyWeightChunks(fill);
  if (tile.tensorActivations() || tile.tmaWeights)
    issueBulkFill(fill);
  if (copiesConstants())
    copyGroupConstants(fill);
  if (tile.groupInputScales && copiesInputs())
    copyGroupInputScales(fill);
}

Value PreparedEmitter::fillKTile(const FillPlace &fill, Value u) {
  return arith::AddIOp::create(
      b, arith::MulIOp::create(b, fill.iter, c32(tile.kTilesPerIteration())),
      u);
}

void PreparedEmitter::copyGatheredActivations(const FillPlace &fill) {
  const int64_t blockM = tile.blockM();
  // Gathered activations (tma = [a] in a MoE kernel): chunk c is the
  // 16-byte unit j = c % P of row r = c / P of the iteration's K (P =
  // activationRowBytes / 16; eight consecutive threads read one row's
  // iteration K whole), stored where the tensor copy would put it: row r at
  // r x 16 P bytes, unit j at j ^ ((that offset >> 7) & (P - 1)) x 16 (TMA's
  // 16 P-byte swizzle; the slot starts at a multiple of its period). The
  // row of each round of a producer's chunks was read from the row table
  // before its loop (cacheGatheredRows; -1: no token).
  const int64_t perRow = tile.activationRowBytes() / 16;
  forEachChunk(blockM * perRow, [&](Value c, int64_t round) {
    Value r = arith::DivUIOp::create(b, c, c32(perRow));
    Value j = arith::RemUIOp::create(b, c, c32(perRow));
    // The producers' rows, cached before their loop (gathered tiles are
    // warp-specialized, and only their producers copy).
    if (size_t(round) >= gatheredRows.size())
      llvm::report_fatal_error("humming: gathered activation copies "
                               "without the producers' cached rows (a bug "
                               "in the lowering)");
    Value row = gatheredRows[size_t(round)];
    Value inRows =
        arith::CmpIOp::create(b, arith::CmpIPredicate::sge, row, c32(0));
    // (Unit j holds 16 bytes of the row: 8 16-bit or 16 8-bit columns.)
    Value col = arith::AddIOp::create(
        b, arith::MulIOp::create(b, fillKTile(fill, c32(0)), c32(16)),
        arith::MulIOp::create(b, j, c32(act8 ? 16 : 8)));
    Value colBytes = columnBytes(col);
    auto [index, bytes] = activationSource(
        arith::MaxSIOp::create(b, row, c32(0)), inRows, col, colBytes);
    Value off =
        arith::AddIOp::create(b, arith::MulIOp::create(b, r, c32(16 * perRow)),
                              arith::MulIOp::create(b, j, c32(16)));
    Value swz = arith::ShLIOp::create(
        b,
        arith::AndIOp::create(b, arith::ShRUIOp::create(b, off, c32(7)),
                              c32(perRow - 1)),
        c32(4));
    copy16(arith::AddIOp::create(b, fill.slotBase,
                                 arith::XOrIOp::create(b, off, swz)),
           param(hq::abi::ParamInput), index, bytes);
  });
}

void PreparedEmitter::copyActivationChunks(const FillPlace &fill) {
  const int64_t kT = tile.kTilesPerIteration(), blockM = tile.blockM();
  // Activations: chunk c is half h of row r of k-tile slot u = c / (2
  // block_m), placed as the generation's fragments read them
  // (activationChunkPlace / activationChunkAt); rows past M and columns past
  // K zero-fill. With tma = [a] the tensor copy (issueBulkFill; gathered:
  // copyGatheredActivations) brings them instead, in its own layout (a
  // swizzled row per token).
  // 8-bit activations (wgmma k32): chunk c is the whole 16-column row r =
  // c % block_m of k-tile slot u = c / block_m, at [u][r] x 16 bytes:
  // k-tiles 2 s and 2 s + 1 are the two core-matrix halves of k32 step s,
  // block_m x 16 bytes apart as the 16-bit halves are.
  forEachChunk(kT * blockM * (act8 ? 1 : 2), [&](Value c) {
    Value u, h, r, col;
    if (act8) {
      u = arith::DivUIOp::create(b, c, c32(blockM));
      r = arith::RemUIOp::create(b, c, c32(blockM));
      col = arith::MulIOp::create(b, fillKTile(fill, u), c32(16));
    } else {
      activationChunkPlace(c, h, r);
      u = arith::DivUIOp::create(b, c, c32(2 * blockM));
      col = arith::AddIOp::create(
          b, arith::MulIOp::create(b, fillKTile(fill, u), c32(16)),
          arith::MulIOp::create(b, h, c32(8)));
    }
    Value colBytes = columnBytes(col);
    auto [row, inRows] = sourceRow(r);
    auto [index, bytes] = activationSource(row, inRows, col, colBytes);
    Value dst =
        act8 ? Value(arith::AddIOp::create(
                   b, fill.slotBase, arith::MulIOp::create(b, c, c32(16))))
             : activationChunkAt(fill.slotBase, u, h, r);
    copy16(dst, param(hq::abi::ParamInput), index, bytes);
  });
}

void PreparedEmitter::copyWeightChunks(const FillPlace &fill) {
  const int64_t kT = tile.kTilesPerIteration();
  // Weights: the block's n-tiles of a k-tile are contiguous (warpsN x 128
  // x bits bytes, 8 x bits chunks per n-tile).
  const int64_t perTile = tile.warpsN * 8 * spec.weight.type.bits;
  Value weightsAt = fill.weightsAt;
  forEachChunk(kT * perTile, [&](Value c) {
    Value u = arith::DivUIOp::create(b, c, c32(perTile));
    Value off = arith::RemUIOp::create(b, c, c32(perTile));
    Value tc = clampedTile(fillKTile(fill, u));
    Value index =
        arith::AddIOp::create(b, weightWord(tc, bidX, tile.warpsN),
                              arith::MulIOp::create(b, ext64(off), c64(4)));
    Value dst = arith::AddIOp::create(b, weightsAt,
                                      arith::MulIOp::create(b, c, c32(16)));
    copy16(dst, param(hq::abi::ParamWeight), index);
  });
}

void PreparedEmitter::issueBulkFill(const FillPlace &fill) {
  const int64_t kT = tile.kTilesPerIteration();
  const int64_t perTile = tile.warpsN * 8 * spec.weight.type.bits;
  Value slot = fill.slot, weightsAt = fill.weightsAt;
  // One producer thread announces the slot's TMA bytes on its full
  // mbarrier and issues the copies; the barrier's phase ends once they
  // landed and every producer arrived (after the copies still made by
  // cp.async). The slot's previous reads ended before its release, which
  // this fill waited for. Destinations are this CTA's shared::cluster
  // addresses.
  // With bulk fills (layout::ws::bulkFills) the scales and zero points
  // come by bulk copies too and the announcement is the barrier's one
  // arrival: the phase then ends when the bytes land.
  const int64_t activationBytes =
      tile.tensorActivations() ? coop.activationBytes : 0;
  const int64_t weightBytes = tile.tmaWeights ? kT * perTile * 16 : 0;
  const int64_t groupBytes =
      bulkFills() ? coop.groupCopies * (coop.scaleBytes + coop.zeroBytes) : 0;
  onFirstCopier([&] {
    Value full = mbarrierAt(slot, 0);
    // (A partial last block of columns: its n-tiles' share of the
    // per-group constants and of the weights' bulk copies, blockShare; a
    // tensor copy of the weights brings its whole box, zeros past N.)
    const int64_t boxes = activationBytes + (tile.weightMap ? weightBytes : 0);
    const int64_t shared = (tile.weightMap ? 0 : weightBytes) + groupBytes;
    Value txBytes =
        partialBlocks() && shared > 0
            ? Value(arith::AddIOp::create(b, c32(boxes), blockShare(shared)))
            : c32(boxes + shared);
    // The announcement: the barrier's one arrival (release, CTA scope)
    // with bulk fills, else only the expected bytes (relaxed).
    if (bulkFills())
      NVVM::MBarrierArriveExpectTxOp::create(
          b, /*res=*/Type(), full, txBytes, NVVM::MemScopeKind::CTA,
          /*relaxed=*/false, /*predicate=*/Value());
    else
      NVVM::MBarrierExpectTxOp::create(b, full, txBytes);
    if (tile.tensorActivations()) {
      // One box of the iteration's K x block_m rows: token r's row of
      // activationRowBytes at r x that many bytes of the slot, its 16-byte
      // chunks swizzled by the row's width (the layout
      // WgmmaEmitter::activationDescriptor reads); rows past M and columns
      // past K arrive as zeros. (Boxes of one 16-byte core-matrix row per
      // k-tile half read every 32-byte sector twice and took eight tensor
      // copies per iteration: bench/NOTES.md, "Prefill".)
      // (The map's elements are 2 bytes: pairs of 8-bit activations,
      // 8 per k-tile.)
      Value map = inputMapAddress();
      ActivationBox box = activationBox(fill.iter);
      Value dst = fill.slotBase, mask;
      if (tile.multicastA > 1) {
        // multicast_a: this CTA's share of the rows, into the same place
        // of every CTA of the cluster, completing on each one's full
        // barrier (whose expected bytes count the whole tile). The share
        // starts at a multiple of eight rows: the swizzle's period
        // (layout::slotAlign).
        dst = arith::AddIOp::create(
            b, fill.slotBase,
            arith::MulIOp::create(b, box.shareRow,
                                  c32(tile.activationRowBytes())));
        mask = arith::ConstantIntOp::create(
            b, b.getI16Type(), (int64_t(1) << tile.multicastA) - 1);
      }
      NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
          b, clusterSmemAt(dst), map, ValueRange{box.col, box.row}, full,
          /*im2colOffsets=*/ValueRange(), /*multicastMask=*/mask,
          /*l2CacheHint=*/Value(), NVVM::TMALoadMode::TILE,
          /*isCTAOnly=*/false, /*group=*/NVVM::CTAGroupKindAttr(),
          /*predicate=*/Value());
    }
    if (tile.weightMap) {
      // One box of the block's n-tiles by the iteration's k-tiles, in the
      // slot's order ([k-tile][n-tile][1024 bytes]: the map's dimensions
      // 2, 1, 0; abi::weightMapArgs).
      Value nTile0 = arith::MulIOp::create(b, bidX, c32(tile.warpsN));
      NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
          b, clusterSmemAt(weightsAt), weightMapAddress(),
          ValueRange{c32(0), nTile0, fillKTile(fill, c32(0))}, full,
          /*im2colOffsets=*/ValueRange(), /*multicastMask=*/Value(),
          /*l2CacheHint=*/Value(), NVVM::TMALoadMode::TILE,
          /*isCTAOnly=*/false, /*group=*/NVVM::CTAGroupKindAttr(),
          /*predicate=*/Value());
    } else if (tile.tmaWeights)
      for (int64_t u = 0; u < kT; ++u) {
        // One bulk copy per k-tile: the block's n-tiles are contiguous.
        Value src = LLVM::GEPOp::create(
            b, ptr, i32, param(hq::abi::ParamWeight),
            ValueRange{weightWord(clampedTile(fillKTile(fill, c32(u))), bidX,
                                  tile.warpsN)});
        Value dst = clusterSmemAt(
            arith::AddIOp::create(b, weightsAt, c32(u * perTile * 16)));
        bulkCopy(dst, src, blockShare(perTile * 16), full);
      }
  });
}

void PreparedEmitter::copyGroupConstants(const FillPlace &fill) {
  const hq::WeightSchema &w = spec.weight;
  const unsigned bits = w.type.bits;
  Value slot = fill.slot, weightsAt = fill.weightsAt;
  // Scales and zero points of the block's columns, per group copy.
  const int64_t columns = tile.blockN();
  for (int64_t gi = 0; gi < coop.groupCopies; ++gi) {
    Value tc = clampedTile(fillKTile(fill, c32(gi)));
    Value g = perKScales
                  ? arith::DivUIOp::create(
                        b, arith::MulIOp::create(b, tc, c32(16)), c32(w.groupK))
                  : c32(0);
    // Element of the block's first column in a [G, N] row-major tensor.
    Value elem = arith::AddIOp::create(
        b, arith::MulIOp::create(b, ext64(g), c64(spec.np)),
        arith::MulIOp::create(b, ext64(bidX), c64(columns)));
    Value at = arith::AddIOp::create(
        b, weightsAt,
        c32(coop.weightBytes + gi * (coop.scaleBytes + coop.zeroBytes)));
    auto region = [&](hq::abi::GemmParam param_, int64_t bytes,
                      int64_t elemBits, Value dstBase) {
      Value firstWord = arith::DivUIOp::create(
          b, arith::MulIOp::create(b, elem, c64(elemBits)), c64(32));
      if (bulkFills()) {
        // One bulk copy from the producer that announced the fill.
        onFirstCopier([&] {
          Value src = LLVM::GEPOp::create(b, ptr, i32, param(param_),
                                          ValueRange{firstWord});
          bulkCopy(clusterSmemAt(dstBase), src, blockShare(bytes),
                   mbarrierAt(slot, 0));
        });
        return;
      }
      forEachChunk(bytes / 16, [&](Value c) {
        Value index = arith::AddIOp::create(
            b, firstWord, arith::MulIOp::create(b, ext64(c), c64(4)));
        Value dst = arith::AddIOp::create(b, dstBase,
                                          arith::MulIOp::create(b, c, c32(16)));
        if (!partialBlocks())
          return copy16(dst, param(param_), index);
        // Chunks of n-tiles past N read nothing (zero-filled, from the
        // block's first word).
        Value inside = arith::CmpIOp::create(
            b, arith::CmpIPredicate::ult,
            arith::MulIOp::create(b, c, c32(16)), blockShare(bytes));
        copy16(dst, param(param_),
               arith::SelectOp::create(b, inside, index, firstWord),
               arith::SelectOp::create(b, inside, c32(16), c32(0)));
      });
    };
    if (coop.scaleBytes)
      region(hq::abi::ParamScales, coop.scaleBytes, w.scaleType.bits, at);
    if (coop.zeroBytes)
      region(hq::abi::ParamZeroPoints, coop.zeroBytes,
             w.zeroPoint == hq::ZeroPointKind::Float ? 16
                                                     : L::zeroPointBits(bits),
             arith::AddIOp::create(b, at, c32(coop.scaleBytes)));
  }
}

void PreparedEmitter::copyGroupInputScales(const FillPlace &fill) {
  const int64_t blockM = tile.blockM();
  Value weightsAt = fill.weightsAt;
  // Per-group activation scales (KernelShape::groupInputScales): each of
  // the block's tokens' f32 scale of the iteration's group, [M, ceil(K /
  // g)] row-major, one 4-byte cp.async per token (rows without a token,
  // past M, zero-fill; a group past K, of padding columns, reads the last).
  const int64_t g = spec.input.groupK, groups = hq::ceilDiv(spec.kAct, g);
  Value group = arith::MinSIOp::create(
      b,
      arith::DivUIOp::create(
          b, arith::MulIOp::create(b, fillKTile(fill, c32(0)), c32(L::kTileK)),
          c32(g)),
      c32(groups - 1));
  Value at = inputScalesAt(weightsAt);
  forEachChunk(blockM, [&](Value c) {
    auto [row, inRows] = sourceRow(c);
    Value index = arith::AddIOp::create(
        b, arith::MulIOp::create(b, sext64(row), c64(groups)), sext64(group));
    copyAsync(4,
              arith::AddIOp::create(b, at, arith::MulIOp::create(b, c, c32(4))),
              param(hq::abi::ParamInputScale),
              arith::SelectOp::create(b, inRows, index, c64(0)),
              arith::SelectOp::create(b, inRows, c32(4), c32(0)));
  });
}

void PreparedEmitter::pushWords(Value addr, int64_t n, unsigned alignment,
                                Stage &s) {
  if (n == 1) {
    s.push_back(LLVM::LoadOp::create(b, i32, addr, alignment));
    return;
  }
  Value v = LLVM::LoadOp::create(b, VectorType::get({n}, i32), addr, alignment);
  for (int64_t i = 0; i < n; ++i)
    s.push_back(LLVM::ExtractElementOp::create(b, v, c32(i)));
}

Value PreparedEmitter::tensorMapAddress(StringRef placeholder) {
  auto module =
      b.getInsertionBlock()->getParentOp()->getParentOfType<gpu::GPUModuleOp>();
  auto decl = module.lookupSymbol<LLVM::LLVMFuncOp>(placeholder);
  if (!decl) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    // A generic pointer: the parameter's address (cvta.param).
    decl = LLVM::LLVMFuncOp::create(
        b, placeholder,
        LLVM::LLVMFunctionType::get(LLVM::LLVMPointerType::get(b.getContext()),
                                    {}));
  }
  return LLVM::CallOp::create(b, decl, ValueRange{}).getResult();
}

Value PreparedEmitter::mbarrierAt(Value slot, int64_t which) {
  // After the slots: [slot][full, empty] x 8 bytes.
  return sharedPtr(
      arith::AddIOp::create(
          b, smemAddr,
          arith::AddIOp::create(b, c32(mbarrierOffset() + which * 8),
                                arith::MulIOp::create(b, slot, c32(16)))),
      3);
}

void PreparedEmitter::mbarrierWait(Value bar, Value parity) {
  // Until the phase of `parity` has completed (acquire, CTA scope: the
  // reads after it see what the arrivals released).
  ptx.mbarrierWaitParity(bar, parity);
}

void PreparedEmitter::mbarrierArrive(Value bar) {
  // Release semantics (CTA scope): this thread's earlier writes (and,
  // after its fence.proxy.async, its landed copies) happen before the
  // phase ends.
  NVVM::MBarrierArriveOp::create(b, /*res=*/Type(), bar, /*count=*/Value());
}

void PreparedEmitter::bulkCopy(Value dst, Value src, int64_t bytes, Value bar) {
  bulkCopy(dst, src, c32(bytes), bar);
}

void PreparedEmitter::bulkCopy(Value dst, Value src, Value bytes, Value bar) {
  NVVM::CpAsyncBulkGlobalToSharedClusterOp::create(b, dst, src, bar, bytes,
                                                   /*multicastMask=*/Value(),
                                                   /*l2CacheHint=*/Value());
}

SmallVector<Value> PreparedEmitter::pipelineLoop(
    Value first, int64_t lag, function_ref<SmallVector<Value>()> init,
    function_ref<void()> publish,
    function_ref<SmallVector<Value>(Value, Value, ArrayRef<Value>,
                                    function_ref<void()>)>
        step) {
  const int64_t S = tile.stages;
  // Prologue: iterations 0 .. S - lag - 1, one commit group each. With
  // exact K the iterations past the CTA's end copy nothing (their groups
  // are empty). With programmatic dependent launch the prologue's constants
  // go first, uncommitted (they join group 0), while the previous kernel on
  // the stream may still run; its outputs — this kernel's activations — are
  // read only after griddepcontrol.wait.
  if (prefetchesBeforeWait()) {
    copyPart = CopyPart::Constants;
    for (int64_t st = 0; st < S - lag && !(exactK && st >= ctaIterations); ++st)
      issueCopies(arith::AddIOp::create(b, first, c32(st)), c32(st), Value(),
                  /*commit=*/false);
  }
  // l2_prefetch: the iterations after the prologue's, up to the distance
  // (weights: before the wait too).
  for (int64_t d = 0; d < tile.l2Prefetch; ++d)
    prefetchWeightsL2(first, c32(S - lag + d));
  if (prefetchesBeforeWait()) {
    waitForPrerequisites();
    copyPart = CopyPart::Inputs;
  }
  for (int64_t st = 0; st < S - lag; ++st) {
    if (exactK && st >= ctaIterations)
      NVVM::CpAsyncCommitGroupOp::create(b);
    else
      issueCopies(arith::AddIOp::create(b, first, c32(st)), c32(st));
  }
  copyPart = CopyPart::All;
  SmallVector<Value> initial = init();
  Value lb = arith::ConstantIndexOp::create(b, 0);
  Value ub = arith::ConstantIndexOp::create(b, ctaIterations);
  Value one = arith::ConstantIndexOp::create(b, 1);
  auto loop = scf::ForOp::create(b, lb, ub, one, initial);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value it = index32(loop.getInductionVar());
    SmallVector<Value> accs(loop.getRegionIterArgs().begin(),
                            loop.getRegionIterArgs().end());
    // (it % S from the induction variable. Carrying the slot through the
    // loop instead where S is not a power of two lost 1-3 % on the H200's
    // three-stage M = 9..16 tiles, bench/NOTES.md "Decode".)
    Value slot = arith::RemUIOp::create(b, it, c32(S));
    // l2_prefetch: the weights l2_prefetch iterations beyond those this
    // iteration copies (it + S - lag).
    if (tile.l2Prefetch > 0)
      prefetchWeightsL2(
          first, arith::AddIOp::create(b, it, c32(S - lag + tile.l2Prefetch)));
    // Groups committed so far: S - lag + it; iteration it's group is
    // complete when at most S - lag - 1 are pending.
    NVVM::CpAsyncWaitGroupOp::create(b,
                                     b.getI32IntegerAttr(int32_t(S - lag - 1)));
    publish();
    auto issueAhead = [&] {
      Value ahead = arith::AddIOp::create(b, it, c32(S - lag));
      Value inside =
          exactK ? Value(arith::CmpIOp::create(b, arith::CmpIPredicate::slt,
                                               ahead, c32(ctaIterations)))
                 : Value();
      issueCopies(arith::AddIOp::create(b, first, ahead),
                  arith::RemUIOp::create(b, ahead, c32(S)), inside);
    };
    accs = step(it, slot, accs, issueAhead);
    scf::YieldOp::create(b, accs);
  }
  return SmallVector<Value>(loop.getResults().begin(), loop.getResults().end());
}

void PreparedEmitter::onFirstCopier(function_ref<void()> body) {
  auto ifOp = scf::IfOp::create(
      b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, copyTid, c32(0)),
      /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  body();
}
