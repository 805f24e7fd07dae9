//===- PreparedLayoutTest.cpp - The mma_sync prepared layout --------------===//

#include "Humming/Quant/PreparedLayout.h"

#include "Humming/Quant/Codec.h"
#include "Humming/Quant/Pack.h"

#include <gtest/gtest.h>

#include <random>

using namespace humming;
namespace L = humming::layout;

namespace {
QuantizedWeights quantized(const WeightSchema &w, int64_t n, int64_t k,
                           uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<double> v(size_t(n * k));
  for (double &x : v)
    x = normal(rng);
  Result<QuantizedWeights> q = quantizeWeights(w, v.data(), n, k);
  EXPECT_TRUE(bool(q)) << (q ? "" : q.error());
  return q.take();
}
const InputSchema kF16{ScalarType::f16(), ActScaling::None, 0};
} // namespace

TEST(PreparedLayout, PlanesAreTheBinaryDecomposition) {
  for (unsigned bits = 1; bits <= 8; ++bits) {
    unsigned total = 0, covered = 0;
    for (const L::Plane &p : L::planes(bits)) {
      EXPECT_EQ(p.wordOffset, total) << bits;
      total += p.width;
      covered |= ((1u << p.width) - 1) << p.shift;
    }
    EXPECT_EQ(total, bits);
    EXPECT_EQ(covered, (1u << bits) - 1) << bits; // every code bit, once
  }
}

TEST(PreparedLayout, KnownPositionOfOneCode) {
  // 4-bit code (n = 9, k = 3) of tile (0, 0): lane 4 * 1 + 1 = 5, pair
  // q = 2 * 1 + 0 = 2, second code of the pair: word 5 * 4 + 0, bit 8 + 16.
  WeightSchema w = WeightSchema::make(ScalarType::uint(4), ScalarType::f16(),
                                      Granularity::Channel);
  QuantizedWeights q = quantized(w, 64, 16, 1);
  uint32_t code = packedCodeAt(q.weight.as<uint32_t>() + 9 * 2, 3, 4);
  Result<QuantizedWeights> p = L::prepareMmaSync(w, kF16, q, 64, 16);
  ASSERT_TRUE(bool(p)) << p.error();
  EXPECT_EQ((p->weight.as<uint32_t>()[20] >> 24) & 15, code);
}

TEST(PreparedLayout, LanesHoldTheirMmaFragmentsForEveryWidth) {
  const int64_t n = 128, k = 64;
  for (unsigned bits = 1; bits <= 8; ++bits)
    for (bool isSigned : {false, true}) {
      WeightSchema w = WeightSchema::make(
          isSigned ? ScalarType::sint(bits) : ScalarType::uint(bits),
          ScalarType::f16(), Granularity::Channel);
      if (isSigned && bits == 1)
        continue;
      QuantizedWeights q = quantized(w, n, k, bits);
      Result<QuantizedWeights> p = L::prepareMmaSync(w, kF16, q, n, k);
      ASSERT_TRUE(bool(p)) << p.error();
      ASSERT_EQ(p->weight.shape, (std::vector<int64_t>{k / 16, n * bits / 2}));
      const uint32_t *pw = p->weight.as<uint32_t>();
      const uint32_t *cw = q.weight.as<uint32_t>();
      uint32_t flip = isSigned ? 1u << (bits - 1) : 0;
      // What a lane decodes: pair q of every plane, shifted into place, gives
      // B-fragment elements (PTX ISA: row k = 2 * (lane % 4) + 8 r + half,
      // column n = lane / 4 of sub-tile j).
      for (int64_t kt = 0; kt < k / 16; ++kt)
        for (int64_t nt = 0; nt < n / 64; ++nt)
          for (int lane = 0; lane < 32; ++lane)
            for (int pq = 0; pq < L::kPairs; ++pq) {
              uint32_t pair = 0;
              for (const L::Plane &pl : L::planes(bits)) {
                uint32_t word =
                    pw[L::tileWord(kt, nt, n, bits) + L::pairWord(pl, lane, pq)];
                uint32_t mask = ((1u << pl.width) - 1) * 0x10001u;
                pair |= ((word >> L::pairBit(pl, pq)) & mask) << pl.shift;
              }
              int64_t nn = nt * 64 + 8 * (pq / 2) + lane / 4;
              int64_t kk = kt * 16 + 8 * (pq % 2) + 2 * (lane % 4);
              uint32_t c0 = packedCodeAt(cw + nn * (k * bits / 32), kk, bits);
              uint32_t c1 = packedCodeAt(cw + nn * (k * bits / 32), kk + 1, bits);
              ASSERT_EQ(pair & 0xFFFF, c0 ^ flip) << bits << " " << lane;
              ASSERT_EQ(pair >> 16, c1 ^ flip) << bits << " " << lane;
              EXPECT_EQ(L::preparedCodeAt(w, pw, nn, n, kk), c0);
            }
    }
}

TEST(PreparedLayout, FourBitActivationsFindTheirK64RegistersInTwoWords) {
  // si4 activations (mma.sync m16n8k64 s4): the rows of each pair of
  // k-tiles are permuted (preparedRow, span 32) so that for lane (g, q)
  // and n8 sub-tile j, bytes j % 2 and j % 2 + 2 of the 4-bit plane word of
  // pairs 2 j, 2 j + 1 in k-tiles 4 s and 4 s + 1 are, in that order, the
  // nibbles of k 64 s + 8 q ..+8 of column 8 j + g (B register b0), and
  // k-tiles 4 s + 2, 4 s + 3 give k + 32 (b1). Codes are offset binary
  // (si4 + 8), an xor away from s4.
  const int64_t n = 128, k = 192;
  WeightSchema w = WeightSchema::make(ScalarType::sint(4), ScalarType::f16(),
                                      Granularity::Group, 64);
  const InputSchema s4{ScalarType::sint(4), ActScaling::Token, 0};
  QuantizedWeights q = quantized(w, n, k, 11);
  Result<QuantizedWeights> p = L::prepareMmaSync(w, s4, q, n, k);
  ASSERT_TRUE(bool(p)) << p.error();
  // The schema's prepared shape (kPack = 64 for 4-bit activations).
  ASSERT_EQ(p->weight.shape, (std::vector<int64_t>{k / 64, n * 8}));
  const uint32_t *pw = p->weight.as<uint32_t>();
  const uint32_t *cw = q.weight.as<uint32_t>();
  const L::Plane plane = L::planes(4)[0];
  for (int64_t s = 0; s < k / 64; ++s)
    for (int64_t nt = 0; nt < n / 64; ++nt)
      for (int lane = 0; lane < 32; ++lane)
        for (int j = 0; j < 8; ++j)
          for (int reg = 0; reg < 2; ++reg) {
            const int64_t col = nt * 64 + 8 * j + lane / 4;
            uint32_t value = 0;
            for (int h = 0; h < 2; ++h) {
              const int64_t kt = 4 * s + 2 * reg + h;
              uint32_t word = pw[L::tileWord(kt, nt, n, 4) +
                                 L::pairWord(plane, lane, 2 * j)];
              const uint32_t lo = (word >> (8 * (j % 2))) & 0xFF;
              const uint32_t hi = (word >> (8 * (j % 2 + 2))) & 0xFF;
              value |= (lo | hi << 8) << (16 * h);
            }
            for (int i = 0; i < 8; ++i) {
              const int64_t kk = 64 * s + 32 * reg + 8 * (lane % 4) + i;
              uint32_t code = packedCodeAt(cw + col * (k * 4 / 32), kk, 4);
              ASSERT_EQ((value >> (4 * i)) & 0xF, code ^ 8)
                  << "s " << s << " lane " << lane << " j " << j << " b"
                  << reg << " nibble " << i;
              EXPECT_EQ(L::preparedCodeAt(w, pw, col, n, kk, 4), code);
            }
          }
  // preparedRow is a permutation of each span's rows.
  std::vector<bool> seen(32);
  for (int64_t r = 0; r < 32; ++r)
    seen[size_t(L::preparedRow(r, 4))] = true;
  EXPECT_EQ(std::count(seen.begin(), seen.end(), true), 32);
  // What the 4-bit kernels do not take.
  EXPECT_EQ(*L::supports(WeightSchema::make(ScalarType::uint(4),
                                            ScalarType::f16(),
                                            Granularity::Group, 64,
                                            ZeroPointKind::Int),
                         s4, n, k),
            "the prepared mma_sync layout takes 4-bit integer weights without "
            "zero points with si4 activations (si4, or ui4 with its implicit "
            "zero point 8: s4 codes after one xor), got ui4 with zero points");
  EXPECT_EQ(*L::supports(w, {ScalarType::sint(4), ActScaling::Group, 64}, n,
                         k),
            "the prepared mma_sync layout takes per-token or static scales "
            "with si4 activations, got group scaling");
  WeightSchema unaligned = w;
  unaligned.padK = 16; // K = 176 logical
  EXPECT_EQ(*L::supports(unaligned, s4, n, k),
            "the prepared mma_sync layout copies si4 activation rows in "
            "16-byte pieces (32 codes) and expects K to be a multiple of 32, "
            "got 176");
  EXPECT_EQ(*L::supports(w, s4, n, 160),
            "the prepared mma_sync layout takes K in k64 steps with si4 "
            "activations; expected the padded K to be a multiple of 64, got "
            "160");
}

