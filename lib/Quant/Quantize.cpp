//===- Quantize.cpp - Reference quantization and GEMM ---------------------===//

#include "Humming/Quant/Quantize.h"
#include "Humming/Quant/Codec.h"
#include "Humming/Quant/Pack.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

namespace humming {

namespace {
/// The implicit zero of unsigned codes without a zero point.
double implicitZero(const ScalarType &t) { return double(1u << (t.bits - 1)); }

/// Value of a weight code before scaling.
double codeValue(const WeightSchema &w, uint32_t q, double zp) {
  if (w.type.isFloat() || w.type.isSigned)
    return decode(w.type, q);
  return double(q) - zp;
}

/// Code of x (the weight already divided by its scale).
uint32_t quantizeValue(const WeightSchema &w, double x, double zp) {
  if (w.type.isFloat() || w.type.isSigned)
    return encode(w.type, x);
  double hi = double((1u << w.type.bits) - 1);
  double q = w.zeroPoint == ZeroPointKind::Float ? std::nearbyint(x + zp)
                                                 : std::nearbyint(x) + zp;
  return uint32_t(std::clamp(q, 0.0, hi));
}

/// Encodes a positive scale; e8m0 rounds up to a power of two so that no
/// value overflows the weight format. Returns the decoded value.
double roundScale(const ScalarType &scaleType, double s) {
  if (!(s > 0) || !std::isfinite(s))
    s = 1.0;
  uint32_t code;
  if (scaleType.isE8M0())
    code = encode(scaleType, std::exp2(std::ceil(std::log2(s))));
  else
    code = encode(scaleType, s);
  double dec = decode(scaleType, code);
  if (!(dec > 0)) // underflow: the smallest positive scale
    dec = decode(scaleType, scaleType.isE8M0() ? 0u : 1u);
  return dec;
}

/// One set of weights sharing a scale: rows [r0, r1) x columns [c0, c1).
struct Group {
  int64_t r0, r1, c0, c1;
};

/// The scale groups of one expert in the order of the scale tensor.
std::vector<Group> scaleGroups(const WeightSchema &w, int64_t n, int64_t k) {
  std::vector<Group> groups;
  switch (w.granularity) {
  case Granularity::Tensor:
    groups.push_back({0, n, 0, k});
    break;
  case Granularity::Channel:
    for (int64_t r = 0; r < n; ++r)
      groups.push_back({r, r + 1, 0, k});
    break;
  case Granularity::Group:
  case Granularity::GroupTensor:
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < k; c += w.groupK)
        groups.push_back({r, r + 1, c, std::min(k, c + w.groupK)});
    break;
  case Granularity::Block:
    for (int64_t r = 0; r < n; r += w.groupN)
      for (int64_t c = 0; c < k; c += w.groupK)
        groups.push_back(
            {r, std::min(n, r + w.groupN), c, std::min(k, c + w.groupK)});
    break;
  }
  return groups;
}

Status checkTensor(const char *name, const Tensor &t, DType dtype,
                   const ShapeOrDiag &shape) {
  if (shape.error)
    return Error{concat(name, ": ", *shape.error)};
  if (t.dtype != dtype)
    return Error{concat(name, ": expected dtype ", dtypeName(dtype), ", got ",
                     dtypeName(t.dtype))};
  if (t.shape != shape.shape)
    return Error{concat(name, ": expected shape ", formatShape(shape.shape),
                     ", got ", formatShape(t.shape))};
  if (t.data.size() != storageBytes(t.dtype, t.numel()))
    return Error{concat(name, ": expected ", storageBytes(t.dtype, t.numel()),
                     " bytes, got ", t.data.size())};
  return Status::success();
}

bool isParamDType(DType d) { return d == DType::F16 || d == DType::BF16; }

} // namespace

