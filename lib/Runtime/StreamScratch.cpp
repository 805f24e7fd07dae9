//===- StreamScratch.cpp - Device scratch memory per stream ---------------===//

#include "Humming/Runtime/StreamScratch.h"

namespace humming::rt {

Result<StreamScratch::Block> StreamScratch::make() const {
  Result<DeviceBuffer> buffer = DeviceBuffer::allocate(*driver_, bytes_);
  if (!buffer)
    return Error{concat(buffer.error(), " (a stream's scratch block)")};
  DeviceBuffer b = buffer.take();
  // Synchronous: a launch on any stream after it finds the zeros.
  if (Status s = b.fill(0); !s)
    return Error{s.error()};
  return Block{nullptr, false, std::move(b)};
}

Status StreamScratch::checkCount(int64_t streams) {
  if (streams < 0 || uint64_t(streams) > kMaxStreams)
    return Error{concat("expected 0 <= streams <= ", kMaxStreams, ", got ",
                        streams)};
  return Status::success();
}

Status StreamScratch::init(const CudaDriver &driver, size_t bytes,
                           int64_t reserve) {
  if (Status s = checkCount(reserve); !s)
    return s;
  std::lock_guard<std::mutex> lock(mutex_);
  driver_ = &driver;
  bytes_ = bytes;
  blocks_.clear();
  if (!bytes)
    return Status::success();
  for (int64_t i = 0; i < reserve; ++i) {
    Result<Block> b = make();
    if (!b)
      return Error{b.error()};
    blocks_.push_back(b.take());
  }
  return Status::success();
}

size_t StreamScratch::blocks() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return blocks_.size();
}

Result<CUdeviceptr> StreamScratch::blockFor(CUstream stream,
                                            const char *what) {
  if (!bytes_)
    return CUdeviceptr(0);
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Block &b : blocks_)
    if (b.taken && b.stream == stream)
      return b.buffer.ptr();
  for (Block &b : blocks_)
    if (!b.taken) {
      b.taken = true;
      b.stream = stream;
      return b.buffer.ptr();
    }
  // A new block: not while the stream captures a graph (an allocation
  // there fails, or breaks the capture).
  int capturing = 0;
  if (driver_->cuStreamIsCapturing)
    if (Status s = driver_->check(
            driver_->cuStreamIsCapturing(stream, &capturing),
            "cuStreamIsCapturing");
        !s)
      return Error{s.error()};
  if (capturing)
    return Error{concat(
        what, ": a stream that captures a CUDA graph called it, and none of "
              "its ", blocks_.size(),
        " per-stream scratch blocks (", bytes_,
        " bytes each: split-K sums, quantized activations; other streams "
        "took them) is free, so it would have to allocate during the "
        "capture; call it once on that stream before capturing, or make "
        "more with the layer (LayerTarget::streams, at least ",
        blocks_.size() + 1, ")")};
  if (blocks_.size() >= kMaxStreams)
    return Error{concat(what, ": expected calls from at most ", kMaxStreams,
                        " distinct streams (each has its own scratch "
                        "block of ", bytes_, " bytes), got one more")};
  Result<Block> b = make();
  if (!b)
    return Error{b.error()};
  blocks_.push_back(b.take());
  blocks_.back().taken = true;
  blocks_.back().stream = stream;
  return blocks_.back().buffer.ptr();
}

} // namespace humming::rt