TEST(PreparedLayout, EightBitActivationsFindTheirK32RegistersAsWords) {
  // fp8 activations: the k-tile rows are permuted (preparedRow) so that,
  // for warp w of a wgmma warpgroup and lane (g = lane / 4, q = lane % 4),
  // the 8-bit plane word of pairs 4 w, 4 w + 1 of k-tile 2 s is A register
  // a0 of k32 step s (row 16 w + g, k 32 s + 4 q + j in byte j), that of
  // pairs 4 w + 2, 4 w + 3 is a1 (row + 8), and k-tile 2 s + 1 gives a2 / a3
  // (k + 16). f8E4M3FN weights: the kernel takes those words as they are.
  const int64_t n = 128, k = 96;
  WeightSchema w = WeightSchema::make(ScalarType::e4m3(), ScalarType::f16(),
                                      Granularity::Channel);
  const InputSchema e4{ScalarType::e4m3(), ActScaling::Token, 0};
  QuantizedWeights q = quantized(w, n, k, 7);
  Result<QuantizedWeights> p = L::prepareMmaSync(w, e4, q, n, k);
  ASSERT_TRUE(bool(p)) << p.error();
  // The schema's prepared shape (kPack = 32 for 8-bit activations), the
  // same words as [K / 16, N * 4].
  ASSERT_EQ(p->weight.shape, (std::vector<int64_t>{k / 32, n * 8}));
  const uint32_t *pw = p->weight.as<uint32_t>();
  const uint32_t *cw = q.weight.as<uint32_t>();
  const L::Plane plane = L::planes(8)[0];
  for (int64_t s = 0; s < k / 32; ++s)
    for (int64_t nt = 0; nt < n / 64; ++nt)
      for (int wi = 0; wi < 4; ++wi)
        for (int lane = 0; lane < 32; ++lane)
          for (int reg = 0; reg < 4; ++reg) {
            const int64_t kt = 2 * s + reg / 2;
            uint32_t word = pw[L::tileWord(kt, nt, n, 8) +
                               L::pairWord(plane, lane, 4 * wi + 2 * (reg % 2))];
            const int64_t row = nt * 64 + 16 * wi + lane / 4 + 8 * (reg % 2);
            for (int j = 0; j < 4; ++j) {
              const int64_t kk = 32 * s + 16 * (reg / 2) + 4 * (lane % 4) + j;
              uint32_t code = packedCodeAt(cw + row * (k * 8 / 32), kk, 8);
              ASSERT_EQ((word >> (8 * j)) & 0xFF, code)
                  << "s " << s << " w " << wi << " lane " << lane << " a"
                  << reg << " byte " << j;
              EXPECT_EQ(L::preparedCodeAt(w, pw, row, n, kk, 8), code);
            }
          }
  // preparedRow is a permutation of each k-tile's rows.
  std::vector<bool> seen(16);
  for (int64_t r = 0; r < 16; ++r)
    seen[size_t(L::preparedRow(r, 8))] = true;
  EXPECT_EQ(std::count(seen.begin(), seen.end(), true), 16);
}

TEST(PreparedLayout, KMajorTilesAreWgmmaCoreMatrices) {
  // sm_90a, 8-bit weights the activation MMA takes as they are: tile
  // (kt, nt) keeps its place and holds column 64 nt + c's 16 codes of
  // k-tile kt at byte 16 c ..+16, so the tiles of k-tiles 2 s and 2 s + 1
  // are the K halves of wgmma's no-swizzle K-major core matrices (8 rows x
  // 16 bytes, 128 contiguous bytes: rows 8 r ..+8 of the tile at 128 r).
  // Integer codes are the s8 the MMA reads (ui8: code - 128).
  const int64_t n = 192, k = 96;
  const InputSchema e4{ScalarType::e4m3(), ActScaling::Token, 0};
  const InputSchema s8{ScalarType::sint(8), ActScaling::Token, 0};
  for (auto [type, in] : {std::pair{ScalarType::e4m3(), e4},
                          {ScalarType::sint(8), s8},
                          {ScalarType::uint(8), s8}}) {
    WeightSchema w =
        WeightSchema::make(type, ScalarType::f32(), Granularity::Channel);
    ASSERT_EQ(L::tileOrder(w, in, /*kMajorReader=*/true), L::TileOrder::KMajor);
    EXPECT_EQ(L::tileOrder(w, in, /*kMajorReader=*/false),
              L::TileOrder::Fragments);
    QuantizedWeights q = quantized(w, n, k, 11);
    Result<QuantizedWeights> p =
        L::prepareMmaSync(w, in, q, n, k, 0, L::TileOrder::KMajor);
    ASSERT_TRUE(bool(p)) << p.error();
    ASSERT_EQ(p->weight.shape, (std::vector<int64_t>{k / 32, n * 8}));
    const auto *bytes = reinterpret_cast<const uint8_t *>(p->weight.data.data());
    const uint32_t *cw = q.weight.as<uint32_t>();
    for (int64_t nn = 0; nn < n; ++nn)
      for (int64_t kk = 0; kk < k; ++kk) {
        const uint32_t code = packedCodeAt(cw + nn * (k / 4), kk, 8);
        const uint32_t mma = type == ScalarType::uint(8) ? code ^ 0x80 : code;
        // Tile (kk / 16, nn / 64) of 1 KiB; its row nn % 64 of 16 bytes.
        const int64_t at = ((kk / 16) * (n / 64) + nn / 64) * 1024 +
                           (nn % 64) * 16 + kk % 16;
        ASSERT_EQ(bytes[at], mma) << type.str() << " n " << nn << " k " << kk;
        EXPECT_EQ(L::preparedCodeAt(w, p->weight.as<uint32_t>(), nn, n, kk, 8,
                                    L::TileOrder::KMajor),
                  code);
      }
  }
  // Everything else keeps the fragment order; asked for K-major anyway,
  // the repack says why not.
  WeightSchema e5 = WeightSchema::make(ScalarType::e5m2(), ScalarType::f32(),
                                       Granularity::Channel);
  EXPECT_EQ(L::tileOrder(e5, e4, true), L::TileOrder::Fragments);
  WeightSchema u4 = WeightSchema::make(ScalarType::uint(4), ScalarType::f16(),
                                       Granularity::Group, 128);
  EXPECT_EQ(L::tileOrder(u4, e4, true), L::TileOrder::Fragments);
  EXPECT_EQ(L::tileOrder(e5, kF16, true), L::TileOrder::Fragments);
  WeightSchema u8z = WeightSchema::make(ScalarType::uint(8), ScalarType::f16(),
                                        Granularity::Group, 128,
                                        ZeroPointKind::Int);
  EXPECT_EQ(L::tileOrder(u8z, s8, true), L::TileOrder::Fragments);
  QuantizedWeights q = quantized(u8z, 64, 128, 3);
  Result<QuantizedWeights> p =
      L::prepareMmaSync(u8z, s8, q, 64, 128, 0, L::TileOrder::KMajor);
  ASSERT_FALSE(bool(p));
  EXPECT_EQ(p.error(),
            "prepareMmaSync: the K-major tile order holds 8-bit weights the "
            "si8 MMA takes as they are; expected 8-bit integer weights "
            "without zero points, got ui8 with zero points");
}

TEST(PreparedLayout, BlockScalesBecomeEachColumnsGroupScales) {
  // DeepSeek-style FP8 (e4m3, f32 scales per 128 x 128 block) with 8-bit
  // activations: the prepared scales are [G, N] like group scales of the
  // block's k, column n holding its block row n / 128's (permuted as group
  // scales are), so the kernels take them as group scales.
  const int64_t n = 256, k = 384;
  WeightSchema w = WeightSchema::make(ScalarType::e4m3(), ScalarType::f32(),
                                      Granularity::Block, 128);
  w.groupN = 128;
  const InputSchema e4{ScalarType::e4m3(), ActScaling::Token, 0};
  ASSERT_FALSE(L::supports(w, e4, n, k));
  QuantizedWeights q = quantized(w, n, k, 5);
  ASSERT_EQ(q.scales->shape, (std::vector<int64_t>{2, 3}));
  Result<QuantizedWeights> p =
      L::prepareMmaSync(w, e4, q, n, k, 0, L::TileOrder::KMajor);
  ASSERT_TRUE(bool(p)) << p.error();
  ASSERT_EQ(p->scales->shape, (std::vector<int64_t>{3, n}));
  ShapeOrDiag want = expectedShape(WeightOperand::Scales, w, e4, n, k,
                                   /*prepared=*/true);
  EXPECT_EQ(want.shape, p->scales->shape);
  const float *cs = q.scales->as<float>(), *ps = p->scales->as<float>();
  for (int64_t g = 0; g < 3; ++g)
    for (int64_t nn = 0; nn < n; ++nn)
      ASSERT_EQ(ps[g * n + L::permutedColumn(nn)], cs[(nn / 128) * 3 + g])
          << g << " " << nn;
}