Result<QuantizedWeights> packCanonical(const WeightSchema &w,
                                       const CanonicalValues &v, int64_t np,
                                       int64_t kp, DType paramDType) {
  if (Diag d = verifyWeightSchema(w))
    return Error{*d};
  if (w.format != SourceFormat::Canonical)
    return Error{concat("expected format canonical, got ", toString(w.format))};
  if (!isParamDType(paramDType))
    return Error{concat("expected F16 or BF16 as the parameter dtype, got ",
                     dtypeName(paramDType))};
  const int64_t e = std::max<int64_t>(w.experts, 1);
  const unsigned b = w.type.bits;
  InputSchema anyInput;
  auto shapeOf = [&](WeightOperand op) {
    return expectedShape(op, w, anyInput, np, kp, /*prepared=*/false);
  };
  auto sizeCheck = [&](const char *what, size_t got, int64_t want) -> Status {
    if (int64_t(got) != want)
      return Error{concat(what, ": expected ", want, " values, got ", got)};
    return Status::success();
  };
  ShapeOrDiag weightShape = shapeOf(WeightOperand::Weight);
  if (weightShape.error)
    return Error{*weightShape.error};
  if (Status s = sizeCheck("codes", v.codes.size(), e * np * kp); !s)
    return Error{s.error()};

  QuantizedWeights out;
  out.weight = Tensor(DType::I32, weightShape.shape);
  const int64_t wordsPerRow = kp * b / 32;
  for (int64_t row = 0; row < e * np; ++row) {
    std::vector<uint32_t> words = packBits(v.codes.data() + row * kp, kp, b);
    std::copy(words.begin(), words.end(),
              out.weight.as<uint32_t>() + row * wordsPerRow);
  }
  if (w.hasScaleTensor()) {
    std::optional<DType> sd = storageFor(w.scaleType);
    if (!sd)
      return Error{concat("no storage dtype for scale type ", w.scaleType.str())};
    out.scales = Tensor(*sd, shapeOf(WeightOperand::Scales).shape);
    if (Status s = sizeCheck("scales", v.scales.size(), out.scales->numel()); !s)
      return Error{s.error()};
    for (int64_t i = 0; i < out.scales->numel(); ++i)
      out.scales->set(i, v.scales[size_t(i)]);
  }
  const int64_t groupsK = w.groupsAlongK(kp);
  if (w.zeroPoint != ZeroPointKind::None) {
    ShapeOrDiag zs = shapeOf(WeightOperand::ZeroPoints);
    if (zs.error)
      return Error{*zs.error};
    if (Status s = sizeCheck("zero points", v.zeroPoints.size(), e * np * groupsK);
        !s)
      return Error{s.error()};
    if (w.zeroPoint == ZeroPointKind::Float) {
      out.zeroPoints = Tensor(paramDType, zs.shape);
      for (int64_t i = 0; i < out.zeroPoints->numel(); ++i)
        out.zeroPoints->set(i, v.zeroPoints[size_t(i)]);
    } else {
      // Per group, the N codes are packed along N.
      out.zeroPoints = Tensor(DType::I32, zs.shape);
      int64_t zRows = np * b / 32;
      for (int64_t ei = 0; ei < e; ++ei) {
        uint32_t *zw = out.zeroPoints->as<uint32_t>() + ei * zRows * groupsK;
        for (int64_t gk = 0; gk < groupsK; ++gk) {
          std::vector<uint32_t> column(static_cast<size_t>(np));
          for (int64_t r = 0; r < np; ++r)
            column[size_t(r)] =
                uint32_t(v.zeroPoints[size_t((ei * np + r) * groupsK + gk)]);
          std::vector<uint32_t> words = packBits(column.data(), np, b);
          for (int64_t wr = 0; wr < zRows; ++wr)
            zw[wr * groupsK + gk] = words[size_t(wr)];
        }
      }
    }
  }
  if (w.hasGlobalScale()) {
    out.globalScale = Tensor(DType::F32, shapeOf(WeightOperand::GlobalScale).shape);
    if (Status s = sizeCheck("global scales", v.globalScales.size(), e); !s)
      return Error{s.error()};
    for (int64_t i = 0; i < e; ++i)
      out.globalScale->set(i, v.globalScales[size_t(i)]);
  }
  if (w.bias) {
    out.bias = Tensor(paramDType, shapeOf(WeightOperand::Bias).shape);
    if (!v.bias.empty()) {
      if (Status s = sizeCheck("bias", v.bias.size(), e * np); !s)
        return Error{s.error()};
      for (int64_t i = 0; i < e * np; ++i)
        out.bias->set(i, v.bias[size_t(i)]);
    }
  }
  return out;
}

