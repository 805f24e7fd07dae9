//===- GpuCommon.cpp - Shared pieces of humming-gpu-test ------------------===//

#include "GpuCommon.h"

#include "Humming/Quant/Codec.h"
#include "Humming/Quant/PreparedLayout.h"
#include "Humming/Quant/Quantize.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace humming::gputest {

namespace {
unsigned shardIndex = 0, shardCount = 1;
} // namespace

void setCaseShard(unsigned index, unsigned count) {
  shardIndex = index;
  shardCount = count;
}

bool caseSelected(const std::string &name, const std::string &filter) {
  if (!filter.empty() && name.find(filter) == std::string::npos)
    return false;
  if (shardCount <= 1)
    return true;
  uint32_t h = 2166136261u;
  for (unsigned char ch : name)
    h = (h ^ ch) * 16777619u;
  return h % shardCount == shardIndex;
}

StreamGraph::~StreamGraph() {
  if (exec)
    cu.cuGraphExecDestroy(exec);
  if (graph)
    cu.cuGraphDestroy(graph);
  if (stream)
    cu.cuStreamDestroy(stream);
}

Status StreamGraph::open() {
  return cu.check(cu.cuStreamCreate(&stream, rt::kStreamNonBlocking),
                  "cuStreamCreate");
}

Status StreamGraph::capture(const std::function<Status(void *)> &launches) {
  Status s =
      cu.check(cu.cuStreamBeginCapture(stream, rt::kCaptureModeThreadLocal),
               "cuStreamBeginCapture");
  if (!s)
    return s;
  s = launches(stream);
  Status ended =
      cu.check(cu.cuStreamEndCapture(stream, &graph), "cuStreamEndCapture");
  if (s)
    s = ended;
  if (s)
    s = cu.check(cu.cuGraphInstantiateWithFlags(&exec, graph, 0),
                 "cuGraphInstantiateWithFlags");
  return s;
}

double graphReplayUs(const rt::CudaDriver &cu, size_t launches,
                     const std::function<Status(void *, size_t)> &launch) {
  StreamGraph g(cu);
  Status s = g.open();
  if (s)
    s = g.capture([&](void *stream) {
      Status ran = Status::success();
      for (size_t i = 0; ran && i < launches; ++i)
        ran = launch(stream, i);
      return ran;
    });
  rt::CUstream stream = g.stream;
  rt::CUgraphExec exec = g.exec;
  double us = 0;
  bool ok = bool(s);
  rt::CUevent start = nullptr, stop = nullptr;
  ok = ok && cu.cuEventCreate(&start, 0) == 0 && cu.cuEventCreate(&stop, 0) == 0;
  if (ok && cu.cuGraphLaunch(exec, stream) == 0 &&
      cu.cuStreamSynchronize(stream) == 0) {
    std::vector<double> times;
    for (int r = 0; r < 5; ++r) {
      cu.cuEventRecord(start, stream);
      cu.cuGraphLaunch(exec, stream);
      cu.cuEventRecord(stop, stream);
      cu.cuStreamSynchronize(stream);
      float ms = 0;
      cu.cuEventElapsedTime(&ms, start, stop);
      times.push_back(1000.0 * ms / double(launches));
    }
    std::sort(times.begin(), times.end());
    us = times[2];
  }
  if (start)
    cu.cuEventDestroy(start);
  if (stop)
    cu.cuEventDestroy(stop);
  return us;
}