TEST(PreparedLayout, WgmmaWarpsFindTheirAFragmentsInTheSameLayout) {
  // The sm_90a wgmma kernels read the mma_sync layout: warp w of a
  // warpgroup takes pairs 4 w ..+4 of a lane's words (planes of width
  // W >= 4: words w W / 4 ..+W / 4; narrower: word w W / 4 shifted right by
  // W (4 w % (16 / W))) and finds pair 4 w + q' where pair q' would be.
  // Pairs q' = 0, 2, 1, 3 are its m64n*k16 A fragment a0..a3: rows
  // 16 w + g and 16 w + 8 + g of the n-tile (weight columns), k 2 (lane % 4)
  // and + 8.
  const int64_t n = 128, k = 32;
  for (unsigned bits = 1; bits <= 8; ++bits) {
    WeightSchema w = WeightSchema::make(ScalarType::uint(bits),
                                        ScalarType::f16(), Granularity::Channel);
    QuantizedWeights q = quantized(w, n, k, bits);
    Result<QuantizedWeights> p = L::prepareMmaSync(w, kF16, q, n, k);
    ASSERT_TRUE(bool(p)) << p.error();
    const uint32_t *pw = p->weight.as<uint32_t>();
    const uint32_t *cw = q.weight.as<uint32_t>();
    for (int64_t kt = 0; kt < k / 16; ++kt)
      for (int64_t nt = 0; nt < n / 64; ++nt)
        for (int warp = 0; warp < 4; ++warp)
          for (int lane = 0; lane < 32; ++lane)
            for (int qv = 0; qv < 4; ++qv) {
              uint32_t pair = 0;
              for (const L::Plane &pl : L::planes(bits)) {
                const unsigned W = pl.width, perWord = 16 / W;
                const int64_t lanePlane =
                    L::tileWord(kt, nt, n, bits) + pl.wordOffset * 32 + lane * W;
                const int64_t first = lanePlane + warp * W / 4;
                uint32_t word;
                if (W >= 4)
                  word = pw[first + qv / perWord];
                else
                  word = pw[first] >> (W * ((4 * warp) % perWord));
                uint32_t mask = ((1u << W) - 1) * 0x10001u;
                pair |= ((word >> (W * (qv % perWord))) & mask) << pl.shift;
              }
              int64_t column = nt * 64 + 16 * warp + 8 * (qv / 2) + lane / 4;
              int64_t kk = kt * 16 + 8 * (qv % 2) + 2 * (lane % 4);
              const uint32_t *row = cw + column * (k * bits / 32);
              ASSERT_EQ(pair & 0xFFFF, packedCodeAt(row, kk, bits))
                  << bits << " bits, warp " << warp << ", lane " << lane;
              ASSERT_EQ(pair >> 16, packedCodeAt(row, kk + 1, bits))
                  << bits << " bits, warp " << warp << ", lane " << lane;
            }
  }
  // What a wgmma tile_config means: warp_n / 16 n-tiles per warpgroup,
  // warpsN counting the block's n-tiles, and back.
  TileConfig t;
  t.mma = MmaKind::Wgmma;
  t.blockM = 128;
  t.warpM = 128;
  t.blockN = 256;
  t.warpN = 32;
  t.blockK = t.warpK = 32;
  L::KernelShape ks = L::shapeOf(t);
  EXPECT_TRUE(ks.wgmma());
  EXPECT_TRUE(ks.cooperative());
  EXPECT_EQ(ks.nTilesPerGroup, 2);
  EXPECT_EQ(ks.warpsN, 4);
  EXPECT_EQ(ks.groupsN(), 2);
  EXPECT_EQ(ks.blockN(), 256);
  EXPECT_EQ(ks.threads(), 256);
  EXPECT_EQ(ks.threads(), t.threads());
  TileConfig again = L::tileConfigOf(ks);
  EXPECT_EQ(again.mma, MmaKind::Wgmma);
  EXPECT_EQ(again.warpN, 32);
  EXPECT_EQ(again.blockN, 256);
  EXPECT_EQ(again.warpM, 128);
  EXPECT_EQ(again.blockK, 32);
  EXPECT_FALSE(again.warpSpecialized);
  // warp_specialized adds the producer warpgroup and a full and an empty
  // mbarrier per slot after the slots; and back (with mbarrier = true).
  t.warpSpecialized = t.mbarrier = true;
  t.stages = 4;
  L::KernelShape ws = L::shapeOf(t);
  EXPECT_TRUE(ws.warpSpecialized);
  EXPECT_EQ(ws.mathThreads(), 256);
  EXPECT_EQ(ws.threads(), 384);
  EXPECT_EQ(ws.threads(), t.threads());
  EXPECT_EQ(ws.mbarrierBytes(), 64);
  WeightSchema w4 = WeightSchema::make(ScalarType::uint(4), ScalarType::f16(),
                                       Granularity::Group, 128);
  EXPECT_EQ(L::sharedBytes(w4, ws),
            4 * L::cooperativeSlot(w4, ws).total() + 64);
  EXPECT_EQ(L::cooperativeSlot(w4, ws).total() % 8, 0); // aligned mbarriers
  // The staged epilogue (stagedRows tokens x 64 columns per n-tile x 2
  // bytes per consumer warpgroup: here two n-tiles in each of two) after
  // the mbarriers, 128-byte aligned.
  L::KernelShape staged = ws;
  staged.stagedRows = 64;
  const int64_t stagingAt =
      (4 * L::cooperativeSlot(w4, ws).total() + 64 + 127) / 128 * 128;
  EXPECT_EQ(L::stagingOffset(w4, staged), stagingAt);
  EXPECT_EQ(staged.stagingBytes(), 64 * (2 * 64) * 2 * 2);
  EXPECT_EQ(L::sharedBytes(w4, staged), stagingAt + 64 * (2 * 64) * 2 * 2);
  // staged_weights: two stage buffers per consumer warpgroup (an
  // iteration's k-tiles x its n-tiles x 1 KiB of 8-bit codes) between the
  // mbarriers and the staged epilogue; and back.
  L::KernelShape converted = staged;
  converted.stagedWeights = true;
  EXPECT_EQ(converted.weightStageBufferBytes(), 2 * 2 * 1024);
  EXPECT_EQ(converted.weightStageBytes(), 2 * (2 * 2 * 1024) * 2);
  EXPECT_EQ(L::weightStageOffset(w4, converted), stagingAt);
  EXPECT_EQ(L::stagingOffset(w4, converted), stagingAt + 16384);
  EXPECT_EQ(L::sharedBytes(w4, converted),
            stagingAt + 16384 + 64 * (2 * 64) * 2 * 2);
  converted.stagedRows = 0;
  EXPECT_EQ(L::sharedBytes(w4, converted), stagingAt + 16384);
  EXPECT_TRUE(L::tileConfigOf(converted).stagedWeights);
  EXPECT_EQ(ws.weightStageBytes(), 0);
  TileConfig wsAgain = L::tileConfigOf(ws);
  EXPECT_TRUE(wsAgain.warpSpecialized);
  EXPECT_TRUE(wsAgain.mbarrier);
  EXPECT_EQ(wsAgain.splitK, 1);
  EXPECT_EQ(wsAgain.tma, 0u);
  // tma = [b]: the weights by bulk copies, and back; the slots keep their
  // layout (the bulk copies land where the 16-byte copies did).
  t.tma = TmaB;
  L::KernelShape tma = L::shapeOf(t);
  EXPECT_TRUE(tma.tmaWeights);
  EXPECT_EQ(L::sharedBytes(w4, tma), L::sharedBytes(w4, ws));
  EXPECT_EQ(L::tileConfigOf(tma).tma, uint32_t(TmaB));
  t.tma = 0;
  // split_k with wgmma: a cluster of CTAs along K; every consumer thread
  // leaves its 128 sums in shared memory (128 KiB, more than the four
  // slots), the mbarriers after them; and back.
  t.splitK = 2;
  L::KernelShape cl = L::shapeOf(t);
  EXPECT_EQ(cl.clusterSplit, 2);
  EXPECT_EQ(cl.workspaceFloats(), 256 * 128);
  EXPECT_GT(cl.workspaceFloats() * 4, 4 * L::cooperativeSlot(w4, cl).total());
  EXPECT_EQ(L::sharedBytes(w4, cl), 256 * 128 * 4 + 64);
  EXPECT_EQ(L::tileConfigOf(cl).splitK, 2);
  // 64 tokens without a producer: 64 sums each (64 KiB) fit in the slots.
  t.warpSpecialized = t.mbarrier = false;
  t.blockM = t.warpM = 64;
  t.blockK = t.warpK = 64;
  t.splitK = 4;
  L::KernelShape cl64 = L::shapeOf(t);
  EXPECT_EQ(cl64.workspaceFloats(), 256 * 64);
  EXPECT_EQ(L::sharedBytes(w4, cl64),
            std::max<int64_t>(4 * L::cooperativeSlot(w4, cl64).total(),
                              256 * 64 * 4));
  // mma_sync tiles keep their split out of the kernel shape (the heuristics
  // and the lowering carry it as the CTA split).
  TileConfig ms;
  ms.blockM = ms.warpM = 16;
  ms.blockN = ms.warpN = 64;
  ms.blockK = ms.warpK = 32;
  ms.splitK = 4;
  EXPECT_EQ(L::shapeOf(ms).clusterSplit, 1);
  EXPECT_EQ(L::shapeOf(ms).workspaceFloats(), 0);
  // ... unless the split reduces in a cluster (cluster_split): then one
  // warp group's sums (32 per lane of the 16-row warp) wait in shared
  // memory, and the split comes back with the tile.
  ms.clusterSplit = true;
  L::KernelShape mcl = L::shapeOf(ms);
  EXPECT_EQ(mcl.clusterSplit, 4);
  EXPECT_EQ(mcl.workspaceFloats(), 32 * 32);
  EXPECT_GE(L::sharedBytes(w4, mcl), 32 * 32 * 4);
  TileConfig back = L::tileConfigOf(mcl);
  EXPECT_EQ(back.splitK, 4);
  EXPECT_TRUE(back.clusterSplit);
  EXPECT_TRUE(back.splitsInCluster());
  // With an in-block split the partial sums' space holds them already.
  ms.blockK = 4 * ms.warpK;
  EXPECT_EQ(L::shapeOf(ms).workspaceFloats(), 4 * 32 * 32);
}