Result<QuantizedWeights> quantizeWeights(const WeightSchema &w,
                                         const double *values, int64_t n,
                                         int64_t k, const double *bias,
                                         const QuantizeOptions &opts) {
  if (Diag d = verifyWeightSchema(w))
    return Error{*d};
  if (w.format != SourceFormat::Canonical)
    return Error{concat("expected format canonical to quantize into, got ",
                     toString(w.format))};
  if (n <= 0 || k <= 0)
    return Error{concat("expected positive sizes, got N = ", n, ", K = ", k)};
  const int64_t e = std::max<int64_t>(w.experts, 1);
  const int64_t np = n + w.padN, kp = k + w.padK;
  const int64_t groupsK = w.groupsAlongK(kp);
  const double codeRange = double((1u << w.type.bits) - 1);
  const ScalarType param = *dtypeScalar(opts.paramDType == DType::BF16
                                            ? DType::BF16
                                            : DType::F16);

  CanonicalValues cv;
  cv.codes.assign(size_t(e * np * kp), 0);
  if (w.zeroPoint != ZeroPointKind::None)
    cv.zeroPoints.assign(size_t(e * np * groupsK), 0.0);
  if (w.bias)
    cv.bias.assign(size_t(e * np), 0.0);

  for (int64_t ei = 0; ei < e; ++ei) {
    auto at = [&](int64_t r, int64_t c) -> double {
      if (r >= n || c >= k)
        return 0.0; // padding
      return values[(ei * n + r) * k + c];
    };
    std::vector<Group> groups = scaleGroups(w, np, kp);
    bool useZp = w.zeroPoint != ZeroPointKind::None;

    // Raw scale of each group (before the global scale and rounding).
    std::vector<double> raw(groups.size()), lows(groups.size());
    for (size_t gi = 0; gi < groups.size(); ++gi) {
      const Group &g = groups[gi];
      double lo = 0, hi = 0, amax = 0;
      for (int64_t r = g.r0; r < g.r1; ++r)
        for (int64_t c = g.c0; c < g.c1; ++c) {
          double v = at(r, c);
          lo = std::min(lo, v);
          hi = std::max(hi, v);
          amax = std::max(amax, std::fabs(v));
        }
      raw[gi] = useZp ? (hi - lo) / codeRange : amax / symmetricMax(w.type);
      lows[gi] = lo;
    }

    // The global scale: the whole scale for tensor granularity; otherwise it
    // brings narrow (fp8) group scales into their range.
    double gs = 1.0;
    if (w.granularity == Granularity::Tensor) {
      gs = raw[0];
    } else if (w.hasGlobalScale() &&
               (w.scaleType == ScalarType::e4m3() ||
                w.scaleType == ScalarType::e5m2())) {
      double maxRaw = *std::max_element(raw.begin(), raw.end());
      gs = maxRaw / maxValue(w.scaleType);
    }
    if (!(gs > 0) || !std::isfinite(gs))
      gs = 1.0;
    gs = double(float(gs));
    if (w.hasGlobalScale())
      cv.globalScales.push_back(gs);

    for (size_t gi = 0; gi < groups.size(); ++gi) {
      const Group &g = groups[gi];
      double s = w.granularity == Granularity::Tensor
                     ? 1.0
                     : roundScale(w.scaleType, raw[gi] / gs);
      double scale = s * gs;
      double zp = w.type.isInt() && !w.type.isSigned ? implicitZero(w.type) : 0;
      if (w.zeroPoint == ZeroPointKind::Int)
        zp = std::clamp(std::nearbyint(-lows[gi] / scale), 0.0, codeRange);
      else if (w.zeroPoint == ZeroPointKind::Float)
        zp = decode(param, encode(param, -lows[gi] / scale));
      if (w.hasScaleTensor())
        cv.scales.push_back(s); // groups are in scale-tensor order
      if (useZp) {
        int64_t column = w.granularity == Granularity::Channel ? 0
                                                                : g.c0 / w.groupK;
        cv.zeroPoints[size_t((ei * np + g.r0) * groupsK + column)] = zp;
      }
      for (int64_t r = g.r0; r < g.r1; ++r)
        for (int64_t c = g.c0; c < g.c1; ++c)
          cv.codes[size_t((ei * np + r) * kp + c)] =
              quantizeValue(w, at(r, c) / scale, zp);
    }
    if (w.bias)
      for (int64_t r = 0; r < n; ++r)
        cv.bias[size_t(ei * np + r)] = bias ? bias[ei * n + r] : 0.0;
  }
  return packCanonical(w, cv, np, kp, opts.paramDType);
}

namespace {
/// The checks of every weight-side tensor but the bias.
Status checkWeightTensors(const WeightSchema &w, const QuantizedWeights &q,
                          int64_t n, int64_t k) {
  if (Diag d = verifyWeightSchema(w))
    return Error{*d};
  if (w.format != SourceFormat::Canonical)
    return Error{concat("expected format canonical to dequantize, got ",
                     toString(w.format), " (convert it with an adapter first)")};
  const int64_t np = n + w.padN, kp = k + w.padK;
  InputSchema anyInput;
  auto shapeOf = [&](WeightOperand op) {
    return expectedShape(op, w, anyInput, np, kp, false);
  };
  if (Status s = checkTensor("weight", q.weight, DType::I32,
                             shapeOf(WeightOperand::Weight));
      !s)
    return Error{s.error()};
  if (w.hasScaleTensor()) {
    if (!q.scales)
      return Error{concat("scales: missing (the schema has ",
                       toString(w.granularity), " scales)")};
    if (Status s = checkTensor("scales", *q.scales, *storageFor(w.scaleType),
                               shapeOf(WeightOperand::Scales));
        !s)
      return Error{s.error()};
  }
  if (w.zeroPoint != ZeroPointKind::None) {
    if (!q.zeroPoints)
      return Error{std::string("zero_points: missing (the schema has a zero "
                               "point)")};
    DType zd = w.zeroPoint == ZeroPointKind::Int ? DType::I32
                                                 : q.zeroPoints->dtype;
    if (w.zeroPoint == ZeroPointKind::Float && !isParamDType(zd))
      return Error{concat("zero_points: expected dtype F16 or BF16, got ",
                       dtypeName(zd))};
    if (Status s = checkTensor("zero_points", *q.zeroPoints, zd,
                               shapeOf(WeightOperand::ZeroPoints));
        !s)
      return Error{s.error()};
  }
  if (w.hasGlobalScale()) {
    if (!q.globalScale)
      return Error{std::string("global_scale: missing (the schema has a "
                               "global scale)")};
    if (Status s = checkTensor("global_scale", *q.globalScale, DType::F32,
                               shapeOf(WeightOperand::GlobalScale));
        !s)
      return Error{s.error()};
  }
  return Status::success();
}
} // namespace

