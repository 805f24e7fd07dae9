//===- LayerImpl.h - humming::Layer's state (internal) ----------*- C++ -*-===//
//
// What a Layer holds (Layer::Impl), shared by Layer.cpp (creation, weights,
// forward) and LayerTransform.cpp (transform() and its phases), and the plan
// transform() settles before it compiles anything.
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_LIB_API_LAYERIMPL_H
#define HUMMING_LIB_API_LAYERIMPL_H

#include "Humming/API/ActivationQuantizer.h"
#include "Humming/API/Layer.h"
#include "Jit.h"

#include "Humming/Quant/PreparedLayout.h"
#include "Humming/Runtime/CudaDriver.h"
#include "Humming/Runtime/KernelCache.h"
#include "Humming/Runtime/StreamScratch.h"
#include "Humming/Target/ArchInfo.h"

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace humming {
namespace detail {
using Clock = std::chrono::steady_clock;
/// Seconds from `t` to now.
inline double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

/// What Layer::transform() settles from the layer and the target before it
/// compiles anything (Layer::Impl::planTransform): every refusal that needs
/// no kernel comes from there.
struct TransformPlan {
  Chip chip;
  /// LayerTarget::device: the device whose facts choose the tiles.
  std::string device;
  /// The live device's driver; null for a compile-only target.
  const rt::CudaDriver *driver = nullptr;
  /// Act-order 16-bit activations the layer gathers itself
  /// (forwardGathering).
  bool selfGather = false;
  /// The weights in the prepared layout; otherwise why not.
  bool prepared = false;
  Diag unprepared;
  layout::TileOrder order = layout::TileOrder::Fragments;
  /// LayerTarget::tileConfig parsed, verified and printed back (equal tiles
  /// share cache keys); empty for the heuristics.
  std::string tileConfig;
  std::optional<TileConfig> forced;
  /// Programmatic dependent launch asked for (LayerTarget, HUMMING_PDL).
  bool dependentLaunch = true;
  /// JIT threads (HUMMING_JIT_THREADS; SIZE_MAX: one per kernel).
  size_t workers = SIZE_MAX;
  /// The M-range kernels select-tiles makes (1 for one module of all).
  size_t count = 1;
  /// Where the prepared weights are made: by the repack kernels on the
  /// device (from the canonical tensors a device quantization left there,
  /// or uploaded), or on the host; a canonical (unprepared) layer's
  /// tensors copied on the device.
  bool repackOnDevice = false, repackFromDevice = false, copyFromDevice = false;
};

/// transform()'s GEMM kernels (Layer::Impl::compileGemmKernels): one image per
/// M-range kernel (or one module of all), the kernel table, the PTX, and
/// the weight repack kernels where the device prepares the weights.
struct LayerKernels {
  struct Piece {
    rt::KernelCache::Lookup image;
    std::string ptx;
    /// Seconds to get the image (pipeline and compiler, or the cache), then
    /// to load it too (Layer::Impl::loadGemmKernels).
    double seconds = 0;
  };
  std::vector<Piece> pieces;
  std::vector<abi::KernelLaunch> kernels;
  std::string allPtx;
  std::vector<std::string> modulePtx;
  /// The repack kernels, loaded, and the operands they take (in the
  /// module's order); none unless TransformPlan::repackOnDevice.
  std::optional<ModuleKernels> repack;
  std::vector<WeightOperand> repackOperands;
};
/// The loaded modules (one per piece) and the kernels' functions.
struct LoadedKernels {
  std::vector<rt::Module> modules;
  std::vector<rt::CUfunction> functions;
};
/// The weight-side tensors on the device, by kernel parameter.
struct WeightBuffers {
  std::vector<std::pair<abi::GemmParam, rt::DeviceBuffer>> buffers;
  std::array<rt::CUdeviceptr, abi::NumGemmParams> pointers{};
};
/// forward()'s per-stream scratch (the split-K workspace, then the codes and
/// scales of 16-bit inputs to an 8-bit layer) and that layer's quantizer.
struct ActivationScratch {
  std::optional<ActivationQuantizer> quantizer;
  std::unique_ptr<rt::StreamScratch> scratch;
  size_t codesOffset = 0, scalesOffset = 0;
};
/// An act-order layer's gather kernel and the permutation on the device
/// (none compile-only).
struct GatherKernel {
  std::optional<SingleKernel> kernel;
  std::optional<rt::DeviceBuffer> permutation;
};
} // namespace detail

struct Layer::Impl {
  int64_t n = 0, k = 0;
  /// The activation rows the GEMM reads (Layer::activationK): k, or for 8-
  /// and 4-bit activations k rounded up to 16 bytes of codes.
  int64_t kAct = 0;
  WeightSchema weight;
  /// The weight schema as the GEMM sees it: over rows of kAct activations,
  /// pad_k the rest of the padded K.
  WeightSchema gemmWeight() const {
    WeightSchema w = weight;
    w.padK -= kAct - k;
    return w;
  }
  InputSchema input;
  ComputeOptions compute;
  ScalarType output = ScalarType::f16();
  std::optional<QuantizedWeights> canonical;
  /// quantizeOnDevice(): the canonical weight, scales and zero points as
  /// its kernel wrote them, left on the device for transform()'s repack
  /// (no round trip through the host). `canonical` holds their shapes and
  /// dtypes with no data until canonicalToHost() brings them down and
  /// frees these.
  struct DeviceCanonical {
    const rt::CudaDriver *driver = nullptr;
    /// The context current when they were made (null where the driver
    /// cannot say): another device's transform reads them on the host.
    rt::CUcontext context = nullptr;
    std::vector<std::pair<WeightOperand, rt::DeviceBuffer>> buffers;
    const rt::DeviceBuffer *find(WeightOperand op) const {
      for (const auto &[o, b] : buffers)
        if (o == op)
          return &b;
      return nullptr;
    }
  };
  std::optional<DeviceCanonical> deviceCanonical;
  /// setInputPermutation (act-order): empty for the natural order.
  std::vector<int32_t> inputPermutation;
  /// createMoe: the routing of a MoE GEMM (weight.experts > 0).
  std::optional<MoeOptions> moe;

  // After transform.
  bool transformed = false, compileOnly = false, prepared = false;
  layout::TileOrder order = layout::TileOrder::Fragments;
  /// forward() launches kernels with gridDependency by
  /// cuLaunchKernelEx with programmatic stream serialization.
  bool dependentLaunch = false;
  /// The SMs of the device transform() found (0 without one): the grid of
  /// a persistent kernel (abi::KernelLaunch::persistent).
  int64_t smCount = 0;
  std::string chip, ptx;
  std::vector<std::string> modulePtx;
  std::vector<abi::KernelLaunch> kernels;
  TransformStats stats;
  const rt::CudaDriver *driver = nullptr;
  /// One loaded module per M-range kernel (or one for all).
  std::vector<rt::Module> modules;
  std::vector<rt::CUfunction> functions;
  /// Device copies of the weight-side tensors, by kernel parameter.
  std::vector<std::pair<abi::GemmParam, rt::DeviceBuffer>> buffers;
  std::array<rt::CUdeviceptr, abi::NumGemmParams> pointers{};
  /// Per kernel, the weights' tensor map of a kernel with
  /// KernelLaunch::weightMap (encoded once the weights are on the device;
  /// unused bytes for the others).
  std::vector<rt::TensorMap> weightMaps;
  /// LayerTarget::activationRows: the quantizer of 16-bit inputs (8-bit
  /// activations per token or group).
  std::optional<ActivationQuantizer> quantizer;
  int64_t activationRows = 0;
  /// What a call writes and reads back, one block per stream (so that
  /// calls on several streams at once never share it): the split-K
  /// workspace of the kernels that have one (KernelLaunch::workspace, at
  /// offset 0), then the quantizer's codes (rows of K bytes) and f32
  /// scales at these offsets. Null when compile-only.
  std::unique_ptr<rt::StreamScratch> scratch;
  size_t codesOffset = 0, scalesOffset = 0;
  /// The block of `stream` (0 where the layer needs none).
  Result<rt::CUdeviceptr> scratchFor(void *stream) const {
    if (!scratch)
      return rt::CUdeviceptr(0);
    return scratch->blockFor(static_cast<rt::CUstream>(stream), "the layer");
  }
  /// An act-order layer that gathers its activations itself
  /// (LayerTarget::activationsGathered false): the humming.gather_columns
  /// kernel, and the permutation on the device (not compile-only).
  std::optional<detail::SingleKernel> gather;
  std::optional<rt::DeviceBuffer> permutation;

  int64_t paddedN() const { return n + weight.padN; }
  int64_t paddedK() const { return k + weight.padK; }

  // transform()'s phases (LayerTransform.cpp), in the order it runs them.
  /// The checks of the layer against the target, the tile configuration,
  /// the environment, the kernel count and where the weights are prepared.
  Result<detail::TransformPlan> planTransform(const LayerTarget &target) const;
  /// The canonical tensors brought to the host where the host needs them,
  /// and their prepared form where the host prepares it (else none: the
  /// canonical tensors themselves go up).
  Result<std::optional<QuantizedWeights>>
  hostWeights(const detail::TransformPlan &plan);
  /// The GEMM kernels and the repack kernels (in parallel, through the
  /// kernel cache); their counts and compiler reports into `stats`.
  Result<detail::LayerKernels>
  compileGemmKernels(const detail::TransformPlan &plan,
                     TransformStats &stats) const;
  /// The GEMM kernels loaded, each function checked against what its launch
  /// needs (shared memory, cluster, cooperative residency, TMA encoder).
  Result<detail::LoadedKernels>
  loadGemmKernels(const detail::TransformPlan &plan,
                  detail::LayerKernels &k) const;
  /// The weight-side tensors on the device: repacked there, or uploaded
  /// (or copied from where a device quantization left them).
  Result<detail::WeightBuffers>
  uploadWeights(const detail::TransformPlan &plan,
                const QuantizedWeights &weights,
                const detail::LayerKernels &k) const;
  // Layer::quantizeOnDevice's steps (Layer.cpp), in order.
  /// The weight quantization's module for `dtype` weights, zero points of
  /// type `param`: compiled (or from the kernel cache) and loaded.
  Result<detail::ModuleKernels>
  weightQuantizeKernels(const LayerTarget &target, DType dtype,
                        const ScalarType &param) const;
  /// What the quantization writes: the canonical tensors' shapes and
  /// dtypes (no host data) with a device buffer each, the global scales'
  /// buffer (brought to the host after the kernels), the host's bias.
  struct QuantizeOutputs {
    QuantizedWeights q;
    DeviceCanonical onDevice;
    rt::CUdeviceptr codes = 0, scales = 0, zeroPoints = 0, global = 0;
    std::optional<rt::DeviceBuffer> globalScale;
  };
  Result<QuantizeOutputs> quantizeOutputs(const rt::CudaDriver &driver,
                                          const ScalarType &param,
                                          const double *bias) const;
  /// The module's kernels over the device `weights` into `o`, waited for;
  /// the global scales downloaded.
  Status runWeightQuantize(const detail::ModuleKernels &k, uint64_t weights,
                           QuantizeOutputs &o) const;

  // Layer::launch's steps (Layer.cpp), in the order it takes them.
  /// The arguments of a launch of `m` tokens (and its routing), checked
  /// before anything needs a device.
  Status checkLaunch(uint64_t inputPtr, uint64_t output, int64_t m,
                     const MoeRouting *routing) const;
  /// An indexed MoE launch's block_size for M's kernel `kl` (the caller's
  /// or the layer's), checked against its block_m; 0 for other launches.
  Result<int32_t> routingBlock(const abi::KernelLaunch *kl, int64_t m,
                               const MoeRouting *routing) const;
  /// What one launch passes: the values, and `args` pointing at them in
  /// the kernel's parameter order (KernelABI.h). Not copyable: `args`
  /// points into it.
  struct LaunchArgs {
    std::array<rt::CUdeviceptr, abi::NumMoeParams> ptrs{};
    int32_t m = 0, routingBlock = 0;
    rt::CUdeviceptr workspace = 0;
    rt::TensorMap inputMap, weightMap;
    std::array<void *, abi::NumMoeParams + 3> args{};
    LaunchArgs() = default;
    LaunchArgs(const LaunchArgs &) = delete;
    LaunchArgs &operator=(const LaunchArgs &) = delete;
  };
  /// Fills `a` for kernel `kl` (one of `kernels`): the layer's pointers
  /// and the call's, M, the routing, this stream's workspace, the
  /// activations' tensor map (encoded per launch) and the weights'.
  Status fillArgs(LaunchArgs &a, const abi::KernelLaunch &kl, void *stream,
                  uint64_t inputPtr, uint64_t inputScale, uint64_t output,
                  int64_t m, const MoeRouting *routing) const;
  /// Launches kernel `kl` over its grid for `m` tokens (nothing where a
  /// MoE routing leaves no block of rows), with programmatic dependent
  /// launch or cooperatively where it asks for that.
  Status launchKernel(const abi::KernelLaunch &kl, void *stream, int64_t m,
                      const MoeRouting *routing, void **args) const;
  /// The weights' tensor maps of `kernels` over the prepared weights at
  /// `weights` (one per kernel; abi::weightMapArgs).
  Result<std::vector<rt::TensorMap>>
  encodeWeightMaps(const detail::TransformPlan &plan,
                   const std::vector<abi::KernelLaunch> &kernels,
                   rt::CUdeviceptr weights) const;
  Result<detail::ActivationScratch>
  activationScratch(const LayerTarget &target,
                    const detail::TransformPlan &plan,
                    const std::vector<abi::KernelLaunch> &kernels) const;
  Result<detail::GatherKernel> gatherKernel(const LayerTarget &target,
                                            const detail::TransformPlan &plan,
                                            TransformStats &stats) const;

  /// The canonical tensor of `op` (null where the layer has none).
  static Tensor *canonicalTensor(QuantizedWeights &w, WeightOperand op) {
    switch (op) {
    case WeightOperand::Weight:
      return &w.weight;
    case WeightOperand::Scales:
      return w.scales ? &*w.scales : nullptr;
    case WeightOperand::ZeroPoints:
      return w.zeroPoints ? &*w.zeroPoints : nullptr;
    case WeightOperand::GlobalScale:
      return w.globalScale ? &*w.globalScale : nullptr;
    case WeightOperand::Bias:
      return w.bias ? &*w.bias : nullptr;
    }
    return nullptr;
  }
  /// Brings the canonical tensors a device quantization left there to the
  /// host (and frees the device's copies); nothing when they are there.
  Status canonicalToHost() {
    if (!deviceCanonical)
      return Status::success();
    for (const auto &[op, buffer] : deviceCanonical->buffers) {
      Tensor *t = canonicalTensor(*canonical, op);
      if (!t)
        return Error{concat("the device holds a canonical ", toString(op),
                            " the layer has no tensor for (a bug)")};
      t->data.resize(storageBytes(t->dtype, t->numel()));
      if (t->data.size() != buffer.size())
        return Error{concat("the device's canonical ", toString(op), " holds ",
                            buffer.size(), " bytes, expected ", t->data.size(),
                            " (a bug)")};
      if (Status s = buffer.download(t->data.data(), t->data.size()); !s)
        return s;
    }
    deviceCanonical.reset();
    return Status::success();
  }
};

} // namespace humming

#endif // HUMMING_LIB_API_LAYERIMPL_H