TEST(PreparedLayout, ThreadsShareTheRepackWithoutChangingIt) {
  // 19 n-tiles shared by 1, 3 and 8 threads (uneven shares), 3-bit codes
  // (three planes per word); the default (per core) as well.
  const int64_t n = 19 * 64, k = 256;
  WeightSchema w = WeightSchema::make(ScalarType::uint(3), ScalarType::f16(),
                                      Granularity::Group, 128);
  QuantizedWeights q = quantized(w, n, k, 7);
  Result<QuantizedWeights> one = L::prepareMmaSync(w, kF16, q, n, k, 1);
  ASSERT_TRUE(bool(one)) << one.error();
  for (unsigned threads : {0u, 3u, 8u, 64u}) {
    Result<QuantizedWeights> many = L::prepareMmaSync(w, kF16, q, n, k, threads);
    ASSERT_TRUE(bool(many)) << many.error();
    EXPECT_EQ(many->weight.data, one->weight.data) << threads;
    EXPECT_EQ(many->scales->data, one->scales->data) << threads;
  }
  const uint32_t *pw = one->weight.as<uint32_t>();
  const uint32_t *cw = q.weight.as<uint32_t>();
  for (int64_t nn = 0; nn < n; ++nn)
    for (int64_t kk = 0; kk < k; ++kk)
      ASSERT_EQ(L::preparedCodeAt(w, pw, nn, n, kk),
                packedCodeAt(cw + nn * (k * 3 / 32), kk, 3))
          << nn << " " << kk;
}

TEST(PreparedLayout, CooperativeSlotsHoldTheBlocksTiles) {
  // 2 x 4 warps of 64 x 64, two k-tiles: per k-tile 128 rows of 32 bytes
  // and 4 n-tiles of 128 x bits bytes; one group's 256 columns of scales
  // and zero points per iteration.
  L::KernelShape k;
  k.warpM = 64;
  k.warpsM = 2;
  k.warpsN = 4;
  k.kTilesPerWarp = 2;
  k.stages = 4;
  EXPECT_TRUE(k.cooperative());
  EXPECT_EQ(k.blockM(), 128);
  EXPECT_EQ(k.threads(), 256);
  WeightSchema w = WeightSchema::make(ScalarType::uint(4), ScalarType::f16(),
                                      Granularity::Group, 128);
  w.zeroPoint = ZeroPointKind::Int;
  L::CooperativeSlot s = L::cooperativeSlot(w, k);
  EXPECT_EQ(s.activationBytes, 2 * 128 * 32);
  EXPECT_EQ(s.weightBytes, 2 * 4 * 128 * 4);
  EXPECT_EQ(s.scaleBytes, 256 * 2);
  EXPECT_EQ(s.zeroBytes, 256 * 4 / 8);
  EXPECT_EQ(s.groupCopies, 1);
  EXPECT_EQ(L::sharedBytes(w, k), 4 * s.total());
  // Groups of 16: each k-tile has its own scales; 8-bit e4m3 scales, float
  // zero points (16-bit), 3-bit weights.
  WeightSchema g16 = WeightSchema::make(ScalarType::uint(3),
                                        ScalarType::e4m3(),
                                        Granularity::Group, 16);
  g16.zeroPoint = ZeroPointKind::Float;
  s = L::cooperativeSlot(g16, k);
  EXPECT_EQ(s.weightBytes, 2 * 4 * 128 * 3);
  EXPECT_EQ(s.scaleBytes, 256);
  EXPECT_EQ(s.zeroBytes, 256 * 2);
  EXPECT_EQ(s.groupCopies, 2);
  for (int64_t bytes : {s.activationBytes, s.weightBytes, s.scaleBytes,
                        s.zeroBytes})
    EXPECT_EQ(bytes % 16, 0); // whole 16-byte cp.async chunks
  // A tile config's meaning: block_m / warp_m warp rows.
  TileConfig t;
  t.blockM = 128;
  t.warpM = 64;
  t.blockN = 256;
  t.warpN = 64;
  t.blockK = t.warpK = 32;
  t.stages = 4;
  L::KernelShape fromConfig = L::shapeOf(t);
  EXPECT_EQ(fromConfig.warpsM, 2);
  EXPECT_EQ(fromConfig.warpsN, 4);
  EXPECT_EQ(fromConfig.kSplit, 1);
  EXPECT_EQ(fromConfig.kTilesPerWarp, 2);
  // ... and back: the same tile.
  TileConfig again = L::tileConfigOf(fromConfig);
  EXPECT_EQ(again.blockM, t.blockM);
  EXPECT_EQ(again.blockN, t.blockN);
  EXPECT_EQ(again.blockK, t.blockK);
  EXPECT_EQ(again.warpM, t.warpM);
  EXPECT_EQ(again.warpN, t.warpN);
  EXPECT_EQ(again.warpK, t.warpK);
  EXPECT_EQ(again.stages, t.stages);
  EXPECT_TRUE(again.cpAsync);
  EXPECT_EQ(again.mma, MmaKind::MmaSync);
}

TEST(PreparedLayout, TmaActivationSlotsStartAtSwizzleAtoms) {
  // A warp-specialized wgmma tile of 64 tokens x 64 columns, four k-tiles:
  // 3-bit weights (1536 bytes) and 8-bit scales for 64 columns (64 bytes)
  // leave a slot of 9792 bytes; with tma = [a] the activations are rows of
  // 128 bytes in TMA's 128-byte swizzle, whose pattern repeats every eight
  // rows (1024 bytes), so the slot pads to 10240 and every stage's
  // activations start at a pattern's start.
  L::KernelShape k;
  k.mma = MmaKind::Wgmma;
  k.warpSpecialized = true;
  k.warpM = 64;
  k.warpsN = 1;
  k.nTilesPerGroup = 2;
  k.kTilesPerWarp = 4;
  k.stages = 4;
  WeightSchema w = WeightSchema::make(ScalarType::uint(3), ScalarType::e4m3(),
                                      Granularity::Group, 128);
  L::CooperativeSlot plain = L::cooperativeSlot(w, k);
  EXPECT_EQ(plain.padBytes, 0);
  EXPECT_EQ(plain.total(), 4 * 64 * 32 + 4 * 1 * 128 * 3 + 64);
  k.tmaActivations = true;
  L::CooperativeSlot tma = L::cooperativeSlot(w, k);
  EXPECT_EQ(k.activationRowBytes(), 128);
  EXPECT_EQ(L::slotAlign(k), 1024);
  EXPECT_EQ(tma.padBytes, 448);
  EXPECT_EQ(tma.total() % 1024, 0);
  EXPECT_EQ(L::sharedBytes(w, k), 4 * tma.total() + k.mbarrierBytes());
  // The flag survives the round trip through a tile config as tma = [a].
  TileConfig t = L::tileConfigOf(k);
  EXPECT_EQ(t.tma, uint32_t(TmaA));
  EXPECT_TRUE(L::shapeOf(t).tmaActivations);
  k.tmaWeights = true;
  EXPECT_EQ(L::tileConfigOf(k).tma, uint32_t(TmaA | TmaB));
  // Two k-tiles per iteration: 64-byte rows in the 64-byte swizzle (its
  // pattern 512 bytes); one: 32-byte rows in the 32-byte swizzle (256).
  k.kTilesPerWarp = 2;
  EXPECT_EQ(k.activationRowBytes(), 64);
  EXPECT_EQ(L::slotAlign(k), 512);
  EXPECT_EQ(L::cooperativeSlot(w, k).total() % 512, 0);
  k.kTilesPerWarp = 1;
  EXPECT_EQ(k.activationRowBytes(), 32);
  EXPECT_EQ(L::slotAlign(k), 256);
  k.tmaActivations = false;
  EXPECT_EQ(k.activationRowBytes(), 0);
  EXPECT_EQ(L::slotAlign(k), 16);
}

TEST(PreparedLayout, ScalesAndZeroPointsArePermutedPerLaneGroup) {
  const int64_t n = 128, k = 256;
  for (unsigned bits : {2u, 4u, 8u}) {
    WeightSchema w = WeightSchema::make(ScalarType::uint(bits), ScalarType::f16(),
                                        Granularity::Group, 64,
                                        ZeroPointKind::Int);
    QuantizedWeights q = quantized(w, n, k, 7 + bits);
    Result<QuantizedWeights> p = L::prepareMmaSync(w, kF16, q, n, k);
    ASSERT_TRUE(bool(p)) << p.error();
    const int64_t groups = k / 64;
    ASSERT_EQ(p->scales->shape, (std::vector<int64_t>{groups, n}));
    unsigned zb = L::zeroPointBits(bits);
    ASSERT_EQ(p->zeroPoints->shape, (std::vector<int64_t>{groups, n * zb / 32}));
    for (int64_t g = 0; g < groups; ++g)
      for (int64_t nt = 0; nt < n / 64; ++nt)
        for (int64_t lg = 0; lg < 8; ++lg)
          for (int64_t j = 0; j < 8; ++j) {
            int64_t nn = nt * 64 + 8 * j + lg; // column of sub-tile j
            // Lane group lg reads 8 contiguous scales from 64 nt + 8 lg.
            EXPECT_EQ(p->scales->at(g * n + nt * 64 + 8 * lg + j),
                      q.scales->at(nn * groups + g));
            // ... and zb contiguous bytes of zero points, code j at j * zb.
            const uint8_t *bytes =
                p->zeroPoints->data.data() + g * (n * zb / 8) +
                (64 * nt + 8 * lg) * zb / 8;
            uint64_t lane = 0;
            std::memcpy(&lane, bytes, zb);
            std::vector<uint32_t> column(size_t(n * bits / 32));
            for (int64_t r = 0; r < n * bits / 32; ++r)
              column[size_t(r)] = q.zeroPoints->as<uint32_t>()[r * groups + g];
            uint32_t want = packedCodeAt(column.data(), nn, bits);
            EXPECT_EQ((lane >> (j * zb)) & ((1u << zb) - 1), want);
          }
  }
}

