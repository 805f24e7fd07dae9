//===- GpuCommon.h - Shared pieces of humming-gpu-test ----------*- C++ -*-===//
//
// What the dense and the MoE cases of humming-gpu-test share: CUDA-graph
// timing and 8/4-bit activations quantized on the host (GpuCommon.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_TOOLS_GPU_TEST_GPUCOMMON_H
#define HUMMING_TOOLS_GPU_TEST_GPUCOMMON_H

#include "Humming/API/Layer.h"
#include "Humming/Quant/Schema.h"
#include "Humming/Runtime/CudaDriver.h"

#include <functional>
#include <vector>

namespace humming::gputest {

/// --shard=i/n: this run takes the cases whose name hashes (FNV-1a) to i
/// modulo n, so the suite can run as n device steps that together cover
/// every case once (a case's every M stays in one shard). The whole suite
/// where n = 1.
void setCaseShard(unsigned index, unsigned count);
/// Whether case `name` runs: it contains `filter` (any name where it is
/// empty) and falls in this run's shard.
bool caseSelected(const std::string &name, const std::string &filter);

/// A stream of its own and the CUDA graph captured on it (instantiated),
/// released on destruction.
struct StreamGraph {
  const rt::CudaDriver &cu;
  rt::CUstream stream = nullptr;
  rt::CUgraph graph = nullptr;
  rt::CUgraphExec exec = nullptr;
  explicit StreamGraph(const rt::CudaDriver &cu) : cu(cu) {}
  StreamGraph(const StreamGraph &) = delete;
  StreamGraph &operator=(const StreamGraph &) = delete;
  ~StreamGraph();
  /// Creates the (non-blocking) stream.
  Status open();
  /// Captures what `launches(stream)` enqueues and instantiates the graph.
  Status capture(const std::function<Status(void *)> &launches);
};

/// Microseconds per launch when `launches` calls of `launch(stream, i)`
/// (i = 0, 1, ...: one per weight copy in turn) are captured in a CUDA graph
/// on a stream of their own and replayed: the median of five timed replays
/// after one warm-up. 0 when capture is not possible.
double graphReplayUs(const rt::CudaDriver &cu, size_t launches,
                     const std::function<Status(void *, size_t)> &launch);

/// 8-bit activations on the device: the codes (one byte each, in rows of
/// `codesK` >= k codes, those past k zero: Layer::activationK) and f32
/// scales the host reference makes from `values` [m, k], and the values they
/// stand for.
struct QuantizedInput {
  rt::DeviceBuffer codes, scales;
  std::vector<double> values;
};

Result<QuantizedInput> quantizeInput(const rt::CudaDriver &cu,
                                     const InputSchema &in,
                                     const std::vector<double> &values,
                                     int64_t m, int64_t k, int64_t codesK);

/// The prepared tensors a transformed layer holds on the device (made
/// there by the humming.repack kernels unless HUMMING_PREPARE=host) against
/// the host's layout::prepareMmaSync of `canonical` (default: the layer's
/// canonical tensors) — for a layer over canonical tensors, against those
/// —, word for word: the first difference names the tensor and the
/// element.
Status checkDeviceRepack(const Layer &layer,
                         const QuantizedWeights *canonical = nullptr);

} // namespace humming::gputest

#endif // HUMMING_TOOLS_GPU_TEST_GPUCOMMON_H
