//===- MmaSyncKernel.cpp - mma.sync over prepared weights -----------------===//
//
// The mma.sync generation of the prepared-layout kernels (MmaSyncEmitter.h):
// per-warp and cooperative copies and slot reads (ldmatrix for the
// activations), the m16n8k16 MMAs and the cp.async main loop.
//
//===----------------------------------------------------------------------===//

#include "MmaSyncEmitter.h"

using namespace mlir;
using namespace mlir::humming;
namespace hq = ::humming;
namespace L = ::humming::layout;

MmaSyncEmitter::MmaSyncEmitter(const PreparedKernelArgs &args)
    : PreparedEmitter(args), chunks(L::stageChunks(spec.weight, tile)) {}

std::unique_ptr<PreparedEmitter>
mlir::humming::createMmaSyncEmitter(const PreparedKernelArgs &args) {
  return std::make_unique<MmaSyncEmitter>(args);
}

Value MmaSyncEmitter::placeWarps(Value warp) {
  warpN = arith::RemUIOp::create(b, warp, c32(tile.warpsN));
  // Warps beyond a row along N: rows along M (cooperative blocks), then
  // K-split groups.
  Value row = arith::DivUIOp::create(b, warp, c32(tile.warpsN));
  if (tile.warpsM > 1) {
    warpMi = arith::RemUIOp::create(b, row, c32(tile.warpsM));
    warpK = arith::DivUIOp::create(b, row, c32(tile.warpsM));
  } else {
    warpMi = c32(0);
    warpK = row;
  }
  return warpN;
}

void MmaSyncEmitter::prepareSlots(Value warp) {
  // This lane's region of the pipeline: warp-major, then slot, chunk, lane.
  laneBase = arith::AddIOp::create(
      b, arith::MulIOp::create(b, warp, c32(tile.stages * chunks * 512)),
      arith::MulIOp::create(b, lane, c32(16)));
  if (tile.cooperative())
    coop = L::cooperativeSlot(spec.weight, tile);
  else
    copyShape = copiesFor(c32(0));
}

void MmaSyncEmitter::activationChunkPlace(Value c, Value &h, Value &r) {
  const int64_t blockM = tile.blockM();
  h = arith::AndIOp::create(b, c, c32(1));
  r = arith::RemUIOp::create(b, arith::ShRUIOp::create(b, c, c32(1)),
                             c32(blockM));
}

Value MmaSyncEmitter::activationChunkAt(Value slotBase, Value u, Value h,
                                        Value r) {
  const int64_t blockM = tile.blockM();
  Value swz = arith::XOrIOp::create(
      b, h,
      arith::AndIOp::create(b, arith::ShRUIOp::create(b, r, c32(2)), c32(1)));
  return arith::AddIOp::create(
      b, slotBase,
      arith::AddIOp::create(
          b, arith::MulIOp::create(b, u, c32(blockM * 32)),
          arith::AddIOp::create(b, arith::MulIOp::create(b, r, c32(32)),
                                arith::MulIOp::create(b, swz, c32(16)))));
}