TEST(PreparedLayout, RefusesWhatItCannotHold) {
  auto diag = [](WeightSchema w, InputSchema in, int64_t n, int64_t k) {
    Diag d = L::supports(w, in, n, k);
    return d ? *d : std::string();
  };
  WeightSchema u4 = WeightSchema::make(ScalarType::uint(4), ScalarType::f16(),
                                       Granularity::Group, 128);
  EXPECT_EQ(diag(u4, kF16, 4096, 4096), "");
  EXPECT_NE(diag(u4, kF16, 4000, 4096).find("multiple of 64, got 4000"),
            std::string::npos);
  EXPECT_NE(diag(u4, kF16, 4096, 4104).find("multiple of 16, got 4104"),
            std::string::npos);
  WeightSchema ragged = u4;
  ragged.padK = 4; // 4092 activation columns stored as 4096
  EXPECT_NE(diag(ragged, kF16, 4096, 4096)
                .find("expects K to be a multiple of 8, got 4092"),
            std::string::npos);
  InputSchema bf16{ScalarType::bf16(), ActScaling::None, 0};
  EXPECT_NE(diag(u4, bf16, 4096, 4096).find("represents exactly, got f16"),
            std::string::npos);
  WeightSchema u8 = WeightSchema::make(ScalarType::uint(8), ScalarType::bf16(),
                                       Granularity::Channel);
  // 8-bit integers with bf16 activations (bit 7 outside the magic number).
  EXPECT_EQ(diag(u8, bf16, 64, 64), "");
  WeightSchema s8 = WeightSchema::make(ScalarType::sint(8), ScalarType::bf16(),
                                       Granularity::Group, 128);
  EXPECT_EQ(diag(s8, bf16, 256, 256), "");
  WeightSchema blk = WeightSchema::make(ScalarType::e4m3(), ScalarType::f32(),
                                        Granularity::Block, 128);
  blk.groupN = 128;
  // f32 block scales apply to the f32 sums of 8-bit activations only: f16
  // activations would take them in f16.
  EXPECT_NE(diag(blk, kF16, 128, 128).find("represents exactly, got f32"),
            std::string::npos);
  EXPECT_EQ(diag(blk, InputSchema{ScalarType::e4m3(), ActScaling::Token, 0},
                 128, 128),
            "");
  WeightSchema mx = WeightSchema::make(ScalarType::e2m1(), ScalarType::ue8m0(),
                                       Granularity::Group, 32);
  EXPECT_NE(diag(mx, kF16, 64, 64).find("got f8E8M0FNU"), std::string::npos);
  EXPECT_EQ(diag(mx, bf16, 64, 64), "");
  WeightSchema nv = WeightSchema::make(ScalarType::e2m1(), ScalarType::e5m2(),
                                       Granularity::GroupTensor, 16);
  EXPECT_NE(diag(nv, kF16, 64, 64).find("range"), std::string::npos);
  // si8 activations (s8 wgmmas): integer weights without float zero
  // points; 4-bit activations have no kernel.
  InputSchema i8{ScalarType::sint(8), ActScaling::Token, 0};
  EXPECT_EQ(diag(WeightSchema::make(ScalarType::uint(4), ScalarType::f16(),
                                    Granularity::Channel),
                 i8, 64, 64),
            "");
  EXPECT_EQ(diag(WeightSchema::make(ScalarType::e4m3(), ScalarType::f16(),
                                    Granularity::Channel),
                 i8, 64, 64),
            "the prepared mma_sync layout converts weights to si8 for si8 "
            "activations and expects integer weights without float zero "
            "points, got f8E4M3FN");
  EXPECT_EQ(diag(WeightSchema::make(ScalarType::uint(4), ScalarType::f16(),
                                    Granularity::Channel, 0,
                                    ZeroPointKind::Float),
                 i8, 64, 64),
            "the prepared mma_sync layout converts weights to si8 for si8 "
            "activations and expects integer weights without float zero "
            "points, got ui4 with float zero points");
  // si4 activations (mma.sync m16n8k64): 4-bit integer weights without
  // zero points, K in k64 steps; e2m1 ones have no kernel.
  InputSchema i4{ScalarType::sint(4), ActScaling::Token, 0};
  EXPECT_EQ(diag(u4, i4, 64, 128), "");
  EXPECT_EQ(diag(u4, {ScalarType::e2m1(), ActScaling::Token, 0}, 64, 128),
            "the prepared mma_sync layout expects f16, bf16, f8E4M3FN, "
            "f8E5M2, si8 or si4 activations (e2m1 ones wait for block-scaled "
            "MMA), got f4E2M1FN");
  // fp8 activations (the wgmma k32 kernels): channel / tensor weight scales,
  // per-token or static activation scales, K in 16-byte rows.
  InputSchema e4{ScalarType::e4m3(), ActScaling::Token, 0};
  WeightSchema u4c = WeightSchema::make(ScalarType::uint(4), ScalarType::f16(),
                                        Granularity::Channel);
  EXPECT_EQ(diag(u4c, e4, 64, 64), "");
  EXPECT_EQ(diag(u4, e4, 64, 128), ""); // g128: per-iteration f32 sums
  WeightSchema u4g32 = WeightSchema::make(ScalarType::uint(4),
                                          ScalarType::f16(), Granularity::Group,
                                          32);
  EXPECT_NE(diag(u4g32, e4, 64, 128).find("expects groups of at least 64, "
                                          "got 32"),
            std::string::npos);
  // Scales fp8 activations take (f32 sums) that 16-bit ones do not.
  WeightSchema mx64 = WeightSchema::make(ScalarType::e2m1(), ScalarType::ue8m0(),
                                       Granularity::Group, 64);
  EXPECT_EQ(diag(mx64, e4, 64, 128), "");
  // Per-group activation scales: over weights of their 8-bit type without
  // zero points (K-major on sm_90a), groups of 64 or more.
  InputSchema e4g{ScalarType::e4m3(), ActScaling::Group, 64};
  EXPECT_EQ(diag(u4c, e4g, 64, 64),
            "the prepared mma_sync layout takes per-group f8E4M3FN activation "
            "scales over weights of that type without zero points (f8E4M3FN, "
            "read by sm_90a's wgmma as they are), got ui4");
  WeightSchema e4c = WeightSchema::make(ScalarType::e4m3(), ScalarType::f16(),
                                        Granularity::Channel);
  EXPECT_EQ(diag(e4c, e4g, 64, 64), "");
  EXPECT_EQ(diag(e4c, InputSchema{ScalarType::e4m3(), ActScaling::Group, 32},
                 64, 64),
            "the prepared mma_sync layout applies per-group activation scales "
            "to each iteration's sums (64 of K or more) and expects groups of "
            "at least 64, got 32");
  WeightSchema u4pad = u4c;
  u4pad.padK = 8;
  EXPECT_NE(diag(u4pad, e4, 64, 64).find("expects K to be a multiple of 16, "
                                         "got 56"),
            std::string::npos);
  EXPECT_NE(diag(u4c, e4, 64, 48).find("padded K to be a multiple of 32, got "
                                       "48"),
            std::string::npos);
  // The host repack reports the same.
  QuantizedWeights q = quantized(u4, 64, 128, 3);
  Result<QuantizedWeights> p = L::prepareMmaSync(u4, bf16, q, 64, 128);
  ASSERT_FALSE(bool(p));
  EXPECT_NE(p.error().find("represents exactly"), std::string::npos);
  // ... and wrong canonical shapes.
  Result<QuantizedWeights> wrong = L::prepareMmaSync(u4, kF16, q, 128, 128);
  ASSERT_FALSE(bool(wrong));
  EXPECT_NE(wrong.error().find("expected weight of shape [128, 16], got [64, 16]"),
            std::string::npos);
}

TEST(PreparedLayout, PipelineChunksAndSharedMemory) {
  // W4 g128, 16-row warps, two k-tiles per iteration: per k-tile one chunk
  // of weights (one 4-bit plane, 4 words) and one of activations; the two
  // tiles share their group, so one chunk of scales: 5.
  WeightSchema w4 = WeightSchema::make(ScalarType::uint(4), ScalarType::f16(),
                                       Granularity::Group, 128);
  L::KernelShape k;
  k.warpM = 16;
  k.warpsN = 1;
  k.kSplit = 8;
  k.kTilesPerWarp = 2;
  k.stages = 4;
  EXPECT_TRUE(L::groupPerIteration(w4, k));
  EXPECT_EQ(L::stageChunks(w4, k), 5);
  EXPECT_EQ(L::sharedBytes(w4, k), 8 * 4 * 5 * 512);
  // 7-bit weights with int zero points and group 16: planes 4 + 2 + 1 (three
  // chunks), 64 rows (four A chunks) per k-tile; the two k-tiles of an
  // iteration lie in different groups, so scales and zero points twice.
  WeightSchema w7 = WeightSchema::make(ScalarType::uint(7), ScalarType::f16(),
                                       Granularity::Group, 16,
                                       ZeroPointKind::Int);
  k.warpM = 64;
  EXPECT_FALSE(L::groupPerIteration(w7, k));
  EXPECT_EQ(L::stageChunks(w7, k), 2 * (3 + 4) + 2 * 2);
  // The split-K partial sums reuse the pipeline's memory: the larger wins.
  k.stages = 2;
  k.kSplit = 4;
  k.warpsN = 2;
  EXPECT_EQ(k.workspaceFloats(), 4 * 2 * 32 * 4 * 32);
  EXPECT_EQ(L::sharedBytes(w7, k),
            std::max<int64_t>(8 * 2 * 18 * 512, k.workspaceFloats() * 4));
}

