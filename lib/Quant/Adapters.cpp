//===- Adapters.cpp - Checkpoint formats to the canonical form ------------===//
//
// One loader per tensor layout. Each reads the checkpoint's tensors, checks
// their dtypes and shapes (naming the tensor), and fills CanonicalValues,
// which packCanonical turns into the canonical tensors. docs/Formats.md lists
// the layouts and the conventions assumed for each.
//
//===----------------------------------------------------------------------===//

#include "Humming/Quant/Adapters.h"
#include "Humming/Quant/Checked.h"
#include "Humming/Quant/Codec.h"
#include "Humming/Quant/Pack.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace humming {

namespace {
bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

ScalarType paramScalar(DType d) {
  return d == DType::F16 ? ScalarType::f16() : ScalarType::bf16();
}

/// Everything one loader needs.
struct Ctx {
  const Checkpoint &ckpt;
  const std::string &module;
  const ModuleQuantization &mq;
  DType param;
  LoadedLayer layer;

  std::string name(const char *suffix) const { return module + suffix; }
  bool has(const char *suffix) const { return ckpt.has(name(suffix)); }

  /// The tensor `module + suffix` with one of `dtypes` and `rank`.
  Result<TensorView> get(const char *suffix, std::vector<DType> dtypes,
                         int rank = -1) const {
    Result<TensorView> t = ckpt.tensor(name(suffix));
    if (!t)
      return Error{concat(module, ": missing tensor '", name(suffix), "' (",
                          mq.describe(), ")")};
    if (std::find(dtypes.begin(), dtypes.end(), t->dtype) == dtypes.end()) {
      std::string want;
      for (DType d : dtypes)
        want += (want.empty() ? "" : " or ") + std::string(dtypeName(d));
      return Error{concat(name(suffix), ": expected dtype ", want, ", got ",
                          dtypeName(t->dtype))};
    }
    if (rank >= 0 && int(t->shape.size()) != rank)
      return Error{concat(name(suffix), ": expected rank ", rank,
                          ", got shape ", formatShape(t->shape))};
    // Safetensors accepts a zero dimension beside any other (no bytes to
    // check): a layer of no elements, or loops over 2^40 empty rows.
    for (int64_t d : t->shape)
      if (d == 0)
        return Error{concat(name(suffix),
                            ": expected no zero dimension, got shape ",
                            formatShape(t->shape))};
    return t;
  }

  Status expectShape(const char *suffix, const TensorView &t,
                     const std::vector<int64_t> &shape,
                     const std::string &why) const {
    if (t.shape != shape)
      return Error{concat(name(suffix), ": expected shape ", formatShape(shape),
                          " (", why, "), got ", formatShape(t.shape))};
    return Status::success();
  }
};

#define TRY(var, expr)                                                         \
  auto var = (expr);                                                           \
  if (!var)                                                                    \
    return Error{var.error()};
#define CHECK_STATUS(expr)                                                     \
  if (Status _s = (expr); !_s)                                                 \
    return Error{_s.error()};

/// Scale element type for a stored scale dtype. Group scales in f32 are not
/// a kernel format: they become the model's 16-bit type (noted).
ScalarType scaleTypeFor(Ctx &c, DType stored, Granularity g) {
  switch (stored) {
  case DType::F16:
    return ScalarType::f16();
  case DType::BF16:
    return ScalarType::bf16();
  case DType::F8_E4M3:
    return ScalarType::e4m3();
  case DType::F8_E8M0:
  case DType::U8:
    return ScalarType::ue8m0();
  default:
    break;
  }
  if (g == Granularity::Channel || g == Granularity::Block ||
      g == Granularity::Tensor)
    return ScalarType::f32();
  c.layer.notes.push_back(concat("F32 ", toString(g), " scales stored as ",
                                 dtypeName(c.param), " (rounded)"));
  return paramScalar(c.param);
}

/// Groups along K for a schema over logical K.
int64_t groupCount(int64_t k, int64_t group) {
  return group > 0 ? k / group : 1;
}

/// Act order: the stable order of K by group index. Empty for the natural
/// order; an error when the groups are not all of `group` channels.
Result<std::vector<int32_t>> actOrderPermutation(Ctx &c, const char *suffix,
                                                 const TensorView &gIdx,
                                                 int64_t k, int64_t group) {
  if (gIdx.numel() != k)
    return Error{concat(c.name(suffix), ": expected ", k,
                        " entries (one per "
                        "input channel), got ",
                        gIdx.numel())};
  int64_t groups = groupCount(k, group);
  std::vector<int64_t> count(size_t(groups), 0);
  bool natural = true;
  for (int64_t i = 0; i < k; ++i) {
    int64_t g = gIdx.intAt(i);
    if (g < 0 || g >= groups)
      return Error{concat(c.name(suffix), "[", i, "] = ", g, " is outside the ",
                          groups, " groups")};
    ++count[size_t(g)];
    natural &= g == (group > 0 ? i / group : 0);
  }
  if (natural)
    return std::vector<int32_t>();
  for (int64_t g = 0; g < groups; ++g)
    if (count[size_t(g)] != (group > 0 ? group : k))
      return Error{concat(c.name(suffix), ": group ", g, " has ",
                          count[size_t(g)], " input channels; expected ", group,
                          " (act-order needs equal groups)")};
  // Sort by (group, channel): the order within a group is kept.
  std::vector<std::pair<int64_t, int32_t>> keyed(static_cast<size_t>(k));
  for (int64_t i = 0; i < k; ++i)
    keyed[size_t(i)] = {gIdx.intAt(i), int32_t(i)};
  std::sort(keyed.begin(), keyed.end());
  std::vector<int32_t> perm(static_cast<size_t>(k));
  for (int64_t i = 0; i < k; ++i)
    perm[size_t(i)] = keyed[size_t(i)].second;
  return perm;
}

/// Applies an act-order permutation to [N, K] codes: column j <- perm[j].
void permuteColumns(std::vector<uint32_t> &codes, int64_t n, int64_t k,
                    const std::vector<int32_t> &perm) {
  if (perm.empty())
    return;
  std::vector<uint32_t> row(static_cast<size_t>(k));
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t j = 0; j < k; ++j)
      row[size_t(j)] = codes[size_t(r * k + perm[size_t(j)])];
    std::copy(row.begin(), row.end(), codes.begin() + r * k);
  }
}

/// Reads the optional bias [N] (or [E, N]) into the canonical values.
Status readBias(Ctx &c, const std::string &suffix, int64_t e, int64_t n,
                CanonicalValues &cv) {
  if (!c.ckpt.has(c.module + suffix))
    return Status::success();
  Result<TensorView> b = c.ckpt.tensor(c.module + suffix);
  if (!b)
    return Error{b.error()};
  if (b->numel() != e * n)
    return Error{concat(c.module + suffix, ": expected ", e * n,
                        " values (one per output channel), got shape ",
                        formatShape(b->shape))};
  c.layer.weight.bias = true;
  cv.bias.resize(size_t(e * n));
  for (int64_t i = 0; i < e * n; ++i)
    cv.bias[size_t(i)] = b->at(i);
  return Status::success();
}

/// Fills a schema/layer after the loader decided the canonical form.
Result<LoadedLayer> finish(Ctx &c, WeightSchema w, CanonicalValues &cv,
                           int64_t n, int64_t k) {
  w.bias = c.layer.weight.bias;
  c.layer.weight = w;
  c.layer.n = n - w.padN;
  c.layer.k = k - w.padK;
  c.layer.input = c.mq.activation;
  if (Diag d = verifyWeightSchema(w))
    return Error{concat(c.module, ": ", *d, " (", c.mq.describe(), ")")};
  Result<QuantizedWeights> q = packCanonical(w, cv, n, k, c.param);
  if (!q)
    return Error{concat(c.module, ": ", q.error())};
  c.layer.tensors = q.take();
  return std::move(c.layer);
}

/// Scales [rows, cols] in canonical order from a view, transposed if asked.
std::vector<double> readScales(const TensorView &t, int64_t rows, int64_t cols,
                               bool transposed, double multiplier = 1.0) {
  std::vector<double> out(size_t(rows * cols));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t g = 0; g < cols; ++g)
      out[size_t(r * cols + g)] =
          multiplier * t.at(transposed ? g * rows + r : r * cols + g);
  return out;
}