SmallVector<MmaSyncEmitter::Copy> MmaSyncEmitter::copiesFor(Value iter) {
  const hq::WeightSchema &w = spec.weight;
  const unsigned bits = w.type.bits;
  SmallVector<Copy> s;
  int64_t chunk = 0;
  // share_activations: the chunk of activation tile j.
  SmallVector<int64_t> activationChunk;
  Value wgt = param(hq::abi::ParamWeight);
  for (int64_t u = 0; u < tile.kTilesPerWarp; ++u) {
    // k-tile of this warp, clamped (clampedTile).
    Value t = warpKTile(iter, c32(u));
    Value tc = clampedTile(t);
    // B: one vector per plane (two for the 8-bit plane).
    Value tileBase = weightWord(tc, nTile, 1);
    for (const L::Plane &p : planes) {
      if (p.width == 8) {
        // A lane's 32 bytes as two copies of its own would read each
        // 32-byte sector of the plane half per copy: the warp copies the
        // plane's kilobyte in order instead (coalesced; see Copy).
        Value base = arith::AddIOp::create(
            b, tileBase,
            arith::AddIOp::create(
                b, c64(int64_t(p.wordOffset) * 32),
                arith::MulIOp::create(b, ext64(lane), c64(4))));
        for (int64_t j = 0; j < 2; ++j) {
          Copy c{wgt,     arith::AddIOp::create(b, base, c64(128 * j)),
                 4,       Value(),
                 chunk++, 0};
          c.wideFirst = j == 0;
          s.push_back(c);
        }
        continue;
      }
      Value base = arith::AddIOp::create(
          b, tileBase,
          arith::AddIOp::create(
              b, c64(int64_t(p.wordOffset) * 32),
              arith::MulIOp::create(b, ext64(lane), c64(p.width))));
      for (unsigned off = 0; off < p.width; off += 4)
        s.push_back({wgt, arith::AddIOp::create(b, base, c64(off)),
                     std::min<unsigned>(4, p.width), Value(), chunk++, 0});
    }
    // A: one 16 x 16 tile per 16 rows (activationCopy); 8- and 4-bit
    // activations one 16-row tile of 32-byte rows per k32 / k64 step (at its
    // first k-tile).
    for (int64_t i = 0; i < mt && u % kTilesPerStep() == 0; ++i) {
      if (tile.shareActivations) {
        // Copied below by warp j % warpsN of the K group (share j / warpsN
        // of its copies); every warp's region keeps the chunk.
        Copy c{param(hq::abi::ParamInput), Value(), 4, Value(), chunk++, 0,
               /*ldmatrix=*/true};
        c.activation = u / kTilesPerStep() * mt + i;
        c.shapeOnly = true;
        activationChunk.push_back(c.chunk);
        s.push_back(c);
        continue;
      }
      Copy c = activationCopy(t, c32(16 * i));
      c.chunk = chunk++;
      s.push_back(c);
    }
    // Scales and zero points of the tile's group (once per iteration when
    // the warp's tiles share it).
    if (u == 0 || !groupPerIter) {
      Value g =
          perKScales
              ? arith::DivUIOp::create(b, arith::MulIOp::create(b, tc, c32(16)),
                                       c32(w.groupK))
              : c32(0);
      Value g64 = ext64(g);
      Value col = arith::AddIOp::create(
          b, arith::MulIOp::create(b, ext64(nTile), c64(64)),
          arith::MulIOp::create(b, ext64(grp), c64(8)));
      if (perKScales) {
        int64_t words = w.scaleType.bits / 4; // 8 scales of 8 or 16 bits
        Value scaleCol =
            postScale
                ? Value(arith::AddIOp::create(
                      b, arith::MulIOp::create(b, ext64(nTile), c64(64)),
                      arith::MulIOp::create(
                          b, ext64(arith::AndIOp::create(b, lane, c32(7))),
                          c64(8))))
                : col;
        Value elem = arith::AddIOp::create(
            b, arith::MulIOp::create(b, g64, c64(spec.np)), scaleCol);
        Value index = arith::DivUIOp::create(
            b, arith::MulIOp::create(b, elem, c64(w.scaleType.bits)), c64(32));
        Copy c{param(hq::abi::ParamScales), index, words, Value(), chunk++, 0};
        c.columnScales = postScale;
        s.push_back(c);
      }
      if (w.zeroPoint == hq::ZeroPointKind::Float) {
        Value elem = arith::AddIOp::create(
            b, arith::MulIOp::create(b, g64, c64(spec.np)), col);
        Value index = arith::ShRUIOp::create(b, elem, c64(1));
        s.push_back(
            {param(hq::abi::ParamZeroPoints), index, 4, Value(), chunk++, 0});
      } else if (w.zeroPoint == hq::ZeroPointKind::Int) {
        int64_t zb = L::zeroPointBits(bits);
        Value rowWords = c64(spec.np * zb / 32);
        Value index = arith::AddIOp::create(
            b, arith::MulIOp::create(b, g64, rowWords),
            arith::DivUIOp::create(b, arith::MulIOp::create(b, col, c64(zb)),
                                   c64(32)));
        s.push_back({param(hq::abi::ParamZeroPoints), index, zb / 4, Value(),
                     chunk++, 0});
      }
    }
  }
  if (tile.shareActivations) {
    // This warp's share of the K group's activation tiles: j = warpN +
    // warpsN x r, into its own region's chunk of tile j (the readers of
    // the group find it there).
    // (8-bit activations: j counts k32 steps, whose first k-tile is 2 u.)
    const int64_t pieces = tile.kTilesPerWarp / kTilesPerStep() * mt;
    for (int64_t r = 0; r * tile.warpsN < pieces; ++r) {
      Value j = arith::AddIOp::create(b, warpN, c32(tile.warpsN * r));
      Value u = mt == 1 ? j : Value(arith::DivUIOp::create(b, j, c32(mt)));
      if (kTilesPerStep() > 1)
        u = arith::MulIOp::create(b, u, c32(kTilesPerStep()));
      Value i = mt == 1 ? c32(0) : Value(arith::RemUIOp::create(b, j, c32(mt)));
      Copy c = activationCopy(warpKTile(iter, u),
                              arith::MulIOp::create(b, i, c32(16)));
      // The chunk of tile j: one of warpsN compile-time chunks.
      Value dst = c32(activationChunk[size_t(tile.warpsN * r)]);
      for (int64_t w = 1; w < tile.warpsN; ++w)
        dst = arith::SelectOp::create(
            b,
            arith::CmpIOp::create(b, arith::CmpIPredicate::eq, warpN, c32(w)),
            c32(activationChunk[size_t(tile.warpsN * r + w)]), dst);
      c.dstChunk = dst;
      s.push_back(c);
    }
  }
  return s;
}

MmaSyncEmitter::Copy MmaSyncEmitter::activationCopy(Value t, Value rowOffset) {
  // Lane L copies 16 bytes of block row rowBase + rowOffset + L / 2 (its
  // sourceRow), columns 16 t + 8
  // (L % 2) ..+8 (8-bit activations: 16 t + 16 (L % 2) ..+16, k-tile t + L
  // % 2 of the k32 step from k-tile t; 4-bit: 16 t + 32 (L % 2) ..+32, half
  // of the k64 step); rows past M and columns past K zero-fill.
  auto [row, inRows] = sourceRow(arith::AddIOp::create(
      b, rowBase,
      arith::AddIOp::create(b, arith::ShRUIOp::create(b, lane, c32(1)),
                            rowOffset)));
  Value col = arith::AddIOp::create(
      b, arith::MulIOp::create(b, t, c32(16)),
      arith::MulIOp::create(b, arith::AndIOp::create(b, lane, c32(1)),
                            c32(act4 ? 32 : act8 ? 16 : 8)));
  // Bytes of the chunk's columns that lie inside K (0..16), none past M.
  Value bytes = arith::SelectOp::create(b, inRows, columnBytes(col), c32(0));
  Value ok = arith::CmpIOp::create(b, arith::CmpIPredicate::sgt, bytes, c32(0));
  // The chunk's first 32-bit word: element (row, col) of 2, 1 or 1/2
  // bytes (K is a multiple of 8 / perWord there).
  const int64_t perWord = act4 ? 8 : act8 ? 4 : 2;
  Value index = arith::AddIOp::create(
      b, arith::MulIOp::create(b, sext64(row), c64(spec.kAct / perWord)),
      sext64(arith::ShRUIOp::create(b, col, c32(llvm::Log2_64(perWord)))));
  Value safe = arith::SelectOp::create(b, ok, index, c64(0));
  return {param(hq::abi::ParamInput), safe, 4, bytes, -1, 0, /*ldmatrix=*/true};
}

