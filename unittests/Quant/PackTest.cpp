//===- PackTest.cpp - Bit-stream packing ----------------------------------===//

#include "Humming/Quant/Pack.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

using namespace humming;

TEST(Pack, RoundTripsEveryWidth) {
  std::mt19937 rng(1);
  for (unsigned bits = 1; bits <= 32; ++bits) {
    int64_t count = 32 * 5; // a multiple of 32 fills whole words
    std::vector<uint32_t> codes(static_cast<size_t>(count));
    for (auto &c : codes)
      c = bits == 32 ? rng() : rng() & ((1u << bits) - 1);
    std::vector<uint32_t> words = packBits(codes.data(), count, bits);
    ASSERT_EQ(int64_t(words.size()), count * bits / 32);
    EXPECT_EQ(unpackBits(words.data(), count, bits), codes) << bits;
  }
}

TEST(Pack, UnpackingAPartialWordReadsNoFurther) {
  // 37 codes end inside a word: unpackBits streams exactly the words that
  // hold them (the vector is sized to them; the sanitized build checks the
  // reads) and agrees with packedCodeAt on every code.
  std::mt19937 rng(2);
  for (unsigned bits = 1; bits <= 32; ++bits) {
    const int64_t count = 37;
    std::vector<uint32_t> words(size_t((count * bits + 31) / 32));
    for (uint32_t &w : words)
      w = rng();
    std::vector<uint32_t> codes = unpackBits(words.data(), count, bits);
    ASSERT_EQ(int64_t(codes.size()), count);
    for (int64_t i = 0; i < count; ++i) {
      // packedCodeAt may look one word ahead only where a code straddles.
      uint64_t lastBit = uint64_t(i + 1) * bits - 1;
      ASSERT_LT(lastBit / 32, words.size());
      EXPECT_EQ(codes[size_t(i)], packedCodeAt(words.data(), i, bits))
          << bits << " " << i;
    }
  }
}

TEST(Pack, LeastSignificantBitFirstAcrossWords) {
  // 3-bit codes 0..31: an independent bit-by-bit construction.
  std::vector<uint32_t> codes(32);
  for (uint32_t i = 0; i < 32; ++i)
    codes[i] = i & 7;
  std::vector<uint32_t> expected(3, 0);
  for (unsigned i = 0; i < 32; ++i)
    for (unsigned b = 0; b < 3; ++b)
      if ((codes[i] >> b) & 1) {
        unsigned bit = i * 3 + b;
        expected[bit / 32] |= 1u << (bit % 32);
      }
  EXPECT_EQ(packBits(codes.data(), 32, 3), expected);
  // Code 10 occupies bits 30..32: it straddles words 0 and 1.
  EXPECT_EQ(packedCodeAt(expected.data(), 10, 3), 2u);
}

TEST(Pack, SetCodeKeepsNeighbours) {
  std::vector<uint32_t> words(5, 0xFFFFFFFFu);
  setPackedCode(words.data(), 6, 5, 0); // bits 30..34
  EXPECT_EQ(packedCodeAt(words.data(), 6, 5), 0u);
  EXPECT_EQ(packedCodeAt(words.data(), 5, 5), 31u);
  EXPECT_EQ(packedCodeAt(words.data(), 7, 5), 31u);
  EXPECT_EQ(words[0], 0x3FFFFFFFu);
  EXPECT_EQ(words[1], 0xFFFFFFF8u);
}

TEST(Pack, EightBitCodesAreTheirOwnBytes) {
  // humming.gemm takes canonical 8-bit codes unpacked ([N, K] of i8 / f8)
  // as the same memory as the packed [N, K / 4] i32: packing 8-bit codes
  // LSB first puts code k in byte k of the row (little-endian words).
  std::vector<uint32_t> codes(64);
  for (size_t i = 0; i < codes.size(); ++i)
    codes[i] = uint32_t((i * 37 + 11) & 0xFF);
  std::vector<uint32_t> words = packBits(codes.data(), 64, 8);
  ASSERT_EQ(words.size(), 16u);
  std::vector<uint8_t> bytes(64);
  std::memcpy(bytes.data(), words.data(), 64);
  for (size_t i = 0; i < codes.size(); ++i)
    EXPECT_EQ(bytes[i], codes[i]) << "code " << i;
}

TEST(Pack, NarrowCodesAreShiftsAndMasksOfTheirWord) {
  // humming-raise-quantized-matmul takes packed b-bit codes (b = 1, 2, 4,
  // 8) as the canonical words when the dequantization computes code k of a
  // row as (word[k / (32 / b)] >> (b (k mod 32 / b))) & (2^b - 1): the
  // order it checks must be the order packBits writes.
  for (unsigned bits : {1u, 2u, 4u, 8u}) {
    const int64_t count = 96;
    std::vector<uint32_t> codes(count);
    for (int64_t i = 0; i < count; ++i)
      codes[size_t(i)] = uint32_t((i * 2654435761u) >> 7) & ((1u << bits) - 1);
    std::vector<uint32_t> words = packBits(codes.data(), count, bits);
    const int64_t per = 32 / bits;
    for (int64_t k = 0; k < count; ++k)
      EXPECT_EQ((words[size_t(k / per)] >> (bits * (k % per))) &
                    ((1u << bits) - 1),
                codes[size_t(k)])
          << bits << "-bit code " << k;
  }
}
