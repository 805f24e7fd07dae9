//===- Pack.h - The canonical packed form -----------------------*- C++ -*-===//
//
// Humming's standard weight format packs b-bit codes as a bit stream along
// K, least significant bit first: 32 consecutive k values fill exactly b
// 32-bit words, and 3/5/6/7-bit codes straddle word boundaries. A row of K
// codes becomes K*b/32 words (K*b must be a multiple of 32). Zero points are
// packed the same way along N.
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_QUANT_PACK_H
#define HUMMING_QUANT_PACK_H

#include <cstdint>
#include <vector>

namespace humming {

/// Packs `count` codes of `bits` bits (1..32) into words, LSB first. Bits of a
/// code above `bits` are ignored. `count * bits` must be a multiple of 32.
std::vector<uint32_t> packBits(const uint32_t *codes, int64_t count,
                               unsigned bits);
/// The inverse of packBits: `count` codes from `words`.
std::vector<uint32_t> unpackBits(const uint32_t *words, int64_t count,
                                 unsigned bits);

/// Code `index` of a packed stream (random access).
uint32_t packedCodeAt(const uint32_t *words, int64_t index, unsigned bits);
/// Writes code `index` of a packed stream.
void setPackedCode(uint32_t *words, int64_t index, unsigned bits,
                   uint32_t code);

} // namespace humming

#endif // HUMMING_QUANT_PACK_H