Value MmaSyncEmitter::slotAddress(Value slot, int64_t chunk, int64_t word) {
  // Lane-major 16-byte chunks: a warp's accesses to one chunk are 512
  // contiguous bytes, free of bank conflicts.
  int64_t offset = chunk * 32 * 16 + word * 4;
  Value byte = arith::AddIOp::create(
      b,
      arith::AddIOp::create(b, laneBase,
                            arith::MulIOp::create(b, slot, c32(chunks * 512))),
      c32(offset));
  return LLVM::GEPOp::create(b, smem.getType(), i8, smem, ValueRange{byte});
}

Value MmaSyncEmitter::slotAddress(Value slot, Value chunk, int64_t word) {
  Value byte = arith::AddIOp::create(
      b,
      arith::AddIOp::create(
          b,
          arith::AddIOp::create(
              b, laneBase, arith::MulIOp::create(b, slot, c32(chunks * 512))),
          arith::MulIOp::create(b, chunk, c32(512))),
      c32(word * 4));
  return LLVM::GEPOp::create(b, smem.getType(), i8, smem, ValueRange{byte});
}

void MmaSyncEmitter::issueWarpCopies(Value iter, Value slot) {
  for (const Copy &c : copiesFor(iter)) {
    const bool input = c.base == param(hq::abi::ParamInput);
    if (c.shapeOnly || (input ? !copiesInputs() : !copiesConstants()))
      continue;
    Value src = LLVM::GEPOp::create(b, ptr, i32, c.base, ValueRange{c.index});
    Value dst = c.dstChunk ? slotAddress(slot, c.dstChunk, c.offset)
                           : slotAddress(slot, c.chunk, c.offset);
    int64_t bytes = 4 * c.words;
    // 16-byte copies bypass L1 (.cg); smaller ones must use .ca.
    auto modifier = NVVM::LoadCacheModifierKindAttr::get(
        b.getContext(), bytes == 16 ? NVVM::LoadCacheModifierKind::CG
                                    : NVVM::LoadCacheModifierKind::CA);
    NVVM::CpAsyncOp::create(b, dst, src, b.getI32IntegerAttr(bytes), modifier,
                            c.srcBytes);
  }
}

MmaSyncEmitter::Stage MmaSyncEmitter::readCooperativeSlot(Value slot) {
  assert(!act4 && "4-bit activations run in per-warp tiles (preparedTile)");
  const hq::WeightSchema &w = spec.weight;
  const unsigned bits = w.type.bits;
  auto [slotBase, weightsAt] = slotRegions(slot);
  auto loadWords = [&](Value byte, int64_t n, Stage &s) {
    pushWords(smemAt(byte), n, unsigned(std::min<int64_t>(16, 4 * n)), s);
  };
  // ldmatrix: lane i points at row ldmatrixRow() of a 16-row group, half
  // ldmatrixHalf() (swapped by bit 2 of the row, which is bit 2 of i).
  Value rowInGroup = ldmatrixRow();
  Value half = arith::XOrIOp::create(
      b, ldmatrixHalf(),
      arith::AndIOp::create(b, arith::ShRUIOp::create(b, lane, c32(2)),
                            c32(1)));
  Value laneA = arith::AddIOp::create(
      b,
      arith::MulIOp::create(
          b,
          arith::AddIOp::create(
              b, arith::MulIOp::create(b, warpMi, c32(tile.warpM)), rowInGroup),
          c32(32)),
      arith::MulIOp::create(b, half, c32(16)));
  Value laneColumns =
      arith::AddIOp::create(b, arith::MulIOp::create(b, warpN, c32(64)),
                            arith::MulIOp::create(b, grp, c32(8)));
  Stage s;
  for (int64_t u = 0; u < tile.kTilesPerWarp; ++u) {
    // The slot's k-tile this warp's K-split group reads as its u-th.
    Value su = arith::AddIOp::create(
        b, arith::MulIOp::create(b, warpK, c32(tile.kTilesPerWarp)), c32(u));
    // This warp's n-tile of that k-tile, plane by plane.
    Value tileAt = arith::AddIOp::create(
        b, weightsAt,
        arith::AddIOp::create(
            b, arith::MulIOp::create(b, su, c32(tile.warpsN * 128 * bits)),
            arith::MulIOp::create(b, warpN, c32(128 * bits))));
    for (const L::Plane &p : planes) {
      Value at = arith::AddIOp::create(
          b, tileAt,
          arith::AddIOp::create(
              b, c32(int64_t(p.wordOffset) * 32 * 4),
              arith::MulIOp::create(b, lane, c32(4 * p.width))));
      for (unsigned off = 0; off < p.width; off += 4)
        loadWords(arith::AddIOp::create(b, at, c32(4 * off)),
                  std::min<unsigned>(4, p.width - off), s);
    }
    for (int64_t i = 0; i < mt && !act8; ++i) {
      pushLdmatrix(
          smemAt(arith::AddIOp::create(
              b, slotBase,
              arith::AddIOp::create(
                  b, laneA,
                  arith::AddIOp::create(
                      b, arith::MulIOp::create(b, su, c32(tile.blockM() * 32)),
                      c32(16 * i * 32))))),
          s);
    }
    // 8-bit activations (the copies' layout of the wgmma kernels: row r of
    // k-tile slot v at 16 (v block_m + r)): the k32 step from this even
    // k-tile, lanes 16-31 pointing at the step's second k-tile (the m16n8k32
    // A registers a2, a3).
    for (int64_t i = 0; i < mt && act8 && u % 2 == 0; ++i) {
      Value v = arith::AddIOp::create(b, su,
                                      arith::ShRUIOp::create(b, lane, c32(4)));
      Value r = arith::AddIOp::create(
          b, arith::MulIOp::create(b, warpMi, c32(tile.warpM)),
          arith::AddIOp::create(b, c32(16 * i), rowInGroup));
      pushLdmatrix(
          smemAt(arith::AddIOp::create(
              b, slotBase,
              arith::MulIOp::create(
                  b,
                  arith::AddIOp::create(
                      b, arith::MulIOp::create(b, v, c32(tile.blockM())), r),
                  c32(16)))),
          s);
    }
    if (u == 0 || !groupPerIter) {
      // The group copy of that k-tile (one per iteration, or one per k-tile).
      Value at = groupCopyAt(weightsAt, coop.groupCopies == 1 ? c32(0) : su);
      // The lane's eight columns of the block's scales / zero points (with
      // scale_after_mma: the 16 scales of its C columns, prepared columns
      // 16 q ..+16 of its n-tile).
      // (weightsAsA: the address of the 8 scales of its B columns,
      // prepared columns 8 g ..+8, loaded after the MMAs.)
      if (perKScales && postScale && weightsAsA)
        s.push_back(smemAt(arith::AddIOp::create(
            b, at,
            arith::MulIOp::create(
                b,
                arith::AddIOp::create(b,
                                      arith::MulIOp::create(b, warpN, c32(64)),
                                      arith::MulIOp::create(b, grp, c32(8))),
                c32(2)))));
      else if (perKScales && postScale)
        loadWords(arith::AddIOp::create(
                      b, at,
                      arith::MulIOp::create(
                          b,
                          arith::AddIOp::create(
                              b, arith::MulIOp::create(b, warpN, c32(64)),
                              arith::MulIOp::create(b, quad, c32(16))),
                          c32(2))),
                  8, s);
      else if (perKScales)
        loadWords(arith::AddIOp::create(
                      b, at,
                      arith::MulIOp::create(b, laneColumns,
                                            c32(w.scaleType.bits / 8))),
                  w.scaleType.bits / 4, s);
      Value zeros = arith::AddIOp::create(b, at, c32(coop.scaleBytes));
      if (w.zeroPoint == hq::ZeroPointKind::Float)
        loadWords(arith::AddIOp::create(
                      b, zeros, arith::MulIOp::create(b, laneColumns, c32(2))),
                  4, s);
      else if (w.zeroPoint == hq::ZeroPointKind::Int) {
        int64_t zb = L::zeroPointBits(bits);
        loadWords(
            arith::AddIOp::create(
                b, zeros,
                arith::DivUIOp::create(
                    b, arith::MulIOp::create(b, laneColumns, c32(zb)), c32(8))),
            zb / 4, s);
      }
    }
  }
  return s;
}