Status checkQuantizedTensors(const WeightSchema &w, const QuantizedWeights &q,
                             int64_t n, int64_t k, DType paramDType) {
  if (Status s = checkWeightTensors(w, q, n, k); !s)
    return s;
  if (!w.bias)
    return Status::success();
  if (!q.bias)
    return Error{"bias: missing (the schema has bias = true)"};
  return checkTensor("bias", *q.bias, paramDType,
                     expectedShape(WeightOperand::Bias, w, InputSchema{},
                                   n + w.padN, k + w.padK, false));
}

Result<std::vector<double>> dequantizeWeights(const WeightSchema &w,
                                              const QuantizedWeights &q,
                                              int64_t n, int64_t k) {
  if (Status s = checkWeightTensors(w, q, n, k); !s)
    return Error{s.error()};
  const int64_t e = std::max<int64_t>(w.experts, 1);
  const int64_t np = n + w.padN, kp = k + w.padK;
  const unsigned b = w.type.bits;
  const int64_t wordsPerRow = kp * b / 32;
  const int64_t groupsK = w.groupsAlongK(kp);
  std::vector<double> out(size_t(e * n * k));
  for (int64_t ei = 0; ei < e; ++ei) {
    double gs = q.globalScale ? q.globalScale->at(ei) : 1.0;
    const uint32_t *words = q.weight.as<uint32_t>() + ei * np * wordsPerRow;
    for (int64_t r = 0; r < n; ++r) {
      for (int64_t c = 0; c < k; ++c) {
        int64_t g = w.granularity == Granularity::Channel ||
                            w.granularity == Granularity::Tensor
                        ? 0
                        : c / w.groupK;
        double s = 1.0;
        if (w.granularity == Granularity::Block) {
          int64_t cols = ceilDiv(kp, w.groupK);
          s = q.scales->at((ei * ceilDiv(np, w.groupN) + r / w.groupN) * cols +
                           c / w.groupK);
        } else if (w.hasScaleTensor()) {
          s = q.scales->at((ei * np + r) * groupsK + g);
        }
        double zp = w.type.isInt() && !w.type.isSigned ? implicitZero(w.type)
                                                       : 0.0;
        if (w.zeroPoint == ZeroPointKind::Int) {
          int64_t zRows = np * b / 32;
          const uint32_t *zw =
              q.zeroPoints->as<uint32_t>() + ei * zRows * groupsK;
          // Code r of the N-packed column g: word (r*b)/32 of that column.
          uint64_t bit = uint64_t(r) * b;
          uint32_t lo = zw[int64_t(bit / 32) * groupsK + g];
          uint64_t window = lo;
          if ((bit % 32) + b > 32)
            window |= uint64_t(zw[int64_t(bit / 32 + 1) * groupsK + g]) << 32;
          zp = double((window >> (bit % 32)) & ((1u << b) - 1));
        } else if (w.zeroPoint == ZeroPointKind::Float) {
          zp = q.zeroPoints->at((ei * np + r) * groupsK + g);
        }
        uint32_t code = packedCodeAt(words + r * wordsPerRow, c, b);
        out[size_t((ei * n + r) * k + c)] = codeValue(w, code, zp) * s * gs;
      }
    }
  }
  return out;
}

std::vector<double> biasValues(const WeightSchema &w, const QuantizedWeights &q,
                               int64_t n) {
  std::vector<double> out;
  if (!w.bias || !q.bias)
    return out;
  int64_t e = std::max<int64_t>(w.experts, 1), np = n + w.padN;
  out.resize(size_t(e * n));
  for (int64_t ei = 0; ei < e; ++ei)
    for (int64_t r = 0; r < n; ++r)
      out[size_t(ei * n + r)] = q.bias->at(ei * np + r);
  return out;
}