TEST(PreparedLayout, OnlyGroupScalesBoundTheActivationRange) {
  // Group scales multiply the weights in the activation type; channel
  // scales multiply the f32 accumulators.
  WeightSchema nv = WeightSchema::make(ScalarType::e2m1(), ScalarType::e4m3(),
                                       Granularity::GroupTensor, 16);
  EXPECT_EQ(L::maxDequantizedMagnitude(nv), 6.0 * 448.0);
  WeightSchema ch = WeightSchema::make(ScalarType::uint(4), ScalarType::f16(),
                                       Granularity::Channel);
  ch.globalScale = true;
  EXPECT_EQ(L::maxDequantizedMagnitude(ch), 8.0);
  EXPECT_FALSE(L::supports(ch, kF16, 64, 64));
  WeightSchema zp = WeightSchema::make(ScalarType::uint(4), ScalarType::f16(),
                                       Granularity::Group, 64,
                                       ZeroPointKind::Int);
  EXPECT_EQ(L::maxDequantizedMagnitude(zp), 15.0 * 65504.0);
}

namespace {
/// Runs a protocol model to its end in a random order: each round shuffles
/// the candidates 0 .. count - 1 and lets the first that can move move
/// (`step`: whether it moved). Returns the model's failure as soon as there
/// is one, `stuck()` (a deadlock's description, or "" at the end) once
/// nothing moves, or a note after a million rounds.
template <class Step, class Stuck>
std::string runRandomly(std::mt19937 &rng, size_t count,
                        const std::string &failure, Step step, Stuck stuck) {
  std::vector<int64_t> order(count);
  for (int64_t steps = 0; steps < 1000000; ++steps) {
    for (size_t k = 0; k < count; ++k)
      order[k] = int64_t(k);
    std::shuffle(order.begin(), order.end(), rng);
    bool moved = false;
    for (int64_t k : order) {
      moved = step(k);
      if (!failure.empty())
        return failure;
      if (moved)
        break;
    }
    if (!moved)
      return stuck();
  }
  return "no end after a million steps";
}

/// An mbarrier of the protocol models: a phase ends once every expected
/// thread arrived and the bytes announced to it (expect_tx: one unit per
/// bulk copy or copy half here) landed; tx may go below zero when bytes
/// land before their announcement.
struct ModelBarrier {
  int64_t expected = 0, pending = 0, done = 0; // phases completed
  int64_t tx = 0;
  void complete() {
    if (pending == 0 && tx == 0) {
      ++done;
      pending = expected;
    }
  }
  void arrive() {
    --pending;
    complete();
  }
  void landTx() {
    --tx;
    complete();
  }
};

/// Whether the parity wait for phase `phase` of `b` returns; sets
/// `failure` if the parity is not the phase's or the barrier is not within
/// one phase of it.
bool waitsForPhase(const ModelBarrier &b, int64_t phase, int64_t parity,
                   std::string &failure) {
  if (parity != (phase & 1))
    failure = "parity of phase " + std::to_string(phase) + " is " +
              std::to_string(phase & 1) + ", waited for " +
              std::to_string(parity);
  if (b.done != phase && b.done != phase + 1)
    failure = "waited for phase " + std::to_string(phase) + " with " +
              std::to_string(b.done) + " completed";
  return (b.done & 1) != parity;
}
} // namespace

namespace {
/// A model of the warp-specialized wgmma pipeline (layout::ws): producer
/// and consumer threads as programs stepped in a random order, cp.async
/// groups that land at random times (wait_group N: all but the N newest
/// landed), and mbarriers with arrival counts and phases. It fails on a
/// deadlock, on a consumer reading a slot before fill i landed there, on a
/// fill overwriting a slot a consumer still reads (from its full wait to
/// its next wgmma wait), and on a parity wait more than one phase off.
struct WsModel {
  using Barrier = ModelBarrier;
  int64_t S, n, D, P, C;
  // tma = [b]: producer 0 also announces and issues a bulk copy per fill.
  bool bulk;
  // Bulk fills (layout::ws::bulkFills): producer 0's announcement is the
  // full barrier's only arrival and the bulk copy the whole fill; nothing
  // waits for cp.async groups.
  bool allBulk;
  // Tracked fills (layout::ws::trackedFills): each producer's copies of a
  // fill arrive on its full barrier when they land
  // (cp.async.mbarrier.arrive.noinc); nothing waits for a group.
  bool tracked;
  std::vector<int64_t> bulkInFlight, bulkLanded; // fills; [slot]: fill
  std::vector<Barrier> full, empty;
  std::vector<std::vector<int64_t>> landed;  // [slot][producer]: fill
  // [consumer]: the slots it reads (-1: none): the current iteration's
  // (from its full wait) and the previous one's (until the wgmma wait).
  std::vector<int64_t> reading, readingBefore;
  std::vector<std::vector<int64_t>> groups;  // [producer]: fills not landed
  std::vector<int64_t> pc;                   // program step per thread
  std::string failure;

  // 8-bit activations' order (L::ws::releasesOwn): each iteration waits
  // for its own wgmmas and releases its own use; `releaseEarly` (a
  // mutation) releases it at the full wait, before the reads end.
  bool releaseOwn = false, releaseEarly = false;

  WsModel(int64_t stages, int64_t iterations, int64_t producers,
          int64_t consumers, bool bulkCopies = false, bool bulkFills = false,
          bool trackedFills = false, bool ownRelease = false)
      : S(stages), n(iterations), D(L::ws::fillsInFlight(stages)), P(producers),
        C(consumers), bulk(bulkCopies || bulkFills), allBulk(bulkFills),
        tracked(trackedFills), bulkLanded(size_t(stages), -1),
        full(size_t(stages)), empty(size_t(stages)),
        landed(size_t(stages), std::vector<int64_t>(size_t(producers), -1)),
        reading(size_t(consumers), -1), readingBefore(size_t(consumers), -1),
        groups(size_t(producers)), pc(size_t(producers + consumers), 0) {
    for (Barrier &b : full)
      b.expected = b.pending = L::ws::fullArrivals(P, allBulk);
    for (Barrier &b : empty)
      b.expected = b.pending = C;
    releaseOwn = ownRelease;
  }
  bool waits(const Barrier &b, int64_t phase, int64_t parity) {
    return waitsForPhase(b, phase, parity, failure);
  }
  bool landedAllBut(int64_t p, int64_t newest) {
    return int64_t(groups[size_t(p)].size()) <= newest;
  }
  /// Producer p's program: per fill an optional release wait, the issue,
  /// and (from fill D on) the oldest in-flight fill's wait + arrival;
  /// then the last fills. Steps are encoded as 3 per fill, then the tail.
  bool stepProducer(int64_t p) {
    int64_t &at = pc[size_t(p)];
    // Bulk fills: producer 0 alone runs the loop (another would wait on
    // the empty barriers without arriving anywhere, and could fall two
    // phases behind them).
    if (allBulk && p != 0)
      return false;
    if (at < 3 * n) {
      int64_t f = at / 3, phase = at % 3, s = f % S;
      if (phase == 0) {
        if (L::ws::fillWaitsForRelease(f, S) &&
            !waits(empty[size_t(s)], f / S - 1,
                   L::ws::fillReleaseParity(f, S)))
          return false;
      } else if (phase == 1) {
        for (int64_t c = 0; c < C; ++c)
          if (reading[size_t(c)] == s || readingBefore[size_t(c)] == s)
            failure = "fill " + std::to_string(f) + " overwrites slot " +
                      std::to_string(s) + " while a consumer reads it";
        landed[size_t(s)][size_t(p)] = -1; // being rewritten
        if (!allBulk)
          groups[size_t(p)].push_back(f);
        if (bulk && p == 0) {
          // The bytes must count towards fill f's phase: the previous
          // one (fill f - S) has ended, which the release wait implies.
          if (full[size_t(s)].done != f / S)
            failure = "fill " + std::to_string(f) +
                      " announces its bytes in phase " +
                      std::to_string(full[size_t(s)].done) + " of slot " +
                      std::to_string(s);
          ++full[size_t(s)].tx;
          bulkLanded[size_t(s)] = -1;
          bulkInFlight.push_back(f);
          if (allBulk)
            full[size_t(s)].arrive(); // arrive.expect_tx
        }
      } else if (!allBulk && !tracked && f >= D) {
        if (!landedAllBut(p, D))
          return false;
        full[size_t((f - D) % S)].arrive();
      }
      ++at;
      return true;
    }
    int64_t t = at - 3 * n, f = std::max<int64_t>(0, n - D) + t;
    if (allBulk || tracked || f >= n)
      return false; // done
    if (!landedAllBut(p, n - 1 - f))
      return false;
    full[size_t(f % S)].arrive();
    ++at;
    return true;
  }
  bool producerDone(int64_t p) {
    if (allBulk)
      return p != 0 || pc[size_t(p)] >= 3 * n;
    if (tracked)
      return pc[size_t(p)] >= 3 * n;
    return pc[size_t(p)] - 3 * n >= n - std::max<int64_t>(0, n - D);
  }
  /// Consumer c's program per iteration: the full wait and the reads, the
  /// wgmma wait (the previous reads end) and the release.
  bool stepConsumer(int64_t c) {
    int64_t &at = pc[size_t(P + c)];
    if (at >= 2 * n) {
      reading[size_t(c)] = readingBefore[size_t(c)] = -1; // the last wait
      return false;
    }
    int64_t i = at / 2, s = i % S;
    if (at % 2 == 0) {
      if (!waits(full[size_t(s)], i / S, L::ws::useFillParity(i, S)))
        return false;
      for (int64_t p = 0; p < P; ++p)
        if ((!allBulk && landed[size_t(s)][size_t(p)] != i) ||
            (bulk && bulkLanded[size_t(s)] != i))
          failure = "iteration " + std::to_string(i) + " reads slot " +
                    std::to_string(s) + " before fill " + std::to_string(i) +
                    " landed";
      readingBefore[size_t(c)] = reading[size_t(c)];
      reading[size_t(c)] = s;
      if (releaseEarly && L::ws::releasesOwn(i, S, n))
        empty[size_t(s)].arrive();
    } else if (releaseOwn) {
      // The wgmma wait: this iteration's reads end.
      if (!releaseEarly)
        reading[size_t(c)] = -1;
      readingBefore[size_t(c)] = -1;
      if (!releaseEarly && L::ws::releasesOwn(i, S, n))
        empty[size_t(s)].arrive();
    } else {
      readingBefore[size_t(c)] = -1; // the wgmma wait
      if (L::ws::releasesPrevious(i, S, n))
        empty[size_t((i - 1) % S)].arrive();
    }
    ++at;
    return true;
  }
  /// Runs to the end in a random order; returns the failure, if any.
  std::string run(std::mt19937 &rng) {
    // Candidates: threads that can step, copies that can land (the last: a
    // bulk copy, any of those in flight).
    auto step = [&](int64_t k) {
      if (k < P)
        return stepProducer(k);
      if (k < P + C)
        return stepConsumer(k - P);
      if (k == P + C + P) {
        if (bulkInFlight.empty())
          return false;
        size_t at = size_t(rng() % bulkInFlight.size());
        int64_t f = bulkInFlight[at];
        bulkInFlight.erase(bulkInFlight.begin() + std::ptrdiff_t(at));
        bulkLanded[size_t(f % S)] = f;
        full[size_t(f % S)].landTx();
        return true;
      }
      int64_t p = k - P - C;
      auto &g = groups[size_t(p)];
      if (g.empty())
        return false;
      // The oldest lands (groups may land out of order, but the waits only
      // ever ask for the oldest ones).
      int64_t f = g.front();
      landed[size_t(f % S)][size_t(p)] = f;
      g.erase(g.begin());
      if (tracked) { // the arrival the copies' landing triggers
        if (full[size_t(f % S)].done != f / S)
          failure = "fill " + std::to_string(f) + " arrives in phase " +
                    std::to_string(full[size_t(f % S)].done) + " of slot " +
                    std::to_string(f % S);
        full[size_t(f % S)].arrive();
      }
      return true;
    };
    auto stuck = [&]() -> std::string {
      for (int64_t p = 0; p < P; ++p)
        if (!producerDone(p))
          return "deadlock: producer " + std::to_string(p) + " at step " +
                 std::to_string(pc[size_t(p)]);
      for (int64_t c = 0; c < C; ++c)
        if (pc[size_t(P + c)] < 2 * n)
          return "deadlock: consumer " + std::to_string(c) + " at step " +
                 std::to_string(pc[size_t(P + c)]);
      return "";
    };
    return runRandomly(rng, size_t(P + C + P + 1), failure, step, stuck);
  }
};
} // namespace

