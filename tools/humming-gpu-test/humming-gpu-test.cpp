//===- humming-gpu-test.cpp - GEMM correctness on a real GPU --------------===//
//
//   humming-gpu-test [--quick | --matrix] [--json=<file>]
//   [--filter=<substring>]      (llvm::cl options: --help lists them)
//
// --matrix runs every legal (weight type, scale type, granularity, zero
// point, activation type) combination on a 128 x 256 layer at M = 1 and 33.
//   humming-gpu-test --compile-only=<chip> --ptx-dir=<dir> [--quick]
//
// --force-tile-config=<#humming.tile_config> compiles every prepared layer
// with that configuration for every M (tuning experiments).
//
// --tiles-for=<device> chooses the prepared layers' tiles with another
// device's facts (--tiles-for=L40S on the H200 runs the sm_89 heuristics'
// mma_sync tiles, 8-bit activations included, compiled for the H200).
//
// --layer=<N>x<K> (repeatable) replaces the suite by ad-hoc W4A16 g128
// layers, canonical and prepared, checked and timed at the M of --m=
// (default 1,16): fixed-cost and scaling experiments.
//
// --compile-only needs no GPU: it transforms every case compile-only for
// <chip> and writes <dir>/<case>.ptx (<case>_m<i>.ptx for M-range kernel i
// of a prepared layer), so ptxas can check them where no device is; with --jit it also makes each loadable image through the
// kernel cache ($HUMMING_COMPILER, $HUMMING_CACHE_DIR), as a GPU run does.
// For every case of the suite: a humming::Layer (the API the C API and the
// Python package sit on) with fresh random weights quantized by lib/Quant,
// in the case's canonical or prepared layout, transformed for the GPU (the
// JIT path: nothing is pre-built; the M-range kernels compile in parallel
// through the kernel cache), run with forward() on poisoned outputs, and
// compared against the float64 reference GEMM over the dequantized weights.
// Big layers are also timed through forward() over layer copies that
// exceed L2, back to back and by CUDA-graph replay. Large M are checked on a
// random sample of rows (always including the first and the last); every
// output element is checked for NaN. Pass: relative error (Frobenius norm)
// <= 1e-3 for f16 outputs, <= 1e-2 for bf16, and no NaN.
//
// Exit status 0 when every case passes, 1 otherwise, 2 when no GPU.
//
//===----------------------------------------------------------------------===//

#include "ToolVersion.h"
#include "Humming/API/Layer.h"
#include "Humming/Quant/Adapters.h"
#include "Humming/Quant/Codec.h"
#include "Humming/Quant/PreparedLayout.h"
#include "GpuCommon.h"
#include "MoeCases.h"
#include "QuantizeCases.h"
#include "WeightQuantizeCases.h"

#include "Humming/Runtime/Compiler.h"
#include "Humming/Runtime/CudaDriver.h"
#include "Humming/Target/KernelABI.h"
#include "Humming/Target/TileHeuristics.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <thread>

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Parallel.h"

using namespace humming;
using namespace humming::gputest;