Result<QuantizedActivations> quantizeActivations(const InputSchema &in,
                                                 const double *x, int64_t m,
                                                 int64_t k,
                                                 std::optional<float> staticScale) {
  if (Diag d = verifyInputSchema(in))
    return Error{*d};
  if (in.scaling == ActScaling::None)
    return Error{concat("expected 8- or 4-bit activations to quantize, got ",
                     in.type.str())};
  if (in.scaling == ActScaling::Static && !(staticScale && *staticScale > 0))
    return Error{std::string("expected a positive static activation scale")};
  QuantizedActivations q;
  q.codes.resize(size_t(m * k));
  const double qmax = maxValue(in.type);
  const int64_t g = in.scaling == ActScaling::Group ? in.groupK : k;
  const int64_t groups = in.scaling == ActScaling::Group ? ceilDiv(k, g) : 1;
  if (in.scaling == ActScaling::Static)
    q.scales.push_back(*staticScale);
  else
    q.scales.resize(size_t(m * groups));
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t gi = 0; gi < groups; ++gi) {
      int64_t c0 = gi * g, c1 = std::min(k, c0 + g);
      float s;
      if (in.scaling == ActScaling::Static) {
        s = *staticScale;
      } else {
        double amax = 0;
        for (int64_t c = c0; c < c1; ++c)
          amax = std::max(amax, std::fabs(x[r * k + c]));
        s = float(amax / qmax);
        if (!(s > 0))
          s = 1.0f;
        q.scales[size_t(r * groups + gi)] = s;
      }
      // The quotient rounded to f32, as the GPU kernel (and torch)
      // computes it, then rounded once more to the activation type.
      for (int64_t c = c0; c < c1; ++c)
        q.codes[size_t(r * k + c)] =
            encode(in.type, double(float(x[r * k + c]) / s));
    }
  }
  return q;
}

std::vector<double> dequantizeActivations(const InputSchema &in,
                                          const QuantizedActivations &q,
                                          int64_t m, int64_t k) {
  std::vector<double> out(size_t(m * k));
  const int64_t g = in.scaling == ActScaling::Group ? in.groupK : k;
  const int64_t groups = in.scaling == ActScaling::Group ? ceilDiv(k, g) : 1;
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c < k; ++c) {
      double s = in.scaling == ActScaling::Static
                     ? q.scales[0]
                     : q.scales[size_t(r * groups + c / g)];
      out[size_t(r * k + c)] = decode(in.type, q.codes[size_t(r * k + c)]) * s;
    }
  return out;
}

