//===- CudaDriver.h - The CUDA driver API through dlopen --------*- C++ -*-===//
//
// The runtime reaches the driver only through dlopen("libcuda.so.1"), so the
// library builds and its CPU tests run on machines without a driver or a GPU
// (where `CudaDriver::get` returns a clear error). Only the handful of entry
// points Humming uses are resolved; no CUDA header is needed to build.
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_RUNTIME_CUDADRIVER_H
#define HUMMING_RUNTIME_CUDADRIVER_H

#include "Humming/Quant/Result.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace humming::rt {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;
using CUgraph = struct CUgraph_st *;
using CUgraphExec = struct CUgraphExec_st *;

/// CUlaunchConfig (cuda.h) without its header: the same members in the
/// same order, so the same layout.
struct LaunchConfig {
  unsigned gridDimX = 1, gridDimY = 1, gridDimZ = 1;
  unsigned blockDimX = 1, blockDimY = 1, blockDimZ = 1;
  unsigned sharedMemBytes = 0;
  CUstream hStream = nullptr;
  void *attrs = nullptr;
  unsigned numAttrs = 0;
};

/// CUlaunchAttribute (cuda.h): an attribute id, padding to 8 bytes, and a
/// 64-byte value union (8-byte aligned).
struct LaunchAttribute {
  int id = 0;
  char pad[4] = {0, 0, 0, 0};
  union {
    char bytes[64];
    int i;
    void *alignment;
  } value = {};
};
static_assert(sizeof(LaunchAttribute) == 72, "CUlaunchAttribute is 72 bytes");
/// CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION: the launch may
/// begin before the previous kernel on the stream has finished, once all
/// its CTAs have run griddepcontrol.launch_dependents or exited; the
/// kernel's griddepcontrol.wait then waits for that kernel to complete.
constexpr int kLaunchAttrProgrammaticSerialization = 6;
/// CU_LAUNCH_ATTRIBUTE_COOPERATIVE: every CTA of the grid resident at once
/// (the launch fails where they cannot be), as cuLaunchCooperativeKernel.
constexpr int kLaunchAttrCooperative = 2;

/// The first driver whose stream capture records programmatic dependent
/// launches as graph edges (CUDA 12.3): Layer uses them from there on.
constexpr int kDependentLaunchDriverVersion = 12030;

/// A CUtensorMap: 128 opaque bytes, 64-byte aligned (passed to kernels by
/// value).
struct alignas(64) TensorMap {
  uint64_t opaque[16];
};
/// cuTensorMapEncodeTiled's enumerators used here (cuda.h): DATA_TYPE_UINT16
/// (activations) and UINT64 (prepared weights), INTERLEAVE_NONE,
/// SWIZZLE_NONE (weights; the activations' swizzle comes from
/// abi::inputMapArgs: SWIZZLE_32B / 64B / 128B), L2_PROMOTION_L2_256B,
/// FLOAT_OOB_FILL_NONE (zeros).
constexpr int kTensorMapUint16 = 1;
constexpr int kTensorMapUint64 = 4;
constexpr int kTensorMapNoSwizzle = 0;
constexpr int kTensorMapNoInterleave = 0;
constexpr int kTensorMapL2Promote256 = 3;
constexpr int kTensorMapOobZero = 0;