MmaSyncEmitter::Stage MmaSyncEmitter::readSlot(Value slot) {
  if (tile.cooperative())
    return readCooperativeSlot(slot);
  // Words per chunk, in copy order (the structure does not depend on the
  // iteration).
  SmallVector<int64_t> words(size_t(chunks), 0);
  SmallVector<bool> matrix(size_t(chunks), false), wide(size_t(chunks), false),
      columnScales(size_t(chunks), false);
  SmallVector<int64_t> activation(size_t(chunks), -1);
  for (const Copy &c : copyShape) {
    if (c.dstChunk)
      continue; // share_activations: the copy into a reserved chunk
    activation[size_t(c.chunk)] = c.activation;
    words[size_t(c.chunk)] =
        std::max(words[size_t(c.chunk)], c.offset + c.words);
    matrix[size_t(c.chunk)] = c.ldmatrix;
    wide[size_t(c.chunk)] = c.wideFirst;
    columnScales[size_t(c.chunk)] = c.columnScales;
  }
  // Byte `offset` (i32) of chunk c of the slot counted from the warp's
  // first lane (for chunks read across lanes).
  Value warpBase = arith::SubIOp::create(
      b, laneBase, arith::MulIOp::create(b, lane, c32(16)));
  auto inChunk = [&](int64_t c, Value offset) {
    return arith::AddIOp::create(
        b,
        arith::AddIOp::create(
            b, warpBase,
            arith::AddIOp::create(
                b, arith::MulIOp::create(b, slot, c32(chunks * 512)),
                c32(c * 512))),
        offset);
  };
  Stage s;
  for (int64_t c = 0; c < chunks; ++c) {
    int64_t n = words[size_t(c)];
    if (columnScales[size_t(c)]) {
      // The 16 scales of this lane's C columns: byte 32 q of the chunk
      // (weightsAsA: the 8 of its B columns 8 j + g, lane g's copy at byte
      // 16 g).
      if (weightsAsA)
        s.push_back(smemAt(inChunk(c, arith::MulIOp::create(b, grp, c32(16)))));
      else
        pushWords(smemAt(inChunk(c, arith::MulIOp::create(b, quad, c32(32)))),
                  8, /*alignment=*/16, s);
      continue;
    }
    if (wide[size_t(c)]) {
      // This lane's 8 words of the plane: chunk c + L / 16, byte 32 (L % 16)
      // (the two chunks hold the plane's kilobyte in order).
      Value byte = inChunk(
          c, arith::AddIOp::create(
                 b,
                 arith::MulIOp::create(
                     b, arith::ShRUIOp::create(b, lane, c32(4)), c32(512)),
                 arith::MulIOp::create(
                     b, arith::AndIOp::create(b, lane, c32(15)), c32(32))));
      pushWords(smemAt(byte), 8, /*alignment=*/16, s);
      ++c; // the plane's second chunk is read with the first
      continue;
    }
    if (matrix[size_t(c)]) {
      // The 16 x 16 tile (32 bytes per row): lane i points at row
      // ldmatrixRow(), columns 8 ldmatrixHalf(); the four 8 x 8 matrices
      // come back as the m16n8k16 A fragment a0..a3 (weightsAsA: rows 0..7
      // as the B fragment of tokens 0..7).
      Value row = ldmatrixRow();
      Value byte =
          arith::AddIOp::create(b, arith::MulIOp::create(b, row, c32(32)),
                                arith::MulIOp::create(b, ldmatrixHalf(), c32(16)));
      if (int64_t j = activation[size_t(c)]; j >= 0) {
        // share_activations: tile j lies in the region of warp j % warpsN
        // of this K group (regions are warp-major, warps of a group
        // adjacent).
        Value owner = arith::SubIOp::create(b, c32(j % tile.warpsN), warpN);
        byte = arith::AddIOp::create(
            b, byte,
            arith::MulIOp::create(b, owner, c32(tile.stages * chunks * 512)));
      }
      pushLdmatrix(smemAt(inChunk(c, byte)), s);
      continue;
    }
    pushWords(slotAddress(slot, c, 0), n, /*alignment=*/16, s);
  }
  return s;
}

