//===- Sha256.h - SHA-256 for cache keys and checksums ----------*- C++ -*-===//
//
// FIPS 180-4 SHA-256, so the kernel cache needs no crypto library.
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_RUNTIME_SHA256_H
#define HUMMING_RUNTIME_SHA256_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace humming::rt {

class Sha256 {
public:
  Sha256();
  Sha256 &update(const void *data, size_t size);
  Sha256 &update(std::string_view s) { return update(s.data(), s.size()); }
  /// The digest as 64 lowercase hex digits (the object is spent after).
  std::string hex();

private:
  void block(const uint8_t *p);
  std::array<uint32_t, 8> h_;
  std::array<uint8_t, 64> buffer_;
  size_t buffered_ = 0;
  uint64_t length_ = 0;
};

/// SHA-256 of `data` as hex.
inline std::string sha256Hex(std::string_view data) {
  return Sha256().update(data).hex();
}

} // namespace humming::rt

#endif // HUMMING_RUNTIME_SHA256_H