TEST(PreparedLayout, WarpSpecializedPipelineNeverDeadlocksNorRacesInAModel) {
  std::mt19937 rng(11);
  for (int64_t stages = 3; stages <= 8; ++stages)
    for (int64_t n : {1, 2, 3, 5, 8, 13, 40})
      for (int seed = 0; seed < 20; ++seed)
        for (int mode : {0, 1, 2, 3})
          for (bool own : {false, true}) {
            WsModel model(stages, n, /*producers=*/2, /*consumers=*/3,
                          /*bulkCopies=*/mode == 1 || mode == 3,
                          /*bulkFills=*/mode == 2, /*trackedFills=*/mode == 3,
                          /*ownRelease=*/own);
            EXPECT_EQ(model.run(rng), "")
                << "stages = " << stages << ", iterations = " << n
                << (mode == 1   ? ", bulk copies"
                    : mode == 2 ? ", bulk fills"
                    : mode == 3 ? ", tracked fills"
                                : "")
                << (own ? ", each iteration releasing its own use" : "");
          }
}

TEST(PreparedLayout, ReleasingTheOwnUseBeforeTheWgmmaWaitIsCaughtByTheModel) {
  // The 8-bit order's release must follow the wgmma wait: a consumer that
  // released its slot at the full wait lets the next fill overwrite what
  // its wgmmas may still read. The model must see that in some order.
  std::mt19937 rng(5);
  int caught = 0;
  for (int seed = 0; seed < 50; ++seed)
    for (int mode : {0, 2}) {
      WsModel model(/*stages=*/3, /*iterations=*/13, /*producers=*/2,
                    /*consumers=*/3, /*bulkCopies=*/false,
                    /*bulkFills=*/mode == 2, /*trackedFills=*/false,
                    /*ownRelease=*/true);
      model.releaseEarly = true;
      std::string failure = model.run(rng);
      caught += failure.find("while a consumer reads it") != std::string::npos;
    }
  EXPECT_GT(caught, 0);
}

namespace {
/// multicast_a = 2 (KernelShape::multicastA) over bulk fills: two CTAs,
/// each with one issuing producer and C consumer warps per slot. Fill f of
/// CTA x: the wait for the release of use f - S on x's empty barrier, the
/// announcement of the whole tile's bytes (two halves) on x's full
/// barrier with its one arrival, and x's half copied into both CTAs' slot
/// f % S, each landing on that CTA's full barrier (tx may go below zero
/// before the announcement). A consumer warp waits for the fill, reads the
/// slot, and releases the previous use on its own and the peer's empty
/// barrier (layout::ws::emptyArrivals: 2 C per phase). Checked: no half
/// lands in a slot a consumer still reads, every landing and announcement
/// counts towards the fill's own phase, every read sees both halves of
/// its fill, and no deadlock.
struct McModel {
  using Barrier = ModelBarrier;
  struct Landing {
    int64_t dst, fill;
  };
  int64_t S, n, C;
  std::vector<Barrier> full[2], empty[2];
  std::vector<int64_t> halves[2]; // [cta][slot]: halves of its fill landed
  std::vector<int64_t> fillOf[2]; // [cta][slot]: the fill being written
  std::vector<int64_t> reading[2], readingBefore[2]; // [cta][consumer]
  std::vector<Landing> inFlight;
  int64_t producerPc[2] = {0, 0};
  std::vector<int64_t> consumerPc[2];
  std::string failure;
  // 8-bit activations' order (L::ws::releasesOwn): each iteration
  // releases its own use after its wgmma wait.
  bool releaseOwn = false;

  McModel(int64_t stages, int64_t iterations, int64_t consumerWarps,
          bool ownRelease = false)
      : S(stages), n(iterations), C(consumerWarps), releaseOwn(ownRelease) {
    for (int x = 0; x < 2; ++x) {
      full[x].assign(size_t(S), Barrier{});
      empty[x].assign(size_t(S), Barrier{});
      for (Barrier &b : full[x])
        b.expected = b.pending = L::ws::fullArrivals(128, /*bulk=*/true);
      for (Barrier &b : empty[x])
        b.expected = b.pending = L::ws::emptyArrivals(32 * C, 2);
      halves[x].assign(size_t(S), 0);
      fillOf[x].assign(size_t(S), -1);
      reading[x].assign(size_t(C), -1);
      readingBefore[x].assign(size_t(C), -1);
      consumerPc[x].assign(size_t(C), 0);
    }
  }
  bool waits(const Barrier &b, int64_t phase, int64_t parity) {
    return waitsForPhase(b, phase, parity, failure);
  }
  bool stepProducer(int x) {
    int64_t &at = producerPc[x];
    if (at >= 2 * n)
      return false;
    int64_t f = at / 2, s = f % S;
    if (at % 2 == 0) {
      if (L::ws::fillWaitsForRelease(f, S) &&
          !waits(empty[x][size_t(s)], f / S - 1,
                 L::ws::fillReleaseParity(f, S)))
        return false;
    } else {
      Barrier &b = full[x][size_t(s)];
      if (b.done != f / S)
        failure = "fill " + std::to_string(f) + " announced in phase " +
                  std::to_string(b.done);
      b.tx += 2; // arrive.expect_tx: the whole tile
      b.arrive();
      inFlight.push_back({x, f});
      inFlight.push_back({1 - x, f});
    }
    ++at;
    return true;
  }
  void land(size_t k) {
    Landing l = inFlight[k];
    inFlight.erase(inFlight.begin() + std::ptrdiff_t(k));
    int64_t s = l.fill % S;
    int d = int(l.dst);
    for (int64_t c = 0; c < C; ++c)
      if (reading[d][size_t(c)] == s || readingBefore[d][size_t(c)] == s)
        failure = "a half of fill " + std::to_string(l.fill) +
                  " lands in slot " + std::to_string(s) + " of CTA " +
                  std::to_string(d) + " while a consumer reads it";
    Barrier &b = full[d][size_t(s)];
    if (b.done != l.fill / S)
      failure = "a half of fill " + std::to_string(l.fill) +
                " lands in phase " + std::to_string(b.done) + " of CTA " +
                std::to_string(d);
    if (fillOf[d][size_t(s)] != l.fill) {
      fillOf[d][size_t(s)] = l.fill;
      halves[d][size_t(s)] = 0;
    }
    ++halves[d][size_t(s)];
    b.landTx();
  }
  bool stepConsumer(int x, int64_t c) {
    int64_t &at = consumerPc[x][size_t(c)];
    if (at >= 2 * n) {
      reading[x][size_t(c)] = readingBefore[x][size_t(c)] = -1;
      return false;
    }
    int64_t i = at / 2, s = i % S;
    if (at % 2 == 0) {
      if (!waits(full[x][size_t(s)], i / S, L::ws::useFillParity(i, S)))
        return false;
      if (fillOf[x][size_t(s)] != i || halves[x][size_t(s)] != 2)
        failure = "iteration " + std::to_string(i) + " of CTA " +
                  std::to_string(x) + " reads slot " + std::to_string(s) +
                  " before both halves of its fill landed";
      readingBefore[x][size_t(c)] = reading[x][size_t(c)];
      reading[x][size_t(c)] = s;
    } else if (releaseOwn) {
      reading[x][size_t(c)] = readingBefore[x][size_t(c)] = -1;
      if (L::ws::releasesOwn(i, S, n))
        for (int y : {x, 1 - x})
          empty[y][size_t(s)].arrive();
    } else {
      readingBefore[x][size_t(c)] = -1;
      if (L::ws::releasesPrevious(i, S, n))
        for (int y : {x, 1 - x})
          empty[y][size_t((i - 1) % S)].arrive();
    }
    ++at;
    return true;
  }
  std::string run(std::mt19937 &rng) {
    // Candidates: the two producers, every consumer warp, a landing.
    auto step = [&](int64_t k) {
      if (k < 2)
        return stepProducer(int(k));
      if (k < 2 + 2 * C)
        return stepConsumer(int((k - 2) / C), (k - 2) % C);
      if (inFlight.empty())
        return false;
      land(size_t(rng() % inFlight.size()));
      return true;
    };
    auto stuck = [&]() -> std::string {
      for (int x = 0; x < 2; ++x) {
        if (producerPc[x] < 2 * n)
          return "deadlock: producer of CTA " + std::to_string(x);
        for (int64_t c = 0; c < C; ++c)
          if (consumerPc[x][size_t(c)] < 2 * n)
            return "deadlock: consumer " + std::to_string(c) + " of CTA " +
                   std::to_string(x);
      }
      return "";
    };
    return runRandomly(rng, size_t(2 + 2 * C + 1), failure, step, stuck);
  }
};
} // namespace