/// The group size, group count and `[K / group_size, N]` scale tensor of a
/// GPTQ-style packed-integer layer (GPTQ, AWQ): `group_size` >= K or -1 means
/// one group (per channel).
struct GroupedScales {
  int64_t group, groups;
  TensorView scales;
};
Result<GroupedScales> groupedScales(Ctx &c, int64_t k, int64_t n) {
  int64_t group = c.mq.groupSize >= k ? 0 : c.mq.groupSize;
  if (group > 0 && k % group)
    return Error{concat(c.name(".qweight"), ": K = ", k,
                        " is not a multiple of group_size ", group)};
  int64_t groups = groupCount(k, group);
  TRY(scales, c.get(".scales", {DType::F16, DType::BF16, DType::F32}, 2));
  CHECK_STATUS(
      c.expectShape(".scales", *scales, {groups, n}, "[K / group_size, N]"));
  return GroupedScales{group, groups, *scales};
}

//===----------------------------------------------------------------------===//
// GPTQ and AWQ packings (shared by the checkpoint loaders and
// sourceToCanonical)
//===----------------------------------------------------------------------===//

/// GPTQ qweight [K*b/32, N] (column n a bit stream along K) -> codes [N, K].
std::vector<uint32_t> gptqCodes(const TensorView &qweight, int64_t n,
                                int64_t k, unsigned b) {
  std::vector<uint32_t> codes(size_t(n * k));
  std::vector<uint32_t> column(static_cast<size_t>(qweight.shape[0]));
  for (int64_t col = 0; col < n; ++col) {
    for (int64_t i = 0; i < qweight.shape[0]; ++i)
      column[size_t(i)] = uint32_t(qweight.intAt(i * n + col));
    for (int64_t kk = 0; kk < k; ++kk)
      codes[size_t(col * k + kk)] = packedCodeAt(column.data(), kk, b);
  }
  return codes;
}

/// GPTQ qzeros [G, N*b/32] packed along N -> zero codes [N, G]; v1
/// checkpoints store z - 1.
std::vector<double> gptqZeros(const TensorView &qzeros, int64_t n,
                              int64_t groups, unsigned b, bool v1) {
  std::vector<double> zeros(size_t(n * groups));
  std::vector<uint32_t> row(static_cast<size_t>(n * b / 32));
  for (int64_t g = 0; g < groups; ++g) {
    for (size_t i = 0; i < row.size(); ++i)
      row[i] = uint32_t(qzeros.intAt(g * int64_t(row.size()) + int64_t(i)));
    for (int64_t col = 0; col < n; ++col) {
      uint32_t z = packedCodeAt(row.data(), col, b);
      if (v1)
        z = (z + 1) & ((1u << b) - 1);
      zeros[size_t(col * groups + g)] = z;
    }
  }
  return zeros;
}

/// AWQ nibble i of a word holds column kAwqOrder[i] of its 8; kAwqSlot is the
/// inverse: column j sits in nibble kAwqSlot[j].
constexpr int kAwqSlot[8] = {0, 4, 1, 5, 2, 6, 3, 7};

/// An AWQ tensor [R, N/8] of nibbles packed along N -> values [N, R].
template <typename T>
std::vector<T> awqUnpack(const TensorView &t, int64_t rows, int64_t n) {
  std::vector<T> out(size_t(n * rows));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t col = 0; col < n; ++col) {
      uint32_t word = uint32_t(t.intAt(r * (n / 8) + col / 8));
      out[size_t(col * rows + r)] = T((word >> (4 * kAwqSlot[col % 8])) & 0xF);
    }
  return out;
}

//===----------------------------------------------------------------------===//
// GPTQ (and auto-round's GPTQ packing)
//===----------------------------------------------------------------------===//

Result<LoadedLayer> loadGptq(Ctx &c) {
  const unsigned b = unsigned(c.mq.bits);
  if (b != 2 && b != 3 && b != 4 && b != 8)
    return Error{concat(c.module,
                        ": expected 2, 3, 4 or 8 bits in a GPTQ "
                        "checkpoint, got ",
                        b)};
  TRY(qweight, c.get(".qweight", {DType::I32, DType::U32}, 2));
  int64_t n = qweight->shape[1], k = qweight->shape[0] * 32 / b;
  TRY(grouped, groupedScales(c, k, n));
  const int64_t group = grouped->group, groups = grouped->groups;
  const TensorView *scales = &grouped->scales;
  WeightSchema w;
  w.type = ScalarType::uint(b);
  w.granularity = group ? Granularity::Group : Granularity::Channel;
  w.groupK = group;
  w.scaleType = scaleTypeFor(c, scales->dtype, w.granularity);

  CanonicalValues cv;
  cv.codes = gptqCodes(*qweight, n, k, b);
  cv.scales = readScales(*scales, n, groups, /*transposed=*/true);

  // qzeros [G, N*b/32], packed along N; v1 stores z - 1.
  bool v1 = c.mq.variant == "gptq";
  std::vector<double> zeros;
  if (c.has(".qzeros")) {
    TRY(qzeros, c.get(".qzeros", {DType::I32, DType::U32}, 2));
    CHECK_STATUS(c.expectShape(".qzeros", *qzeros, {groups, n * b / 32},
                               "[K / group_size, N * bits / 32]"));
    zeros = gptqZeros(*qzeros, n, groups, b, v1);
  } else if (!c.mq.symmetric) {
    return Error{concat(c.module, ": missing tensor '", c.name(".qzeros"),
                        "' (an asymmetric checkpoint needs its zero points)")};
  }
  bool implicitOnly = std::all_of(zeros.begin(), zeros.end(), [&](double z) {
    return z == double(1u << (b - 1));
  });
  if (!zeros.empty() && !implicitOnly) {
    if (c.mq.symmetric)
      c.layer.notes.push_back("config says sym but the zero points differ "
                              "from 2^(bits-1); loaded as asymmetric");
    w.zeroPoint = ZeroPointKind::Int;
    cv.zeroPoints = std::move(zeros);
  }

  if (c.has(".g_idx")) {
    TRY(gIdx, c.get(".g_idx", {DType::I32, DType::I64}, 1));
    TRY(perm, actOrderPermutation(c, ".g_idx", *gIdx, k, group));
    permuteColumns(cv.codes, n, k, *perm);
    c.layer.kPermutation = perm.take();
    if (!c.layer.kPermutation.empty())
      c.layer.notes.push_back("act-order: K is permuted; activations are "
                              "gathered by kPermutation");
  }
  CHECK_STATUS(readBias(c, ".bias", 1, n, cv));
  return finish(c, w, cv, n, k);
}

//===----------------------------------------------------------------------===//
// AWQ (and auto-round's AWQ packing)
//===----------------------------------------------------------------------===//

Result<LoadedLayer> loadAwq(Ctx &c) {
  if (c.mq.bits != 4)
    return Error{concat(c.module, ": expected 4-bit AWQ weights, got ",
                        c.mq.bits, " bits")};
  TRY(qweight, c.get(".qweight", {DType::I32, DType::U32}, 2));
  int64_t k = qweight->shape[0], n = qweight->shape[1] * 8;
  TRY(grouped, groupedScales(c, k, n));
  const int64_t group = grouped->group, groups = grouped->groups;
  const TensorView *scales = &grouped->scales;
  WeightSchema w;
  w.type = ScalarType::uint(4);
  w.granularity = group ? Granularity::Group : Granularity::Channel;
  w.groupK = group;
  w.scaleType = scaleTypeFor(c, scales->dtype, w.granularity);
  CanonicalValues cv;
  cv.codes = awqUnpack<uint32_t>(*qweight, k, n);
  cv.scales = readScales(*scales, n, groups, true);
  if (!c.mq.symmetric) {
    TRY(qzeros, c.get(".qzeros", {DType::I32, DType::U32}, 2));
    CHECK_STATUS(c.expectShape(".qzeros", *qzeros, {groups, n / 8},
                               "[K / group_size, N / 8]"));
    w.zeroPoint = ZeroPointKind::Int;
    cv.zeroPoints = awqUnpack<double>(*qzeros, groups, n);
  }
  CHECK_STATUS(readBias(c, ".bias", 1, n, cv));
  return finish(c, w, cv, n, k);
}