void MmaSyncEmitter::pushLdmatrix(Value addr, Stage &s) {
  const unsigned count = weightsAsA ? 2 : 4;
  Type regs = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                               SmallVector<Type>(count, i32));
  Value frag = NVVM::LdMatrixOp::create(
      b, regs, addr, count, NVVM::MMALayout::row,
      NVVM::LdStMatrixShapeAttr::get(b.getContext(), 8, 8),
      NVVM::LdStMatrixEltType::B16);
  for (unsigned i = 0; i < count; ++i)
    s.push_back(LLVM::ExtractValueOp::create(b, frag, i));
}

Value MmaSyncEmitter::mmaNarrow(ArrayRef<Value> a, ArrayRef<Value> bOps,
                                ArrayRef<Value> c) {
  const bool ints = integerSums();
  Type four = LLVM::LLVMStructType::getLiteral(
      b.getContext(), SmallVector<Type>(4, ints ? i32 : f32));
  if (ints) {
    // s4 m16n8k64 or s8 m16n8k32 (s32 sums of one iteration: no overflow).
    const NVVM::MMATypes t = act4 ? NVVM::MMATypes::s4 : NVVM::MMATypes::s8;
    return NVVM::MmaOp::create(
        b, four, a, bOps, c, ArrayRef<int64_t>{16, 8, act4 ? 64 : 32},
        std::nullopt, NVVM::MMAIntOverflow::wrapped,
        std::array<NVVM::MMATypes, 2>{t, t},
        std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                       NVVM::MMALayout::col});
  }
  const bool e4m3 = spec.input.type == hq::ScalarType::e4m3();
  if (tile.blockScaledFp8) {
    // The sm_120 family: kind::mxf8f6f4 with scale_vec::1X, every lane's
    // scale register 0x7F7F7F7F (ue8m0 127 = 2^0 in whichever byte the
    // byte id picks), byte and thread ids 0: D = A B + C exactly as the
    // plain fp8 MMA, at the block-scaled form's rate (Chip::
    // blockScaledFp8MmaSync). nvvm.mma.block_scale itself checks no chip:
    // the lowering sets blockScaledFp8 for sm_120a / 121a / 120f / 121f only.
    const NVVM::MMATypes t = e4m3 ? NVVM::MMATypes::e4m3 : NVVM::MMATypes::e5m2;
    Value unit = c32(0x7F7F7F7F);
    Value id =
        arith::ConstantOp::create(b, b.getI16Type(), b.getI16IntegerAttr(0));
    return NVVM::MmaBlockScaleOp::create(
        b, four, a, bOps, c, unit, id, id, unit, id, id,
        ArrayRef<int64_t>{16, 8, 32}, std::array<NVVM::MMATypes, 2>{t, t},
        NVVM::ScaleVecSize::X1, NVVM::BlockScaleFormat::UE8M0,
        NVVM::MMABlockScaleKind::MXF8F6F4);
  }
  // nvvm.mma.sync has no fp8 form in MLIR 22 (its verifier refuses e4m3 /
  // e5m2); LLVM's intrinsic selects mma.sync.aligned.m16n8k32.row.col
  // .f32.<a>.<b>.f32 (sm_89+, PTX ISA 8.4: docs/Rationale.md).
  const std::string type = e4m3 ? "e4m3" : "e5m2";
  SmallVector<Value> args(a.begin(), a.end());
  args.append(bOps.begin(), bOps.end());
  args.append(c.begin(), c.end());
  return LLVM::CallIntrinsicOp::create(
             b, four,
             b.getStringAttr("llvm.nvvm.mma.m16n8k32.row.col.f32." + type +
                             "." + type + ".f32"),
             args)
      .getResult(0);
}

Value MmaSyncEmitter::fourBitWord(
    ArrayRef<SmallVector<SmallVector<Value>>> stepWords, int j, int half) {
  // One 4-bit plane: pairs 2 j, 2 j + 1 are word j / 2, at byte j % 2
  // (their first codes) and j % 2 + 2 (their second ones).
  Value w0 = stepWords[size_t(2 * half)][0][size_t(j / 2)];
  Value w1 = stepWords[size_t(2 * half + 1)][0][size_t(j / 2)];
  const int64_t selector = j % 2 ? 0x7531 : 0x6420;
  Value v = NVVM::PermuteOp::create(b, i32, w0, w1, c32(selector),
                                    NVVM::PermuteMode::DEFAULT);
  return arith::XOrIOp::create(b, v, c32(int64_t(0x88888888u)));
}

