//===- Pack.cpp - The canonical packed form -------------------------------===//

#include "Humming/Quant/Pack.h"

#include <cassert>
#include <cstddef>

namespace humming {

uint32_t packedCodeAt(const uint32_t *words, int64_t index, unsigned bits) {
  uint64_t bit = uint64_t(index) * bits;
  uint64_t word = bit / 32;
  unsigned offset = unsigned(bit % 32);
  uint64_t window = words[word];
  if (offset + bits > 32)
    window |= uint64_t(words[word + 1]) << 32;
  uint64_t mask = bits == 32 ? 0xFFFFFFFFull : ((1ull << bits) - 1);
  return uint32_t((window >> offset) & mask);
}

void setPackedCode(uint32_t *words, int64_t index, unsigned bits,
                   uint32_t code) {
  uint64_t bit = uint64_t(index) * bits;
  uint64_t word = bit / 32;
  unsigned offset = unsigned(bit % 32);
  uint64_t mask = bits == 32 ? 0xFFFFFFFFull : ((1ull << bits) - 1);
  uint64_t value = uint64_t(code) & mask;
  words[word] = uint32_t((words[word] & ~uint32_t(mask << offset)) |
                         uint32_t(value << offset));
  if (offset + bits > 32) {
    unsigned spill = offset + bits - 32;
    uint32_t hiMask = (1u << spill) - 1;
    words[word + 1] =
        (words[word + 1] & ~hiMask) | uint32_t(value >> (bits - spill));
  }
}

std::vector<uint32_t> packBits(const uint32_t *codes, int64_t count,
                               unsigned bits) {
  assert(bits >= 1 && bits <= 32 && (count * bits) % 32 == 0);
  std::vector<uint32_t> words(size_t(count * bits / 32), 0);
  for (int64_t i = 0; i < count; ++i)
    setPackedCode(words.data(), i, bits, codes[i]);
  return words;
}

std::vector<uint32_t> unpackBits(const uint32_t *words, int64_t count,
                                 unsigned bits) {
  assert(bits >= 1 && bits <= 32);
  std::vector<uint32_t> codes(static_cast<size_t>(count));
  // The same codes as packedCodeAt, streamed: a 64-bit window refilled one
  // word at a time (reads only the words that hold codes [0, count)).
  const uint64_t mask = bits == 32 ? 0xFFFFFFFFull : ((1ull << bits) - 1);
  uint64_t window = 0;
  unsigned have = 0;
  for (int64_t i = 0; i < count; ++i) {
    if (have < bits) {
      window |= uint64_t(*words++) << have;
      have += 32;
    }
    codes[size_t(i)] = uint32_t(window & mask);
    window >>= bits;
    have -= bits;
  }
  return codes;
}

} // namespace humming