//===----------------------------------------------------------------------===//
// Shared pieces of the fp8 / int8 / fp4 layouts
//===----------------------------------------------------------------------===//

/// Scales of a [N, K] weight whose granularity follows the scale's shape:
/// one value (tensor), [N] or [N, 1] (channel), [N, K/g] (group) or, with a
/// block structure, [ceil(N/bn), ceil(K/bk)] (block).
Status readShapedScales(Ctx &c, const char *suffix, const TensorView &s,
                        int64_t n, int64_t k, int64_t blockN, int64_t blockK,
                        double multiplier, WeightSchema &w,
                        CanonicalValues &cv) {
  int64_t numel = s.numel();
  if (blockN > 0) {
    int64_t rows = (n + blockN - 1) / blockN, cols = (k + blockK - 1) / blockK;
    if (s.shape != std::vector<int64_t>{rows, cols})
      return Error{concat(c.name(suffix), ": expected shape [", rows, ", ",
                          cols, "] (block ", blockN, "x", blockK, "), got ",
                          formatShape(s.shape))};
    w.granularity = Granularity::Block;
    w.groupN = blockN;
    w.groupK = blockK;
    w.scaleType = ScalarType::f32();
    cv.scales = readScales(s, rows, cols, false, multiplier);
    return Status::success();
  }
  if (numel == 1) {
    w.granularity = Granularity::Tensor;
    w.scaleType = ScalarType::f32();
    cv.globalScales = {multiplier * s.at(0)};
    return Status::success();
  }
  if (numel == n && (s.shape.size() == 1 || s.shape.back() == 1)) {
    w.granularity = Granularity::Channel;
    w.scaleType = scaleTypeFor(c, s.dtype, Granularity::Channel);
    cv.scales = readScales(s, n, 1, false, multiplier);
    return Status::success();
  }
  if (s.shape.size() == 2 && s.shape[0] == n && s.shape[1] > 0 &&
      k % s.shape[1] == 0) {
    w.granularity = Granularity::Group;
    w.groupK = k / s.shape[1];
    w.scaleType = scaleTypeFor(c, s.dtype, Granularity::Group);
    cv.scales = readScales(s, n, s.shape[1], false, multiplier);
    return Status::success();
  }
  return Error{concat(c.name(suffix), ": expected one value, [", n, "], [", n,
                      ", 1] or [", n, ", K / group] for a [", n, ", ", k,
                      "] weight, got ", formatShape(s.shape))};
}

/// Codes of a byte-per-value weight [N, K] (F8_E4M3 codes; I8 offset by 128).
Result<std::pair<int64_t, int64_t>> readByteWeight(Ctx &c, const char *suffix,
                                                   CanonicalValues &cv,
                                                   bool signedInt) {
  TRY(weight, c.get(suffix,
                    signedInt ? std::vector<DType>{DType::I8}
                              : std::vector<DType>{DType::F8_E4M3},
                    2));
  int64_t n = weight->shape[0], k = weight->shape[1];
  cv.codes.resize(size_t(n * k));
  for (int64_t i = 0; i < n * k; ++i)
    cv.codes[size_t(i)] = signedInt ? uint32_t(weight->data[i] ^ 0x80)
                                    : uint32_t(weight->data[i]);
  return std::make_pair(n, k);
}

/// fp4 weights packed two per byte, low nibble first: [N, K/2] (or with a
/// leading E). Returns N and K.
Result<std::pair<int64_t, int64_t>> readFp4Weight(Ctx &c, const TensorView &t,
                                                  const std::string &name,
                                                  int64_t experts,
                                                  CanonicalValues &cv) {
  if (t.dtype != DType::U8 && t.dtype != DType::I8)
    return Error{concat(name, ": expected dtype U8 (two e2m1 per byte), got ",
                        dtypeName(t.dtype))};
  int64_t rows = experts > 0       ? t.shape.size() >= 2 ? t.shape[1] : 0
                 : t.shape.empty() ? 0
                                   : t.shape[0];
  if (rows <= 0 || t.numel() % ((experts > 0 ? experts : 1) * rows))
    return Error{concat(name, ": expected [", experts > 0 ? "E, " : "",
                        "N, K / 2] bytes, got ", formatShape(t.shape))};
  int64_t e = std::max<int64_t>(experts, 1);
  int64_t k = 2 * t.numel() / (e * rows);
  cv.codes.resize(size_t(e * rows * k));
  for (int64_t i = 0; i < e * rows * k / 2; ++i) {
    cv.codes[size_t(2 * i)] = t.data[i] & 0xF;
    cv.codes[size_t(2 * i + 1)] = t.data[i] >> 4;
  }
  return std::make_pair(rows, k);
}

Result<LoadedLayer> loadFp8Like(Ctx &c, const char *scaleSuffix) {
  WeightSchema w;
  w.type = ScalarType::e4m3();
  CanonicalValues cv;
  TRY(nk, readByteWeight(c, ".weight", cv, false));
  auto [n, k] = *nk;
  TRY(scale, c.get(scaleSuffix, {DType::F32, DType::F16, DType::BF16}));
  CHECK_STATUS(readShapedScales(c, scaleSuffix, *scale, n, k, c.mq.blockN,
                                c.mq.blockK, 1.0, w, cv));
  CHECK_STATUS(readBias(c, ".bias", 1, n, cv));
  return finish(c, w, cv, n, k);
}

/// NVFP4: e2m1 [N, K/2], e4m3 group-16 scales, a global fp32 scale.
Result<LoadedLayer> loadNvfp4(Ctx &c, const char *weightSuffix,
                              const char *globalSuffix, bool invertGlobal) {
  TRY(weight, c.get(weightSuffix, {DType::U8, DType::I8}, 2));
  CanonicalValues cv;
  TRY(nk, readFp4Weight(c, *weight, c.name(weightSuffix), 0, cv));
  auto [n, k] = *nk;
  int64_t group = c.mq.groupSize > 0 ? c.mq.groupSize : 16;
  TRY(scale, c.get(".weight_scale", {DType::F8_E4M3}, 2));
  CHECK_STATUS(c.expectShape(".weight_scale", *scale, {n, k / group},
                             "[N, K / " + std::to_string(group) + "]"));
  TRY(global, c.get(globalSuffix, {DType::F32}));
  if (global->numel() != 1)
    return Error{
        concat(c.name(globalSuffix), ": expected one value, got shape ",
               formatShape(global->shape), " (fuse shards with fuseShards)")};
  double g = global->at(0);
  if (!(g > 0) || !std::isfinite(g))
    return Error{concat(c.name(globalSuffix),
                        ": expected a positive finite "
                        "scale, got ",
                        g)};
  WeightSchema w;
  w.type = ScalarType::e2m1();
  w.scaleType = ScalarType::e4m3();
  w.granularity = Granularity::GroupTensor;
  w.groupK = group;
  cv.scales = readScales(*scale, n, k / group, false);
  cv.globalScales = {invertGlobal ? double(float(1.0 / g)) : g};
  if (invertGlobal)
    c.layer.notes.push_back("global scale is 1 / weight_global_scale");
  CHECK_STATUS(readBias(c, ".bias", 1, n, cv));
  return finish(c, w, cv, n, k);
}

/// MX formats: e8m0 group-32 scales stored as bytes.
Status readE8m0Scales(Ctx &c, const TensorView &s, const std::string &name,
                      int64_t rows, int64_t groups, CanonicalValues &cv) {
  if (s.dtype != DType::U8 && s.dtype != DType::F8_E8M0)
    return Error{concat(name,
                        ": expected dtype U8 or F8_E8M0 (e8m0 exponents), "
                        "got ",
                        dtypeName(s.dtype))};
  if (s.numel() != rows * groups)
    return Error{concat(name, ": expected ", rows * groups, " scales (", rows,
                        " rows x ", groups, " groups of 32), got shape ",
                        formatShape(s.shape))};
  cv.scales.resize(size_t(rows * groups));
  for (int64_t i = 0; i < rows * groups; ++i) {
    if (s.data[i] == 0xFF)
      return Error{concat(name, "[", i, "]: e8m0 NaN (0xFF) is not a scale")};
    cv.scales[size_t(i)] = decode(ScalarType::ue8m0(), s.data[i]);
  }
  return Status::success();
}