SmallVector<Value> MmaSyncEmitter::computeNarrow(ArrayRef<Value> accIn,
                                                 ArrayRef<Value> stage) {
  assert(groupPerIter && "narrow activations take one group per iteration");
  SmallVector<Value> accs(accIn.begin(), accIn.end());
  StageCursor next{stage};
  beginDequant();
  // The iteration's sums start from zero (s32 with si8 / si4, exact; f32
  // else) and are added to the running f32 sums after its MMAs, times the
  // column's group scale: one scale per iteration (warp_k <= group), and
  // fp8 MMAs keep fewer bits than f32 across a long K (the wgmma kernels
  // measured it: WgmmaKernel.cpp, promotes()).
  const bool ints = integerSums();
  SmallVector<Value> sums(accs.size(), ints ? c32(0) : cf(0.0));
  GroupData group;
  const int64_t kT = tile.kTilesPerWarp, perStep = kTilesPerStep();
  SmallVector<SmallVector<SmallVector<Value>>> tileWords;
  SmallVector<SmallVector<Value>> aWords;
  for (int64_t u = 0; u < kT; ++u) {
    SmallVector<SmallVector<Value>> planeWords;
    for (const L::Plane &p : planes) {
      SmallVector<Value> words;
      for (unsigned i = 0; i < p.width; ++i)
        words.push_back(next());
      planeWords.push_back(words);
    }
    tileWords.push_back(planeWords);
    if (u % perStep == 0) {
      SmallVector<Value> a;
      for (int64_t i = 0; i < 4 * mt; ++i)
        a.push_back(next()); // zero-filled outside [0, M) x [0, K)
      aWords.push_back(a);
    }
    if (u == 0)
      readGroup(next, group);
  }
  for (int64_t step = 0; step < kT / perStep; ++step) {
    auto stepWords =
        ArrayRef<SmallVector<SmallVector<Value>>>(tileWords).slice(
            size_t(step * perStep), size_t(perStep));
    if (tile.f16MmaForFp8) {
      f16StepOfFp8(aWords[size_t(step)], stepWords, group, sums);
      continue;
    }
    for (int j = 0; j < 8; ++j) {
      // B of n8 sub-tile j: k rows 4 quad ..+4 of the step's two k-tiles
      // (8-bit), or 8 quad ..+8 of its halves (4-bit).
      SmallVector<Value> bOps =
          act4 ? SmallVector<Value>{fourBitWord(stepWords, j, 0),
                                    fourBitWord(stepWords, j, 1)}
               : SmallVector<Value>{eightBitWord(stepWords[0], group, 2 * j),
                                    eightBitWord(stepWords[1], group, 2 * j)};
      for (int64_t i = 0; i < mt; ++i) {
        size_t base = size_t((i * 8 + j) * 4);
        Value mma = mmaNarrow(
            ArrayRef<Value>(aWords[size_t(step)]).slice(size_t(4 * i), 4),
            bOps, ArrayRef<Value>(sums).slice(base, 4));
        for (int64_t e = 0; e < 4; ++e)
          sums[base + size_t(e)] = LLVM::ExtractValueOp::create(b, mma, e);
      }
    }
  }
  // C element e of MMA (i, j) is row g + 8 (e / 2), column 8 j + 2 q + e % 2.
  for (size_t k = 0; k < accs.size(); ++k) {
    int64_t e = int64_t(k % 4), j = int64_t(k / 4) % 8;
    if (lowRowsOnly && e >= 2)
      continue; // rows g + 8: padding in a tile of at most 8 tokens
    Value v = ints ? Value(arith::SIToFPOp::create(b, f32, sums[k])) : sums[k];
    accs[k] = perKScales
                  ? Value(LLVM::FMAOp::create(
                        b, v, group.columnScale[size_t(2 * j + e % 2)],
                        accs[k]))
                  : Value(arith::AddFOp::create(b, accs[k], v));
  }
  return accs;
}

std::pair<Value, Value> MmaSyncEmitter::fp8WordAsF16(Value word) {
  // Bytes [x0, x1, x2, x3] -> (x0, x2), (x1, x3): the k order of the 8-bit
  // prepared rows' f16 pairs (layout::preparedRow).
  Value zero = c32(0);
  auto pair = [&](int64_t selector) -> Value {
    return NVVM::PermuteOp::create(b, i32, word, zero, c32(selector),
                                   NVVM::PermuteMode::DEFAULT);
  };
  if (spec.input.type == hq::ScalarType::e5m2()) {
    // e5m2 is the high byte of the f16 of the same value: one permute
    // puts each code above a zero byte.
    return {asAct2(pair(0x2404)), asAct2(pair(0x3414))};
  }
  // e4m3: cvt.rn.f16x2.e4m3x2 (exact) of each 16-bit half of the permuted
  // word (its low byte to the pair's low half).
  Value both = pair(0x3120);
  VectorType bytes2 = VectorType::get({2}, b.getI8Type());
  Type f8 = b.getType<Float8E4M3FNType>();
  auto convert = [&](Value half16) -> Value {
    Value v = LLVM::BitcastOp::create(
        b, bytes2, arith::TruncIOp::create(b, b.getI16Type(), half16));
    return NVVM::ConvertF8x2ToF16x2Op::create(b, act2, v, /*relu=*/false, f8);
  };
  return {convert(both), convert(arith::ShRUIOp::create(b, both, c32(16)))};
}