namespace {

struct Case {
  std::string name;
  WeightSchema weight;
  ScalarType act = ScalarType::f16();
  int64_t n = 256, k = 512; ///< logical sizes
  std::vector<int64_t> ms;
  /// Weights in the prepared mma_sync layout (humming.repack's output, made
  /// on the host by layout::prepareMmaSync) instead of canonical ones.
  bool prepared = false;
  /// Timed (steady and graph replay) whatever its size (--layer).
  bool timed = false;
  /// compute = #humming.compute<f16_accumulation = true> (prepared only).
  bool f16Accumulation = false;
  /// 8-bit activations: their scaling (token or static). The case quantizes
  /// random f16 activations on the host (the rules the GPU kernel follows
  /// bit for bit), the reference multiplies the dequantized values, and the
  /// layer runs forwardQuantized (prepared weights, sm_90a, f16 output).
  ActScaling actScaling = ActScaling::None;
  /// ActScaling::Group: the group size along K.
  int64_t actGroup = 0;
  /// 8- or 4-bit activations (quantized on the host for the reference).
  bool quantizedActs() const { return act.bits < 16; }
  InputSchema input() const {
    return InputSchema{act, quantizedActs() ? actScaling : ActScaling::None,
                       quantizedActs() && actScaling == ActScaling::Group
                           ? actGroup
                           : 0};
  }
  /// The output (and 16-bit source activation) type.
  ScalarType output() const { return quantizedActs() ? ScalarType::f16() : act; }
};

/// Adds, after each case the prepared layout can hold, the same case with
/// prepared weights ("<name>_prep").
std::vector<Case> withPrepared(const std::vector<Case> &cases) {
  std::vector<Case> out;
  for (const Case &c : cases) {
    // 8-bit activations run over prepared weights only.
    if (!c.quantizedActs())
      out.push_back(c);
    // The padding the layer gives itself where the case asks for none, and
    // the rows its GEMM reads (Layer::create, Layer::activationK).
    WeightSchema w = c.weight;
    int64_t kAct = c.k;
    if (w.padN == 0 && w.padK == 0)
      if (Result<Layer> l = Layer::create(c.n, c.k, w, c.input())) {
        w = l->weightSchema();
        kAct = l->activationK();
      }
    WeightSchema gemm = w;
    gemm.padK -= kAct - c.k;
    if (gemm.padK < 0 ||
        layout::supports(gemm, c.input(), c.n + w.padN, c.k + w.padK))
      continue;
    Case p = c;
    p.name += "_prep";
    p.prepared = true;
    out.push_back(p);
  }
  return out;
}

std::vector<Case> suite(bool quick) {
  std::vector<Case> cases;
  const std::vector<int64_t> smallMs = {1, 7, 16, 33, 128};
  auto add = [&](std::string name, WeightSchema w, ScalarType act,
                 int64_t n = 256, int64_t k = 512,
                 std::vector<int64_t> ms = {}) {
    cases.push_back({std::move(name), w, act, n, k, ms.empty() ? smallMs : ms});
  };
  ScalarType f16 = ScalarType::f16(), bf16 = ScalarType::bf16();
  // Every integer width, group 128, both activation types.
  for (unsigned b = 1; b <= 8; ++b)
    for (ScalarType act : {f16, bf16})
      add("ui" + std::to_string(b) + "_g128_" + act.str(),
          WeightSchema::make(ScalarType::uint(b), act, Granularity::Group, 128),
          act);
  // Zero points, signed integers, scale types and granularities.
  add("ui4_zp_int_g128_f16",
      WeightSchema::make(ScalarType::uint(4), f16, Granularity::Group, 128,
                         ZeroPointKind::Int),
      f16);
  add("ui3_zp_int_g64_bf16",
      WeightSchema::make(ScalarType::uint(3), bf16, Granularity::Group, 64,
                         ZeroPointKind::Int),
      bf16);
  add("ui8_zp_int_channel_bf16",
      WeightSchema::make(ScalarType::uint(8), bf16, Granularity::Channel, 0,
                         ZeroPointKind::Int),
      bf16);
  add("ui4_zp_float_g64_f16",
      WeightSchema::make(ScalarType::uint(4), f16, Granularity::Group, 64,
                         ZeroPointKind::Float),
      f16);
  add("ui6_zp_float_g32_bf16",
      WeightSchema::make(ScalarType::uint(6), bf16, Granularity::Group, 32,
                         ZeroPointKind::Float),
      bf16);
  add("si4_channel_f16",
      WeightSchema::make(ScalarType::sint(4), f16, Granularity::Channel), f16);
  add("si8_channel_bf16",
      WeightSchema::make(ScalarType::sint(8), bf16, Granularity::Channel),
      bf16);
  add("ui4_g32_e4m3_scales_f16",
      WeightSchema::make(ScalarType::uint(4), ScalarType::e4m3(),
                         Granularity::Group, 32),
      f16);
  add("ui5_g128_e5m2_scales_bf16",
      WeightSchema::make(ScalarType::uint(5), ScalarType::e5m2(),
                         Granularity::Group, 128),
      bf16);
  add("ui4_g16_ue8m0_scales_f16",
      WeightSchema::make(ScalarType::uint(4), ScalarType::ue8m0(),
                         Granularity::Group, 16),
      f16);
  add("e4m3_channel_f32_f16",
      WeightSchema::make(ScalarType::e4m3(), ScalarType::f32(),
                         Granularity::Channel),
      f16);
  WeightSchema block = WeightSchema::make(ScalarType::e4m3(), ScalarType::f32(),
                                          Granularity::Block, 128);
  block.groupN = 128;
  add("e4m3_block128_bf16", block, bf16);
  add("e5m2_tensor_f16",
      WeightSchema::make(ScalarType::e5m2(), ScalarType::f32(),
                         Granularity::Tensor),
      f16);
  add("mxfp4_e2m1_ue8m0_g32_bf16",
      WeightSchema::make(ScalarType::e2m1(), ScalarType::ue8m0(),
                         Granularity::Group, 32),
      bf16);
  add("nvfp4_e2m1_e4m3_g16_global_f16",
      WeightSchema::make(ScalarType::e2m1(), ScalarType::e4m3(),
                         Granularity::GroupTensor, 16),
      f16);
  add("e2m3_g64_e5m2_scales_f16",
      WeightSchema::make(ScalarType::e2m3(), ScalarType::e5m2(),
                         Granularity::Group, 64),
      f16);
  add("e3m2_g128_bf16",
      WeightSchema::make(ScalarType::e3m2(), bf16, Granularity::Group, 128),
      bf16);
  add("e3m3_g128_f16",
      WeightSchema::make(*ScalarType::parse("e3m3"), f16, Granularity::Group,
                         128),
      f16);
  add("e1m2_channel_bf16",
      WeightSchema::make(*ScalarType::parse("e1m2"), bf16,
                         Granularity::Channel),
      bf16);
  WeightSchema biased =
      WeightSchema::make(ScalarType::uint(4), f16, Granularity::Channel);
  biased.bias = true;
  biased.globalScale = true;
  add("ui4_channel_bias_global_f16", biased, f16);

  // Padding: a 4032 x 4064 layer stored as 4096 x 4096.
  WeightSchema padded =
      WeightSchema::make(ScalarType::uint(4), f16, Granularity::Group, 128);
  padded.padN = 64;
  padded.padK = 32;
  add("ui4_g128_padded_4032x4064_f16", padded, f16, 4032, 4064, {1, 33, 1000});
  // No padding asked for: the layer pads N = 1000 (and K = 1032 per
  // channel) itself and pads the unpadded tensors on load.
  add("autopad_u4_g128_1000x1024_f16",
      WeightSchema::make(ScalarType::uint(4), f16, Granularity::Group, 128),
      f16, 1000, 1024, {1, 33, 300});
  add("autopad_u4_channel_1000x1032_bf16",
      WeightSchema::make(ScalarType::uint(4), bf16, Granularity::Channel),
      bf16, 1000, 1032, {1, 33, 300});

  // 8-bit activations (sm_90a wgmma k32 kernels over prepared weights; the
  // reference multiplies the host-quantized activations): W8A8 fp8 as FP8
  // checkpoints store it, W4A8 (unsigned with and without zero points,
  // signed, fp4), e5m2, static scaling, bias and global scale, K past the
  // tiles' (pad_k) and N off the 256-column blocks.
  auto addA8 = [&](std::string name, WeightSchema w, ScalarType act,
                    ActScaling scaling, int64_t n = 256, int64_t k = 512,
                    std::vector<int64_t> ms = {}) {
    Case c{std::move(name), w, act, n, k,
           ms.empty() ? std::vector<int64_t>{1, 7, 16, 33, 64, 65, 128, 200,
                                             513}
                      : ms};
    c.actScaling = scaling;
    cases.push_back(c);
  };
  const ScalarType e4m3 = ScalarType::e4m3(), e5m2 = ScalarType::e5m2();
  addA8("w8a8_e4m3_channel_token",
         WeightSchema::make(e4m3, f16, Granularity::Channel), e4m3,
         ActScaling::Token);
  addA8("w8a8_e4m3_f32_channel_static",
         WeightSchema::make(e4m3, ScalarType::f32(), Granularity::Channel),
         e4m3, ActScaling::Static);
  addA8("w8a8_e5m2_channel_token",
         WeightSchema::make(e5m2, f16, Granularity::Channel), e5m2,
         ActScaling::Token);
  addA8("w4a8_ui4_channel_e4m3_token",
         WeightSchema::make(ScalarType::uint(4), f16, Granularity::Channel),
         e4m3, ActScaling::Token);
  addA8("w4a8_ui4_zp_int_channel_e4m3_token",
         WeightSchema::make(ScalarType::uint(4), f16, Granularity::Channel, 0,
                            ZeroPointKind::Int),
         e4m3, ActScaling::Token);
  addA8("w4a8_si4_channel_e4m3_static",
         WeightSchema::make(ScalarType::sint(4), bf16, Granularity::Channel),
         e4m3, ActScaling::Static);
  addA8("w4a8_e2m1_channel_e4m3_token",
         WeightSchema::make(ScalarType::e2m1(), f16, Granularity::Channel),
         e4m3, ActScaling::Token);
  addA8("w4a8_g128_e4m3_token",
         WeightSchema::make(ScalarType::uint(4), f16, Granularity::Group, 128),
         e4m3, ActScaling::Token);
  addA8("w4a8_ui4_zp_int_g64_bf16_e4m3_token",
         WeightSchema::make(ScalarType::uint(4), bf16, Granularity::Group, 64,
                            ZeroPointKind::Int),
         e4m3, ActScaling::Token);
  addA8("w4a8_e2m1_ue8m0_g64_e4m3_static", // MXFP4 weights
         WeightSchema::make(ScalarType::e2m1(), ScalarType::ue8m0(),
                            Granularity::Group, 64),
         e4m3, ActScaling::Static);
  addA8("w8a8_e4m3_g128_bf16_e4m3_token", // fp8 weights with group scales
         WeightSchema::make(e4m3, bf16, Granularity::Group, 128),
         e4m3, ActScaling::Token);
  addA8("w4a8_ui4_channel_e5m2_token",
         WeightSchema::make(ScalarType::uint(4), f16, Granularity::Channel),
         e5m2, ActScaling::Token);
  addA8("w5a8_ui5_channel_e4m3_token",
         WeightSchema::make(ScalarType::uint(5), f16, Granularity::Channel),
         e4m3, ActScaling::Token);
  WeightSchema biased8 = WeightSchema::make(e4m3, f16, Granularity::Channel);
  biased8.bias = true;
  biased8.globalScale = true;
  addA8("w8a8_e4m3_channel_bias_global_token", biased8, e4m3,
         ActScaling::Token);
  WeightSchema padded8 =
      WeightSchema::make(ScalarType::uint(4), f16, Granularity::Channel);
  padded8.padN = 64;
  padded8.padK = 48;
  addA8("w4a8_ui4_channel_padded_4032x4048_e4m3", padded8, e4m3,
         ActScaling::Token, 4032, 4048, {1, 33, 1000});
  addA8("w8a8_e4m3_channel_320x1024", // 64-column blocks (N % 256 != 0);
         // from M = 513 128-column blocks, the last partial (from 2049 of
         // 192 tokens: a partial last block of rows too)
         WeightSchema::make(e4m3, f16, Granularity::Channel), e4m3,
         ActScaling::Token, 320, 1024, {1, 16, 100, 600, 2100});
  addA8("w8a8_e4m3_channel_autopad_1000x1040", // the layer pads N and K
        WeightSchema::make(e4m3, f16, Granularity::Channel), e4m3,
        ActScaling::Token, 1000, 1040, {1, 16, 100});
  addA8("w8a8_e4m3_channel_4096x4096",
         WeightSchema::make(e4m3, f16, Granularity::Channel), e4m3,
         ActScaling::Token, 4096, 4096, {1, 16, 64, 128, 1000});
  addA8("w4a8_ui4_channel_e4m3_4096x4096",
         WeightSchema::make(ScalarType::uint(4), f16, Granularity::Channel),
         e4m3, ActScaling::Token, 4096, 4096, {1, 16, 64, 128, 1000});
  addA8("w4a8_g128_e4m3_4096x4096",
         WeightSchema::make(ScalarType::uint(4), f16, Granularity::Group, 128),
         e4m3, ActScaling::Token, 4096, 4096, {1, 16, 64, 128, 1000});
  // si8 activations (s8 wgmmas, s32 sums): W8A8 int8 (si8 weights), W4A8
  // and the other unsigned widths with and without zero points, group
  // scales, static scaling, bias and global scale, the decode tiles.
  const ScalarType si8 = ScalarType::sint(8);
  addA8("w8a8_si8_channel_si8_token",
        WeightSchema::make(si8, f16, Granularity::Channel), si8,
        ActScaling::Token);
  addA8("w8a8_si8_channel_si8_320x1024", // from M = 513 256-column blocks
        // (one set of s32 sums), the last one partial (one n-tile of four)
        WeightSchema::make(si8, f16, Granularity::Channel), si8,
        ActScaling::Token, 320, 1024, {1, 600});
  addA8("w8a8_ui8_channel_si8_token", // int8 checkpoints' canonical form
        WeightSchema::make(ScalarType::uint(8), f16, Granularity::Channel),
        si8, ActScaling::Token);
  addA8("w8a8_si8_f32_channel_si8_static",
        WeightSchema::make(si8, ScalarType::f32(), Granularity::Channel), si8,
        ActScaling::Static);
  addA8("w4a8_g128_si8_token",
        WeightSchema::make(ScalarType::uint(4), f16, Granularity::Group, 128),
        si8, ActScaling::Token);
  addA8("w4a8_ui4_zp_int_g64_bf16_si8_token",
        WeightSchema::make(ScalarType::uint(4), bf16, Granularity::Group, 64,
                           ZeroPointKind::Int),
        si8, ActScaling::Token);
  addA8("w2a8_ui2_channel_si8_token",
        WeightSchema::make(ScalarType::uint(2), f16, Granularity::Channel),
        si8, ActScaling::Token);
  addA8("w7a8_ui7_zp_int_g128_si8_token",
        WeightSchema::make(ScalarType::uint(7), f16, Granularity::Group, 128,
                           ZeroPointKind::Int),
        si8, ActScaling::Token);
  WeightSchema biasedI8 = WeightSchema::make(si8, f16, Granularity::Channel);
  biasedI8.bias = true;
  biasedI8.globalScale = true;
  addA8("w8a8_si8_channel_bias_global_si8_token", biasedI8, si8,
        ActScaling::Token);
  addA8("w8a8_si8_channel_si8_4096x4096",
        WeightSchema::make(si8, f16, Granularity::Channel), si8,
        ActScaling::Token, 4096, 4096, {1, 9, 16, 64, 128, 1000});
  // Fine-grained FP8 (DeepSeek-V3: f32 weight scales per 128 x 128 block,
  // activations per token and group of 128): the block scales are each
  // column's group scales over K-major weights, the activation groups'
  // scales multiply each iteration's sums; and fp8 weights per channel with
  // activation groups, and int8.
  auto addGroups = [&](std::string name, WeightSchema w, ScalarType act,
                       int64_t n, int64_t k, std::vector<int64_t> ms = {}) {
    addA8(std::move(name), w, act, ActScaling::Group, n, k, std::move(ms));
    cases.back().actGroup = 128;
  };
  WeightSchema block128 =
      WeightSchema::make(e4m3, ScalarType::f32(), Granularity::Block, 128);
  block128.groupN = 128;
  addGroups("w8a8_e4m3_block128_e4m3_g128", block128, e4m3, 256, 512);
  addGroups("w8a8_e4m3_block128_e4m3_g128_4096x7168", block128, e4m3, 4096,
            7168, {1, 16, 64, 128, 600});
  addGroups("w8a8_e4m3_block128_e4m3_g128_256x28672", block128, e4m3, 256,
            28672, {1, 600});
  // DeepSeek-V3's N = 2112 (16.5 blocks of 128): the prefill tile's last
  // block of columns is partial (layout::partialColumnBlocks).
  addGroups("w8a8_e4m3_block128_e4m3_g128_2112x512", block128, e4m3, 2112,
            512, {1, 600, 1000});
  addGroups("w8a8_e4m3_channel_e4m3_g128",
            WeightSchema::make(e4m3, f16, Granularity::Channel), e4m3, 256,
            1024);
  addGroups("w8a8_si8_channel_si8_g128",
            WeightSchema::make(si8, f16, Granularity::Channel), si8, 256, 1024);
  // Long K (28672: Llama-70B's down projection): the f32 fold of each
  // iteration's fp8 / s32 sums keeps the error at the output's rounding
  // (the prefill tile folds every 128 of K, the decode tiles every 64).
  addA8("w8a8_e4m3_channel_256x28672",
        WeightSchema::make(e4m3, f16, Granularity::Channel), e4m3,
        ActScaling::Token, 256, 28672, {1, 16, 600});
  addA8("w8a8_si8_channel_si8_256x28672",
        WeightSchema::make(si8, f16, Granularity::Channel), si8,
        ActScaling::Token, 256, 28672, {1, 600});
  // si4 activations (W4A4 int: mma.sync m16n8k64 s4, sm_80-sm_89; the
  // H200 runs it emulated): 4-bit integer weights without zero points,
  // channel and group (f16 / bf16) scales, per-token and static scaling.
  const ScalarType si4 = ScalarType::sint(4);
  addA8("w4a4_si4_channel_si4_token",
        WeightSchema::make(ScalarType::sint(4), ScalarType::f16(),
                           Granularity::Channel),
        si4, ActScaling::Token);
  addA8("w4a4_ui4_g128_si4_token",
        WeightSchema::make(ScalarType::uint(4), ScalarType::f16(),
                           Granularity::Group, 128),
        si4, ActScaling::Token);
  addA8("w4a4_si4_g64_bf16_si4_static",
        WeightSchema::make(ScalarType::sint(4), ScalarType::bf16(),
                           Granularity::Group, 64),
        si4, ActScaling::Static, 320, 1024);
  addA8("w4a4_ui4_channel_si4_4096x4096",
        WeightSchema::make(ScalarType::uint(4), ScalarType::f16(),
                           Granularity::Channel),
        si4, ActScaling::Token, 4096, 4096, {1, 16, 64, 128, 1000});
  addA8("w4a8_g128_si8_4096x4096",
        WeightSchema::make(ScalarType::uint(4), f16, Granularity::Group, 128),
        si8, ActScaling::Token, 4096, 4096, {1, 9, 16, 64, 128, 1000});

  // Signed weights and zero points in the prepared layout's odd widths.
  add("si3_g64_f16",
      WeightSchema::make(ScalarType::sint(3), f16, Granularity::Group, 64), f16);
  add("si7_g32_bf16",
      WeightSchema::make(ScalarType::sint(7), bf16, Granularity::Group, 32),
      bf16);
  add("ui5_zp_int_g128_f16",
      WeightSchema::make(ScalarType::uint(5), f16, Granularity::Group, 128,
                         ZeroPointKind::Int),
      f16);
  add("mxfp4_e2m1_ue8m0_g32_bf16_4096x4096",
      WeightSchema::make(ScalarType::e2m1(), ScalarType::ue8m0(),
                         Granularity::Group, 32),
      bf16, 4096, 4096, {1, 16, 64, 200, 1000});
  add("e4m3_channel_f16_f16_4096x4096",
      WeightSchema::make(ScalarType::e4m3(), f16, Granularity::Channel), f16,
      4096, 4096, {1, 33, 100, 300});

  // f16 accumulation (prepared weights only): group scales, and channel
  // scales of 8-bit codes (applied in the main loop to stay in f16 range).
  std::vector<Case> f16acc;
  auto addF16Acc = [&](std::string name, WeightSchema w, int64_t n, int64_t k,
                       std::vector<int64_t> ms) {
    Case c{std::move(name), w, f16, n, k, std::move(ms)};
    c.prepared = true;
    c.f16Accumulation = true;
    f16acc.push_back(c);
  };
  addF16Acc("ui4_g128_f16acc_prep",
            WeightSchema::make(ScalarType::uint(4), f16, Granularity::Group, 128),
            256, 512, smallMs);
  addF16Acc("ui8_channel_f16acc_prep",
            WeightSchema::make(ScalarType::uint(8), f16, Granularity::Channel),
            256, 512, smallMs);
  if (!quick)
    addF16Acc("w4a16_g128_f16acc_4096x4096_prep",
              WeightSchema::make(ScalarType::uint(4), f16, Granularity::Group,
                                 128),
              4096, 4096, {1, 16, 128, 1000});

  if (!quick) {
    // The standard shapes, every M of the issue, and one M in each of the
    // sm_90a wgmma split ranges (17-64, 129-256, 257-512).
    add("w4a16_g128_4096x4096",
        WeightSchema::make(ScalarType::uint(4), f16, Granularity::Group, 128),
        f16, 4096, 4096, {1, 7, 16, 33, 128, 1000, 4096});
    for (auto [n, k] : {std::pair<int64_t, int64_t>{8192, 8192},
                        {4096, 14336},
                        {14336, 4096}}) {
      std::string shape = std::to_string(n) + "x" + std::to_string(k);
      add("w4a16_g128_" + shape,
          WeightSchema::make(ScalarType::uint(4), f16, Granularity::Group, 128),
          f16, n, k, {1, 16, 24, 33, 128, 200, 300, 1000});
      add("w8a16_channel_bf16_" + shape,
          WeightSchema::make(ScalarType::uint(8), bf16, Granularity::Channel),
          bf16, n, k, {1, 33, 200, 4096});
    }
  }
  std::vector<Case> out = withPrepared(cases);
  out.insert(out.end(), f16acc.begin(), f16acc.end());
  return out;
}

/// Every legal (weight type, scale type, granularity, zero point, activation)
/// combination, on a small layer: the support matrix, exhaustively.
std::vector<Case> matrix() {
  std::vector<ScalarType> weights = allWeightTypes();
  struct Gran {
    Granularity g;
    int64_t k;
  };
  const Gran grans[] = {
      {Granularity::Channel, 0}, {Granularity::Group, 32},
      {Granularity::Group, 128}, {Granularity::GroupTensor, 64},
      {Granularity::Block, 128}, {Granularity::Tensor, 0}};
  const ScalarType scales[] = {ScalarType::f16(),   ScalarType::bf16(),
                               ScalarType::e4m3(),  ScalarType::e5m2(),
                               ScalarType::ue8m0(), ScalarType::f32()};
  std::vector<Case> cases;
  for (ScalarType act : {ScalarType::f16(), ScalarType::bf16()})
    for (const ScalarType &t : weights)
      for (const Gran &g : grans)
        for (const ScalarType &sc : scales)
          for (ZeroPointKind zp : {ZeroPointKind::None, ZeroPointKind::Int,
                                   ZeroPointKind::Float}) {
            WeightSchema w = WeightSchema::make(t, sc, g.g, g.k, zp);
            if (g.g == Granularity::Block)
              w.groupN = 128;
            InputSchema in{act, ActScaling::None, 0};
            if (verifyWeightSchema(w) || verifyCompatibility(w, in, {}, act))
              continue;
            std::string name = "matrix_" + t.str() + "_" + sc.str() + "_" +
                               toString(g.g) + std::to_string(g.k) + "_zp" +
                               toString(zp) + "_" + act.str();
            for (char &c : name)
              if (c == '!' || c == '<' || c == '>' || c == '.')
                c = '_';
            cases.push_back({name, w, act, 128, 256, {1, 33}});
          }
  return withPrepared(cases);
}

/// Whether the case has kernels on `chip`: 8-bit activations where the
/// chip has their m16n8k32 (or wgmma) MMA and, without wgmma, the mma_sync
/// kernels hold the layer (16-bit group scales); the transform elsewhere
/// refuses them, tested in LayerTest.
bool runsOn(const Case &c, const std::string &chip) {
  if (!c.quantizedActs())
    return true;
  std::optional<Chip> parsed = Chip::parse(chip);
  if (!parsed || parsed->sm < std::max(80u, minSmForActivation(c.act)))
    return false;
  // si4: mma.sync m16n8k64 s4 from sm_80 (emulated on sm_90).
  if (c.act.bits == 4)
    return true;
  return parsed->supportsMma(MmaKind::Wgmma) ||
         !layout::eightBitMmaSyncSupports(c.weight, c.input());
}

/// The target of a case: its canonical or prepared layout, and the forced
/// tile configuration for prepared layers.
LayerTarget caseTarget(const Case &c, const std::string &device,
                       const std::string &chip, bool compileOnly,
                       const std::string &forceTiles) {
  LayerTarget t;
  t.device = device;
  t.chip = chip;
  t.compileOnly = compileOnly;
  t.canonicalLayout = !c.prepared;
  if (c.prepared)
    t.tileConfig = forceTiles;
  return t;
}

Result<Layer> createLayer(const Case &c) {
  ComputeOptions compute;
  compute.f16Accumulation = c.f16Accumulation;
  return Layer::create(c.n, c.k, c.weight, c.input(), compute, c.output());
}

/// A case as a humming::Layer with fresh random weights quantized by the
/// host reference (and a bias where the schema has one), transformed for
/// `target`, with the dequantized weights and bias the float64 reference
/// multiplies (not for compile-only targets).
struct CaseLayer {
  std::optional<Layer> layer;
  QuantizedWeights q; ///< canonical tensors (loaded again into timing copies)
  std::vector<double> deq, bias;
};

Result<CaseLayer> makeCaseLayer(const Case &c, const LayerTarget &target,
                                std::mt19937 &rng) {
  Result<Layer> layer = createLayer(c);
  if (!layer)
    return Error{layer.error()};
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> w(size_t(c.n * c.k)), bias(size_t(c.n));
  for (double &v : w)
    v = normal(rng);
  for (double &v : bias)
    v = normal(rng);
  QuantizeOptions qo;
  qo.paramDType = c.output() == ScalarType::bf16() ? DType::BF16 : DType::F16;
  Result<QuantizedWeights> q =
      quantizeWeights(c.weight, w.data(), c.n, c.k, bias.data(), qo);
  if (!q)
    return Error{"quantize: " + q.error()};
  if (Status s = layer->loadQuantized(*q); !s)
    return Error{s.error()};
  if (Status s = layer->transform(target); !s)
    return Error{s.error()};
  if (layer->prepared() != c.prepared)
    return Error{concat("expected the ", c.prepared ? "prepared" : "canonical",
                        " layout, the layer chose the other (a bug)")};
  if (c.prepared && !target.compileOnly)
    if (Status s = checkDeviceRepack(*layer); !s)
      return Error{s.error()};
  CaseLayer out;
  if (!target.compileOnly) { // what the reference multiplies
    Result<std::vector<double>> deq = dequantizeWeights(c.weight, *q, c.n, c.k);
    if (!deq)
      return Error{"dequantize: " + deq.error()};
    out.deq = deq.take();
    out.bias = biasValues(c.weight, *q, c.n);
  }
  out.q = q.take();
  out.layer = layer.take();
  return out;
}

/// Rows checked against the reference: all for small M, else a sample that
/// includes the first and the last.
std::vector<int64_t> sampleRows(int64_t m, std::mt19937 &rng) {
  std::vector<int64_t> rows;
  if (m <= 48) {
    for (int64_t r = 0; r < m; ++r)
      rows.push_back(r);
    return rows;
  }
  rows = {0, m - 1};
  while (rows.size() < 48)
    rows.push_back(int64_t(rng() % uint64_t(m)));
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

struct Outcome {
  std::string name;
  int64_t m = 0, n = 0, k = 0;
  double relError = 0;
  int64_t nans = 0;
  double ms = 0; ///< one cold launch
  double us = 0; ///< mean per launch over rotating weight copies (big layers)
  /// The same launches captured once in a CUDA graph and replayed (the
  /// benchmark protocol's method: no CPU launch cost between kernels).
  double graphUs = 0;
  int64_t kernels = 0; ///< kernels compiled for the layer (one per M range)
  std::string kernel; ///< the kernel that ran
  /// The layer's transform: every kernel (pipelines and compiler in
  /// parallel, or the cache) and the slowest kernel alone.
  double compileSeconds = 0;
  double jitSeconds = 0;
  std::string cacheSource; ///< compiled | cached
  bool pass = false;
  std::string error;
};

/// Random activations [m, k] that the 16-bit type holds exactly (their
/// float64 values too), uploaded, and an output [m, n] poisoned with NaN.
struct Activations {
  Tensor host;
  std::vector<double> values;
  rt::DeviceBuffer input, output;
};

Result<Activations> randomActivations(const rt::CudaDriver &cu, DType dtype,
                                      int64_t m, int64_t k, int64_t n,
                                      std::mt19937 &rng) {
  Tensor a(dtype, {m, k});
  std::vector<double> av(size_t(m * k));
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  for (int64_t i = 0; i < m * k; ++i) {
    a.set(i, uni(rng));
    av[size_t(i)] = a.at(i);
  }
  Result<rt::DeviceBuffer> da = rt::DeviceBuffer::allocate(cu, a.data.size());
  Result<rt::DeviceBuffer> dc =
      rt::DeviceBuffer::allocate(cu, size_t(m * n) * 2);
  if (!da || !dc)
    return Error{!da ? da.error() : dc.error()};
  if (Status up = da->upload(a.data.data(), a.data.size()); !up)
    return Error{up.error()};
  if (Status poisoned = dc->fill(0xFF); !poisoned) // NaN in f16 and bf16
    return Error{poisoned.error()};
  return Activations{std::move(a), std::move(av), da.take(), dc.take()};
}

/// `count` values drawn from a normal distribution of standard deviation
/// `sd` (random weights, biases).
std::vector<double> normalValues(int64_t count, double sd, std::mt19937 &rng) {
  std::normal_distribution<double> normal(0.0, sd);
  std::vector<double> values(static_cast<size_t>(count), 0.0);
  for (double &v : values)
    v = normal(rng);
  return values;
}

/// A W4A16 g128 humming::Layer of N x K quantized from normal weights of
/// standard deviation `sd` (returned in `weights`) and transformed for the
/// device: what the Layer-level tests below start from.
Result<Layer> transformedW4Layer(int64_t n, int64_t k, double sd,
                                 const std::string &device,
                                 const std::string &chip, std::mt19937 &rng,
                                 std::vector<double> &weights) {
  WeightSchema w = WeightSchema::make(ScalarType::uint(4), ScalarType::f16(),
                                      Granularity::Group, 128);
  InputSchema in{ScalarType::f16(), ActScaling::None, 0};
  Result<Layer> layer = Layer::create(n, k, w, in);
  if (!layer)
    return layer;
  weights = normalValues(n * k, sd, rng);
  LayerTarget target;
  target.device = device;
  target.chip = chip;
  Status s = layer->quantize(weights.data());
  if (s)
    s = layer->transform(target);
  if (!s)
    return Error{s.error()};
  return layer;
}

/// Scores the f16 output [o.m, o.n] in `output` against the float64
/// product of activations `a` [o.m, o.k] and weights `w` [o.n, o.k]: NaNs,
/// the relative error of the rest, pass at 1e-3 with no NaN (a failed
/// download is the outcome's error).
void scoreOutput(const rt::DeviceBuffer &output, const std::vector<double> &a,
                 const std::vector<double> &w, Outcome &o) {
  Tensor out(DType::F16, {o.m, o.n});
  if (Status got = output.download(out.data.data(), out.data.size()); !got) {
    o.error = got.error();
    return;
  }
  std::vector<double> ref =
      referenceGemm(a.data(), w.data(), nullptr, o.m, o.n, o.k);
  double num = 0, den = 0;
  for (int64_t i = 0; i < o.m * o.n; ++i) {
    double got = out.at(i);
    if (std::isnan(got)) {
      ++o.nans;
      continue;
    }
    num += (got - ref[size_t(i)]) * (got - ref[size_t(i)]);
    den += ref[size_t(i)] * ref[size_t(i)];
  }
  o.relError = std::sqrt(num / std::max(den, 1e-300));
  o.pass = o.nans == 0 && o.relError <= 1e-3;
}

/// humming::Layer end to end (create, quantize, transform for the device,
/// forward on a stream, compare against float64): the C++ API the C API
/// and the Python package sit on.
Outcome runLayerApi(const rt::CudaDriver &cu, const std::string &device,
                    const std::string &chip, std::mt19937 &rng, int64_t m) {
  Outcome o;
  o.name = "layer_api_ui4_g128_f16";
  o.n = 256;
  o.k = 512;
  o.m = m;
  o.kernel = "humming::Layer";
  std::vector<double> weights;
  Result<Layer> layer =
      transformedW4Layer(o.n, o.k, 0.05, device, chip, rng, weights);
  if (!layer) {
    o.error = layer.error();
    return o;
  }
  WeightSchema w = WeightSchema::make(ScalarType::uint(4), ScalarType::f16(),
                                      Granularity::Group, 128);
  // The reference uses the quantized weights: dequantize what the layer got.
  Result<QuantizedWeights> q = quantizeWeights(w, weights.data(), o.n, o.k);
  Result<std::vector<double>> deq =
      q ? dequantizeWeights(w, *q, o.n, o.k)
        : Result<std::vector<double>>(Error{q.error()});
  if (!deq) {
    o.error = deq.error();
    return o;
  }
  Result<Activations> acts = randomActivations(cu, DType::F16, m, o.k, o.n, rng);
  if (!acts) {
    o.error = acts.error();
    return o;
  }
  const std::vector<double> &av = acts->values;
  rt::DeviceBuffer *dc = &acts->output;
  Status ran = layer->forward(nullptr, acts->input.ptr(), dc->ptr(), m);
  if (ran)
    ran = cu.check(cu.cuCtxSynchronize(), "cuCtxSynchronize");
  if (!ran) {
    o.error = ran.error();
    return o;
  }
  scoreOutput(*dc, av, *deq, o);
  return o;
}

/// `layer` (of `w` and `in`, quantized from `weights`, transformed) through
/// forward() on random 16-bit activations of
/// o.m rows, scored against float64: over the weights as quantized, and
/// for 8-bit activations over the codes the host quantizer makes of them
/// (the layer's own quantizer writes the same bit for bit).
void forwardAndScore(const rt::CudaDriver &cu, Layer &layer,
                     const WeightSchema &w, const InputSchema &in,
                     const std::vector<double> &weights, std::mt19937 &rng,
                     Outcome &o) {
  Status s = Status::success();
  Result<QuantizedWeights> q = quantizeWeights(w, weights.data(), o.n, o.k);
  Result<std::vector<double>> deq =
      q ? dequantizeWeights(w, *q, o.n, o.k)
        : Result<std::vector<double>>(Error{q.error()});
  Result<Activations> acts =
      randomActivations(cu, DType::F16, o.m, o.k, o.n, rng);
  if (s && !deq)
    s = Error{deq.error()};
  if (s && !acts)
    s = Error{acts.error()};
  if (s)
    s = layer.forward(nullptr, acts->input.ptr(), acts->output.ptr(), o.m);
  if (s)
    s = cu.check(cu.cuCtxSynchronize(), "cuCtxSynchronize");
  if (!s) {
    o.error = s.error();
    return;
  }
  if (in.type.bits == 16) {
    scoreOutput(acts->output, acts->values, *deq, o);
    return;
  }
  Result<QuantizedActivations> xq =
      quantizeActivations(in, acts->values.data(), o.m, o.k);
  if (!xq) {
    o.error = xq.error();
    return;
  }
  scoreOutput(acts->output, dequantizeActivations(in, *xq, o.m, o.k), *deq, o);
}

/// The first-use probe (FirstUseProbe.h) on this GPU, forced by
/// HUMMING_PROBE=`mode` for the transform: "always" must keep the layer's
/// kernels (they agree with the reference); "mismatch" takes the layer's
/// output as zero, so the layer must fall back to the plain target's
/// mma_sync kernels (PTX for sm_90, not sm_90a), which agree with the
/// canonical kernel (W4A16) or are the reference (W8A8 fp8, which has no
/// canonical kernel). Either way forward() must then be right against
/// float64 at `m` (one transform per M: the second is the process's
/// remembered outcome).
Outcome runProbe(const rt::CudaDriver &cu, const std::string &device,
                 const std::string &chip, std::mt19937 &rng, const char *mode,
                 bool eightBit, int64_t m) {
  Outcome o;
  o.name = concat("probe_", mode, eightBit ? "_w8a8_fp8" : "_w4a16");
  o.n = 2048;
  o.k = 1024;
  o.m = m;
  o.kernel = "humming::Layer";
  const WeightSchema w =
      eightBit ? WeightSchema::make(ScalarType::e4m3(), ScalarType::f16(),
                                    Granularity::Channel)
               : WeightSchema::make(ScalarType::uint(4), ScalarType::f16(),
                                    Granularity::Group, 128);
  const InputSchema in =
      eightBit ? InputSchema{ScalarType::e4m3(), ActScaling::Token, 0}
               : InputSchema{};
  Result<Layer> layer = Layer::create(o.n, o.k, w, in);
  std::vector<double> weights = normalValues(o.n * o.k, 0.05, rng);
  LayerTarget target;
  target.device = device;
  target.chip = chip;
  target.activationRows = eightBit ? 1024 : 0;
  Status s =
      layer ? layer->quantize(weights.data()) : Status(Error{layer.error()});
  ::setenv("HUMMING_PROBE", mode, 1);
  if (s)
    s = layer->transform(target);
  ::unsetenv("HUMMING_PROBE");
  if (!s) {
    o.error = s.error();
    return o;
  }
  const std::string &probed = layer->transformStats().probe;
  const bool plainPtx =
      layer->ptx().find(".target sm_90\n") != std::string::npos ||
      layer->ptx().find(".target sm_90,") != std::string::npos;
  const bool mismatch = std::strcmp(mode, "mismatch") == 0;
  const std::string expected =
      mismatch ? (eightBit ? "the layer runs sm_90's mma_sync kernels instead"
                           : "sm_90's mma_sync kernels agree with it")
               : "the layer's kernels agree with ";
  if (probed.find(expected) == std::string::npos || plainPtx != mismatch) {
    o.error = concat("expected the probe to say '", expected, "' and PTX for ",
                     mismatch ? "sm_90" : chip, "; it said: ", probed);
    return o;
  }
  forwardAndScore(cu, *layer, w, in, weights, rng, o);
  return o;
}

/// humming::Layer::forward of 16-bit activations on a layer of 8-bit ones
/// (W8A8 fp8 per channel x per token, LayerTarget::activationRows): the
/// layer quantizes on the GPU, then multiplies; the reference multiplies
/// the host-quantized activations (the same codes bit for bit) in float64.
/// K = 520 is not a multiple of 16: the layer's GEMM reads rows of 528
/// codes (Layer::activationK), the quantizer writes the 8 past K as zero.
Outcome runEightBitForward(const rt::CudaDriver &cu, const std::string &device,
                           const std::string &chip, std::mt19937 &rng,
                           int64_t m, int64_t k) {
  Outcome o;
  o.name = k == 512 ? "layer_api_w8a8_forward16"
                    : concat("layer_api_w8a8_forward16_k", k);
  o.n = 256;
  o.k = k;
  o.m = m;
  o.kernel = "humming::Layer";
  WeightSchema w = WeightSchema::make(ScalarType::e4m3(), ScalarType::f16(),
                                      Granularity::Channel);
  InputSchema in{ScalarType::e4m3(), ActScaling::Token, 0};
  Result<Layer> layer = Layer::create(o.n, o.k, w, in);
  std::vector<double> weights = normalValues(o.n * o.k, 0.05, rng);
  LayerTarget target;
  target.device = device;
  target.chip = chip;
  target.activationRows = 64;
  Status s = layer ? layer->quantize(weights.data())
                   : Status(Error{layer.error()});
  if (s)
    s = layer->transform(target);
  if (!s) {
    o.error = s.error();
    return o;
  }
  forwardAndScore(cu, *layer, w, in, weights, rng, o);
  return o;
}

/// Programmatic dependent launch, checked where it can go wrong: a chain of
/// forwards of one square layer, each reading the output the previous one
/// writes (x -> y1 -> y2 -> y3 -> y4), enqueued back to back on a stream
/// (`graph`: captured into a CUDA graph and replayed) over outputs poisoned
/// with NaN. A kernel that read its activations before its
/// griddepcontrol.wait would read the previous kernel's output before it was
/// written. Every stage must equal, bit for bit, the same chain run with a
/// full synchronization after each forward (where no launch overlaps).
Outcome runDependentChain(const rt::CudaDriver &cu, const std::string &device,
                          const std::string &chip, std::mt19937 &rng, int64_t m,
                          bool graph) {
  Outcome o;
  o.name = graph ? "pdl_chain_graph_ui4_g128_f16" : "pdl_chain_ui4_g128_f16";
  o.n = 4096;
  o.k = 4096;
  o.m = m;
  o.kernel = "humming::Layer x4";
  const int depth = 4;
  // Weights of scale ~1/sqrt(K): the activations keep their magnitude
  // along the chain.
  std::vector<double> weights;
  Result<Layer> layer =
      transformedW4Layer(o.n, o.k, 1.0 / 64.0, device, chip, rng, weights);
  if (!layer) {
    o.error = layer.error();
    return o;
  }
  Status s = Status::success();
  if (const abi::KernelLaunch *kl = abi::kernelFor(layer->kernels(), m))
    o.kernel = kl->name + (kl->gridDependency && layer->dependentLaunch()
                               ? " (pdl)"
                               : " (ordinary launch)");
  Result<Activations> acts =
      randomActivations(cu, DType::F16, m, o.k, o.n, rng);
  if (!acts) {
    o.error = acts.error();
    return o;
  }
  const size_t bytes = size_t(m * o.n) * 2;
  std::vector<rt::DeviceBuffer> ys;
  for (int i = 0; i < depth; ++i) {
    Result<rt::DeviceBuffer> y = rt::DeviceBuffer::allocate(cu, bytes);
    if (!y) {
      o.error = y.error();
      return o;
    }
    ys.push_back(y.take());
  }
  auto inputOf = [&](int i) {
    return i == 0 ? acts->input.ptr() : ys[size_t(i - 1)].ptr();
  };
  auto poison = [&]() -> Status {
    for (rt::DeviceBuffer &y : ys)
      if (Status p = y.fill(0xFF); !p)
        return p;
    return Status::success();
  };
  auto download = [&](std::vector<std::vector<uint8_t>> &out) -> Status {
    out.assign(size_t(depth), std::vector<uint8_t>(bytes));
    for (int i = 0; i < depth; ++i)
      if (Status d = ys[size_t(i)].download(out[size_t(i)].data(), bytes); !d)
        return d;
    return Status::success();
  };
  // The reference: one forward at a time.
  std::vector<std::vector<uint8_t>> want, got;
  s = poison();
  for (int i = 0; s && i < depth; ++i) {
    s = layer->forward(nullptr, inputOf(i), ys[size_t(i)].ptr(), m);
    if (s)
      s = cu.check(cu.cuCtxSynchronize(), "cuCtxSynchronize");
  }
  if (s)
    s = download(want);
  // Back to back on a stream, or captured and replayed.
  StreamGraph run(cu);
  auto chain = [&](void *stream) {
    Status ran = Status::success();
    for (int i = 0; ran && i < depth; ++i)
      ran = layer->forward(stream, inputOf(i), ys[size_t(i)].ptr(), m);
    return ran;
  };
  if (s)
    s = run.open();
  if (s)
    s = poison();
  if (s && graph) {
    s = run.capture(chain);
    if (s)
      s = cu.check(cu.cuGraphLaunch(run.exec, run.stream), "cuGraphLaunch");
  } else if (s) {
    s = chain(run.stream);
  }
  if (s)
    s = cu.check(cu.cuStreamSynchronize(run.stream), "cuStreamSynchronize");
  if (s)
    s = download(got);
  if (!s) {
    o.error = s.error();
    return o;
  }
  int64_t differ = 0;
  for (int i = 0; i < depth; ++i)
    for (size_t e = 0; e + 1 < bytes; e += 2) {
      uint16_t a = uint16_t(want[size_t(i)][e] | want[size_t(i)][e + 1] << 8);
      uint16_t b = uint16_t(got[size_t(i)][e] | got[size_t(i)][e + 1] << 8);
      if ((a & 0x7c00) == 0x7c00 || (b & 0x7c00) == 0x7c00)
        ++o.nans; // NaN or infinity: poison left, or overflow
      else if (a != b)
        ++differ;
    }
  // rel_err reports the share of differing outputs.
  o.relError = double(differ) / double(depth * m * o.n);
  o.pass = o.nans == 0 && differ == 0;
  if (!o.pass && o.error.empty())
    o.error = concat(differ, " outputs differ from the synchronized chain, ",
                     o.nans, " NaN / inf");
  return o;
}

/// One layer called from `streams` streams at once (issue 59: two-batch
/// overlap, several request streams of one engine): each stream has its own
/// input and M and, every round, its own output; all streams' forwards are
/// enqueued round by round from one thread, so they overlap on the GPU.
/// The kernels of these M split K across CTAs through a workspace
/// (W4A16 on sm_90a: a forced workspace_split tile; `eightBit`: W8A8 fp8 per
/// token, which the layer quantizes itself into its codes, per stream too).
/// Every output must equal, bit for bit, the same call made alone (the
/// stream synchronized after it).
Outcome runConcurrentStreams(const rt::CudaDriver &cu,
                             const std::string &device,
                             const std::string &chip, std::mt19937 &rng,
                             int streams, bool eightBit) {
  Outcome o;
  o.name = concat("streams", streams, eightBit ? "_w8a8_forward16" : "_w4a16");
  o.n = 4096;
  o.k = 8192;
  o.kernel = "humming::Layer";
  const int rounds = 2048 / streams;
  const int64_t ms[] = {1, 16, 7, 64};
  o.m = ms[0];
  WeightSchema w =
      eightBit ? WeightSchema::make(ScalarType::e4m3(), ScalarType::f16(),
                                    Granularity::Channel)
               : WeightSchema::make(ScalarType::uint(4), ScalarType::f16(),
                                    Granularity::Group, 128);
  InputSchema in = eightBit ? InputSchema{ScalarType::e4m3(), ActScaling::Token, 0}
                            : InputSchema{ScalarType::f16(), ActScaling::None, 0};
  Result<Layer> layer = Layer::create(o.n, o.k, w, in);
  std::vector<double> weights = normalValues(o.n * o.k, 1.0 / 90.0, rng);
  LayerTarget target;
  target.device = device;
  target.chip = chip;
  if (eightBit)
    target.activationRows = 64;
  else if (chip == "sm_90a")
    target.tileConfig =
        "#humming.tile_config<m = [1, 64], block = [64, 256, 64], warp = "
        "[64, 32, 64], mma = wgmma, warp_specialized = true, mbarrier = "
        "true, split_k = 4, workspace_split = true>";
  Status s = layer ? layer->quantize(weights.data())
                   : Status(Error{layer.error()});
  if (s)
    s = layer->transform(target);
  if (!s) {
    o.error = s.error();
    return o;
  }
  // The kernels of the streams' M, and whether they use a workspace.
  std::string kernels;
  for (int i = 0; i < streams; ++i)
    if (const abi::KernelLaunch *kl =
            abi::kernelFor(layer->kernels(), ms[i % 4]))
      kernels += concat(i ? ", " : "", kl->name, " (split_k ", kl->splitK,
                        kl->workspace ? ", workspace)" : ")");
  o.kernel = kernels;
  // Per stream: a stream, an input and `rounds` outputs.
  std::vector<std::unique_ptr<StreamGraph>> ss;
  std::vector<Activations> acts;
  std::vector<rt::DeviceBuffer> outs;
  for (int i = 0; s && i < streams; ++i) {
    ss.push_back(std::make_unique<StreamGraph>(cu));
    s = ss.back()->open();
    const int64_t m = ms[i % 4];
    Result<Activations> a = randomActivations(cu, DType::F16, m, o.k, o.n, rng);
    Result<rt::DeviceBuffer> out =
        a ? rt::DeviceBuffer::allocate(cu, size_t(rounds) * size_t(m * o.n) * 2)
          : Result<rt::DeviceBuffer>(Error{a.error()});
    if (s && !out)
      s = Error{out.error()};
    if (s)
      s = out->fill(0xFF); // NaN in f16
    if (s) {
      acts.push_back(std::move(*a));
      outs.push_back(out.take());
    }
  }
  auto outAt = [&](int i, int r) {
    return outs[size_t(i)].ptr() + uint64_t(r) * uint64_t(ms[i % 4] * o.n) * 2;
  };
  // Alone: each stream's call with nothing else running (into its own
  // input's output buffer).
  std::vector<std::vector<uint8_t>> want;
  want.resize(size_t(streams));
  for (int i = 0; s && i < streams; ++i) {
    const int64_t m = ms[i % 4];
    s = layer->forward(ss[size_t(i)]->stream, acts[size_t(i)].input.ptr(),
                       acts[size_t(i)].output.ptr(), m);
    if (s)
      s = cu.check(cu.cuCtxSynchronize(), "cuCtxSynchronize");
    want[size_t(i)].resize(size_t(m * o.n) * 2);
    if (s)
      s = acts[size_t(i)].output.download(want[size_t(i)].data(),
                                          want[size_t(i)].size());
  }
  // Together: round by round, every stream's forward.
  for (int r = 0; s && r < rounds; ++r)
    for (int i = 0; s && i < streams; ++i)
      s = layer->forward(ss[size_t(i)]->stream, acts[size_t(i)].input.ptr(),
                         outAt(i, r), ms[i % 4]);
  if (s)
    s = cu.check(cu.cuCtxSynchronize(), "cuCtxSynchronize");
  int64_t differ = 0, total = 0;
  std::vector<uint8_t> got;
  for (int i = 0; s && i < streams; ++i) {
    const size_t bytes = want[size_t(i)].size();
    got.resize(bytes * size_t(rounds));
    s = outs[size_t(i)].download(got.data(), got.size());
    for (int r = 0; s && r < rounds; ++r)
      for (size_t e = 0; e + 1 < bytes; e += 2) {
        const uint8_t *g = got.data() + size_t(r) * bytes + e;
        const uint8_t *w0 = want[size_t(i)].data() + e;
        ++total;
        if ((g[1] & 0x7c) == 0x7c && (w0[1] & 0x7c) != 0x7c)
          ++o.nans;
        else if (g[0] != w0[0] || g[1] != w0[1])
          ++differ;
      }
  }
  if (!s) {
    o.error = s.error();
    return o;
  }
  o.relError = total ? double(differ) / double(total) : 0;
  o.pass = differ == 0 && o.nans == 0;
  if (!o.pass)
    o.error = concat(differ, " of ", total, " outputs differ from the call "
                     "made alone and ", o.nans, " are NaN (", streams,
                     " streams x ", rounds, " calls)");
  return o;
}

} // namespace

namespace cl = llvm::cl;
static cl::OptionCategory category("humming-gpu-test options");
static cl::opt<bool> quick("quick", cl::desc("A shorter suite (fewer M)"),
                           cl::cat(category));
static cl::opt<bool>
    noTiming("no-timing",
             cl::desc("Check only: time nothing (for compute-sanitizer, "
                      "under which a timing loop takes minutes)"),
             cl::cat(category));
static cl::opt<bool>
    useMatrix("matrix",
              cl::desc("Every legal schema combination on a 128 x 256 layer "
                       "at M = 1 and 33"),
              cl::cat(category));
static cl::opt<std::string> jsonPath("json", cl::desc("Write a JSON report"),
                                     cl::value_desc("file"), cl::cat(category));
static cl::opt<std::string>
    filter("filter", cl::desc("Only the cases whose name contains this"),
           cl::value_desc("substring"), cl::cat(category));
static cl::opt<std::string>
    compileOnly("compile-only",
                cl::desc("No GPU: transform every case compile-only for the "
                         "chip"),
                cl::value_desc("chip"), cl::cat(category));
static cl::opt<std::string>
    ptxDir("ptx-dir", cl::desc("With --compile-only: write <case>.ptx here"),
           cl::value_desc("dir"), cl::cat(category));
static cl::opt<bool>
    jit("jit",
        cl::desc("With --compile-only: also make each loadable image "
                 "through the kernel cache"),
        cl::cat(category));
static cl::opt<std::string> forceTiles(
    "force-tile-config",
    cl::desc("Compile every prepared layer with this tile for every M"),
    cl::value_desc("#humming.tile_config<...>"), cl::cat(category));
static cl::opt<std::string> tilesFor(
    "tiles-for",
    cl::desc("Choose the prepared layers' tiles with this device's facts "
             "(e.g. L40S, A100: their mma_sync tiles, compiled for and run "
             "on the GPU present)"),
    cl::value_desc("device"), cl::cat(category));
static cl::list<std::string>
    layerShapes("layer",
                cl::desc("Replace the suite by ad-hoc layers (W4A16 g128 "
                         "unless --layer-weights; repeatable), checked and "
                         "timed"),
                cl::value_desc("NxK"), cl::cat(category));
static cl::opt<std::string> shard(
    "shard",
    cl::desc("Run the cases of shard i of n (by a hash of the case's name; "
             "the n shards together run every case once)"),
    cl::value_desc("i/n"), cl::cat(category));
static cl::opt<std::string> layerWeights(
    "layer-weights",
    cl::desc("The weights of --layer: a code type, a group size, 'channel' "
             "or f32 blocks b<n>x<k>, optionally the activations (f16, "
             "bf16, or e4m3, e5m2, si8 per token with f16 scales, per token "
             "and group of K with g<size> appended; default ui4,g128,f16; "
             "e.g. ui8,channel,bf16 or e4m3,channel,e4m3 or "
             "e4m3,b128x128,e4m3g128)"),
    cl::value_desc("type,g<size>|channel|b<n>x<k>[,f16|bf16|e4m3[g<size>]]"),
    cl::init("ui4,g128"),
    cl::cat(category));
static cl::opt<bool>
    moeCases("moe",
             cl::desc("Run the mixture-of-experts cases (every routing, "
                      "against the float64 MoE reference) instead of the "
                      "dense suite"),
             cl::cat(category));
static cl::opt<bool> moeBench(
    "moe-bench",
    cl::desc("Time the MoE benchmark layers (Qwen3-30B-A3B, Mixtral, "
             "DeepSeek-V3 as W4A16 g128 / W4A8; gpt-oss-120b and the "
             "others as MXFP4 x bf16; CUDA graphs over four copies, one "
             "of a layer over 1 GiB) at the M of --m (default "
             "1,16,64,256,1024,4096)"),
    cl::cat(category));
static cl::opt<double> bandwidth(
    "bandwidth",
    cl::desc("The memory bandwidth of the --moe-bench floor, GB/s"),
    cl::init(4300), cl::cat(category));
static cl::opt<int64_t> moeBlockSize(
    "moe-block-size",
    cl::desc("The indexed routing's block_size in --moe-bench (a multiple "
             "of 16; 0: each M's kernel's, Layer::moeBlockSize)"),
    cl::init(0), cl::cat(category));
static cl::list<int64_t>
    layerMList("m", cl::desc("The M of --layer (default 1,16)"),
               cl::value_desc("M,..."), cl::CommaSeparated, cl::cat(category));

/// A named Layer-level case's line: `metric` (rel_err against float64, or
/// differ against another run) at its M, N and K, its kernel, the verdict
/// and any error.
void printNamedCase(const Outcome &o, const char *metric) {
  std::printf("%-40s M=%-5lld N=%-6lld K=%-6lld %s=%.2e nan=%lld %s %s%s\n",
              o.name.c_str(), (long long)o.m, (long long)o.n, (long long)o.k,
              metric, o.relError, (long long)o.nans, o.kernel.c_str(),
              o.pass ? "PASS" : "FAIL",
              o.error.empty() ? "" : (" " + o.error).c_str());
}

int main(int argc, char **argv) {
  // One line at a time even into a file: a run cut off by a time limit
  // still leaves every finished case's line.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  cl::HideUnrelatedOptions(category);
  humming::tools::installVersionPrinter("humming-gpu-test");
  cl::ParseCommandLineOptions(argc, argv,
                              "humming-gpu-test: GEMM correctness (and "
                              "timing) on a real GPU\n");
  std::vector<Case> layers; // --layer: ad-hoc layers, timed
  std::vector<int64_t> layerMs = {1, 16};
  if (!layerMList.empty()) {
    layerMs.assign(layerMList.begin(), layerMList.end());
    for (int64_t v : layerMs)
      if (v < 0) {
        std::fprintf(stderr,
                     "humming-gpu-test: expected --m=<M>[,<M>...] with "
                     "non-negative integers, got %lld\n",
                     (long long)v);
        return 2;
      }
  }
  if (!shard.empty()) {
    unsigned index = 0, count = 0;
    char tail = 0;
    if (std::sscanf(shard.c_str(), "%u/%u%c", &index, &count, &tail) != 2 ||
        count == 0 || index >= count) {
      std::fprintf(stderr,
                   "humming-gpu-test: expected --shard=<i>/<n> with 0 <= i < "
                   "n, got '--shard=%s'\n",
                   shard.c_str());
      return 2;
    }
    setCaseShard(index, count);
  }
  // --layer-weights: "<type>,g<size>", "<type>,channel" or
  // "<type>,b<n>x<k>" (f32 scales per block of n columns and k of K, as
  // FP8 block checkpoints store them), then optionally ",f16" or ",bf16"
  // (the activations, and the scales' type) or ",e4m3", ",e5m2", ",si8"
  // (8-bit activations per token, f16 scales), each of those with
  // "g<size>" appended for scales per token and group of K (",e4m3g128":
  // DeepSeek-V3's 1 x 128 activations).
  WeightSchema layerSchema;
  ScalarType layerAct = ScalarType::f16();
  ActScaling layerScaling = ActScaling::None;
  int64_t layerActGroup = 0;
  std::string layerTag;
  {
    llvm::StringRef spec(layerWeights);
    auto [typeName, rest] = spec.split(',');
    auto [granName, actSpec] = rest.split(',');
    std::optional<ScalarType> type = ScalarType::parse(typeName.str());
    long long group = 0, blockN = 0, blockK = 0;
    const bool channel = granName == "channel";
    const bool grouped = granName.starts_with("g") &&
                         !granName.drop_front().getAsInteger(10, group) &&
                         group > 0;
    bool blocked = false;
    if (granName.starts_with("b")) {
      auto [bn, bk] = granName.drop_front().split('x');
      blocked = !bn.getAsInteger(10, blockN) && !bk.getAsInteger(10, blockK) &&
                blockN > 0 && blockK > 0;
    }
    // An 8-bit activation name, then optionally g<size>.
    llvm::StringRef actName = actSpec;
    long long actGroup = 0;
    bool actGroupOk = true;
    if (size_t g = actSpec.find('g'); g != llvm::StringRef::npos && g > 0) {
      actName = actSpec.take_front(g);
      actGroupOk = !actSpec.drop_front(g + 1).getAsInteger(10, actGroup) &&
                   actGroup > 0;
    }
    const bool act8 = actName == "e4m3" || actName == "e5m2" ||
                      actName == "si8";
    const bool actKnown =
        actGroupOk && (actGroup == 0 || act8) &&
        (actName.empty() || actName == "f16" || actName == "bf16" || act8);
    if (!type || !(channel || grouped || blocked) || !actKnown) {
      std::fprintf(stderr,
                   "humming-gpu-test: expected --layer-weights=<type>,g<size>, "
                   "<type>,channel or <type>,b<n>x<k>, then optionally ,f16, "
                   ",bf16, ,e4m3, ,e5m2 or ,si8 (the 8-bit ones per token, or "
                   "per token and group of K with g<size> appended; e.g. "
                   "ui4,g128 or ui8,channel,bf16 or e4m3,b128x128,e4m3g128), "
                   "got '%s'\n",
                   layerWeights.c_str());
      return 2;
    }
    if (actName == "bf16")
      layerAct = ScalarType::bf16();
    if (act8) {
      layerAct = actName == "e4m3"   ? ScalarType::e4m3()
                 : actName == "e5m2" ? ScalarType::e5m2()
                                     : ScalarType::sint(8);
      layerScaling = actGroup ? ActScaling::Group : ActScaling::Token;
      layerActGroup = actGroup;
    }
    layerSchema =
        blocked ? WeightSchema::make(*type, ScalarType::f32(),
                                     Granularity::Block, blockK)
                : WeightSchema::make(*type,
                                     act8 ? ScalarType::f16() : layerAct,
                                     channel ? Granularity::Channel
                                             : Granularity::Group,
                                     group);
    if (blocked)
      layerSchema.groupN = blockN;
    if (std::optional<std::string> err = verifyWeightSchema(layerSchema)) {
      std::fprintf(stderr, "humming-gpu-test: --layer-weights=%s: %s\n",
                   layerWeights.c_str(), err->c_str());
      return 2;
    }
    layerTag = "w" + std::to_string(type->bits) + "a" +
               std::to_string(layerAct.bits) + "_" +
               (channel   ? std::string("channel")
                : blocked ? "b" + std::to_string(blockN) + "x" +
                                std::to_string(blockK)
                          : "g" + std::to_string(group)) +
               (actName == "bf16" || act8 ? "_" + actSpec.str() : "");
  }
  for (const std::string &shape : layerShapes) {
    long long n = 0, k = 0;
    char tail = 0;
    if (std::sscanf(shape.c_str(), "%lldx%lld%c", &n, &k, &tail) != 2 ||
        n <= 0 || k <= 0) {
      std::fprintf(stderr,
                   "humming-gpu-test: expected --layer=<N>x<K> with "
                   "positive sizes, got '--layer=%s'\n",
                   shape.c_str());
      return 2;
    }
    Case c;
    c.name = layerTag + "_" + std::to_string(n) + "x" + std::to_string(k);
    c.weight = layerSchema;
    c.act = layerAct;
    c.actScaling = layerScaling;
    c.actGroup = layerActGroup;
    c.n = n;
    c.k = k;
    c.timed = true;
    layers.push_back(c);
  }
  if (!tilesFor.empty() && !lookupDevice(tilesFor)) {
    std::fprintf(stderr,
                 "humming-gpu-test: expected --tiles-for=<device> among %s, "
                 "got '%s'\n",
                 knownDeviceNames().c_str(), tilesFor.c_str());
    return 2;
  }
  if (!tilesFor.empty() && !compileOnly.empty()) {
    std::fprintf(stderr, "humming-gpu-test: --tiles-for applies to GPU runs "
                         "(--compile-only takes the chip's own tiles)\n");
    return 2;
  }
  for (Case &c : layers)
    c.ms = layerMs;
  if (!layers.empty()) {
    const size_t asked = layers.size();
    layers = withPrepared(layers);
    // (An empty list means the suite: say so rather than run it.)
    if (layers.empty()) {
      std::fprintf(stderr,
                   "humming-gpu-test: no kernel family takes the %zu "
                   "--layer shape(s) with these weights and activations "
                   "(the prepared layout refuses them)\n",
                   asked);
      return 2;
    }
  }
  auto cases = [&] {
    return !layers.empty() ? layers : useMatrix ? matrix() : suite(quick);
  };
  if (!compileOnly.empty()) {
    // PTX only unless --jit: the driver "compiler" passes the PTX through,
    // and nothing is written to a kernel cache.
    if (!jit) {
      ::setenv("HUMMING_COMPILER", "driver", 1);
      ::setenv("HUMMING_CACHE_DIR", "off", 1);
    }
    Result<std::unique_ptr<rt::KernelCompiler>> compiler = rt::selectCompiler();
    if (!compiler) {
      std::fprintf(stderr, "humming-gpu-test: %s\n", compiler.error().c_str());
      return 2;
    }
    if (moeCases) {
      MoeTally t = runMoeCases(nullptr, "", compileOnly, filter, quick, ptxDir,
                               "", forceTiles);
      std::printf("humming-gpu-test: %d passed, %d failed\n", t.passed,
                  t.failed);
      return t.failed ? 1 : 0;
    }
    int compiled = 0, errors = 0, kernelsCompiled = 0, kernelsCached = 0;
    std::mt19937 rng(1);
    for (const Case &c : cases()) {
      if (!caseSelected(c.name, filter))
        continue;
      if (!runsOn(c, compileOnly))
        continue;
      Result<CaseLayer> made =
          makeCaseLayer(c, caseTarget(c, "", compileOnly, true, forceTiles), rng);
      if (!made) {
        std::fprintf(stderr, "%s: %s\n", c.name.c_str(), made.error().c_str());
        ++errors;
        continue;
      }
      // One file per PTX module, so ptxas can assemble each: <case>.ptx,
      // or <case>_m<i>.ptx for the M-range kernel i of a prepared layer.
      const std::vector<std::string> &modules = made->layer->modulePtx();
      for (size_t i = 0; i < modules.size() && !ptxDir.empty(); ++i) {
        std::string path = ptxDir + "/" + c.name +
                           (modules.size() > 1 ? "_m" + std::to_string(i) : "") +
                           ".ptx";
        std::ofstream file(path);
        file << modules[i];
        file.close();
        if (!file) {
          std::fprintf(stderr,
                       "humming-gpu-test: cannot write '%s' (does --ptx-dir "
                       "name a writable directory?)\n",
                       path.c_str());
          return 2;
        }
      }
      const TransformStats &st = made->layer->transformStats();
      kernelsCompiled += st.compiled;
      kernelsCached += st.cached;
      if (jit) // where a cold transform's time goes
        std::printf("%-44s transform: kernels %.2f s (slowest %.2f s, %d "
                    "compiled, %d cached), weights %.2f s\n",
                    c.name.c_str(), st.kernelSeconds, st.slowestKernelSeconds,
                    st.compiled, st.cached, st.weightSeconds);
      ++compiled;
    }
    if (layers.empty() && !useMatrix && forceTiles.empty()) {
      QuantizeTally q = runQuantizeCases(nullptr, compileOnly, filter, quick,
                                         false, ptxDir);
      compiled += q.passed;
      errors += q.failed;
    }
    if (jit)
      std::printf("jit (%s): compiled %d, cached %d kernels\n",
                  (*compiler)->name().c_str(), kernelsCompiled, kernelsCached);
    std::printf("humming-gpu-test: %d passed, %d failed\n", compiled, errors);
    return errors ? 1 : 0;
  }
  Result<const rt::CudaDriver *> driver = rt::CudaDriver::get();
  if (!driver) {
    std::fprintf(stderr, "humming-gpu-test: %s\n", driver.error().c_str());
    return 2;
  }
  const rt::CudaDriver &cu = **driver;
  Result<rt::Device> device = rt::openDevice(cu);
  if (!device) {
    std::fprintf(stderr, "humming-gpu-test: %s\n", device.error().c_str());
    return 2;
  }
  std::string chip = "sm_" + std::to_string(device->major * 10 + device->minor);
  if (device->major == 9)
    chip += "a";
  std::printf("device: %s (%s, %d SMs)\n", device->name.c_str(), chip.c_str(),
              device->smCount);
  // The facts the tile heuristics use: the known device of that name
  // ("NVIDIA H200" -> H200), else the chip's representative.
  std::string tileDevice = device->name;
  if (tileDevice.rfind("NVIDIA ", 0) == 0)
    tileDevice = tileDevice.substr(7);
  if (!lookupDevice(tileDevice))
    tileDevice.clear();
  // Another device's tiles compiled for this chip: the sm_80-sm_89
  // heuristics' kernels (mma_sync, 8-bit activations included) run here.
  if (!tilesFor.empty())
    tileDevice = tilesFor;
  std::printf("tile heuristics: %s\n",
              tileDevice.empty() ? "the chip's representative device"
                                 : tileDevice.c_str());

  // Every case goes through humming::Layer: PTX in process, then
  // $HUMMING_COMPILER (default the best present) through the on-disk kernel
  // cache ($HUMMING_CACHE_DIR, default ~/.cache/humming).
  Result<std::unique_ptr<rt::KernelCompiler>> compiler = rt::selectCompiler();
  if (!compiler) {
    std::fprintf(stderr, "humming-gpu-test: %s\n", compiler.error().c_str());
    return 2;
  }
  std::printf("compiler: %s (%s)\n", (*compiler)->name().c_str(),
              (*compiler)->version().c_str());

  if (moeBench) {
    std::vector<int64_t> ms = {1, 16, 64, 256, 1024, 4096};
    if (!layerMList.empty())
      ms = layerMs;
    return runMoeBench(cu, tileDevice, chip, filter, ms, bandwidth, jsonPath,
                       moeBlockSize, forceTiles);
  }
  if (moeCases) {
    if (!jsonPath.empty())
      std::ofstream(jsonPath, std::ios::trunc);
    MoeTally t = runMoeCases(&cu, tileDevice, chip, filter, quick, "",
                             jsonPath, forceTiles);
    MoeTally whole = forceTiles.empty()
                         ? runMoeLayerCases(cu, tileDevice, chip, filter,
                                            jsonPath)
                         : MoeTally{};
    t.passed += whole.passed;
    t.failed += whole.failed;
    std::printf("humming-gpu-test: %d passed, %d failed\n", t.passed,
                t.failed);
    return t.failed ? 1 : 0;
  }

  std::vector<Outcome> outcomes;
  std::mt19937 rng(uint32_t(std::random_device{}()));
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  for (const Case &c : cases()) {
    if (!caseSelected(c.name, filter))
      continue;
    if (!runsOn(c, tilesFor.empty() ? chip : lookupDevice(tilesFor)->chip))
      continue;
    Outcome base;
    base.name = c.name;
    base.n = c.n;
    base.k = c.k;
    auto fail = [&](const std::string &why) {
      Outcome o = base;
      o.error = why;
      outcomes.push_back(o);
      std::printf("%-40s ERROR %s\n", c.name.c_str(), why.c_str());
    };
    const LayerTarget target =
        caseTarget(c, tileDevice, chip, /*compileOnly=*/false, forceTiles);
    Result<CaseLayer> made = makeCaseLayer(c, target, rng);
    if (!made) {
      fail(made.error());
      continue;
    }
    const Layer &layer = *made->layer;
    const TransformStats &stats = layer.transformStats();
    base.kernels = int64_t(layer.kernels().size());
    base.compileSeconds = stats.kernelSeconds;
    base.jitSeconds = stats.slowestKernelSeconds;
    base.cacheSource = stats.compiled ? "compiled" : "cached";

    // Big layers are also timed: layers of the same weights whose
    // weight-side tensors together exceed 256 MiB (twice the L2 of any
    // current GPU), so every launch reads its weights from HBM.
    std::vector<Layer> copies;
    if (!noTiming && (c.timed || c.n * c.k >= int64_t(4096) * 4096)) {
      const QuantizedWeights &q = made->q;
      size_t bytes = q.weight.data.size() +
                     (q.scales ? q.scales->data.size() : 0) +
                     (q.zeroPoints ? q.zeroPoints->data.size() : 0);
      size_t count = std::min<size_t>(
          256, std::max<size_t>(2, (size_t(256) << 20) / bytes + 1));
      std::string error;
      for (size_t i = 0; i < count && error.empty(); ++i) {
        Result<Layer> copy = createLayer(c);
        Status s = copy ? copy->loadQuantized(q) : Status(Error{copy.error()});
        if (s)
          s = copy->transform(target);
        if (!s)
          error = s.error();
        else
          copies.push_back(copy.take());
      }
      if (!error.empty()) {
        fail("timing copies: " + error);
        continue;
      }
    }

    ScalarType act = c.output();
    DType actD = act == ScalarType::bf16() ? DType::BF16 : DType::F16;
    for (int64_t m : c.ms) {
      Outcome o = base;
      o.m = m;
      Result<Activations> acts = randomActivations(cu, actD, m, c.k, c.n, rng);
      if (!acts) {
        o.error = acts.error();
        outcomes.push_back(o);
        continue;
      }
      std::optional<QuantizedInput> q8;
      if (c.quantizedActs()) {
        Result<QuantizedInput> q =
            quantizeInput(cu, c.input(), acts->values, m, c.k,
                          layer.activationK());
        if (!q) {
          o.error = q.error();
          outcomes.push_back(o);
          continue;
        }
        q8.emplace(q.take());
      }
      // The reference multiplies what the kernel reads: the dequantized
      // 8-bit activations.
      const std::vector<double> &av =
          c.quantizedActs() ? q8->values : acts->values;
      rt::DeviceBuffer *da = &acts->input, *dc = &acts->output;
      auto forwardOf = [&](const Layer &l, void *stream) -> Status {
        return c.quantizedActs()
                   ? l.forwardQuantized(stream, q8->codes.ptr(),
                                        q8->scales.ptr(), dc->ptr(), m)
                   : l.forward(stream, da->ptr(), dc->ptr(), m);
      };
      const abi::KernelLaunch *launch = abi::kernelFor(layer.kernels(), m);
      if (!launch) {
        o.error = "no kernel serves M = " + std::to_string(m);
        outcomes.push_back(o);
        continue;
      }
      o.kernel = launch->name;
      rt::CUevent start, stop;
      cu.cuEventCreate(&start, 0);
      cu.cuEventCreate(&stop, 0);
      cu.cuEventRecord(start, nullptr);
      Status launched = forwardOf(layer, nullptr);
      cu.cuEventRecord(stop, nullptr);
      Status synced = cu.check(cu.cuCtxSynchronize(), "cuCtxSynchronize");
      float elapsed = 0;
      cu.cuEventElapsedTime(&elapsed, start, stop);
      o.ms = elapsed;
      if (!launched || !synced) {
        cu.cuEventDestroy(start);
        cu.cuEventDestroy(stop);
        o.error = !launched ? launched.error() : synced.error();
        outcomes.push_back(o);
        std::printf("%-40s M=%-5lld ERROR %s\n", c.name.c_str(), (long long)m,
                    o.error.c_str());
        continue;
      }
      Tensor out(actD, {m, c.n});
      if (Status got = dc->download(out.data.data(), out.data.size()); !got) {
        o.error = got.error();
        outcomes.push_back(o);
        continue;
      }
      for (int64_t i = 0; i < m * c.n; ++i)
        o.nans += std::isnan(out.at(i)) ? 1 : 0;

      // Reference over sampled rows, in float64, on every core.
      const std::vector<double> &deq = made->deq, &biasVals = made->bias;
      std::vector<int64_t> rows = sampleRows(m, rng);
      std::vector<double> ref(rows.size() * size_t(c.n));
      auto work = [&](size_t begin, size_t end) {
        for (size_t ri = begin; ri < end; ++ri) {
          std::vector<double> r = referenceGemm(
              av.data() + rows[ri] * c.k, deq.data(),
              biasVals.empty() ? nullptr : biasVals.data(), 1, c.n, c.k);
          std::copy(r.begin(), r.end(), ref.begin() + int64_t(ri) * c.n);
        }
      };
      size_t per = (rows.size() + threads - 1) / threads;
      llvm::parallelFor(0, (rows.size() + per - 1) / per, [&](size_t chunk) {
        work(chunk * per, std::min(rows.size(), (chunk + 1) * per));
      });
      double num = 0, den = 0;
      for (size_t ri = 0; ri < rows.size(); ++ri)
        for (int64_t j = 0; j < c.n; ++j) {
          double got = out.at(rows[ri] * c.n + j);
          double want = ref[ri * size_t(c.n) + size_t(j)];
          if (std::isnan(got))
            continue;
          num += (got - want) * (got - want);
          den += want * want;
        }
      o.relError = std::sqrt(num / std::max(den, 1e-300));
      // f16 accumulation rounds every partial sum to 11 bits: the bf16
      // tolerance.
      double tol =
          act == ScalarType::bf16() || c.f16Accumulation ? 1e-2 : 1e-3;
      o.pass = o.nans == 0 && o.relError <= tol;
      if (o.pass && !copies.empty()) {
        // Steady-state time: launches cycle through the copies; the mean of
        // a batch, median of five batches.
        auto forwardCopy = [&](void *stream, size_t i) -> Status {
          return forwardOf(copies[i % copies.size()], stream);
        };
        for (size_t i = 0; i < copies.size(); ++i)
          (void)forwardCopy(nullptr, i);
        int per = int(std::max<size_t>(1, 64 / copies.size()));
        std::vector<double> batches;
        for (int batch = 0; batch < 5; ++batch) {
          cu.cuEventRecord(start, nullptr);
          for (size_t i = 0; i < size_t(per) * copies.size(); ++i)
            (void)forwardCopy(nullptr, i);
          cu.cuEventRecord(stop, nullptr);
          cu.cuCtxSynchronize();
          float batchMs = 0;
          cu.cuEventElapsedTime(&batchMs, start, stop);
          batches.push_back(1000.0 * batchMs / double(per * copies.size()));
        }
        std::sort(batches.begin(), batches.end());
        o.us = batches[2];
        o.graphUs = graphReplayUs(
            cu, std::max<size_t>(1, 64 / copies.size()) * copies.size(),
            forwardCopy);
      }
      cu.cuEventDestroy(start);
      cu.cuEventDestroy(stop);
      outcomes.push_back(o);
      std::printf("%-40s M=%-5lld N=%-6lld K=%-6lld rel_err=%.2e nan=%lld "
                  "%.3f ms",
                  c.name.c_str(), (long long)m, (long long)c.n, (long long)c.k,
                  o.relError, (long long)o.nans, o.ms);
      if (o.us > 0)
        std::printf(" steady %.1f us", o.us);
      if (o.graphUs > 0)
        std::printf(" graph %.1f us", o.graphUs);
      std::printf(" %s %s\n", o.kernel.c_str(), o.pass ? "PASS" : "FAIL");
    }
  }

  // The C++ API end to end (not with ad-hoc --layer runs).
  const std::string apiCase = "layer_api_ui4_g128_f16";
  if (layers.empty() &&
      caseSelected(apiCase, filter))
    for (int64_t m : {1, 33}) {
      Outcome o = runLayerApi(cu, tileDevice, chip, rng, m);
      outcomes.push_back(o);
      printNamedCase(o, "rel_err");
    }

  // The same with a layer of 8-bit activations that quantizes 16-bit ones.
  const std::string eightBitCase = "layer_api_w8a8_forward16";
  Case eightBitRunsOn;
  eightBitRunsOn.act = ScalarType::e4m3();
  if (layers.empty() && runsOn(eightBitRunsOn, chip) &&
      caseSelected(eightBitCase, filter))
    for (int64_t k : {512, 520})
      for (int64_t m : {1, 33, 64}) {
        Outcome o = runEightBitForward(cu, tileDevice, chip, rng, m, k);
        outcomes.push_back(o);
        printNamedCase(o, "rel_err");
      }

  // The suite's named Layer-level cases (not with --layer): selected by
  // --filter and the shard, or named in the filter whatever the shard.
  auto namedCase = [&](const std::string &name) {
    return layers.empty() &&
           (caseSelected(name, filter) ||
            (filter.find(name) != std::string::npos &&
             caseSelected(name, "")));
  };
  // Programmatic dependent launch along a chain of forwards.
  if (namedCase("pdl_chain"))
    for (bool graph : {false, true})
      for (int64_t m : {1, 16, 64, 200, 1024}) {
        Outcome o = runDependentChain(cu, tileDevice, chip, rng, m, graph);
        outcomes.push_back(o);
        printNamedCase(o, "differ");
      }

  // The first-use probe forced on this GPU: kept, and the fallback.
  if (chip == "sm_90a")
    for (const char *mode : {"always", "mismatch"})
      for (bool eightBit : {false, true}) {
        const std::string name =
            concat("probe_", mode, eightBit ? "_w8a8_fp8" : "_w4a16");
        if (!namedCase(name))
          continue;
        for (int64_t m : {1, 600}) {
          Outcome o = runProbe(cu, tileDevice, chip, rng, mode, eightBit, m);
          outcomes.push_back(o);
          printNamedCase(o, "rel_err");
        }
      }

  // One layer from several streams at once, each call's output against the
  // call made alone.
  if (namedCase("streams_concurrent"))
    for (bool eightBit : {false, true})
      for (int streams : {2, 4}) {
        if (eightBit && device->major * 10 + device->minor < 89)
          continue;
        Outcome o = runConcurrentStreams(cu, tileDevice, chip, rng, streams,
                                         eightBit);
        outcomes.push_back(o);
        std::printf("%-40s N=%-6lld K=%-6lld differ=%.2e nan=%lld %s %s%s\n",
                    o.name.c_str(), (long long)o.n, (long long)o.k,
                    o.relError, (long long)o.nans, o.kernel.c_str(),
                    o.pass ? "PASS" : "FAIL",
                    o.error.empty() ? "" : (" " + o.error).c_str());
      }

  // The activation quantization kernels (the suite, not --layer, --matrix
  // or a forced GEMM tile).
  QuantizeTally quantized;
  WeightQuantizeTally weightsQuantized;
  if (layers.empty() && !useMatrix && forceTiles.empty()) {
    quantized = runQuantizeCases(&cu, chip, filter, quick,
                                 !noTiming, "");
    // Weights quantized on the device against the host, byte for byte.
    weightsQuantized = runWeightQuantizeCases(cu, chip, filter, quick);
  }

  int passed = quantized.passed + weightsQuantized.passed,
      failed = quantized.failed + weightsQuantized.failed;
  Json results = Json::array();
  for (const Outcome &o : outcomes) {
    (o.pass ? passed : failed)++;
    Json j = Json::object({{"case", Json::string(o.name)},
                           {"m", Json::integer(o.m)},
                           {"n", Json::integer(o.n)},
                           {"k", Json::integer(o.k)},
                           {"rel_error", Json::number(o.relError)},
                           {"nans", Json::integer(o.nans)},
                           {"kernel_ms", Json::number(o.ms)},
                           {"steady_us", Json::number(o.us)},
                           {"graph_us", Json::number(o.graphUs)},
                           {"kernel", Json::string(o.kernel)},
                           {"kernels", Json::integer(o.kernels)},
                           {"compile_s", Json::number(o.compileSeconds)},
                           {"jit_s", Json::number(o.jitSeconds)},
                           {"cache", Json::string(o.cacheSource)},
                           {"pass", Json::boolean(o.pass)}});
    if (!o.error.empty())
      j.append("error", Json::string(o.error));
    results.push(std::move(j));
  }
  if (!jsonPath.empty()) {
    Json report = Json::object({{"device", Json::string(device->name)},
                                {"chip", Json::string(chip)},
                                {"passed", Json::integer(passed)},
                                {"failed", Json::integer(failed)},
                                {"results", std::move(results)}});
    std::ofstream(jsonPath) << report.dump(2) << "\n";
  }
  // Kernel cost per layer (each case's outcomes share one transform), by
  // whether its kernels were compiled or came from the cache: all of a
  // layer's kernels (in parallel) and the slowest kernel alone.
  std::map<std::string, std::vector<double>> layerTimes, kernelTimes;
  std::set<std::string> seen;
  for (const Outcome &o : outcomes)
    if (!o.cacheSource.empty() && seen.insert(o.name).second) {
      layerTimes[o.cacheSource].push_back(o.compileSeconds);
      kernelTimes[o.cacheSource].push_back(o.jitSeconds);
    }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
  };
  std::printf("jit (%s):", (*compiler)->name().c_str());
  for (auto &[source, times] : layerTimes) {
    const std::vector<double> &slowest = kernelTimes[source];
    std::printf(" %s %zu layers (median %.3f s per layer; slowest kernel "
                "median %.3f s, max %.3f s);",
                source.c_str(), times.size(), median(times), median(slowest),
                *std::max_element(slowest.begin(), slowest.end()));
  }
  std::printf("\n");
  std::printf("humming-gpu-test: %d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