/// MXFP4 without experts: e2m1 [N, K/2] at `weightSuffix` and e8m0
/// `.weight_scale` [N, K/32].
Result<LoadedLayer> loadDenseMxfp4(Ctx &c, const char *weightSuffix) {
  TRY(weight, c.get(weightSuffix, {DType::U8, DType::I8}, 2));
  CanonicalValues cv;
  TRY(nk, readFp4Weight(c, *weight, c.name(weightSuffix), 0, cv));
  auto [n, k] = *nk;
  TRY(scale, c.ckpt.tensor(c.name(".weight_scale")));
  CHECK_STATUS(
      readE8m0Scales(c, *scale, c.name(".weight_scale"), n, k / 32, cv));
  WeightSchema w;
  w.type = ScalarType::e2m1();
  w.scaleType = ScalarType::ue8m0();
  w.granularity = Granularity::Group;
  w.groupK = 32;
  CHECK_STATUS(readBias(c, ".bias", 1, n, cv));
  return finish(c, w, cv, n, k);
}

Result<LoadedLayer> loadMxfp4(Ctx &c) {
  CanonicalValues cv;
  WeightSchema w;
  w.type = ScalarType::e2m1();
  w.scaleType = ScalarType::ue8m0();
  w.granularity = Granularity::Group;
  w.groupK = 32;
  std::string weightName, scaleName;
  int64_t experts = 0;
  if (c.ckpt.has(c.module + "_blocks")) { // gpt-oss experts
    weightName = c.module + "_blocks";
    scaleName = c.module + "_scales";
    TRY(t, c.ckpt.tensor(weightName));
    if (t->shape.size() != 4 || t->shape[3] != 16)
      return Error{concat(weightName, ": expected [E, N, K / 32, 16], got ",
                          formatShape(t->shape))};
    experts = t->shape[0];
  } else {
    weightName = c.name(".weight");
    scaleName = c.name(".weight_scale");
    TRY(t, c.ckpt.tensor(weightName));
    experts = t->shape.size() == 3 ? t->shape[0] : 0;
  }
  TRY(weight, c.ckpt.tensor(weightName));
  TRY(nk, readFp4Weight(c, *weight, weightName, experts, cv));
  auto [n, k] = *nk;
  TRY(scale, c.ckpt.tensor(scaleName));
  int64_t e = std::max<int64_t>(experts, 1);
  CHECK_STATUS(readE8m0Scales(c, *scale, scaleName, e * n, k / 32, cv));
  w.experts = experts;
  CHECK_STATUS(readBias(c, experts ? "_bias" : ".bias", e, n, cv));
  return finish(c, w, cv, n, k);
}

//===----------------------------------------------------------------------===//
// compressed-tensors
//===----------------------------------------------------------------------===//

Result<LoadedLayer> loadCompressedTensors(Ctx &c) {
  const ModuleQuantization &mq = c.mq;
  const std::string &fmt = mq.variant;
  if (fmt == "nvfp4-pack-quantized")
    return loadNvfp4(c, ".weight_packed", ".weight_global_scale", true);
  if (fmt == "mxfp4-pack-quantized")
    return loadDenseMxfp4(c, ".weight_packed");
  if (fmt == "float-quantized" ||
      ((fmt == "int-quantized" || fmt == "naive-quantized") && mq.bits == 8)) {
    bool isInt = fmt != "float-quantized";
    if (!isInt && mq.bits != 8)
      return Error{
          concat(c.module, ": expected 8-bit float weights, got ", mq.bits)};
    WeightSchema w;
    w.type = isInt ? ScalarType::uint(8) : ScalarType::e4m3();
    CanonicalValues cv;
    TRY(nk, readByteWeight(c, ".weight", cv, isInt));
    auto [n, k] = *nk;
    TRY(scale, c.get(".weight_scale", {DType::F32, DType::F16, DType::BF16}));
    CHECK_STATUS(readShapedScales(c, ".weight_scale", *scale, n, k, mq.blockN,
                                  mq.blockK, 1.0, w, cv));
    if (isInt && !mq.symmetric) {
      TRY(zp, c.get(".weight_zero_point", {DType::I8, DType::I32}));
      int64_t groups = w.granularity == Granularity::Group ? k / w.groupK : 1;
      if (zp->numel() != n * groups)
        return Error{concat(c.name(".weight_zero_point"), ": expected ",
                            n * groups, " values, got shape ",
                            formatShape(zp->shape))};
      w.zeroPoint = ZeroPointKind::Int;
      cv.zeroPoints.resize(size_t(n * groups));
      for (int64_t i = 0; i < n * groups; ++i)
        cv.zeroPoints[size_t(i)] = double(zp->intAt(i) + 128);
    }
    CHECK_STATUS(readBias(c, ".bias", 1, n, cv));
    return finish(c, w, cv, n, k);
  }
  if (fmt != "pack-quantized")
    return Error{concat(c.module, ": compressed-tensors format '", fmt,
                        "' is not supported; expected pack-quantized, "
                        "int-quantized, float-quantized, naive-quantized, "
                        "nvfp4-pack-quantized or mxfp4-pack-quantized")};

  // pack-quantized: int codes offset by 2^(b-1), bit stream along K.
  const unsigned b = unsigned(mq.bits);
  if (b < 2 || b > 8)
    return Error{concat(c.module,
                        ": expected 2 to 8 bits with pack-quantized, "
                        "got ",
                        b)};
  TRY(packed, c.get(".weight_packed", {DType::I32, DType::U32}, 2));
  int64_t n = packed->shape[0], kPacked = packed->shape[1] * 32 / b;
  int64_t k = kPacked;
  if (c.has(".weight_shape")) {
    TRY(shape, c.get(".weight_shape", {DType::I64, DType::I32}, 1));
    // K is a value read from the file: its product with the width is
    // checked (K = 2^62 overflowed int64 here).
    std::optional<int64_t> kBits =
        shape->numel() == 2 && shape->intAt(1) > 0
            ? checkedMul(shape->intAt(1), int64_t(b))
            : std::nullopt;
    bool fits = kBits && shape->intAt(0) == n &&
                checkedCeilDiv(*kBits, 32) == packed->shape[1];
    if (!fits)
      return Error{concat(
          c.name(".weight_shape"), ": expected [", n, ", K] with ceil(K * ", b,
          " / 32) = ", packed->shape[1], " words per row, got ",
          shape->numel() == 2 ? "[" + std::to_string(shape->intAt(0)) + ", " +
                                    std::to_string(shape->intAt(1)) + "]"
                              : formatShape(shape->shape))};
    k = shape->intAt(1);
  }
  WeightSchema w;
  w.type = ScalarType::uint(b);
  w.padK = kPacked - k; // the packed rows carry the padding already
  int64_t group = mq.groupSize;
  if (group > 0 && kPacked % group)
    return Error{concat(c.name(".weight_packed"), ": K = ", kPacked,
                        " is not a multiple of group_size ", group)};
  CanonicalValues cv;
  cv.codes.resize(size_t(n * kPacked));
  std::vector<uint32_t> row(static_cast<size_t>(packed->shape[1]));
  for (int64_t r = 0; r < n; ++r) {
    for (size_t i = 0; i < row.size(); ++i)
      row[i] = uint32_t(packed->intAt(r * int64_t(row.size()) + int64_t(i)));
    for (int64_t kk = 0; kk < kPacked; ++kk)
      cv.codes[size_t(r * kPacked + kk)] = packedCodeAt(row.data(), kk, b);
  }
  TRY(scale, c.get(".weight_scale", {DType::F32, DType::F16, DType::BF16}, 2));
  int64_t groups = group > 0 ? kPacked / group : 1;
  CHECK_STATUS(c.expectShape(".weight_scale", *scale, {n, groups},
                             group > 0 ? "[N, K / group_size]" : "[N, 1]"));
  w.granularity = group > 0 ? Granularity::Group : Granularity::Channel;
  w.groupK = group;
  w.scaleType = scaleTypeFor(c, scale->dtype, w.granularity);
  cv.scales = readScales(*scale, n, groups, false);
  if (!mq.symmetric) {
    TRY(zp, c.get(".weight_zero_point", {DType::I32, DType::I8}, 2));
    w.zeroPoint = ZeroPointKind::Int;
    cv.zeroPoints.resize(size_t(n * groups));
    uint32_t offset = 1u << (b - 1);
    if (zp->shape == std::vector<int64_t>{n * b / 32, groups} &&
        zp->dtype == DType::I32) {
      // Packed along N with the same offset as the weights.
      std::vector<uint32_t> column(static_cast<size_t>(n * b / 32));
      for (int64_t g = 0; g < groups; ++g) {
        for (int64_t i = 0; i < int64_t(column.size()); ++i)
          column[size_t(i)] = uint32_t(zp->intAt(i * groups + g));
        for (int64_t r = 0; r < n; ++r)
          cv.zeroPoints[size_t(r * groups + g)] =
              packedCodeAt(column.data(), r, b);
      }
    } else if (zp->shape == std::vector<int64_t>{n, groups}) {
      for (int64_t i = 0; i < n * groups; ++i)
        cv.zeroPoints[size_t(i)] =
            double(uint32_t(zp->intAt(i) + int64_t(offset)) & ((1u << b) - 1));
    } else {
      return Error{concat(c.name(".weight_zero_point"), ": expected [",
                          n * b / 32, ", ", groups, "] (packed) or [", n, ", ",
                          groups, "], got ", formatShape(zp->shape))};
    }
  }
  if (c.has(".weight_g_idx")) {
    TRY(gIdx, c.get(".weight_g_idx", {DType::I32, DType::I64}, 1));
    TRY(perm, actOrderPermutation(c, ".weight_g_idx", *gIdx, kPacked, group));
    permuteColumns(cv.codes, n, kPacked, *perm);
    c.layer.kPermutation = perm.take();
  }
  CHECK_STATUS(readBias(c, ".bias", 1, n, cv));
  return finish(c, w, cv, n, kPacked);
}

