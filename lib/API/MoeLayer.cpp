//===- MoeLayer.cpp - A whole mixture-of-experts block --------------------===//

#include "Humming/API/MoeLayer.h"
#include "Jit.h"

#include "Humming/Pipelines/Pipelines.h"
#include "Humming/Quant/Adapters.h"
#include "Humming/Quant/Checked.h"
#include "Humming/Quant/Json.h"
#include "Humming/Quant/Safetensors.h"
#include "Humming/Runtime/StreamScratch.h"
#include "Humming/Target/TileHeuristics.h"

#include "mlir/IR/MLIRContext.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>

namespace humming {

struct MoeLayer::Impl {
  MoeLayerShape shape;
  ScalarType output = ScalarType::f16();
  std::optional<Layer> gateUp, down;
  /// One router per block size forward() can route with (one when the
  /// shape fixes it; else each GEMM kernel's rounded block_m).
  std::vector<MoeRouter> routers;
  // After transform.
  bool transformed = false, compileOnly = false;
  detail::SingleKernel silu, sum;
  int64_t maxTokens = 0;
  /// A block per stream (calls on several streams at once never share
  /// one): sorted_ids, expert_ids, num_tokens_padded, gate_up's output, the
  /// activation, down's output, at these offsets. Null when compile-only.
  std::unique_ptr<rt::StreamScratch> scratch;
  std::array<size_t, 6> offsets{};
};

MoeLayer::MoeLayer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
MoeLayer::MoeLayer(MoeLayer &&) noexcept = default;
MoeLayer &MoeLayer::operator=(MoeLayer &&) noexcept = default;
MoeLayer::~MoeLayer() = default;

namespace {
Status checkActivation(const GatedActivation &a) {
  if (!(a.alpha > 0 && std::isfinite(a.alpha)) || !std::isfinite(a.upOffset) ||
      !(a.limit >= 0 && std::isfinite(a.limit)))
    return Error{concat("expected a positive finite alpha, a finite up offset "
                        "and a limit >= 0 (0: none) for the gated activation, "
                        "got alpha = ",
                        a.alpha, ", up offset = ", a.upOffset,
                        ", limit = ", a.limit)};
  return Status::success();
}
} // namespace

Status MoeLayer::setActivation(const GatedActivation &activation) {
  if (Status st = checkActivation(activation); !st)
    return st;
  impl_->shape.activation = activation;
  impl_->transformed = false;
  return Status::success();
}

Result<MoeLayer> MoeLayer::create(const MoeLayerShape &shape,
                                  const WeightSchema &gateUp,
                                  const WeightSchema &down,
                                  const InputSchema &input, ScalarType output) {
  if (shape.hidden <= 0 || shape.intermediate <= 0 || shape.hidden % 2 != 0 ||
      shape.intermediate % 2 != 0)
    return Error{concat("expected positive, even hidden and intermediate "
                        "sizes, got H = ",
                        shape.hidden, ", I = ", shape.intermediate)};
  if (Status st = checkActivation(shape.activation); !st)
    return Error{st.error()};
  // Narrower activations: each GEMM quantizes its own 16-bit input rows
  // (x, then the gated intermediate) on the GPU, per token or per group of
  // K — a static scale would have to hold for the intermediate too.
  if (input.type.bits < 16 && !detail::quantizesItsInput(input))
    return Error{concat("expected ", input.type.str(),
                        " activations scaled per token (or per group of K) "
                        "in a MoE block, whose GEMMs quantize their own "
                        "16-bit inputs, got ",
                        formatInputSchema(input))};
  if (input.type.bits == 16 && input.type != output)
    return Error{concat("expected the output type of 16-bit activations (x, "
                        "y and the intermediates share it), got ",
                        input.type.str(), " activations and ", output.str(),
                        " output")};
  // The router's rules (experts, top_k, block_size) checked up front; a
  // block size chosen per M is 0 here.
  Result<MoeRouter> router = MoeRouter::create(
      shape.experts, shape.topK, shape.blockSize ? shape.blockSize : 16);
  if (!router)
    return Error{router.error()};
  auto withExperts = [&](WeightSchema w) {
    w.experts = shape.experts;
    return w;
  };
  MoeOptions first;
  first.routing = GemmType::Indexed;
  first.topK = shape.topK;
  first.blockSize = shape.blockSize;
  Result<Layer> gu =
      Layer::createMoe(2 * shape.intermediate, shape.hidden,
                       withExperts(gateUp), input, first, {}, output);
  if (!gu)
    return Error{concat("gate_up: ", gu.error())};
  // The down projection reads the M * top_k activation rows themselves
  // (top_k = 1 over them) and weighs its rows by the router.
  MoeOptions second = first;
  second.topK = 1;
  second.routerWeights = true;
  Result<Layer> dn =
      Layer::createMoe(shape.hidden, shape.intermediate, withExperts(down),
                       input, second, {}, output);
  if (!dn)
    return Error{concat("down: ", dn.error())};
  auto impl = std::make_unique<Impl>();
  impl->shape = shape;
  impl->output = output;
  impl->gateUp.emplace(gu.take());
  impl->down.emplace(dn.take());
  return MoeLayer(std::move(impl));
}

Result<MoeLayer> MoeLayer::fromCheckpoint(const std::string &dir,
                                          const std::string &pattern,
                                          int64_t experts, int64_t topK,
                                          int64_t blockSize,
                                          const std::string &gate,
                                          const std::string &up,
                                          const std::string &down) {
  Result<OpenedCheckpoint> opened = openCheckpoint(dir);
  if (!opened)
    return Error{opened.error()};
  return fromCheckpoint(*opened, pattern, experts, topK, blockSize, gate, up,
                        down);
}

Result<MoeLayer> MoeLayer::fromCheckpoint(const OpenedCheckpoint &opened,
                                          const std::string &pattern,
                                          int64_t experts, int64_t topK,
                                          int64_t blockSize,
                                          const std::string &gate,
                                          const std::string &up,
                                          const std::string &down) {
  const std::string &dir = opened.checkpoint.dir();
  // "{e}": one module per expert; else one module holding them all
  // (gpt-oss), whose gate_up rows alternate gate and up.
  const bool stacked = pattern.find("{e}") == std::string::npos;
  if (stacked &&
      !opened.checkpoint.has(pattern + ".gate_up_proj_blocks") &&
      !opened.checkpoint.has(pattern + ".gate_up_proj.weight"))
    return Error{concat("expected the experts' module pattern to hold {e} "
                        "(their index), or to name the module whose "
                        "gate_up_proj holds every expert (gpt-oss), got '",
                        pattern, "'")};
  Result<LoadedMoe> moe =
      stacked ? loadStackedMoeExperts(opened.checkpoint, opened.config,
                                      pattern, experts, "gate_up_proj", down)
              : loadMoeExperts(opened.checkpoint, opened.config, pattern,
                               experts, gate, up, down);
  if (!moe)
    return Error{moe.error()};
  GatedActivation activation;
  if (const Json *limit = opened.checkpoint.config().get("swiglu_limit")) {
    if (!limit->isNumber() || !(limit->asNumber() > 0) ||
        !std::isfinite(limit->asNumber()))
      return Error{concat(dir, "/config.json: swiglu_limit: expected a "
                               "positive number")};
    activation = GatedActivation::gptOss(limit->asNumber());
  }
  const ScalarType act = opened.activation();
  if (moe->gateUp.n != 2 * moe->down.k || moe->gateUp.k != moe->down.n)
    return Error{concat("expected gate_up [E, 2I, H] and down [E, H, I], got "
                        "gate_up N = ",
                        moe->gateUp.n, ", K = ", moe->gateUp.k,
                        " and down N = ", moe->down.n, ", K = ", moe->down.k)};
  WeightSchema gu = moe->gateUp.weight, dn = moe->down.weight;
  gu.experts = dn.experts = 0;
  Result<MoeLayer> layer =
      create({moe->down.n, moe->down.k, experts, topK, blockSize, activation},
             gu, dn, InputSchema{act, ActScaling::None, 0}, act);
  if (!layer)
    return layer;
  if (Status s = layer->loadQuantized(std::move(moe->gateUp.tensors),
                                      std::move(moe->down.tensors));
      !s)
    return Error{s.error()};
  return layer;
}

Status MoeLayer::quantize(const double *gateUp, const double *down) {
  Impl &l = *impl_;
  if (!gateUp || !down)
    return Error{"expected gate_up and down weights, got a null pointer"};
  if (Status s = l.gateUp->quantize(gateUp); !s)
    return Error{concat("gate_up: ", s.error())};
  if (Status s = l.down->quantize(down); !s)
    return Error{concat("down: ", s.error())};
  l.transformed = false;
  return Status::success();
}

Status MoeLayer::loadQuantized(QuantizedWeights gateUp, QuantizedWeights down) {
  Impl &l = *impl_;
  if (Status s = l.gateUp->loadQuantized(std::move(gateUp)); !s)
    return Error{concat("gate_up: ", s.error())};
  if (Status s = l.down->loadQuantized(std::move(down)); !s)
    return Error{concat("down: ", s.error())};
  l.transformed = false;
  return Status::success();
}

Status MoeLayer::transform(const LayerTarget &target, int64_t maxTokens) {
  Impl &l = *impl_;
  const MoeLayerShape &s = l.shape;
  const int64_t largestBlock =
      s.blockSize ? s.blockSize : kMoeFollowingBlockSize;
  if (maxTokens < 1 ||
      maxTokens > (std::numeric_limits<int32_t>::max() -
                   s.experts * (largestBlock - 1)) /
                      s.topK)
    return Error{concat("expected 1 <= maxTokens and maxTokens * top_k + E * "
                        "(block_size - 1) <= 2^31 - 1 (block_size up to ",
                        largestBlock, "), got ", maxTokens)};
  // 8-bit activations: each GEMM quantizes its own 16-bit input rows.
  const bool quantized = l.gateUp->inputSchema().type.bits < 16;
  LayerTarget first = target, second = target;
  if (quantized) {
    first.activationRows = maxTokens;
    second.activationRows = maxTokens * s.topK;
  }
  if (Status st = l.gateUp->transform(first); !st)
    return Error{concat("gate_up: ", st.error())};
  if (Status st = l.down->transform(second); !st)
    return Error{concat("down: ", st.error())};
  LayerTarget plain = target;
  plain.tileConfig.clear();
  plain.canonicalLayout = false;
  // A router per block size a call can need (blockSizeFor): the fixed one,
  // or the least common multiple of a gate_up and a down kernel's block_m,
  // each rounded up to 16 (a divisor of kMoeFollowingBlockSize).
  std::vector<int64_t> sizes;
  if (s.blockSize) {
    sizes.push_back(s.blockSize);
  } else {
    auto rounded = [](const Layer &g) {
      std::vector<int64_t> out;
      for (const abi::KernelLaunch &k : g.kernels())
        if (k.routing != abi::kRoutingDense)
          out.push_back(16 * ceilDiv(k.blockM, 16));
      return out;
    };
    for (int64_t a : rounded(*l.gateUp))
      for (int64_t b : rounded(*l.down))
        sizes.push_back(std::lcm(a, b));
    std::sort(sizes.begin(), sizes.end());
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  }
  std::vector<MoeRouter> routers;
  for (int64_t bs : sizes) {
    Result<MoeRouter> r = MoeRouter::create(s.experts, s.topK, bs);
    if (!r)
      return Error{concat("router: ", r.error())};
    if (Status st = r->transform(plain); !st)
      return Error{concat("router: ", st.error())};
    routers.push_back(r.take());
  }
  auto small = [&](int64_t kind, int64_t columns,
                   int64_t topK) -> Result<detail::SingleKernel> {
    return detail::compileSingleKernel(
        plain, kind == abi::kSiluAndMulKernel ? "silu_and_mul" : "moe_sum",
        concat(kind == abi::kSiluAndMulKernel ? "silu_and_mul" : "moe_sum",
               " columns=", columns, " top_k=", topK, " type=",
               l.output.str(), " alpha=", s.activation.alpha,
               " up_offset=", s.activation.upOffset,
               " limit=", s.activation.limit),
        kind, [&](mlir::MLIRContext &ctx) {
          mlir::humming::ElementwiseSpec spec{kind, columns, topK, l.output};
          if (kind == abi::kSiluAndMulKernel) {
            spec.alpha = s.activation.alpha;
            spec.upOffset = s.activation.upOffset;
            spec.limit = s.activation.limit;
          }
          return mlir::humming::buildElementwiseModule(ctx, spec);
        });
  };
  Result<detail::SingleKernel> silu =
      small(abi::kSiluAndMulKernel, s.intermediate, 1);
  if (!silu)
    return Error{silu.error()};
  Result<detail::SingleKernel> sum = small(abi::kMoeSumKernel, s.hidden, s.topK);
  if (!sum)
    return Error{sum.error()};
  std::unique_ptr<rt::StreamScratch> scratch;
  std::array<size_t, 6> offsets{};
  if (!target.compileOnly) {
    const rt::CudaDriver *driver = silu->driver;
    const int64_t rows = maxTokens * s.topK;
    int64_t sortedIds = 0, blockIds = 0;
    for (const MoeRouter &r : routers) {
      sortedIds = std::max(sortedIds, r.sortedCapacity(maxTokens));
      blockIds = std::max(blockIds, r.blockCapacity(maxTokens));
    }
    const size_t buffers[] = {
        size_t(sortedIds) * 4, size_t(blockIds) * 4, 16,
        size_t(rows * 2 * s.intermediate) * 2,
        size_t(rows * s.intermediate) * 2, size_t(rows * s.hidden) * 2};
    size_t bytes = 0;
    for (size_t i = 0; i < offsets.size(); ++i) {
      offsets[i] = bytes;
      bytes += rt::StreamScratch::aligned(std::max<size_t>(buffers[i], 16));
    }
    scratch = std::make_unique<rt::StreamScratch>();
    if (Status st = scratch->init(*driver, bytes, target.streams); !st)
      return st;
  }
  l.routers = std::move(routers);
  l.silu = silu.take();
  l.sum = sum.take();
  l.scratch = std::move(scratch);
  l.offsets = offsets;
  l.maxTokens = maxTokens;
  l.compileOnly = target.compileOnly;
  l.transformed = true;
  return Status::success();
}

namespace {
/// Launches an elementwise kernel over `m` output rows.
Status launchElementwise(const detail::SingleKernel &k, void *stream,
                         uint64_t input, uint64_t output, int64_t m) {
  if (m == 0)
    return Status::success();
  rt::CUdeviceptr null = 0, in = input, out = output;
  int32_t m32 = int32_t(m);
  void *args[abi::NumGemmParams] = {&in,   &null, &null, &null, &null,
                                    &null, &out,  &null, &m32};
  uint32_t grid[3];
  k.kernel.grid(m, 0, grid);
  return k.driver->check(
      k.driver->cuLaunchKernel(k.function, grid[0], grid[1], grid[2],
                               unsigned(k.kernel.threads), 1, 1, 0,
                               static_cast<rt::CUstream>(stream), args,
                               nullptr),
      "cuLaunchKernel");
}
} // namespace

Status MoeLayer::forward(void *stream, uint64_t x, uint64_t topkIds,
                         uint64_t topkWeights, uint64_t y, int64_t m) const {
  const Impl &l = *impl_;
  if (!l.transformed)
    return Error{"call transform() before forward()"};
  if (m < 0 || m > l.maxTokens)
    return Error{concat("expected 0 <= M <= ", l.maxTokens,
                        " tokens (transform's maxTokens), got ", m)};
  if (m > 0 && (!x || !topkIds || !topkWeights || !y))
    return Error{"expected device pointers for x, topk_ids, topk_weights and "
                 "y, got a null pointer"};
  if (m > 0 && (x % 16 || y % 16 || topkIds % 4 || topkWeights % 4))
    return Error{"expected 16-byte aligned x and y and 4-byte aligned "
                 "topk_ids and topk_weights"};
  if (l.compileOnly)
    return Error{"the MoE layer was transformed compile-only; transform it "
                 "for a device to run it"};
  if (m == 0)
    return Status::success();
  const MoeLayerShape &s = l.shape;
  Result<rt::CUdeviceptr> block =
      l.scratch->blockFor(static_cast<rt::CUstream>(stream), "the MoE layer");
  if (!block)
    return Error{block.error()};
  const uint64_t sorted = *block + l.offsets[0], blocks = *block + l.offsets[1],
                 padded = *block + l.offsets[2], gu = *block + l.offsets[3],
                 act = *block + l.offsets[4], rows = *block + l.offsets[5];
  // Both GEMMs' kernels for m take blocks of a multiple of their block_m.
  const int64_t bs = blockSizeFor(m);
  const MoeRouter *router = nullptr;
  for (const MoeRouter &r : l.routers)
    if (r.blockSize() == bs)
      router = &r;
  if (!router)
    return Error{concat("no router for block_size ", bs, " (a bug)")};
  if (Status st = router->forward(stream, topkIds, m, sorted, blocks, padded);
      !st)
    return st;
  MoeRouting r;
  r.sortedIds = sorted;
  r.expertIds = blocks;
  r.numTokensPadded = padded;
  r.sortedLength = router->sortedCapacity(m);
  r.blockSize = bs;
  if (Status st = l.gateUp->forwardMoe(stream, x, gu, m, r); !st)
    return st;
  if (Status st = launchElementwise(l.silu, stream, gu, act, m * s.topK); !st)
    return st;
  r.routerWeights = topkWeights;
  if (Status st = l.down->forwardMoe(stream, act, rows, m * s.topK, r); !st)
    return st;
  return launchElementwise(l.sum, stream, rows, y, m);
}

const MoeLayerShape &MoeLayer::shape() const { return impl_->shape; }
const Layer &MoeLayer::gateUp() const { return *impl_->gateUp; }
ScalarType MoeLayer::outputType() const { return impl_->output; }
const Layer &MoeLayer::down() const { return *impl_->down; }
int64_t MoeLayer::blockSizeFor(int64_t m) const {
  const Impl &l = *impl_;
  if (l.shape.blockSize)
    return l.shape.blockSize;
  return std::lcm(l.gateUp->moeBlockSize(m),
                  l.down->moeBlockSize(m * l.shape.topK));
}

} // namespace humming
