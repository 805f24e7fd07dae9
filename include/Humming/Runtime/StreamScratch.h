//===- StreamScratch.h - Device scratch memory per stream ------*- C++ -*-===//
//
// The device memory a layer's launches write and read back within one call
// (the split-K workspace of KernelLaunch::workspace, the codes and scales
// of activations the layer quantizes, a MoE layer's routing and
// intermediate rows), one block per stream: calls of one layer on several
// streams at once never share a block, and calls on one stream run in order
// so they may. Blocks are zeroed when made (the split-K arrival counters
// start at zero; every launch leaves them so).
//
// A stream's block is made at its first call. A call on a stream that is
// capturing a CUDA graph may not allocate (the driver forbids it), so a
// layer makes `reserve` blocks up front that such a stream takes; with none
// left, the call fails and says what to do. A graph replays with the block
// of the stream it was captured on: replay it where that stream's own calls
// do not run at the same time.
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_RUNTIME_STREAMSCRATCH_H
#define HUMMING_RUNTIME_STREAMSCRATCH_H

#include "Humming/Runtime/CudaDriver.h"

#include <mutex>
#include <vector>

namespace humming::rt {

class StreamScratch {
public:
  /// The most streams one layer keeps a block for: beyond it a call fails
  /// (a program that makes a new stream per call would otherwise grow
  /// without bound).
  static constexpr size_t kMaxStreams = 64;

  /// The alignment of the regions a block holds (split-K sums, codes,
  /// scales, routing rows): each starts at a multiple of it.
  static constexpr size_t kAlign = 256;
  static size_t aligned(size_t bytes) {
    return (bytes + kAlign - 1) / kAlign * kAlign;
  }
  /// Ok where `streams` blocks may be made up front (LayerTarget::streams:
  /// 0 .. kMaxStreams), else what was expected.
  static Status checkCount(int64_t streams);

  StreamScratch() = default;
  StreamScratch(StreamScratch &&) = delete;

  /// Blocks of `bytes` (0: the layer needs none, and blockFor gives 0),
  /// `reserve` of them made now (checkCount).
  Status init(const CudaDriver &driver, size_t bytes, int64_t reserve);

  /// The block of `stream`: the one it had, else a reserved one, else a new
  /// one (refused while the stream captures a graph). `what` names the
  /// layer in errors. Thread-safe.
  Result<CUdeviceptr> blockFor(CUstream stream, const char *what);

  size_t bytes() const { return bytes_; }
  /// Blocks made (reserved or taken).
  size_t blocks() const;

private:
  struct Block {
    CUstream stream = nullptr;
    bool taken = false;
    DeviceBuffer buffer;
  };
  Result<Block> make() const;

  const CudaDriver *driver_ = nullptr;
  size_t bytes_ = 0;
  mutable std::mutex mutex_;
  std::vector<Block> blocks_;
};

} // namespace humming::rt

#endif // HUMMING_RUNTIME_STREAMSCRATCH_H