//===----------------------------------------------------------------------===//
// Quark
//===----------------------------------------------------------------------===//

Result<LoadedLayer> loadQuark(Ctx &c) {
  const std::string &dtype = c.mq.variant;
  if (dtype == "fp8_e4m3")
    return loadFp8Like(c, ".weight_scale");
  if (dtype == "fp4")
    return loadDenseMxfp4(c, ".weight");
  if (dtype == "int8") {
    WeightSchema w;
    w.type = ScalarType::uint(8); // offset by 128
    CanonicalValues cv;
    TRY(nk, readByteWeight(c, ".weight", cv, true));
    auto [n, k] = *nk;
    TRY(scale, c.get(".weight_scale", {DType::F32, DType::F16, DType::BF16}));
    CHECK_STATUS(
        readShapedScales(c, ".weight_scale", *scale, n, k, 0, 0, 1.0, w, cv));
    CHECK_STATUS(readBias(c, ".bias", 1, n, cv));
    return finish(c, w, cv, n, k);
  }
  // int4 / uint4: packed along K in int32 words, 8 per word, sequential or
  // (pack_method reorder) in AWQ's nibble order.
  bool reorder = c.mq.strategy.find("+reorder") != std::string::npos;
  bool isSigned = dtype == "int4";
  TRY(weight, c.get(".weight", {DType::I32, DType::U32}, 2));
  int64_t n = weight->shape[0], k = weight->shape[1] * 8;
  int64_t group = c.mq.groupSize;
  if (group > 0 && k % group)
    return Error{concat(c.name(".weight"), ": K = ", k,
                        " is not a multiple of group_size ", group)};
  int64_t groups = group > 0 ? k / group : 1;
  CanonicalValues cv;
  cv.codes.resize(size_t(n * k));
  for (int64_t r = 0; r < n; ++r)
    for (int64_t kk = 0; kk < k; ++kk) {
      uint32_t word = uint32_t(weight->intAt(r * (k / 8) + kk / 8));
      int slot = reorder ? kAwqSlot[kk % 8] : int(kk % 8);
      cv.codes[size_t(r * k + kk)] = (word >> (4 * slot)) & 0xF;
    }
  WeightSchema w;
  w.type = isSigned ? ScalarType::sint(4) : ScalarType::uint(4);
  TRY(scale, c.get(".weight_scale", {DType::F32, DType::F16, DType::BF16}));
  CHECK_STATUS(
      readShapedScales(c, ".weight_scale", *scale, n, k, 0, 0, 1.0, w, cv));
  if (!isSigned) {
    TRY(zp, c.get(".weight_zero_point", {DType::I32, DType::U8, DType::I8}));
    if (zp->numel() != n * groups)
      return Error{concat(
          c.name(".weight_zero_point"), ": expected ", n * groups,
          " values ([N, K / group_size]), got shape ", formatShape(zp->shape))};
    w.zeroPoint = ZeroPointKind::Int;
    cv.zeroPoints.resize(size_t(n * groups));
    for (int64_t i = 0; i < n * groups; ++i)
      cv.zeroPoints[size_t(i)] = double(zp->intAt(i));
  }
  CHECK_STATUS(readBias(c, ".bias", 1, n, cv));
  return finish(c, w, cv, n, k);
}

//===----------------------------------------------------------------------===//
// BitNet
//===----------------------------------------------------------------------===//

Result<LoadedLayer> loadBitnet(Ctx &c) {
  // weight U8 [N/4, K]: byte row r holds rows r + j*N/4 (j = 0..3) at bits
  // 2j..2j+1, code = value + 1. Canonical ui2 (implicit zero 2): value + 2.
  TRY(weight, c.get(".weight", {DType::U8}, 2));
  int64_t quarter = weight->shape[0], k = weight->shape[1], n = 4 * quarter;
  CanonicalValues cv;
  cv.codes.resize(size_t(n * k));
  for (int64_t r = 0; r < quarter; ++r)
    for (int64_t kk = 0; kk < k; ++kk) {
      uint8_t byte = weight->data[r * k + kk];
      for (int64_t j = 0; j < 4; ++j) {
        uint32_t code = (byte >> (2 * j)) & 3;
        if (code == 3)
          return Error{concat(c.name(".weight"), "[", r, ", ", kk,
                              "]: code 3 "
                              "is not a ternary value (expected 0, 1 or 2)")};
        cv.codes[size_t((r + j * quarter) * k + kk)] = code + 1;
      }
    }
  TRY(scale, c.get(".weight_scale", {DType::F32, DType::F16, DType::BF16}));
  if (scale->numel() != 1)
    return Error{concat(c.name(".weight_scale"),
                        ": expected one value, got shape ",
                        formatShape(scale->shape))};
  double inv = scale->at(0);
  if (!(inv > 0) || !std::isfinite(inv))
    return Error{concat(c.name(".weight_scale"),
                        ": expected a positive finite "
                        "scale, got ",
                        inv)};
  WeightSchema w;
  w.type = ScalarType::uint(2);
  w.scaleType = ScalarType::f32();
  w.granularity = Granularity::Tensor;
  cv.globalScales = {double(float(1.0 / inv))};
  c.layer.notes.push_back("scale is 1 / weight_scale");
  CHECK_STATUS(readBias(c, ".bias", 1, n, cv));
  return finish(c, w, cv, n, k);
}

} // namespace

Result<OpenedCheckpoint> openCheckpoint(const std::string &dir) {
  Result<Checkpoint> checkpoint = Checkpoint::open(dir);
  if (!checkpoint)
    return Error{checkpoint.error()};
  return openCheckpoint(checkpoint.take());
}

