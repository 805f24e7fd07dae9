//===- WeightQuantizeCases.cpp - Weights quantized and prepared on a GPU --===//
//
// Layer::quantizeOnDevice (humming.quantize of weights, lowered) against the
// host's Layer::quantize over the same values: every canonical tensor must
// match byte for byte. Each case draws normal weights with an outlier, a
// row of zeros and an infinity (the host's rules for each), rounds them to
// the source type (the values both sides then quantize), uploads them,
// quantizes on the device and transforms the layer from the codes left
// there (the repack on the device, compared word for word with the host's
// preparation of the host's codes), then brings the canonical tensors to
// the host. The big cases time a quantization and a transform from the
// cache, the ready time of a layer.
//
//===----------------------------------------------------------------------===//

#include "WeightQuantizeCases.h"
#include "GpuCommon.h"

#include "Humming/API/Layer.h"
#include "Humming/Quant/Quantize.h"
#include "Humming/Quant/Tensor.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

using namespace humming;

namespace {

struct WeightQuantizeCase {
  std::string name;
  WeightSchema weight;
  DType source = DType::F16;
  ScalarType output = ScalarType::f16();
  int64_t n = 0, k = 0;
  int64_t experts = 0;
  bool timed = false;
};

std::vector<WeightQuantizeCase> weightQuantizeCases(bool quick) {
  std::vector<WeightQuantizeCase> out;
  auto add = [&](const std::string &name, WeightSchema w, DType source,
                 int64_t n, int64_t k, ScalarType output = ScalarType::f16()) {
    WeightQuantizeCase c;
    c.name = "quantize_weights_" + name;
    c.weight = w;
    c.source = source;
    c.n = n;
    c.k = k;
    c.output = output;
    out.push_back(c);
  };
  auto group = [](ScalarType t, ScalarType s, int64_t g,
                  ZeroPointKind zp = ZeroPointKind::None) {
    WeightSchema w = WeightSchema::make(t, s, Granularity::Group, g);
    w.zeroPoint = zp;
    return w;
  };
  auto channel = [](ScalarType t, ScalarType s) {
    return WeightSchema::make(t, s, Granularity::Channel);
  };
  add("u4_g128_f16", group(ScalarType::uint(4), ScalarType::f16(), 128),
      DType::F16, 256, 512);
  add("u4_g128_zp_bf16", group(ScalarType::uint(4), ScalarType::bf16(), 128,
                               ZeroPointKind::Int),
      DType::BF16, 200, 488, ScalarType::bf16()); // padded N and K
  add("s4_g32_f32src", group(ScalarType::sint(4), ScalarType::f16(), 32),
      DType::F32, 128, 256);
  add("u3_g64_zp", group(ScalarType::uint(3), ScalarType::f16(), 64,
                         ZeroPointKind::Int),
      DType::F16, 192, 384); // codes and zero points straddle words
  add("u5_g128_zp", group(ScalarType::uint(5), ScalarType::f16(), 128,
                          ZeroPointKind::Int),
      DType::F16, 160, 256);
  add("u8_g64_fzp", group(ScalarType::uint(8), ScalarType::f16(), 64,
                          ZeroPointKind::Float),
      DType::BF16, 128, 256);
  add("u2_g128_fzp_bf16", group(ScalarType::uint(2), ScalarType::bf16(), 128,
                                ZeroPointKind::Float),
      DType::F16, 64, 512, ScalarType::bf16());
  add("s8_channel_f32", channel(ScalarType::sint(8), ScalarType::f32()),
      DType::F32, 256, 1024);
  add("s3_channel_bf16", channel(ScalarType::sint(3), ScalarType::bf16()),
      DType::BF16, 96, 4096);
  add("u1_g128", group(ScalarType::uint(1), ScalarType::f16(), 128),
      DType::F16, 64, 256);
  add("u7_channel_zp", [&] {
        WeightSchema w = channel(ScalarType::uint(7), ScalarType::f16());
        w.zeroPoint = ZeroPointKind::Int;
        return w;
      }(),
      DType::F32, 128, 768);
  // Float codes (the host's encode: saturation, subnormals, ties to even,
  // negative zeros) with e8m0 (MXFP4) and 16/32-bit scales.
  add("mxfp4_bf16", group(ScalarType::e2m1(), ScalarType::ue8m0(), 32),
      DType::BF16, 256, 512, ScalarType::bf16());
  add("e2m1_g32_f16", group(ScalarType::e2m1(), ScalarType::f16(), 32),
      DType::F16, 128, 256);
  add("e4m3_channel_f32", channel(ScalarType::e4m3(), ScalarType::f32()),
      DType::F16, 128, 512);
  add("e5m2_g128_bf16", group(ScalarType::e5m2(), ScalarType::bf16(), 128),
      DType::F32, 64, 512, ScalarType::bf16());
  add("e2m1_g32_e4m3", group(ScalarType::e2m1(), ScalarType::e4m3(), 32),
      DType::BF16, 128, 256);
  add("u4_g64_e5m2", group(ScalarType::uint(4), ScalarType::e5m2(), 64),
      DType::F16, 128, 256);
  // Groups of 16 (two per warp) and global scales (NVFP4: amax pass,
  // quantization under the global scale, global scale written last).
  // One scale for the tensor (FP8 per tensor, int8 per tensor): its global
  // scale alone.
  add("e4m3_tensor", WeightSchema::make(ScalarType::e4m3(), ScalarType::f32(),
                                        Granularity::Tensor),
      DType::BF16, 128, 512, ScalarType::bf16());
  add("s8_tensor", WeightSchema::make(ScalarType::sint(8), ScalarType::f32(),
                                      Granularity::Tensor),
      DType::F16, 64, 256);
  add("u4_g16_zp", group(ScalarType::uint(4), ScalarType::f16(), 16,
                         ZeroPointKind::Int),
      DType::F16, 128, 256);
  add("nvfp4_bf16",
      WeightSchema::make(ScalarType::e2m1(), ScalarType::e4m3(),
                         Granularity::GroupTensor, 16),
      DType::BF16, 256, 512, ScalarType::bf16());
  // Block scales (f32 per groupN x groupK, DeepSeek's FP8): every row's
  // amax into its block's slot, then the codes, then the scales; N = 200
  // leaves a last block of padding rows (N padded to 256).
  auto block = [](ScalarType t, int64_t gn, int64_t gk) {
    WeightSchema w =
        WeightSchema::make(t, ScalarType::f32(), Granularity::Block, gk);
    w.groupN = gn;
    return w;
  };
  add("e4m3_block128", block(ScalarType::e4m3(), 128, 128), DType::BF16, 200,
      512, ScalarType::bf16());
  add("s8_block64x256", block(ScalarType::sint(8), 64, 256), DType::F16, 256,
      1024);
  // MoE layers (bf16 weights and activations): `experts` experts of N x K.
  auto addMoe = [&](const std::string &name, WeightSchema w, int64_t experts,
                    int64_t n, int64_t k) {
    w.experts = experts;
    add(name, w, DType::BF16, n, k, ScalarType::bf16());
    out.back().experts = experts;
  };
  addMoe("moe_nvfp4",
         WeightSchema::make(ScalarType::e2m1(), ScalarType::e4m3(),
                            Granularity::GroupTensor, 16),
         3, 128, 256);
  addMoe("moe_u4_g128", group(ScalarType::uint(4), ScalarType::bf16(), 128), 4,
         256, 512);
  if (!quick) {
    add("u4_g128_8192x8192", group(ScalarType::uint(4), ScalarType::f16(), 128),
        DType::F16, 8192, 8192);
    out.back().timed = true;
    add("u8_channel_28672x8192",
        channel(ScalarType::uint(8), ScalarType::f16()), DType::BF16, 28672,
        8192);
    out.back().timed = true;
    add("mxfp4_8192x8192", group(ScalarType::e2m1(), ScalarType::ue8m0(), 32),
        DType::BF16, 8192, 8192, ScalarType::bf16());
    out.back().timed = true;
    add("nvfp4_8192x8192",
        WeightSchema::make(ScalarType::e2m1(), ScalarType::e4m3(),
                           Granularity::GroupTensor, 16),
        DType::BF16, 8192, 8192, ScalarType::bf16());
    out.back().timed = true;
    add("e4m3_block128_8192x8192", block(ScalarType::e4m3(), 128, 128),
        DType::BF16, 8192, 8192, ScalarType::bf16());
    out.back().timed = true;
  }
  return out;
}

/// Normal weights (sd 0.02) rounded to the source type, with an outlier,
/// a row of zeros (row 1) and, in the last row, an infinity.
Tensor randomWeights(const WeightQuantizeCase &c, std::mt19937 &rng) {
  const int64_t e = std::max<int64_t>(1, c.experts);
  Tensor x(c.source, {e * c.n, c.k});
  std::normal_distribution<double> normal(0.0, 0.02);
  for (int64_t i = 0; i < x.numel(); ++i)
    x.set(i, normal(rng));
  x.set(c.k / 3, 0.75);
  for (int64_t j = 0; j < c.k && c.n > 1; ++j)
    x.set(c.k + j, 0.0);
  if (c.n > 2)
    x.set((c.n - 1) * c.k + 5, INFINITY);
  return x;
}

std::string compareTensors(const QuantizedWeights &device,
                           const QuantizedWeights &host) {
  auto one = [](const char *what, const std::optional<Tensor> &d,
                const std::optional<Tensor> &h) -> std::string {
    if (d.has_value() != h.has_value())
      return concat(what, " on one side only");
    if (!d)
      return "";
    if (d->shape != h->shape || d->dtype != h->dtype)
      return concat(what, ": shape ", formatShape(d->shape), " against ",
                    formatShape(h->shape));
    for (size_t i = 0; i < d->data.size(); ++i)
      if (d->data[i] != h->data[i])
        return concat(what, " differ at byte ", i, " of ", d->data.size(),
                      ": ", int(d->data[i]), " against ", int(h->data[i]));
    return "";
  };
  std::string why = one("codes", device.weight, host.weight);
  if (why.empty())
    why = one("scales", device.scales, host.scales);
  if (why.empty())
    why = one("zero points", device.zeroPoints, host.zeroPoints);
  if (why.empty())
    why = one("global scales", device.globalScale, host.globalScale);
  if (why.empty())
    why = one("bias", device.bias, host.bias);
  return why;
}

Result<Layer> makeLayer(const WeightQuantizeCase &c) {
  InputSchema in{c.output, ActScaling::None, 0};
  if (c.experts > 0) {
    MoeOptions moe;
    moe.routing = GemmType::Indexed;
    moe.topK = 2;
    return Layer::createMoe(c.n, c.k, c.weight, in, moe, {}, c.output);
  }
  return Layer::create(c.n, c.k, c.weight, in, {}, c.output);
}

} // namespace

