//===- CudaDriver.cpp - The CUDA driver API through dlopen ----------------===//

#include "Humming/Runtime/CudaDriver.h"

#include <cstddef>
#include <dlfcn.h>
#include <mutex>

namespace humming::rt {

static_assert(sizeof(LaunchConfig) == 56 &&
                  offsetof(LaunchConfig, hStream) == 32 &&
                  offsetof(LaunchConfig, numAttrs) == 48,
              "LaunchConfig must lay out as CUlaunchConfig");

namespace {
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;
constexpr int kAttrMultiprocessorCount = 16;

Result<const CudaDriver *> loadDriver() {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *why = dlerror();
    return Error{concat("no CUDA driver: ", why ? why : "libcuda.so.1 not found")};
  }
  static CudaDriver d;
  struct Entry {
    void **slot;
    const char *name;
  } entries[] = {
      {(void **)&d.cuInit, "cuInit"},
      {(void **)&d.cuDeviceGet, "cuDeviceGet"},
      {(void **)&d.cuDeviceGetName, "cuDeviceGetName"},
      {(void **)&d.cuDeviceGetAttribute, "cuDeviceGetAttribute"},
      {(void **)&d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"},
      {(void **)&d.cuCtxSetCurrent, "cuCtxSetCurrent"},
      {(void **)&d.cuCtxSynchronize, "cuCtxSynchronize"},
      {(void **)&d.cuModuleLoadDataEx, "cuModuleLoadDataEx"},
      {(void **)&d.cuModuleUnload, "cuModuleUnload"},
      {(void **)&d.cuModuleGetFunction, "cuModuleGetFunction"},
      {(void **)&d.cuFuncSetAttribute, "cuFuncSetAttribute"},
      {(void **)&d.cuFuncGetAttribute, "cuFuncGetAttribute"},
      {(void **)&d.cuMemAlloc, "cuMemAlloc_v2"},
      {(void **)&d.cuMemFree, "cuMemFree_v2"},
      {(void **)&d.cuMemcpyHtoD, "cuMemcpyHtoD_v2"},
      {(void **)&d.cuMemcpyDtoH, "cuMemcpyDtoH_v2"},
      {(void **)&d.cuMemcpyDtoD, "cuMemcpyDtoD_v2"},
      {(void **)&d.cuMemsetD8, "cuMemsetD8_v2"},
      {(void **)&d.cuLaunchKernel, "cuLaunchKernel"},
      {(void **)&d.cuEventCreate, "cuEventCreate"},
      {(void **)&d.cuEventRecord, "cuEventRecord"},
      {(void **)&d.cuEventSynchronize, "cuEventSynchronize"},
      {(void **)&d.cuEventElapsedTime, "cuEventElapsedTime_v2"},
      {(void **)&d.cuEventDestroy, "cuEventDestroy_v2"},
      {(void **)&d.cuGetErrorString, "cuGetErrorString"},
      {(void **)&d.cuStreamCreate, "cuStreamCreate"},
      {(void **)&d.cuStreamDestroy, "cuStreamDestroy_v2"},
      {(void **)&d.cuStreamSynchronize, "cuStreamSynchronize"},
      {(void **)&d.cuStreamBeginCapture, "cuStreamBeginCapture_v2"},
      {(void **)&d.cuStreamEndCapture, "cuStreamEndCapture"},
      {(void **)&d.cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags"},
      {(void **)&d.cuGraphLaunch, "cuGraphLaunch"},
      {(void **)&d.cuGraphExecDestroy, "cuGraphExecDestroy"},
      {(void **)&d.cuGraphDestroy, "cuGraphDestroy"},
  };
  for (Entry &e : entries) {
    *e.slot = dlsym(lib, e.name);
    if (!*e.slot && std::string(e.name) == "cuEventElapsedTime_v2")
      *e.slot = dlsym(lib, "cuEventElapsedTime");
    if (!*e.slot)
      return Error{concat("the CUDA driver lacks ", e.name)};
  }
  *(void **)&d.cuOccupancyMaxActiveClusters =
      dlsym(lib, "cuOccupancyMaxActiveClusters");
  *(void **)&d.cuOccupancyMaxActiveBlocksPerMultiprocessor =
      dlsym(lib, "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  *(void **)&d.cuTensorMapEncodeTiled = dlsym(lib, "cuTensorMapEncodeTiled");
  *(void **)&d.cuLaunchKernelEx = dlsym(lib, "cuLaunchKernelEx");
  *(void **)&d.cuDriverGetVersion = dlsym(lib, "cuDriverGetVersion");
  *(void **)&d.cuCtxGetCurrent = dlsym(lib, "cuCtxGetCurrent");
  *(void **)&d.cuStreamIsCapturing = dlsym(lib, "cuStreamIsCapturing");
  if (Status s = d.check(d.cuInit(0), "cuInit"); !s)
    return Error{s.error()};
  return &d;
}
} // namespace

Result<const CudaDriver *> CudaDriver::get() {
  static std::once_flag once;
  static Result<const CudaDriver *> result = Error{"not loaded"};
  std::call_once(once, [] { result = loadDriver(); });
  return result;
}

std::string CudaDriver::describe(CUresult r, const char *call) const {
  const char *text = nullptr;
  if (cuGetErrorString)
    cuGetErrorString(r, &text);
  return concat(text ? text : "CUDA error", " (", r, ") in ", call);
}

Status CudaDriver::check(CUresult r, const char *call) const {
  if (r == 0)
    return Status::success();
  return Error{describe(r, call)};
}

Result<Device> openDevice(const CudaDriver &d, int ordinal) {
  Device dev;
  if (Status s = d.check(d.cuDeviceGet(&dev.device, ordinal), "cuDeviceGet"); !s)
    return Error{s.error()};
  char name[256] = {0};
  d.cuDeviceGetName(name, sizeof name, dev.device);
  dev.name = name;
  d.cuDeviceGetAttribute(&dev.major, kAttrComputeCapabilityMajor, dev.device);
  d.cuDeviceGetAttribute(&dev.minor, kAttrComputeCapabilityMinor, dev.device);
  d.cuDeviceGetAttribute(&dev.smCount, kAttrMultiprocessorCount, dev.device);
  if (Status s = d.check(d.cuDevicePrimaryCtxRetain(&dev.context, dev.device),
                         "cuDevicePrimaryCtxRetain");
      !s)
    return Error{s.error()};
  if (Status s = d.check(d.cuCtxSetCurrent(dev.context), "cuCtxSetCurrent"); !s)
    return Error{s.error()};
  return dev;
}

Result<Module> Module::load(const CudaDriver &d, const std::string &image) {
  // JIT log options: CU_JIT_ERROR_LOG_BUFFER (5), _SIZE_BYTES (6).
  std::string log(8192, '\0');
  int options[] = {5, 6};
  void *values[] = {log.data(), (void *)(uintptr_t)log.size()};
  CUmodule m = nullptr;
  CUresult r = d.cuModuleLoadDataEx(&m, image.c_str(), 2, options, values);
  if (r != 0)
    return Error{concat(d.describe(r, "cuModuleLoadDataEx"),
                        log[0] ? ": " : "", log.c_str())};
  return Module(d, m);
}

Module::Module(Module &&o) noexcept : driver_(o.driver_), module_(o.module_) {
  o.module_ = nullptr;
}

Module::~Module() {
  if (module_)
    driver_->cuModuleUnload(module_);
}

Result<CUfunction> Module::function(const std::string &name) const {
  CUfunction f = nullptr;
  if (Status s = driver_->check(
          driver_->cuModuleGetFunction(&f, module_, name.c_str()),
          "cuModuleGetFunction");
      !s)
    return Error{concat(s.error(), " for kernel '", name, "'")};
  return f;
}

Result<DeviceBuffer> DeviceBuffer::allocate(const CudaDriver &d, size_t bytes) {
  CUdeviceptr p = 0;
  if (Status s = d.check(d.cuMemAlloc(&p, bytes ? bytes : 1), "cuMemAlloc"); !s)
    return Error{concat(s.error(), " (", bytes, " bytes)")};
  return DeviceBuffer(d, p, bytes);
}

Result<DeviceBuffer> DeviceBuffer::copyOf(const CudaDriver &d, const void *data,
                                          size_t bytes) {
  Result<DeviceBuffer> b = allocate(d, bytes);
  if (!b)
    return b;
  if (Status s = b->upload(data, bytes); !s)
    return Error{s.error()};
  return b;
}

DeviceBuffer::DeviceBuffer(DeviceBuffer &&o) noexcept
    : driver_(o.driver_), ptr_(o.ptr_), bytes_(o.bytes_) {
  o.ptr_ = 0;
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_)
    driver_->cuMemFree(ptr_);
}

Status DeviceBuffer::upload(const void *data, size_t bytes) const {
  return driver_->check(driver_->cuMemcpyHtoD(ptr_, data, bytes), "cuMemcpyHtoD");
}

Status DeviceBuffer::download(void *data, size_t bytes) const {
  return driver_->check(driver_->cuMemcpyDtoH(data, ptr_, bytes), "cuMemcpyDtoH");
}

Status DeviceBuffer::copyFrom(CUdeviceptr source, size_t bytes) const {
  return driver_->check(driver_->cuMemcpyDtoD(ptr_, source, bytes),
                        "cuMemcpyDtoD");
}

Status DeviceBuffer::fill(unsigned char byte) const {
  if (Status s = driver_->check(driver_->cuMemsetD8(ptr_, byte, bytes_),
                                "cuMemsetD8");
      !s)
    return s;
  return driver_->check(driver_->cuCtxSynchronize(), "cuCtxSynchronize");
}

} // namespace humming::rt