Result<OpenedCheckpoint> openCheckpoint(Checkpoint checkpoint) {
  Result<QuantConfig> config = QuantConfig::fromCheckpoint(checkpoint);
  if (!config)
    return Error{config.error()};
  return OpenedCheckpoint{std::move(checkpoint), config.take()};
}

Result<LoadedLayer> stackExperts(const std::vector<LoadedLayer> &experts) {
  if (experts.empty())
    return Error{std::string("expected at least one expert to stack")};
  const LoadedLayer &first = experts.front();
  const std::string schema = formatWeightSchema(first.weight);
  for (size_t e = 0; e < experts.size(); ++e) {
    const LoadedLayer &x = experts[e];
    if (x.weight.experts != 0)
      return Error{concat("expert ", e, " (", x.module,
                          "): expected a dense layer, got ", x.weight.experts,
                          " experts")};
    if (formatWeightSchema(x.weight) != schema || x.n != first.n ||
        x.k != first.k)
      return Error{concat("expert ", e, " (", x.module, ", ",
                          formatWeightSchema(x.weight), ", N = ", x.n,
                          ", K = ", x.k, "): expected the schema and sizes of "
                          "expert 0 (", schema, ", N = ", first.n, ", K = ",
                          first.k, ")")};
    if (formatInputSchema(x.input) != formatInputSchema(first.input))
      return Error{concat("expert ", e, " (", x.module, "): expected the "
                          "activations of expert 0 (",
                          formatInputSchema(first.input), "), got ",
                          formatInputSchema(x.input))};
    if (!x.kPermutation.empty())
      return Error{concat("expert ", e, " (", x.module, "): act-order "
                          "(a permutation of K) is not supported in MoE "
                          "layers: each token's row is shared by its experts "
                          "and cannot be gathered per expert")};
  }
  const int64_t count = int64_t(experts.size());
  LoadedLayer out = first;
  out.weight.experts = count;
  out.notes.clear();
  for (const LoadedLayer &x : experts)
    for (const std::string &n : x.notes)
      if (std::find(out.notes.begin(), out.notes.end(), n) == out.notes.end())
        out.notes.push_back(n);
  auto stack = [&](auto member, bool flatten) -> std::optional<Tensor> {
    const std::optional<Tensor> &t0 = first.tensors.*member;
    if (!t0)
      return std::nullopt;
    std::vector<int64_t> shape = {count};
    if (flatten) // [1] global scales -> [E]
      shape[0] = count * t0->numel();
    else
      shape.insert(shape.end(), t0->shape.begin(), t0->shape.end());
    Tensor all(t0->dtype, shape);
    size_t at = 0;
    for (const LoadedLayer &x : experts) {
      const Tensor &t = *(x.tensors.*member);
      std::copy(t.data.begin(), t.data.end(), all.data.begin() + ptrdiff_t(at));
      at += t.data.size();
    }
    return all;
  };
  {
    std::vector<int64_t> shape = {count};
    shape.insert(shape.end(), first.tensors.weight.shape.begin(),
                 first.tensors.weight.shape.end());
    Tensor all(first.tensors.weight.dtype, shape);
    size_t at = 0;
    for (const LoadedLayer &x : experts) {
      std::copy(x.tensors.weight.data.begin(), x.tensors.weight.data.end(),
                all.data.begin() + ptrdiff_t(at));
      at += x.tensors.weight.data.size();
    }
    out.tensors.weight = std::move(all);
  }
  out.tensors.scales = stack(&QuantizedWeights::scales, false);
  out.tensors.zeroPoints = stack(&QuantizedWeights::zeroPoints, false);
  out.tensors.globalScale = stack(&QuantizedWeights::globalScale, true);
  out.tensors.bias = stack(&QuantizedWeights::bias, false);
  return out;
}

Result<LoadedMoe> loadMoeExperts(const Checkpoint &checkpoint,
                                 const QuantConfig &config,
                                 const std::string &pattern, int64_t experts,
                                 const std::string &gate,
                                 const std::string &up,
                                 const std::string &down) {
  const size_t at = pattern.find("{e}");
  if (at == std::string::npos)
    return Error{concat("expected the experts' module pattern to hold {e} "
                        "(their index), got '",
                        pattern, "'")};
  if (experts < 1 || experts > (int64_t(1) << 20))
    return Error{concat("expected 1 .. 2^20 experts, got ", experts)};
  std::vector<LoadedLayer> gateUp, downs;
  for (int64_t e = 0; e < experts; ++e) {
    std::string prefix = pattern.substr(0, at) + std::to_string(e) +
                         pattern.substr(at + 3);
    Result<LoadedLayer> g = loadLayer(checkpoint, config, prefix + "." + gate);
    if (!g)
      return Error{g.error()};
    Result<LoadedLayer> u = loadLayer(checkpoint, config, prefix + "." + up);
    if (!u)
      return Error{u.error()};
    Result<LoadedLayer> d = loadLayer(checkpoint, config, prefix + "." + down);
    if (!d)
      return Error{d.error()};
    Result<LoadedLayer> fused = fuseShards({*g, *u}, config.paramDType());
    if (!fused)
      return Error{concat("expert ", e, ": ", fused.error())};
    gateUp.push_back(fused.take());
    downs.push_back(d.take());
  }
  Result<LoadedLayer> gu = stackExperts(gateUp);
  if (!gu)
    return Error{concat("gate_up: ", gu.error())};
  Result<LoadedLayer> dn = stackExperts(downs);
  if (!dn)
    return Error{concat("down: ", dn.error())};
  return LoadedMoe{gu.take(), dn.take()};
}

size_t LoadedLayer::bytes() const {
  size_t total = tensors.weight.data.size();
  for (const std::optional<Tensor> *t : {&tensors.scales, &tensors.zeroPoints,
                                         &tensors.globalScale, &tensors.bias})
    if (*t)
      total += (*t)->data.size();
  return total;
}

std::vector<std::string> quantizedModules(const Checkpoint &ckpt,
                                          const QuantConfig &config) {
  const std::string &m = config.method();
  std::vector<std::string> modules;
  auto add = [&](std::string module) {
    Result<std::optional<ModuleQuantization>> q = config.forModule(module);
    if (q.ok() && q->has_value())
      modules.push_back(std::move(module));
  };
  for (const std::string &name : ckpt.tensorNames()) {
    auto stem = [&](const char *suffix) {
      return name.substr(0, name.size() - std::string(suffix).size());
    };
    if (m == "gptq" || m == "awq" || m == "auto-round") {
      if (endsWith(name, ".qweight"))
        add(stem(".qweight"));
    } else if (m == "mxfp4" && endsWith(name, "_blocks")) {
      add(stem("_blocks"));
    } else if (m == "compressed-tensors" && endsWith(name, ".weight_packed")) {
      add(stem(".weight_packed"));
    } else if (endsWith(name, ".weight")) {
      std::string module = stem(".weight");
      if (ckpt.has(module + ".weight_scale") ||
          ckpt.has(module + ".weight_scale_inv"))
        add(module);
    }
  }
  std::sort(modules.begin(), modules.end());
  modules.erase(std::unique(modules.begin(), modules.end()), modules.end());
  return modules;
}