void MmaSyncEmitter::f16StepOfFp8(
    ArrayRef<Value> a, ArrayRef<SmallVector<SmallVector<Value>>> stepWords,
    const GroupData &group, SmallVector<Value> &sums) {
  // The k32 A registers of 16 rows (a0 / a1: rows g / g + 8, k 4 q ..+4 of
  // the step's first k-tile; a2 / a3 the same of its second) as f16 pairs:
  // lo = k 4 q, 4 q + 2, hi = k 4 q + 1, 4 q + 3.
  SmallVector<std::pair<Value, Value>> f16A;
  for (Value w : a)
    f16A.push_back(fp8WordAsF16(w));
  Type four =
      LLVM::LLVMStructType::getLiteral(b.getContext(), SmallVector<Type>(4, f32));
  // The m16n8k16 of k-tile h of the step takes its k in the order above:
  // A a0..a3 = lo(row g), lo(row g + 8), hi(row g), hi(row g + 8), B b0 /
  // b1 = the weights of k 4 q, 4 q + 2 / 4 q + 1, 4 q + 3 — the 16-bit
  // pairs 2 j / 2 j + 1 of the 8-bit prepared rows, or as stored (fp8
  // weights) the B register of the k32 step split the same way.
  for (int j = 0; j < 8; ++j) {
    for (int64_t h = 0; h < 2; ++h) {
      Value b0, b1;
      if (eightBitWordsAsStored()) {
        std::tie(b0, b1) =
            fp8WordAsF16(eightBitWord(stepWords[size_t(h)], group, 2 * j));
      } else {
        b0 = dequantPair(stepWords[size_t(h)], group, 2 * j);
        b1 = dequantPair(stepWords[size_t(h)], group, 2 * j + 1);
      }
      for (int64_t i = 0; i < mt; ++i) {
        const auto &r0 = f16A[size_t(4 * i + 2 * h)];
        const auto &r1 = f16A[size_t(4 * i + 2 * h + 1)];
        size_t base = size_t((i * 8 + j) * 4);
        auto op = NVVM::MmaOp::create(
            b, four, ValueRange{r0.first, r1.first, r0.second, r1.second},
            ValueRange{b0, b1}, ArrayRef<Value>(sums).slice(base, 4),
            ArrayRef<int64_t>{16, 8, 16}, std::nullopt, std::nullopt,
            std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::f16,
                                          NVVM::MMATypes::f16},
            std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                           NVVM::MMALayout::col});
        for (int64_t e = 0; e < 4; ++e)
          sums[base + size_t(e)] =
              LLVM::ExtractValueOp::create(b, op.getResult(), e);
      }
    }
  }
}

SmallVector<Value> MmaSyncEmitter::compute(ArrayRef<Value> accIn,
                                           ArrayRef<Value> stage) {
  if (act8 || act4)
    return computeNarrow(accIn, stage);
  SmallVector<Value> accs(accIn.begin(), accIn.end());
  StageCursor next{stage};
  // scale_after_mma: the iteration's unscaled sums (from zero).
  SmallVector<Value> sums;
  if (postScale)
    sums.assign(accs.size(), cf(0.0));
  beginDequant();
  Type accStruct = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                                    SmallVector<Type>(4, f32));
  GroupData group;
  for (int64_t u = 0; u < tile.kTilesPerWarp; ++u) {
    // Words of this tile, plane by plane.
    SmallVector<SmallVector<Value>> planeWords;
    for (const L::Plane &p : planes) {
      SmallVector<Value> words;
      for (unsigned i = 0; i < p.width; ++i)
        words.push_back(next());
      planeWords.push_back(words);
    }
    SmallVector<Value> a;
    for (int64_t i = 0; i < (weightsAsA ? 2 : 4) * mt; ++i)
      a.push_back(next()); // zero-filled outside [0, M) x [0, K)
    if (u == 0 || !groupPerIter)
      readGroup(next, group);
    SmallVector<Value> aOps;
    VectorType f16x2 = VectorType::get({2}, b.getF16Type());
    for (Value v : a)
      aOps.push_back(bf16 ? v : Value(LLVM::BitcastOp::create(b, f16x2, v)));
    auto types = bf16 ? std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16,
                                                      NVVM::MMATypes::bf16}
                      : std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::f16,
                                                      NVVM::MMATypes::f16};
    // Accumulators per MMA: four f32, or two f16x2 with f16 accumulation.
    const int64_t perMma = spec.f16Accumulation ? 2 : 4;
    Type resultStruct = accStruct;
    if (spec.f16Accumulation)
      resultStruct = LLVM::LLVMStructType::getLiteral(
          b.getContext(), SmallVector<Type>(2, f16x2));
    // The MMAs add into the accumulators, or with scale_after_mma into the
    // iteration's unscaled sums.
    SmallVector<Value> &into = postScale ? sums : accs;
    // One m16n8k16 MMA into accumulators `into` [base, base + perMma).
    auto mma = [&](ValueRange aRegs, ValueRange bRegs, size_t base) {
      SmallVector<Value> acc(into.begin() + base, into.begin() + base + perMma);
      auto op = NVVM::MmaOp::create(
          b, resultStruct, aRegs, bRegs, acc, ArrayRef<int64_t>{16, 8, 16},
          std::nullopt, std::nullopt, types,
          std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                         NVVM::MMALayout::col});
      for (int64_t e = 0; e < perMma; ++e)
        into[base + e] = LLVM::ExtractValueOp::create(b, op.getResult(), e);
    };
    if (weightsAsA) {
      // D = W^T-tile x tokens: m16 tile J (columns 16 J ..+16) is n8
      // sub-tiles 2 J and 2 J + 1, whose b0 / b1 (rows g, k 2 q / 2 q + 8)
      // are the A registers a0 / a2 (rows g) and a1 / a3 (rows g + 8);
      // tokens 0..7 come from ldmatrix.x2 (pushLdmatrix) as the B
      // operand's b0 / b1 (token g, k 2 q / 2 q + 8). D element e of tile
      // J: column 16 J + g + 8 (e / 2), token 2 q + e % 2.
      for (int J = 0; J < 4; ++J) {
        Value d[4];
        for (int p = 0; p < 4; ++p)
          d[p] = dequantPair(planeWords, group, 4 * J + p);
        mma(ValueRange{d[0], d[2], d[1], d[3]}, ValueRange{aOps[0], aOps[1]},
            size_t(J * 4));
      }
      continue;
    }
    for (int j = 0; j < 8; ++j) {
      SmallVector<Value> bOps = {dequantPair(planeWords, group, 2 * j),
                                 dequantPair(planeWords, group, 2 * j + 1)};
      for (int64_t i = 0; i < mt; ++i)
        mma(ArrayRef<Value>(aOps).slice(4 * i, 4), bOps,
            size_t((i * 8 + j) * perMma));
    }
  }
  if (postScale && weightsAsA) {
    // D element e of tile J is column 8 (2 J + e / 2) + g: B column scale
    // 2 J + e / 2.
    loadColumnScales(group);
    for (size_t k = 0; k < 16; ++k)
      accs[k] = LLVM::FMAOp::create(
          b, sums[k], group.columnScale[size_t(2 * (k / 4) + (k % 4) / 2)],
          accs[k]);
  } else if (postScale) {
    // accumulator += sum x scale of its column (f32 fma); C element e of MMA
    // (i, j) is row g + 8 (e / 2), column 8 j + 2 q + e % 2.
    for (size_t k = 0; k < accs.size(); ++k) {
      int64_t e = int64_t(k % 4), j = int64_t(k / 4) % 8;
      if (lowRowsOnly && e >= 2)
        continue; // rows g + 8: padding in a tile of at most 8 tokens
      accs[k] = LLVM::FMAOp::create(
          b, sums[k], group.columnScale[size_t(2 * j + e % 2)], accs[k]);
    }
  }
  return accs;
}