/// The driver entry points, resolved once.
struct CudaDriver {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *,
                                 void **);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
  CUresult (*cuFuncGetAttribute)(int *, int, CUfunction);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*cuMemcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t);
  CUresult (*cuMemsetD8)(CUdeviceptr, unsigned char, size_t);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, unsigned, CUstream,
                             void **, void **);
  CUresult (*cuEventCreate)(CUevent *, unsigned);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  // Streams and CUDA graphs (capture and replay: the benchmark protocol).
  CUresult (*cuStreamCreate)(CUstream *, unsigned);
  CUresult (*cuStreamDestroy)(CUstream);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuStreamBeginCapture)(CUstream, int);
  CUresult (*cuStreamEndCapture)(CUstream, CUgraph *);
  CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec *, CUgraph,
                                          unsigned long long);
  CUresult (*cuGraphLaunch)(CUgraphExec, CUstream);
  CUresult (*cuGraphExecDestroy)(CUgraphExec);
  CUresult (*cuGraphDestroy)(CUgraph);
  // Optional (null where the driver lacks it: before CUDA 11.8): how many
  // clusters of a function can be resident at once.
  CUresult (*cuOccupancyMaxActiveClusters)(int *, CUfunction,
                                           const LaunchConfig *);
  // Optional: how many CTAs of a function one SM keeps resident (the
  // cooperative kernels' check).
  CUresult (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int *, CUfunction,
                                                          int, size_t);
  // Optional: the driver's CUDA version (12030 for 12.3).
  CUresult (*cuDriverGetVersion)(int *);
  // Optional: the calling thread's current context (a layer's device
  // buffers belong to the context current when they were made).
  CUresult (*cuCtxGetCurrent)(CUcontext *);
  // Optional (null before CUDA 12): launches with attributes (programmatic
  // dependent launch, see KernelLaunch::gridDependency).
  CUresult (*cuLaunchKernelEx)(const LaunchConfig *, CUfunction, void **,
                               void **);
  // Optional: whether a stream is capturing a CUDA graph
  // (CUstreamCaptureStatus: 0 none, 1 active, 2 invalidated).
  CUresult (*cuStreamIsCapturing)(CUstream, int *);
  // Optional (null before CUDA 12): encodes a TMA tensor map (tma = [a]).
  CUresult (*cuTensorMapEncodeTiled)(TensorMap *, int, uint32_t, void *,
                                     const uint64_t *, const uint64_t *,
                                     const uint32_t *, const uint32_t *, int,
                                     int, int, int);

  /// The driver, loaded and initialised once; an error when there is no
  /// libcuda.so.1 or no device ("no CUDA driver: libcuda.so.1: cannot open
  /// shared object file").
  static Result<const CudaDriver *> get();

  /// "CUDA_ERROR_INVALID_VALUE (1) in cuLaunchKernel".
  std::string describe(CUresult r, const char *call) const;
  /// Ok, or an Error naming the call.
  Status check(CUresult r, const char *call) const;
};

/// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES.
constexpr int kFuncAttrMaxDynamicSharedBytes = 8;
/// CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH / _DEPTH (the x and z of
/// .reqnctapercluster).
constexpr int kFuncAttrRequiredClusterWidth = 11;
constexpr int kFuncAttrRequiredClusterDepth = 13;
/// CU_STREAM_NON_BLOCKING.
constexpr unsigned kStreamNonBlocking = 1;
/// CU_STREAM_CAPTURE_MODE_THREAD_LOCAL.
constexpr int kCaptureModeThreadLocal = 1;

/// Device 0 made current with its primary context; its name and chip.
struct Device {
  CUdevice device = 0;
  CUcontext context = nullptr;
  std::string name;
  int major = 0, minor = 0, smCount = 0;
};
Result<Device> openDevice(const CudaDriver &driver, int ordinal = 0);

/// A loaded module (PTX JIT-compiled by the driver, or a cubin).
class Module {
public:
  static Result<Module> load(const CudaDriver &driver, const std::string &image);
  Module(Module &&other) noexcept;
  Module &operator=(Module &&) = delete;
  Module(const Module &) = delete;
  ~Module();
  Result<CUfunction> function(const std::string &name) const;

private:
  Module(const CudaDriver &d, CUmodule m) : driver_(&d), module_(m) {}
  const CudaDriver *driver_;
  CUmodule module_;
};

/// Device memory freed on destruction.
class DeviceBuffer {
public:
  static Result<DeviceBuffer> allocate(const CudaDriver &driver, size_t bytes);
  /// A new buffer holding a copy of `bytes` host bytes at `data`.
  static Result<DeviceBuffer> copyOf(const CudaDriver &driver, const void *data,
                                     size_t bytes);
  DeviceBuffer(DeviceBuffer &&other) noexcept;
  DeviceBuffer &operator=(DeviceBuffer &&) = delete;
  DeviceBuffer(const DeviceBuffer &) = delete;
  ~DeviceBuffer();
  CUdeviceptr ptr() const { return ptr_; }
  size_t size() const { return bytes_; }
  Status upload(const void *data, size_t bytes) const;
  Status download(void *data, size_t bytes) const;
  /// `bytes` from device memory `source` (same context).
  Status copyFrom(CUdeviceptr source, size_t bytes) const;
  /// Every byte set to `byte`, complete on return: cuMemsetD8 runs on the
  /// legacy default stream, which a non-blocking stream does not wait for
  /// (a chain launched there right after a plain memset found its outputs
  /// poisoned after it had written them, once other processes shared the
  /// GPU), so the fill synchronizes the context.
  Status fill(unsigned char byte) const;

private:
  DeviceBuffer(const CudaDriver &d, CUdeviceptr p, size_t n)
      : driver_(&d), ptr_(p), bytes_(n) {}
  const CudaDriver *driver_;
  CUdeviceptr ptr_;
  size_t bytes_;
};

} // namespace humming::rt

#endif // HUMMING_RUNTIME_CUDADRIVER_H
