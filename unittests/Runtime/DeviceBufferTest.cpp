//===- DeviceBufferTest.cpp - DeviceBuffer over a stand-in driver ---------===//
//
// DeviceBuffer's calls into the driver, through a CudaDriver whose entry
// points are stand-ins that record what was called (no GPU here).
//
//===----------------------------------------------------------------------===//

#include "Humming/Runtime/CudaDriver.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace humming::rt;
using humming::Result;
using humming::Status;

namespace {

std::vector<std::string> calls;
CUresult memsetResult = 0;

CudaDriver standInDriver() {
  CudaDriver d{};
  d.cuMemAlloc = [](CUdeviceptr *p, size_t) -> CUresult {
    *p = 0x1000;
    calls.push_back("cuMemAlloc");
    return 0;
  };
  d.cuMemFree = [](CUdeviceptr) -> CUresult {
    calls.push_back("cuMemFree");
    return 0;
  };
  d.cuMemcpyHtoD = [](CUdeviceptr, const void *, size_t n) -> CUresult {
    calls.push_back("cuMemcpyHtoD " + std::to_string(n));
    return memsetResult;
  };
  d.cuMemsetD8 = [](CUdeviceptr, unsigned char byte, size_t n) -> CUresult {
    calls.push_back("cuMemsetD8 " + std::to_string(byte) + " " +
                    std::to_string(n));
    return memsetResult;
  };
  d.cuCtxSynchronize = []() -> CUresult {
    calls.push_back("cuCtxSynchronize");
    return 0;
  };
  d.cuGetErrorString = [](CUresult, const char **s) -> CUresult {
    *s = "stand-in error";
    return 0;
  };
  return d;
}

// cuMemsetD8 runs on the legacy default stream, which non-blocking streams
// do not wait for: a fill is complete when it returns, so a launch on any
// stream after it finds the filled bytes (the GPU suite's PDL chain found
// its outputs poisoned after it had written them when it was not).
TEST(DeviceBufferTest, FillIsCompleteOnReturn) {
  calls.clear();
  memsetResult = 0;
  CudaDriver d = standInDriver();
  {
    Result<DeviceBuffer> b = DeviceBuffer::allocate(d, 64);
    ASSERT_TRUE(bool(b)) << b.error();
    DeviceBuffer buffer = b.take();
    ASSERT_TRUE(bool(buffer.fill(0xFF)));
  }
  EXPECT_EQ(calls, (std::vector<std::string>{"cuMemAlloc", "cuMemsetD8 255 64",
                                             "cuCtxSynchronize", "cuMemFree"}));
}

TEST(DeviceBufferTest, FailedFillNamesTheCallAndDoesNotSynchronize) {
  calls.clear();
  memsetResult = 1; // CUDA_ERROR_INVALID_VALUE
  CudaDriver d = standInDriver();
  Result<DeviceBuffer> b = DeviceBuffer::allocate(d, 16);
  ASSERT_TRUE(bool(b)) << b.error();
  DeviceBuffer buffer = b.take();
  Status s = buffer.fill(0);
  ASSERT_FALSE(bool(s));
  EXPECT_NE(s.error().find("cuMemsetD8"), std::string::npos) << s.error();
  EXPECT_EQ(calls.back(), "cuMemsetD8 0 16");
}

// copyOf: one allocation, one upload; a failed upload frees the buffer
// and names the call.
TEST(DeviceBufferTest, CopyOfAllocatesAndUploads) {
  calls.clear();
  memsetResult = 0;
  CudaDriver d = standInDriver();
  const int data[3] = {1, 2, 3};
  {
    Result<DeviceBuffer> b = DeviceBuffer::copyOf(d, data, sizeof(data));
    ASSERT_TRUE(bool(b)) << b.error();
    EXPECT_EQ(b->size(), sizeof(data));
  }
  EXPECT_EQ(calls, (std::vector<std::string>{"cuMemAlloc", "cuMemcpyHtoD 12",
                                             "cuMemFree"}));
  calls.clear();
  memsetResult = 1;
  Result<DeviceBuffer> failed = DeviceBuffer::copyOf(d, data, sizeof(data));
  ASSERT_FALSE(bool(failed));
  EXPECT_NE(failed.error().find("cuMemcpyHtoD"), std::string::npos)
      << failed.error();
  EXPECT_EQ(calls, (std::vector<std::string>{"cuMemAlloc", "cuMemcpyHtoD 12",
                                             "cuMemFree"}));
}

} // namespace