Result<QuantizedInput> quantizeInput(const rt::CudaDriver &cu,
                                     const InputSchema &in,
                                     const std::vector<double> &values,
                                     int64_t m, int64_t k, int64_t codesK) {
  // Static scaling: the absmax of the batch (as a calibration would give).
  std::optional<float> staticScale;
  if (in.scaling == ActScaling::Static) {
    double absmax = 0;
    for (double v : values)
      absmax = std::max(absmax, std::fabs(v));
    staticScale = float(std::max(absmax, 1e-6) / maxValue(in.type));
  }
  Result<QuantizedActivations> q =
      quantizeActivations(in, values.data(), m, k, staticScale);
  if (!q)
    return Error{"quantize activations: " + q.error()};
  // One byte per 8-bit code; 4-bit codes two per byte, the lower k in the
  // low nibble (rows of codesK / 2 bytes; codesK is even); codes past K
  // zero.
  if (codesK < k || (in.type.bits == 4 && codesK % 2 != 0))
    return Error{concat("quantize activations: expected K (", k,
                        ") or more codes per row, an even number of 4-bit "
                        "ones, got ", codesK)};
  std::vector<uint32_t> padded(size_t(m * codesK), 0);
  for (int64_t r = 0; r < m; ++r)
    std::copy(q->codes.begin() + r * k, q->codes.begin() + (r + 1) * k,
              padded.begin() + r * codesK);
  std::vector<uint8_t> bytes;
  if (in.type.bits == 4) {
    bytes.resize(padded.size() / 2);
    for (size_t i = 0; i < bytes.size(); ++i)
      bytes[i] = uint8_t((padded[2 * i] & 0xF) |
                         (padded[2 * i + 1] & 0xF) << 4);
  } else {
    for (uint32_t code : padded)
      bytes.push_back(uint8_t(code));
  }
  std::vector<float> scales = q->scales;
  if (scales.empty())
    scales.push_back(1.0f);
  Result<rt::DeviceBuffer> dcodes =
      rt::DeviceBuffer::allocate(cu, std::max<size_t>(16, bytes.size()));
  Result<rt::DeviceBuffer> dscales =
      rt::DeviceBuffer::allocate(cu, scales.size() * sizeof(float));
  if (!dcodes || !dscales)
    return Error{!dcodes ? dcodes.error() : dscales.error()};
  Status up = dcodes->upload(bytes.data(), bytes.size());
  if (up)
    up = dscales->upload(scales.data(), scales.size() * sizeof(float));
  if (!up)
    return Error{up.error()};
  return QuantizedInput{dcodes.take(), dscales.take(),
                        dequantizeActivations(in, *q, m, k)};
}

/// The prepared tensors a transformed layer holds on the device (made
/// there by the humming.repack kernels unless HUMMING_PREPARE=host) against
/// the host's layout::prepareMmaSync of its canonical tensors, word for
/// word: the first difference names the tensor and the element.
Status checkDeviceRepack(const Layer &layer,
                         const QuantizedWeights *canonical) {
  Result<QuantizedWeights> device = layer.deviceWeights();
  if (!device)
    return Error{"deviceWeights: " + device.error()};
  // The weights as the GEMM sees them (Layer::gemmWeight): over rows of
  // activationK() codes (K rounded up to 16 bytes of 8- or 4-bit
  // activations), pad_k the rest of the padded K.
  WeightSchema w = layer.weightSchema();
  const int64_t kp = layer.k() + w.padK;
  w.padK -= layer.activationK() - layer.k();
  const QuantizedWeights &c =
      canonical ? *canonical : *layer.canonicalWeights();
  // A layer over canonical tensors holds them as they are.
  Result<QuantizedWeights> host =
      layer.prepared() ? layout::prepareMmaSync(w, layer.inputSchema(), c,
                                                layer.n() + w.padN, kp,
                                                /*threads=*/0,
                                                layer.tileOrder())
                       : Result<QuantizedWeights>(c);
  if (!host)
    return Error{"prepareMmaSync: " + host.error()};
  auto same = [](const char *what, const Tensor &d, const Tensor &h) -> Status {
    if (d.shape != h.shape || d.data.size() != h.data.size())
      return Error{concat("repack: the device's ", what, " has shape ",
                          formatShape(d.shape), ", the host's ",
                          formatShape(h.shape))};
    for (size_t i = 0; i < d.data.size(); ++i)
      if (d.data[i] != h.data[i])
        return Error{concat("repack: the device's ", what, " differs from "
                            "the host's at byte ", i, " of ", d.data.size(),
                            ": ", int(d.data[i]), " vs ", int(h.data[i]))};
    return Status::success();
  };
  if (Status s = same("weight", device->weight, host->weight); !s)
    return s;
  const std::tuple<const char *, const std::optional<Tensor> *,
                   const std::optional<Tensor> *>
      sides[] = {{"scales", &device->scales, &host->scales},
                 {"zero points", &device->zeroPoints, &host->zeroPoints},
                 {"global scale", &device->globalScale, &host->globalScale},
                 {"bias", &device->bias, &host->bias}};
  for (auto [what, d, h] : sides) {
    if (d->has_value() != h->has_value())
      return Error{concat("repack: ", what, " on ",
                          d->has_value() ? "the device only" : "the host only")};
    if (*d)
      if (Status s = same(what, **d, **h); !s)
        return s;
  }
  return Status::success();
}

} // namespace humming::gputest