Result<LoadedLayer> loadLayer(const Checkpoint &ckpt, const QuantConfig &config,
                              const std::string &module) {
  Result<std::optional<ModuleQuantization>> mq = config.forModule(module);
  if (!mq)
    return Error{mq.error()};
  if (!mq->has_value())
    return Error{concat(module, ": the quantization config leaves this module "
                                "unquantized")};
  Ctx c{ckpt, module, **mq, config.paramDType(), {}};
  c.layer.module = module;
  c.layer.source = **mq;
  const std::string &method = c.mq.method;
  const std::string &variant = c.mq.variant;
  if (method == "gptq" || (method == "auto-round" && variant != "awq"))
    return loadGptq(c);
  if (method == "awq" || method == "auto-round")
    return loadAwq(c);
  if (method == "compressed-tensors")
    return loadCompressedTensors(c);
  if (method == "fp8")
    return loadFp8Like(c, c.mq.blockN ? ".weight_scale_inv" : ".weight_scale");
  if (method == "modelopt") {
    if (variant == "NVFP4")
      return loadNvfp4(c, ".weight", ".weight_scale_2", false);
    if (variant == "MXFP8") {
      WeightSchema w;
      w.type = ScalarType::e4m3();
      w.scaleType = ScalarType::ue8m0();
      w.granularity = Granularity::Group;
      w.groupK = 32;
      CanonicalValues cv;
      TRY(nk, readByteWeight(c, ".weight", cv, false));
      auto [n, k] = *nk;
      TRY(scale, ckpt.tensor(c.name(".weight_scale")));
      CHECK_STATUS(
          readE8m0Scales(c, *scale, c.name(".weight_scale"), n, k / 32, cv));
      CHECK_STATUS(readBias(c, ".bias", 1, n, cv));
      return finish(c, w, cv, n, k);
    }
    return loadFp8Like(c, ".weight_scale");
  }
  if (method == "mxfp4")
    return loadMxfp4(c);
  if (method == "quark")
    return loadQuark(c);
  if (method == "bitnet")
    return loadBitnet(c);
  return Error{concat(module, ": no loader for quant_method '", method, "'")};
}

namespace {
/// The inverse of packCanonical, for re-packing (fusing shards).
CanonicalValues unpackCanonical(const WeightSchema &w,
                                const QuantizedWeights &q, int64_t np,
                                int64_t kp) {
  CanonicalValues v;
  const int64_t e = std::max<int64_t>(w.experts, 1);
  const unsigned b = w.type.bits;
  const int64_t words = kp * b / 32;
  v.codes.resize(size_t(e * np * kp));
  for (int64_t row = 0; row < e * np; ++row)
    for (int64_t c = 0; c < kp; ++c)
      v.codes[size_t(row * kp + c)] =
          packedCodeAt(q.weight.as<uint32_t>() + row * words, c, b);
  if (q.scales)
    for (int64_t i = 0; i < q.scales->numel(); ++i)
      v.scales.push_back(q.scales->at(i));
  const int64_t groupsK = w.groupsAlongK(kp);
  if (w.zeroPoint == ZeroPointKind::Float)
    for (int64_t i = 0; i < q.zeroPoints->numel(); ++i)
      v.zeroPoints.push_back(q.zeroPoints->at(i));
  if (w.zeroPoint == ZeroPointKind::Int) {
    v.zeroPoints.resize(size_t(e * np * groupsK));
    int64_t zRows = np * b / 32;
    for (int64_t ei = 0; ei < e; ++ei)
      for (int64_t g = 0; g < groupsK; ++g) {
        std::vector<uint32_t> column(static_cast<size_t>(zRows));
        for (int64_t r = 0; r < zRows; ++r)
          column[size_t(r)] =
              q.zeroPoints->as<uint32_t>()[(ei * zRows + r) * groupsK + g];
        for (int64_t r = 0; r < np; ++r)
          v.zeroPoints[size_t((ei * np + r) * groupsK + g)] =
              packedCodeAt(column.data(), r, b);
      }
  }
  if (q.globalScale)
    for (int64_t i = 0; i < e; ++i)
      v.globalScales.push_back(q.globalScale->at(i));
  if (q.bias)
    for (int64_t i = 0; i < q.bias->numel(); ++i)
      v.bias.push_back(q.bias->at(i));
  return v;
}
} // namespace

Result<LoadedLayer> fuseShards(const std::vector<LoadedLayer> &shards,
                               DType paramDType) {
  if (shards.empty())
    return Error{std::string("expected at least one shard to fuse")};
  const LoadedLayer &first = shards.front();
  WeightSchema w = first.weight;
  for (const LoadedLayer &s : shards) {
    WeightSchema a = s.weight, b = first.weight;
    if (s.k != first.k || a.padK != b.padK || a.padN != 0)
      return Error{concat("cannot fuse ", s.module, " with ", first.module,
                          ": expected equal K and no N padding, got K = ", s.k,
                          " and ", first.k)};
    if (a.type != b.type || a.scaleType != b.scaleType ||
        a.granularity != b.granularity || a.groupK != b.groupK ||
        a.groupN != b.groupN || a.zeroPoint != b.zeroPoint ||
        a.experts != b.experts || a.globalScale != b.globalScale ||
        a.bias != b.bias)
      return Error{concat("cannot fuse ", s.module, " (", formatWeightSchema(a),
                          ") with ", first.module, " (", formatWeightSchema(b),
                          "): the schemas differ beyond their scalar scales")};
    if (!s.kPermutation.empty() || !first.kPermutation.empty())
      if (s.kPermutation != first.kPermutation)
        return Error{concat("cannot fuse ", s.module, " with ", first.module,
                            ": their act-order permutations differ")};
    if (w.granularity == Granularity::Block && s.n % w.groupN)
      return Error{concat("cannot fuse ", s.module, ": N = ", s.n,
                          " is not a multiple of the block ", w.groupN)};
  }
  const int64_t e = std::max<int64_t>(w.experts, 1);
  const int64_t kp = first.k + w.padK;
  std::vector<CanonicalValues> parts;
  int64_t n = 0;
  for (const LoadedLayer &s : shards) {
    parts.push_back(unpackCanonical(s.weight, s.tensors, s.n, kp));
    n += s.n;
  }
  // Scalar scales: equal ones stay; unequal ones move into the rows.
  bool unequal = false;
  for (const CanonicalValues &p : parts)
    unequal |= p.globalScales != parts.front().globalScales;

  LoadedLayer out = first;
  out.module = first.module;
  out.n = n;
  out.notes.clear();
  WeightSchema fused = w;
  if (unequal && w.granularity == Granularity::Tensor) {
    fused.granularity = Granularity::Channel;
    fused.scaleType = ScalarType::f32();
    out.notes.push_back("per-shard tensor scales became f32 channel scales");
  } else if (unequal && w.granularity == Granularity::GroupTensor) {
    fused.granularity = Granularity::Group;
    fused.scaleType = paramScalar(paramDType);
    out.notes.push_back(concat("per-shard global scales folded into ",
                               dtypeName(paramDType),
                               " group scales (rounded)"));
  } else if (unequal) {
    return Error{concat("cannot fuse: the shards' global scales differ and ",
                        toString(w.granularity), " scales cannot absorb them")};
  }
  const int64_t groupsK = fused.groupsAlongK(kp);
  const int64_t scaleCols = w.granularity == Granularity::Block
                                ? (kp + w.groupK - 1) / w.groupK
                                : groupsK;
  CanonicalValues cv;
  cv.codes.resize(size_t(e * n * kp));
  for (int64_t ei = 0; ei < e; ++ei) {
    int64_t row0 = 0;
    for (size_t si = 0; si < shards.size(); ++si) {
      const CanonicalValues &p = parts[si];
      int64_t sn = shards[si].n;
      double gs = p.globalScales.empty() ? 1.0 : p.globalScales[size_t(ei)];
      std::copy(p.codes.begin() + ei * sn * kp,
                p.codes.begin() + (ei + 1) * sn * kp,
                cv.codes.begin() + (ei * n + row0) * kp);
      if (fused.granularity == Granularity::Channel && unequal) {
        for (int64_t r = 0; r < sn; ++r)
          cv.scales.push_back(gs);
      } else if (w.granularity == Granularity::Block) {
        int64_t rows = sn / w.groupN;
        for (int64_t i = 0; i < rows * scaleCols; ++i)
          cv.scales.push_back(p.scales[size_t(ei * rows * scaleCols + i)]);
      } else if (w.hasScaleTensor()) {
        for (int64_t i = 0; i < sn * groupsK; ++i)
          cv.scales.push_back(p.scales[size_t(ei * sn * groupsK + i)] *
                              (unequal ? gs : 1.0));
      }
      for (size_t i = 0; i < size_t(sn * groupsK) && !p.zeroPoints.empty(); ++i)
        cv.zeroPoints.push_back(p.zeroPoints[size_t(ei * sn * groupsK) + i]);
      for (int64_t r = 0; r < sn && !p.bias.empty(); ++r)
        cv.bias.push_back(p.bias[size_t(ei * sn + r)]);
      row0 += sn;
    }
    if (fused.hasGlobalScale())
      cv.globalScales.push_back(parts.front().globalScales.empty()
                                    ? 1.0
                                    : parts.front().globalScales[size_t(ei)]);
  }
  if (Diag d = verifyWeightSchema(fused))
    return Error{concat("fused schema: ", *d)};
  Result<QuantizedWeights> q = packCanonical(fused, cv, n, kp, paramDType);
  if (!q)
    return Error{q.error()};
  out.weight = fused;
  out.tensors = q.take();
  return out;
}