void MmaSyncEmitter::emitLoop(Value first) {
  // Iterations past the end copy nothing (exact K) or clamped, finite
  // weights and zero-filled activations, which add nothing.
  auto init = [&] {
    // f32 accumulators (four per MMA), or f16x2 pairs (two per MMA).
    SmallVector<Value> init;
    if (spec.f16Accumulation) {
      VectorType h2 = VectorType::get({2}, b.getF16Type());
      Value zero = arith::ConstantOp::create(
          b, h2,
          DenseElementsAttr::get(h2, APFloat::getZero(APFloat::IEEEhalf())));
      init.assign(size_t(mt * 16), zero);
    } else {
      init.assign(size_t(mt * 32), cf(0.0));
    }
    if (loopChannelScales) {
      // Prepared [1, N] channel scales: the lane's columns 64 nTile + 8 j +
      // grp are stored at 64 nTile + 8 grp + j, eight contiguous values.
      Value first = arith::AddIOp::create(
          b, arith::MulIOp::create(b, ext64(nTile), c64(64)),
          arith::MulIOp::create(b, ext64(grp), c64(8)));
      for (int64_t j = 0; j < 8; ++j) {
        Value f = loadAsF32(param(hq::abi::ParamScales),
                            arith::AddIOp::create(b, first, c64(j)),
                            spec.weight.scaleType);
        channelScaleVec.push_back(asAct2(splat16(actBits(f))));
      }
    }
    return init;
  };
  auto publish = [&] {
    if (tile.cooperative()) {
      // Every thread's copies of this slot are visible to the block, and
      // every warp is done reading the slot refilled below (read one
      // iteration ago).
      gpu::BarrierOp::create(b);
    } else if (tile.shareActivations) {
      // The warps of this K group read each other's activation copies:
      // its named barrier (1 + warpK; 0 is the block's) makes every
      // member's landed copies visible to the others, and orders the
      // refill below after every member's reads of that slot (one
      // iteration ago).
      NVVM::BarrierOp::create(
          b, TypeRange(), arith::AddIOp::create(b, warpK, c32(1)),
          c32(32 * tile.warpsN), NVVM::BarrierReductionAttr(),
          /*reductionPredicate=*/Value());
    } else {
      // wait_group covers a lane's own copies; ldmatrix reads activation
      // rows other lanes copied, which the warp barrier makes visible.
      NVVM::SyncWarpOp::create(b, c32(-1));
    }
  };
  SmallVector<Value> acc = pipelineLoop(
      first, /*lag=*/1, init, publish,
      [&](Value, Value slot, ArrayRef<Value> accs,
          function_ref<void()> issueAhead) {
        Stage data = readSlot(slot);
        issueAhead();
        return compute(accs, data);
      });
  if (weightsAsA)
    acc = untransposeSums(acc);
  if (spec.f16Accumulation) {
    // Pair r of MMA (i, j) holds row half r: c0,c1 or c2,c3 of the f32 layout.
    SmallVector<Value> wide;
    for (Value pair : acc)
      for (int64_t e = 0; e < 2; ++e)
        wide.push_back(arith::ExtFOp::create(
            b, f32,
            LLVM::ExtractElementOp::create(b, pair, c32(e)).getResult()));
    acc = wide;
  }
  // Drain the copies still in flight (past the end) before the shared
  // memory is reused for the partial sums.
  NVVM::CpAsyncWaitGroupOp::create(b, b.getI32IntegerAttr(0));

  finish(acc, tid);
}

SmallVector<Value> MmaSyncEmitter::untransposeSums(ArrayRef<Value> t) {
  // C element e < 2 of sub-tile j (token g, column 8 j + 2 q + e) is D
  // element 2 (j % 2) + g % 2 of tile j / 2 (column 16 (j / 2) + g' + 8
  // (j % 2), token 2 q' + g % 2) in lane g' = 2 q + e, q' = g / 2. The two
  // lanes g = 2 q', 2 q' + 1 that read a lane want different elements of
  // it: both are shuffled, each lane keeps its own. Rows g + 8 (tokens
  // 8-15) stay zero.
  SmallVector<Value> c(t.size(), cf(0.0));
  Value odd = arith::CmpIOp::create(b, arith::CmpIPredicate::ne,
                                    arith::AndIOp::create(b, grp, c32(1)),
                                    c32(0));
  for (int64_t e = 0; e < 2; ++e) {
    Value src = arith::AddIOp::create(
        b,
        arith::MulIOp::create(
            b,
            arith::AddIOp::create(b, arith::MulIOp::create(b, quad, c32(2)),
                                  c32(e)),
            c32(4)),
        arith::ShRUIOp::create(b, grp, c32(1)));
    for (int64_t j = 0; j < 8; ++j) {
      Value x[2];
      for (int64_t p = 0; p < 2; ++p)
        x[p] = gpu::ShuffleOp::create(b, t[size_t(4 * (j / 2) + 2 * (j % 2) + p)],
                                      src, c32(32), gpu::ShuffleMode::IDX)
                   .getShuffleResult();
      c[size_t(4 * j + e)] = arith::SelectOp::create(b, odd, x[1], x[0]);
    }
  }
  return c;
}