TEST(PreparedLayout, MulticastPairsNeverDeadlockNorRaceInAModel) {
  std::mt19937 rng(5);
  for (int64_t stages = 3; stages <= 6; ++stages)
    for (int64_t n : {1, 2, 3, 5, 8, 13, 40})
      for (int seed = 0; seed < 20; ++seed)
        for (bool own : {false, true}) {
          McModel model(stages, n, /*consumerWarps=*/3, own);
          EXPECT_EQ(model.run(rng), "")
              << "stages = " << stages << ", iterations = " << n
              << (own ? ", each iteration releasing its own use" : "");
        }
  EXPECT_EQ(L::ws::emptyArrivals(256, 2), 16);
  EXPECT_EQ(L::ws::emptyArrivals(256, 1), 256);
}

TEST(PreparedLayout, BulkFillsNeedEveryCopyOfTheFillByTma) {
  L::KernelShape k;
  k.mma = MmaKind::Wgmma;
  k.warpSpecialized = true;
  k.tmaWeights = true;
  EXPECT_FALSE(L::ws::bulkFills(k, 512, 0)); // activations by cp.async
  k.tmaActivations = true;
  EXPECT_TRUE(L::ws::bulkFills(k, 512, 128));
  EXPECT_TRUE(L::ws::bulkFills(k, 0, 0)); // channel scales: none per fill
  EXPECT_FALSE(L::ws::bulkFills(k, 512, 8)); // not whole 16-byte units
  k.tmaWeights = false;
  EXPECT_FALSE(L::ws::bulkFills(k, 512, 0)); // weights by cp.async
  k.tmaWeights = true;
  k.warpSpecialized = false;
  EXPECT_FALSE(L::ws::bulkFills(k, 512, 0));
  // Tracked: the operands by TMA, only per-group constants by cp.async.
  k.warpSpecialized = true;
  EXPECT_FALSE(L::ws::trackedFills(k, 512, 0)); // bulk
  EXPECT_TRUE(L::ws::trackedFills(k, 8, 0));
  k.groupInputScales = true;
  EXPECT_TRUE(L::ws::trackedFills(k, 512, 0));
  k.tmaWeights = false; // weights by cp.async: wgmma reads them, fenced
  EXPECT_FALSE(L::ws::trackedFills(k, 8, 0));
  k.tmaWeights = true;
  k.tmaActivations = false;
  EXPECT_FALSE(L::ws::trackedFills(k, 8, 0));
  EXPECT_EQ(L::ws::fullArrivals(128, true), 1);
  EXPECT_EQ(L::ws::fullArrivals(128, false), 128);
}

TEST(PreparedLayout, WarpSpecializedRegisterSplitFitsTheBlocksPool) {
  // One CTA of 384 threads per SM: 168 each at launch, the producers give
  // 112 x 128 to the consumers: 224.
  L::ws::RegisterSplit r = L::ws::registerSplit(128, 256, 1);
  EXPECT_EQ(r.launch, 168);
  EXPECT_EQ(r.producer, 56);
  EXPECT_EQ(r.consumer, 224);
  EXPECT_TRUE(r.rebalance);
  // Two per SM: 80 at launch (64 Ki / 768 in steps of 8), consumers 88.
  r = L::ws::registerSplit(128, 256, 2);
  EXPECT_EQ(r.launch, 80);
  EXPECT_EQ(r.producer, 56);
  EXPECT_EQ(r.consumer, 88);
  EXPECT_TRUE(r.rebalance);
  // ... unless the consumers need 88 (the 64-token tile: 64 sums and 24
  // for the operands), where 88 spills: the producers drop to 40, 96.
  r = L::ws::registerSplit(128, 256, 2, 88);
  EXPECT_EQ(r.producer, 40);
  EXPECT_EQ(r.consumer, 96);
  EXPECT_TRUE(r.rebalance);
  // Consumers that have 8 to spare keep the producers at 56.
  EXPECT_EQ(L::ws::registerSplit(128, 256, 2, 80).producer, 56);
  EXPECT_EQ(L::ws::registerSplit(128, 256, 1, 152).consumer, 224);
  // One consumer warpgroup: 248 at launch already (64 Ki / 256 = 256, at
  // most 248 of the 255 a thread can address): nothing to move.
  r = L::ws::registerSplit(128, 128, 1);
  EXPECT_EQ(r.launch, 248);
  EXPECT_FALSE(r.rebalance);
  // Three per SM: 56 at launch, nothing to give.
  r = L::ws::registerSplit(128, 256, 3);
  EXPECT_EQ(r.launch, 56);
  EXPECT_FALSE(r.rebalance);
  // The kernel shape's need: its f32 sums per consumer thread and 24.
  TileConfig t;
  t.mma = MmaKind::Wgmma;
  t.blockM = t.warpM = 64;
  t.blockN = 256;
  t.warpN = 32;
  t.blockK = t.warpK = 64;
  t.warpSpecialized = t.mbarrier = true;
  t.ctasPerSm = 2;
  L::KernelShape k = L::shapeOf(t);
  ASSERT_EQ(k.mathThreads(), 256);
  EXPECT_EQ(L::ws::consumerRegisters(k), 64 * 256 / 256 + 24);
  EXPECT_EQ(L::ws::registerSplit(k).consumer, 96);
  // Whatever the shape, the consumers never ask for more than the pool.
  for (int64_t consumers : {128, 256})
    for (int64_t ctas : {1, 2, 3, 4})
      for (int64_t need : {0, 88, 152}) {
        r = L::ws::registerSplit(128, consumers, ctas, need);
        if (r.rebalance)
          EXPECT_LE(r.producer * 128 + r.consumer * consumers,
                    r.launch * (128 + consumers))
              << consumers << " " << ctas << " " << need;
        EXPECT_LE(r.launch * (128 + consumers) * ctas, 65536);
        EXPECT_EQ(r.consumer % 8, 0);
      }
}

// MoE weights [E, ...]: each expert prepared as a dense layer, stacked;
// tensors without E experts along their first dimension are refused.
TEST(PreparedLayout, ExpertsArePreparedOneByOne) {
  WeightSchema w = WeightSchema::make(ScalarType::uint(4), ScalarType::f16(),
                                      Granularity::Group, 128);
  const int64_t n = 128, k = 256, experts = 3;
  std::vector<double> values(size_t(experts * n * k));
  std::mt19937 rng(5);
  std::normal_distribution<double> normal(0, 1);
  for (double &v : values)
    v = normal(rng);
  WeightSchema we = w;
  we.experts = experts;
  Result<QuantizedWeights> q = quantizeWeights(we, values.data(), n, k);
  ASSERT_TRUE(q.ok()) << q.error();
  Result<QuantizedWeights> p = L::prepareMmaSync(we, kF16, *q, n, k);
  ASSERT_TRUE(p.ok()) << p.error();
  EXPECT_EQ(p->weight.shape[0], experts);
  // Expert e's slice is what preparing it alone gives.
  for (int64_t e = 0; e < experts; ++e) {
    Result<QuantizedWeights> one =
        quantizeWeights(w, values.data() + e * n * k, n, k);
    ASSERT_TRUE(one.ok());
    Result<QuantizedWeights> alone = L::prepareMmaSync(w, kF16, *one, n, k);
    ASSERT_TRUE(alone.ok());
    const size_t bytes = alone->weight.data.size();
    EXPECT_TRUE(std::equal(alone->weight.data.begin(), alone->weight.data.end(),
                           p->weight.data.begin() + ptrdiff_t(bytes * size_t(e))));
    const size_t sbytes = alone->scales->data.size();
    EXPECT_TRUE(std::equal(alone->scales->data.begin(),
                           alone->scales->data.end(),
                           p->scales->data.begin() + ptrdiff_t(sbytes * size_t(e))));
  }
  QuantizedWeights bad = *q;
  bad.scales->shape[0] = 2;
  EXPECT_EQ(L::prepareMmaSync(we, kF16, bad, n, k).error(),
            "prepareMmaSync: expected every weight-side tensor of a MoE layer "
            "to have 3 experts along its first dimension, got shape [2, 128, 2]");
}