Result<CanonicalLayer> sourceToCanonical(const WeightSchema &source,
                                         const QuantizedWeights &tensors,
                                         int64_t n, int64_t k) {
  if (Diag d = verifyWeightSchema(source))
    return Error{*d};
  const bool gptq = source.format == SourceFormat::GPTQ ||
                    source.format == SourceFormat::GPTQv2;
  if (!gptq && source.format != SourceFormat::AWQ)
    return Error{concat("expected weights in the gptq, gptq_v2 or awq format, "
                        "got ",
                        toString(source.format))};
  if (source.experts > 0)
    return Error{concat("expected a dense layer (experts = 0) to convert, got ",
                        source.experts, " experts (convert each expert)")};
  InputSchema unused;
  auto check = [&](WeightOperand op, const char *name, const Tensor *t,
                   std::initializer_list<DType> dtypes) -> Status {
    if (!t)
      return Error{concat("expected the '", name, "' tensor of the schema")};
    ShapeOrDiag want = expectedShape(op, source, unused, n, k, false);
    if (want.error)
      return Error{concat(name, ": ", *want.error)};
    if (t->shape != want.shape)
      return Error{concat(name, ": expected shape ", formatShape(want.shape),
                          ", got ", formatShape(t->shape))};
    if (std::find(dtypes.begin(), dtypes.end(), t->dtype) == dtypes.end())
      return Error{concat(name, ": expected dtype ",
                          dtypeName(*dtypes.begin()), ", got ",
                          dtypeName(t->dtype))};
    return Status::success();
  };
  auto ptr = [](const std::optional<Tensor> &t) { return t ? &*t : nullptr; };
  CHECK_STATUS(check(WeightOperand::Weight, "weight", &tensors.weight,
                     {DType::I32, DType::U32}));
  const unsigned b = source.type.bits;
  const int64_t groups = source.groupsAlongK(k);
  CanonicalValues cv;
  cv.codes = gptq ? gptqCodes(tensors.weight.view(), n, k, b)
                  : awqUnpack<uint32_t>(tensors.weight.view(), k, n);
  // gptq / awq scales are channel or group scales of a 16- or 8-bit type.
  std::optional<DType> scaleDType = storageFor(source.scaleType);
  if (!scaleDType)
    return Error{concat("expected a scale type stored one per element, got ",
                        source.scaleType.str())};
  CHECK_STATUS(check(WeightOperand::Scales, "scales", ptr(tensors.scales),
                     {*scaleDType}));
  cv.scales = readScales(tensors.scales->view(), n, groups, /*transposed=*/true);
  if (source.zeroPoint == ZeroPointKind::Int) {
    CHECK_STATUS(check(WeightOperand::ZeroPoints, "zero_points",
                       ptr(tensors.zeroPoints), {DType::I32, DType::U32}));
    TensorView z = tensors.zeroPoints->view();
    cv.zeroPoints = gptq ? gptqZeros(z, n, groups, b,
                                     source.format == SourceFormat::GPTQ)
                         : awqUnpack<double>(z, groups, n);
  }
  DType param = DType::F16;
  if (source.bias) {
    if (!tensors.bias || tensors.bias->numel() != n)
      return Error{concat("bias: expected ", n, " values (one per output "
                          "channel)")};
    param = tensors.bias->dtype;
    cv.bias.resize(size_t(n));
    for (int64_t i = 0; i < n; ++i)
      cv.bias[size_t(i)] = tensors.bias->at(i);
  }
  CanonicalLayer out;
  out.weight = source;
  out.weight.format = SourceFormat::Canonical;
  Result<QuantizedWeights> q = packCanonical(out.weight, cv, n, k, param);
  if (!q)
    return Error{q.error()};
  out.tensors = q.take();
  return out;
}

namespace {
/// Rows 0, 2, 4, ... then 1, 3, 5, ... of each expert (gate then up of a
/// gate_up whose rows alternate them).
Result<LoadedLayer> deinterleaveRows(const LoadedLayer &l, DType paramDType) {
  const WeightSchema &w = l.weight;
  if (l.n % 2 != 0 || w.padN != 0)
    return Error{concat(l.module, ": expected an even number of gate and up "
                                  "rows without N padding, got N = ",
                        l.n, " (pad_n = ", w.padN, ")")};
  if (w.granularity == Granularity::Block)
    return Error{concat(l.module, ": interleaved gate and up rows with block "
                                  "scales (", w.groupN,
                        " rows per block) cannot be separated")};
  const int64_t e = std::max<int64_t>(w.experts, 1), n = l.n;
  const int64_t kp = l.k + w.padK;
  CanonicalValues in = unpackCanonical(w, l.tensors, n, kp);
  CanonicalValues out = in;
  // Row r of the result is row source(r) of the checkpoint.
  auto source = [&](int64_t r) {
    return r < n / 2 ? 2 * r : 2 * (r - n / 2) + 1;
  };
  auto permute = [&](const std::vector<double> &from, std::vector<double> &to) {
    if (from.empty() || int64_t(from.size()) % (e * n) != 0)
      return; // per expert or per tensor: no rows
    const int64_t per = int64_t(from.size()) / (e * n);
    for (int64_t ei = 0; ei < e; ++ei)
      for (int64_t r = 0; r < n; ++r)
        std::copy_n(from.begin() + ((ei * n + source(r)) * per), per,
                    to.begin() + ((ei * n + r) * per));
  };
  for (int64_t ei = 0; ei < e; ++ei)
    for (int64_t r = 0; r < n; ++r)
      std::copy_n(in.codes.begin() + ((ei * n + source(r)) * kp), kp,
                  out.codes.begin() + ((ei * n + r) * kp));
  permute(in.scales, out.scales);
  permute(in.zeroPoints, out.zeroPoints);
  permute(in.bias, out.bias);
  Result<QuantizedWeights> packed = packCanonical(w, out, n, kp, paramDType);
  if (!packed)
    return Error{concat(l.module, ": ", packed.error())};
  LoadedLayer result = l;
  result.tensors = packed.take();
  result.notes.push_back("gate and up rows de-interleaved");
  return result;
}
} // namespace

Result<LoadedMoe> loadStackedMoeExperts(const Checkpoint &checkpoint,
                                        const QuantConfig &config,
                                        const std::string &module,
                                        int64_t experts,
                                        const std::string &gateUp,
                                        const std::string &down,
                                        bool interleaved) {
  if (experts < 1 || experts > (int64_t(1) << 20))
    return Error{concat("expected 1 .. 2^20 experts, got ", experts)};
  Result<LoadedLayer> gu = loadLayer(checkpoint, config, module + "." + gateUp);
  if (!gu)
    return Error{gu.error()};
  Result<LoadedLayer> dn = loadLayer(checkpoint, config, module + "." + down);
  if (!dn)
    return Error{dn.error()};
  for (const LoadedLayer *l : {&*gu, &*dn}) {
    if (l->weight.experts != experts)
      return Error{concat(l->module, ": expected ", experts,
                          " experts in one tensor, got ",
                          l->weight.experts ? concat(l->weight.experts)
                                            : std::string("a dense layer"))};
    if (!l->kPermutation.empty())
      return Error{concat(l->module, ": expected no act-order permutation in "
                                     "a MoE layer (its kernels gather whole "
                                     "rows)")};
  }
  if (interleaved) {
    Result<LoadedLayer> split = deinterleaveRows(*gu, config.paramDType());
    if (!split)
      return Error{split.error()};
    return LoadedMoe{split.take(), dn.take()};
  }
  return LoadedMoe{gu.take(), dn.take()};
}

} // namespace humming