std::vector<double> referenceGemm(const double *a, const double *w,
                                  const double *bias, int64_t m, int64_t n,
                                  int64_t k) {
  std::vector<double> out(size_t(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = bias ? bias[j] : 0.0;
      const double *ar = a + i * k, *wr = w + j * k;
      for (int64_t c = 0; c < k; ++c)
        acc += ar[c] * wr[c];
      out[size_t(i * n + j)] = acc;
    }
  return out;
}

Result<Routing> alignBlockSize(const std::vector<int32_t> &topkIds, int64_t m,
                               int64_t topK, int64_t experts, int64_t blockM) {
  if (int64_t(topkIds.size()) != m * topK)
    return Error{concat("expected ", m * topK, " top-k ids (M * top_k), got ",
                     topkIds.size())};
  if (blockM <= 0 || topK <= 0 || experts <= 0)
    return Error{concat("expected positive block_m, top_k and experts, got ",
                     blockM, ", ", topK, ", ", experts)};
  Routing r;
  r.type = GemmType::Indexed;
  r.topK = topK;
  r.blockM = blockM;
  std::vector<std::vector<int32_t>> perExpert(static_cast<size_t>(experts));
  for (size_t i = 0; i < topkIds.size(); ++i) {
    int32_t e = topkIds[i];
    if (e < 0 || e >= experts)
      return Error{concat("top-k id ", i, " selects expert ", e,
                       ", outside [0, ", experts, ")")};
    perExpert[size_t(e)].push_back(int32_t(i));
  }
  const int32_t sentinel = int32_t(m * topK);
  for (int64_t e = 0; e < experts; ++e) {
    auto &ids = perExpert[size_t(e)];
    int64_t blocks = ceilDiv(int64_t(ids.size()), blockM);
    for (int64_t bi = 0; bi < blocks; ++bi) {
      r.expertIds.push_back(int32_t(e));
      for (int64_t j = 0; j < blockM; ++j) {
        size_t idx = size_t(bi * blockM + j);
        r.sortedIds.push_back(idx < ids.size() ? ids[idx] : sentinel);
      }
    }
  }
  r.numTokensPadded = int32_t(r.sortedIds.size());
  return r;
}

Result<std::vector<double>> referenceMoeGemm(const Routing &rt,
                                             const double *a, int64_t rows,
                                             const double *w,
                                             const double *bias,
                                             int64_t experts, int64_t n,
                                             int64_t k) {
  auto rowTimesExpert = [&](const double *arow, int64_t e, double *out) {
    const double *we = w + e * n * k;
    for (int64_t j = 0; j < n; ++j) {
      double acc = bias ? bias[e * n + j] : 0.0;
      for (int64_t c = 0; c < k; ++c)
        acc += arow[c] * we[j * k + c];
      out[j] = acc;
    }
  };
  std::vector<double> out;
  switch (rt.type) {
  case GemmType::Dense:
    return Error{std::string("expected a MoE routing, got dense")};
  case GemmType::Indexed: {
    int64_t outRows = rows * rt.topK;
    out.assign(size_t(outRows * n), 0.0);
    if (rt.numTokensPadded < 0 ||
        rt.numTokensPadded > int64_t(rt.sortedIds.size()))
      return Error{concat("num_tokens_padded ", rt.numTokensPadded,
                       " exceeds the ", rt.sortedIds.size(), " sorted ids")};
    for (int64_t i = 0; i < rt.numTokensPadded; ++i) {
      int32_t id = rt.sortedIds[size_t(i)];
      if (id < 0)
        return Error{concat("sorted_ids[", i, "] = ", id, " is negative")};
      if (id >= outRows)
        continue; // padding sentinel
      size_t block = size_t(i / rt.blockM);
      if (block >= rt.expertIds.size())
        return Error{concat("sorted_ids[", i, "] lies in m-block ", block,
                         " but there are only ", rt.expertIds.size(),
                         " expert ids")};
      int32_t e = rt.expertIds[block];
      if (e < 0 || e >= experts)
        return Error{concat("expert_ids[", block, "] = ", e, " is outside [0, ",
                         experts, ")")};
      rowTimesExpert(a + (id / rt.topK) * k, e, out.data() + id * n);
    }
    return out;
  }
  case GemmType::GroupedContiguous: {
    if (int64_t(rt.expertLayout.size()) != experts + 1)
      return Error{concat("expected ", experts + 1, " expert offsets, got ",
                       rt.expertLayout.size())};
    out.assign(size_t(rows * n), 0.0);
    for (int64_t e = 0; e < experts; ++e) {
      int64_t lo = rt.expertLayout[size_t(e)], hi = rt.expertLayout[size_t(e + 1)];
      if (lo < 0 || hi < lo || hi > rows)
        return Error{concat("expert offsets [", e, "], [", e + 1, "] = ", lo,
                         ", ", hi, " are not ascending within [0, ", rows, "]")};
      for (int64_t r = lo; r < hi; ++r)
        rowTimesExpert(a + r * k, e, out.data() + r * n);
    }
    return out;
  }
  case GemmType::GroupedMasked: {
    if (int64_t(rt.expertLayout.size()) != experts)
      return Error{concat("expected ", experts, " expert counts, got ",
                       rt.expertLayout.size())};
    if (rt.maxTokens * experts != rows)
      return Error{concat("expected E * max_tokens = ", experts * rt.maxTokens,
                       " activation rows, got ", rows)};
    out.assign(size_t(rows * n), 0.0);
    for (int64_t e = 0; e < experts; ++e) {
      int64_t count = rt.expertLayout[size_t(e)];
      if (count < 0 || count > rt.maxTokens)
        return Error{concat("expert ", e, " has ", count, " tokens, outside [0, ",
                         rt.maxTokens, "]")};
      for (int64_t r = e * rt.maxTokens; r < e * rt.maxTokens + count; ++r)
        rowTimesExpert(a + r * k, e, out.data() + r * n);
    }
    return out;
  }
  }
  return out;
}

Result<Padding> kernelPadding(const WeightSchema &w, const InputSchema &in,
                              int64_t n, int64_t k) {
  const int64_t aBits = int64_t(in.type.bits);
  const int64_t piece = 128 / aBits; // elements per 16-byte row piece
  if (k % piece != 0)
    return Error{concat("expected K to be a multiple of ", piece, " with ",
                        in.type.str(),
                        " activations (their rows are copied in 16-byte "
                        "pieces), got ",
                        k, ": the layer cannot pad it; pad the activations' "
                        "rows and the weights' K yourself (pad_k)")};
  int64_t kAlign = 512 / aBits;
  if ((w.granularity == Granularity::Group ||
       w.granularity == Granularity::GroupTensor ||
       w.granularity == Granularity::Block) &&
      w.groupK > 0)
    kAlign = std::lcm(kAlign, w.groupK);
  if (in.scaling == ActScaling::Group && in.groupK > 0)
    kAlign = std::lcm(kAlign, in.groupK);
  Padding p;
  p.n = ceilDiv(n, 64) * 64 - n;
  p.k = ceilDiv(k, kAlign) * kAlign - k;
  return p;
}

Result<QuantizedWeights> padCanonicalTensors(const WeightSchema &padded,
                                             QuantizedWeights q, int64_t n,
                                             int64_t k) {
  if (padded.format != SourceFormat::Canonical || padded.experts != 0)
    return Error{concat("expected a dense canonical schema to pad tensors "
                        "for, got format ",
                        toString(padded.format), " with ", padded.experts,
                        " experts")};
  WeightSchema bare = padded;
  bare.padN = bare.padK = 0;
  const int64_t np = n + padded.padN, kp = k + padded.padK;
  // Groups along K: whole ones (a partial last group has no scale of its
  // own in the unpadded tensors' shapes).
  // (Blocks keep a partial last block of their own in either shape.)
  if ((padded.granularity == Granularity::Group ||
       padded.granularity == Granularity::GroupTensor) &&
      padded.groupK > 0 && k % padded.groupK != 0)
    return Error{concat("expected K (", k, ") to be a multiple of the group "
                        "size ", padded.groupK,
                        " to pad unpadded tensors (the last group would be "
                        "partial); pass tensors of the padded K (",
                        kp, ")")};
  // One tensor: the unpadded shape's block copied to the top left of the
  // padded shape (2-D, or a row for 1-D), the rest `fill`.
  auto pad = [&](const char *name, Tensor &t, WeightOperand op,
                 double fill) -> Status {
    ShapeOrDiag from = expectedShape(op, bare, InputSchema{}, n, k, false);
    ShapeOrDiag to = expectedShape(op, padded, InputSchema{}, np, kp, false);
    if (from.error || to.error)
      return Error{concat(name, ": ", from.error ? *from.error : *to.error)};
    if (t.shape != from.shape)
      return Error{concat(name, ": expected the unpadded shape ",
                          formatShape(from.shape), " (the layer pads it to ",
                          formatShape(to.shape), "), got ",
                          formatShape(t.shape))};
    const unsigned bits = dtypeBits(t.dtype);
    if (bits % 8 != 0 || size_t(t.numel()) * (bits / 8) != t.data.size())
      return Error{concat(name, ": expected whole-byte elements, got ",
                          dtypeName(t.dtype))};
    const size_t bytes = bits / 8;
    uint64_t pattern = 0;
    if (fill != 0) {
      std::optional<ScalarType> st = dtypeScalar(t.dtype);
      if (!st || !st->isFloat())
        return Error{concat(name, ": expected a float dtype, got ",
                            dtypeName(t.dtype))};
      pattern = encode(*st, fill);
    }
    const int64_t rows = from.shape.size() == 2 ? from.shape[0] : 1;
    const int64_t cols = from.shape.back();
    const int64_t outCols = to.shape.back();
    Tensor out(t.dtype, to.shape);
    for (size_t e = 0; e < size_t(out.numel()); ++e)
      for (size_t byte = 0; byte < bytes; ++byte)
        out.data[e * bytes + byte] = uint8_t(pattern >> (8 * byte));
    for (int64_t r = 0; r < rows; ++r)
      std::copy_n(t.data.data() + size_t(r * cols) * bytes,
                  size_t(cols) * bytes,
                  out.data.data() + size_t(r * outCols) * bytes);
    t = std::move(out);
    return Status::success();
  };
  if (Status s = pad("weight", q.weight, WeightOperand::Weight, 0); !s)
    return Error{s.error()};
  if (q.scales)
    if (Status s = pad("scales", *q.scales, WeightOperand::Scales, 1.0); !s)
      return Error{s.error()};
  if (q.zeroPoints)
    if (Status s = pad("zero_points", *q.zeroPoints,
                       WeightOperand::ZeroPoints, 0);
        !s)
      return Error{s.error()};
  if (q.bias)
    if (Status s = pad("bias", *q.bias, WeightOperand::Bias, 0); !s)
      return Error{s.error()};
  return q;
}

Result<ShardedWeights> shardCanonical(const WeightSchema &w,
                                      const QuantizedWeights &q, int64_t n,
                                      int64_t k, TensorParallel parallel,
                                      int64_t rank, int64_t size) {
  const bool column = parallel == TensorParallel::Column;
  const char *dim = column ? "N" : "K";
  if (size < 1 || rank < 0 || rank >= size)
    return Error{concat("expected a tensor-parallel rank in 0 .. size - 1 "
                        "and size >= 1, got rank ",
                        rank, " of ", size)};
  if (w.format != SourceFormat::Canonical || w.experts != 0 || w.padN != 0 ||
      w.padK != 0)
    return Error{concat("expected a dense, canonical, unpadded schema to "
                        "shard, got format ",
                        toString(w.format), ", ", w.experts, " experts, pad ",
                        w.padN, " x ", w.padK)};
  const int64_t whole = column ? n : k;
  if (whole % size != 0)
    return Error{concat("expected ", dim, " (", whole,
                        ") to divide into ", size, " shards")};
  const int64_t part = whole / size, first = rank * part;
  const int64_t b = w.type.bits;
  // What a boundary must not cut, along the sharded dimension.
  auto aligned = [&](int64_t unit, const std::string &what) -> Status {
    if (unit > 1 && part % unit != 0)
      return Error{concat("a shard of ", part, " along ", dim, " (", dim,
                          " = ", whole, " over ", size, " ranks) would cut ",
                          what,
                          " (", unit, " along ", dim,
                          "): expected shards of a multiple of ", unit)};
    return Status::success();
  };
  if (column) {
    if (w.zeroPoint == ZeroPointKind::Int)
      if (Status s = aligned(32 / std::gcd<int64_t>(32, b),
                             "a packed zero-point word");
          !s)
        return Error{s.error()};
    if (w.granularity == Granularity::Block)
      if (Status s = aligned(w.groupN, "a scale block"); !s)
        return Error{s.error()};
  } else {
    if (Status s = aligned(32 / std::gcd<int64_t>(32, b), "a packed weight word");
        !s)
      return Error{s.error()};
    if (w.hasPerKScales() || w.granularity == Granularity::Block)
      if (Status s = aligned(w.groupK, "a scale group"); !s)
        return Error{s.error()};
  }
  ShardedWeights out;
  out.schema = w;
  out.n = column ? part : n;
  out.k = column ? k : part;
  // The sub-block [r0, r0 + rows) x [c0, c0 + cols) of a 2-D tensor (the
  // last dimension is columns; 1-D tensors are one row).
  auto block = [](const Tensor &t, int64_t r0, int64_t rows, int64_t c0,
                  int64_t cols) {
    const int64_t allCols = t.shape.back();
    const size_t bytes = dtypeBits(t.dtype) / 8;
    Tensor o(t.dtype, t.shape.size() == 1 ? std::vector<int64_t>{cols}
                                          : std::vector<int64_t>{rows, cols});
    for (int64_t r = 0; r < rows; ++r)
      std::copy_n(t.data.data() + size_t((r0 + r) * allCols + c0) * bytes,
                  size_t(cols) * bytes,
                  o.data.data() + size_t(r * cols) * bytes);
    return o;
  };
  for (const Tensor *t : {&q.weight, q.scales ? &*q.scales : nullptr,
                          q.zeroPoints ? &*q.zeroPoints : nullptr,
                          q.bias ? &*q.bias : nullptr})
    if (t && (dtypeBits(t->dtype) % 8 != 0 || t->shape.empty() ||
              t->shape.size() > 2))
      return Error{concat("expected canonical tensors of whole-byte "
                          "elements and one or two dimensions, got ",
                          dtypeName(t->dtype), " ", formatShape(t->shape))};
  if (Status s = checkQuantizedTensors(
          w, q, n, k, q.bias ? q.bias->dtype : DType::F16);
      !s)
    return Error{s.error()};
  const int64_t groups = w.groupsAlongK(k);
  // Weight [N, K b / 32]; scales [N, groups] (block: [N / gn, K / gk]);
  // zero points [N b / 32, groups] (int) or [N, groups] (float); bias [N].
  if (column) {
    out.tensors.weight = block(q.weight, first, part, 0, k * b / 32);
    if (q.scales) {
      if (w.granularity == Granularity::Block)
        out.tensors.scales = block(*q.scales, first / w.groupN,
                                   part / w.groupN, 0, q.scales->shape[1]);
      else
        out.tensors.scales =
            block(*q.scales, first, part, 0, q.scales->shape[1]);
    }
    if (q.zeroPoints) {
      if (w.zeroPoint == ZeroPointKind::Int)
        out.tensors.zeroPoints = block(*q.zeroPoints, first * b / 32,
                                       part * b / 32, 0, groups);
      else
        out.tensors.zeroPoints = block(*q.zeroPoints, first, part, 0, groups);
    }
    if (q.bias)
      out.tensors.bias = block(*q.bias, 0, 1, first, part);
  } else {
    out.tensors.weight = block(q.weight, 0, n, first * b / 32, part * b / 32);
    auto groupCols = [&](const Tensor &t) {
      if (!w.hasPerKScales() && w.granularity != Granularity::Block)
        return t; // one column (channel) or none
      return block(t, 0, t.shape[0], first / w.groupK, part / w.groupK);
    };
    if (q.scales)
      out.tensors.scales = groupCols(*q.scales);
    if (q.zeroPoints)
      out.tensors.zeroPoints = groupCols(*q.zeroPoints);
    if (q.bias) {
      out.tensors.bias = *q.bias;
      if (rank != 0)
        std::fill(out.tensors.bias->data.begin(), out.tensors.bias->data.end(),
                  uint8_t(0));
    }
  }
  out.tensors.globalScale = q.globalScale;
  return out;
}

} // namespace humming