WeightQuantizeTally runWeightQuantizeCases(const rt::CudaDriver &cu,
                                           const std::string &chip,
                                           const std::string &filter,
                                           bool quick) {
  WeightQuantizeTally tally;
  std::mt19937 rng(uint32_t(std::random_device{}()));
  LayerTarget target;
  target.chip = chip;
  using Clock = std::chrono::steady_clock;
  auto ms = [](Clock::time_point t) {
    return 1e3 * std::chrono::duration<double>(Clock::now() - t).count();
  };
  for (const WeightQuantizeCase &c : weightQuantizeCases(quick)) {
    if (!gputest::caseSelected(c.name, filter))
      continue;
    auto fail = [&](const std::string &why) {
      std::printf("%-44s FAIL %s\n", c.name.c_str(), why.c_str());
      ++tally.failed;
    };
    Result<Layer> onDevice = makeLayer(c), onHost = makeLayer(c);
    if (!onDevice || !onHost) {
      fail(!onDevice ? onDevice.error() : onHost.error());
      continue;
    }
    Tensor x = randomWeights(c, rng);
    std::vector<double> values(size_t(x.numel()));
    for (int64_t i = 0; i < x.numel(); ++i)
      values[size_t(i)] = x.at(i);
    Result<rt::DeviceBuffer> dx = rt::DeviceBuffer::allocate(cu, x.data.size());
    if (!dx) {
      fail(dx.error());
      continue;
    }
    if (Status s = dx->upload(x.data.data(), x.data.size()); !s) {
      fail(s.error());
      continue;
    }
    auto started = Clock::now();
    if (Status s = onDevice->quantizeOnDevice(target, dx->ptr(), c.source);
        !s) {
      fail("quantizeOnDevice: " + s.error());
      continue;
    }
    const double coldMs = ms(started);
    if (Status s = onHost->quantize(values.data()); !s) {
      fail("host quantize: " + s.error());
      continue;
    }
    // Ready to run: transformed for the device from the codes the kernel
    // left there (the repack on the device; a layer over canonical tensors
    // copies them there), the device's tensors compared word for word with
    // the host's preparation of the host's codes (or those codes).
    if (Status s = onDevice->transform(target); !s) {
      fail("transform: " + s.error());
      continue;
    }
    if (Status s = gputest::checkDeviceRepack(*onDevice,
                                              onHost->canonicalWeights());
        !s) {
      fail(s.error());
      continue;
    }
    // The canonical tensors brought to the host against the host's.
    Result<const QuantizedWeights *> held = onDevice->canonicalTensors();
    if (!held || !*held) {
      fail(!held ? held.error() : "no canonical tensors after quantizing");
      continue;
    }
    std::string why = compareTensors(**held, *onHost->canonicalWeights());
    if (!why.empty()) {
      fail(why);
      continue;
    }
    if (!c.timed) {
      std::printf("%-44s ok\n", c.name.c_str());
      ++tally.passed;
      continue;
    }
    // A layer made ready again, the kernels cached: quantized on the
    // device, then transformed (the weights repacked there).
    auto again = Clock::now();
    Status s = onDevice->quantizeOnDevice(target, dx->ptr(), c.source);
    const double quantizeMs = ms(again);
    auto transformStarted = Clock::now();
    if (s)
      s = onDevice->transform(target);
    const double transformMs = ms(transformStarted);
    if (!s) {
      fail(s.error());
      continue;
    }
    std::printf("%-44s ok  quantize %.1f ms (first %.0f ms), transform %.1f "
                "ms (kernels %.1f ms, weights %.1f ms): ready in %.1f ms\n",
                c.name.c_str(), quantizeMs, coldMs, transformMs,
                1e3 * onDevice->transformStats().kernelSeconds,
                1e3 * onDevice->transformStats().weightSeconds,
                quantizeMs + transformMs);
    ++tally.passed;
  }
  return tally;
}
