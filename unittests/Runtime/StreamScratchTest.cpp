//===- StreamScratchTest.cpp - Per-stream scratch over a stand-in driver --===//
//
// rt::StreamScratch's choice of block per stream, through a CudaDriver whose
// entry points are stand-ins (no GPU here): each stream keeps its own
// block, reserved blocks serve streams that capture a graph, a capturing
// stream with none left is refused with what to do, and blocks are zeroed
// when made.
//
//===----------------------------------------------------------------------===//

#include "Humming/Runtime/StreamScratch.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

using namespace humming::rt;
using humming::Result;
using humming::Status;

namespace {

std::vector<std::string> calls;
CUdeviceptr nextPointer = 0x10000;
std::set<CUstream> capturing;

CudaDriver standInDriver(bool withCaptureQuery = true) {
  CudaDriver d{};
  d.cuMemAlloc = [](CUdeviceptr *p, size_t bytes) -> CUresult {
    *p = nextPointer;
    nextPointer += 0x10000;
    calls.push_back("cuMemAlloc " + std::to_string(bytes));
    return 0;
  };
  d.cuMemFree = [](CUdeviceptr) -> CUresult { return 0; };
  d.cuMemsetD8 = [](CUdeviceptr, unsigned char byte, size_t n) -> CUresult {
    calls.push_back("cuMemsetD8 " + std::to_string(byte) + " " +
                    std::to_string(n));
    return 0;
  };
  d.cuCtxSynchronize = []() -> CUresult { return 0; };
  d.cuGetErrorString = [](CUresult, const char **s) -> CUresult {
    *s = "stand-in error";
    return 0;
  };
  if (withCaptureQuery)
    d.cuStreamIsCapturing = [](CUstream s, int *status) -> CUresult {
      *status = capturing.count(s) ? 1 : 0;
      return 0;
    };
  return d;
}

CUstream stream(uintptr_t id) { return reinterpret_cast<CUstream>(id); }

void reset() {
  calls.clear();
  capturing.clear();
}

TEST(StreamScratchTest, EachStreamKeepsItsOwnZeroedBlock) {
  reset();
  CudaDriver d = standInDriver();
  StreamScratch scratch;
  ASSERT_TRUE(bool(scratch.init(d, 4096, 1)));
  EXPECT_EQ(calls, (std::vector<std::string>{"cuMemAlloc 4096",
                                             "cuMemsetD8 0 4096"}));
  Result<CUdeviceptr> a = scratch.blockFor(stream(1), "layer");
  Result<CUdeviceptr> b = scratch.blockFor(stream(2), "layer");
  Result<CUdeviceptr> a2 = scratch.blockFor(stream(1), "layer");
  Result<CUdeviceptr> def = scratch.blockFor(nullptr, "layer");
  ASSERT_TRUE(a && b && a2 && def);
  EXPECT_NE(*a, *b);
  EXPECT_NE(*def, *a);
  EXPECT_NE(*def, *b);
  EXPECT_EQ(*a, *a2);
  EXPECT_EQ(scratch.blocks(), 3u);
  // The second and third streams made theirs, zeroed.
  EXPECT_EQ(calls.size(), 6u);
  EXPECT_EQ(calls.back(), "cuMemsetD8 0 4096");
}

TEST(StreamScratchTest, CapturingStreamTakesAReservedBlock) {
  reset();
  CudaDriver d = standInDriver();
  StreamScratch scratch;
  ASSERT_TRUE(bool(scratch.init(d, 256, 2)));
  ASSERT_TRUE(bool(scratch.blockFor(stream(1), "layer")));
  capturing.insert(stream(2));
  calls.clear();
  Result<CUdeviceptr> c = scratch.blockFor(stream(2), "layer");
  ASSERT_TRUE(bool(c)) << c.error();
  EXPECT_TRUE(calls.empty()); // no allocation during the capture
  // Its block stays its own after the capture too.
  capturing.clear();
  EXPECT_EQ(*scratch.blockFor(stream(2), "layer"), *c);
}

TEST(StreamScratchTest, CapturingStreamWithoutAFreeBlockIsRefused) {
  reset();
  CudaDriver d = standInDriver();
  StreamScratch scratch;
  ASSERT_TRUE(bool(scratch.init(d, 256, 1)));
  ASSERT_TRUE(bool(scratch.blockFor(stream(1), "the layer")));
  capturing.insert(stream(2));
  calls.clear();
  Result<CUdeviceptr> c = scratch.blockFor(stream(2), "the layer");
  ASSERT_FALSE(bool(c));
  EXPECT_TRUE(calls.empty());
  EXPECT_NE(c.error().find("captures a CUDA graph"), std::string::npos)
      << c.error();
  EXPECT_NE(c.error().find("(LayerTarget::streams, at least 2)"),
            std::string::npos)
      << c.error();
  // Called once before its capture, it would have had one.
  capturing.clear();
  EXPECT_TRUE(bool(scratch.blockFor(stream(2), "the layer")));
}

TEST(StreamScratchTest, NoScratchNeededGivesNull) {
  reset();
  CudaDriver d = standInDriver();
  StreamScratch scratch;
  ASSERT_TRUE(bool(scratch.init(d, 0, 2)));
  EXPECT_TRUE(calls.empty());
  Result<CUdeviceptr> p = scratch.blockFor(stream(1), "layer");
  ASSERT_TRUE(bool(p));
  EXPECT_EQ(*p, 0u);
}

TEST(StreamScratchTest, StreamCountIsBounded) {
  reset();
  CudaDriver d = standInDriver(/*withCaptureQuery=*/false);
  StreamScratch scratch;
  ASSERT_TRUE(bool(scratch.init(d, 16, 0)));
  for (uintptr_t i = 1; i <= StreamScratch::kMaxStreams; ++i)
    ASSERT_TRUE(bool(scratch.blockFor(stream(i), "layer")));
  Result<CUdeviceptr> over =
      scratch.blockFor(stream(StreamScratch::kMaxStreams + 1), "layer");
  ASSERT_FALSE(bool(over));
  EXPECT_NE(over.error().find("at most 64 distinct streams"),
            std::string::npos)
      << over.error();
  // Streams that have one still get it.
  EXPECT_TRUE(bool(scratch.blockFor(stream(7), "layer")));
  Status tooMany = StreamScratch().init(d, 16, 65);
  ASSERT_FALSE(bool(tooMany));
  EXPECT_EQ(tooMany.error(), "expected 0 <= streams <= 64, got 65");
  Status negative = StreamScratch().init(d, 16, -1);
  ASSERT_FALSE(bool(negative));
  EXPECT_EQ(negative.error(), "expected 0 <= streams <= 64, got -1");
}

} // namespace
