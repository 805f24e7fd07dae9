//===- CApi.cpp - The C API of humming::Layer -----------------------------===//

#include "humming-c/humming.h"

#include "Humming/API/ActivationQuantizer.h"
#include "Humming/API/MoeLayer.h"
#include "Humming/API/MoeRouter.h"
#include "Humming/API/Layer.h"
#include "Humming/Quant/Adapters.h"
#include "Humming/Quant/PreparedLayout.h"
#include "Humming/Quant/Safetensors.h"
#include "Humming/Runtime/StreamScratch.h"
#include "Humming/Target/ArchInfo.h"
#include "Humming/Target/TileHeuristics.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace humming;

struct humming_quantizer {
  ActivationQuantizer quantizer;
};

struct humming_moe_layer {
  MoeLayer layer;
  /// humming_moe_layer_set_streams (LayerTarget::streams).
  int64_t streams = LayerTarget{}.streams;
};

struct humming_moe_grouping {
  MoeGrouping grouping;
};

struct humming_layer {
  Layer layer;
  /// humming_layer_compiler_reports' text (after the last transform).
  std::string reports;
  /// humming_layer_set_activation_rows (LayerTarget::activationRows).
  int64_t activationRows = 0;
  /// humming_layer_set_activations_gathered.
  bool activationsGathered = false;
  /// humming_layer_set_streams (LayerTarget::streams).
  int64_t streams = LayerTarget{}.streams;
  /// humming_layer_set_probe (LayerTarget::probe).
  FirstUseProbe probe = FirstUseProbe::Auto;
};

namespace {
thread_local std::string lastError;

int fail(std::string message) {
  lastError = std::move(message);
  return 1;
}
int ok() {
  lastError.clear();
  return 0;
}
int check(const Status &s) { return s ? ok() : fail(s.error()); }

/// The type `text` names if it is one of `allowed`, else why not: "<arg>:
/// expected <names>, got '<text>'".
Result<ScalarType> typeAmong(const char *arg, const char *text,
                             std::initializer_list<ScalarType> allowed,
                             const char *names) {
  std::optional<ScalarType> t = text ? ScalarType::parse(text) : std::nullopt;
  if (t && std::find(allowed.begin(), allowed.end(), *t) != allowed.end())
    return *t;
  return Error{concat(arg, ": expected ", names, ", got '",
                      text ? text : "(null)", "'")};
}

/// A 16-bit activation type named by a C caller ("f16" or "bf16").
Result<ScalarType> sixteenBitActivation(const char *text) {
  return typeAmong("activation", text, {ScalarType::f16(), ScalarType::bf16()},
                   "f16 or bf16");
}

/// The target a C caller names (NULL: none).
LayerTarget targetOf(const char *device, const char *chip, int compileOnly) {
  LayerTarget target;
  target.device = device ? device : "";
  target.chip = chip ? chip : "";
  target.compileOnly = compileOnly != 0;
  return target;
}

/// Hands a created layer to the caller through `out`.
int handOut(Result<Layer> layer, humming_layer **out) {
  if (!layer)
    return fail(layer.error());
  *out = new humming_layer{layer.take(), {}};
  return ok();
}

template <typename Enum, size_t N>
bool parseEnum(const char *text, const Enum (&values)[N], Enum &out) {
  for (Enum v : values)
    if (std::strcmp(text, toString(v)) == 0) {
      out = v;
      return true;
    }
  return false;
}

/// The host schema of a C description, or an error naming the field.
Result<WeightSchema> toSchema(const humming_weight_schema &c) {
  WeightSchema w;
  if (!c.type || !ScalarType::parse(c.type))
    return Error{concat("weight.type: expected an element type such as "
                        "uint4, int8, e4m3 or e2m1, got '",
                        c.type ? c.type : "(null)", "'")};
  w.type = *ScalarType::parse(c.type);
  if (!c.scale_type || !ScalarType::parse(c.scale_type))
    return Error{concat("weight.scale_type: expected f16, bf16, e4m3, e5m2, "
                        "ue8m0 or f32, got '",
                        c.scale_type ? c.scale_type : "(null)", "'")};
  w.scaleType = *ScalarType::parse(c.scale_type);
  const Granularity grans[] = {Granularity::Channel, Granularity::Group,
                               Granularity::Block, Granularity::Tensor,
                               Granularity::GroupTensor};
  if (!c.granularity || !parseEnum(c.granularity, grans, w.granularity))
    return Error{concat("weight.granularity: expected channel, group, block, "
                        "tensor or group_tensor, got '",
                        c.granularity ? c.granularity : "(null)", "'")};
  const ZeroPointKind zps[] = {ZeroPointKind::None, ZeroPointKind::Int,
                               ZeroPointKind::Float};
  if (c.zero_point && !parseEnum(c.zero_point, zps, w.zeroPoint))
    return Error{concat("weight.zero_point: expected none, int or float, got '",
                        c.zero_point, "'")};
  w.groupK = c.group_k;
  w.groupN = c.group_n;
  w.bias = c.bias != 0;
  w.padN = c.pad_n;
  w.padK = c.pad_k;
  return w;
}
/// The weight schema of a humming_layer_create* call, its pointers checked
/// and `*out` cleared first.
Result<WeightSchema> creationArgs(const humming_weight_schema *weight,
                                  humming_layer **out) {
  if (!weight || !out)
    return Error{"expected a weight schema and an output pointer, got NULL"};
  *out = nullptr;
  return toSchema(*weight);
}

/// One module of a checkpoint in the canonical form, runnable by a Layer
/// (with its act-order permutation, if any; `act` gets the model's 16-bit
/// type).
Result<LoadedLayer> loadCheckpointLayer(const char *dir, const char *module,
                                        ScalarType &act) {
  if (!dir || !module)
    return Error{"expected a checkpoint directory and a module name, got NULL"};
  Result<OpenedCheckpoint> opened = openCheckpoint(dir);
  if (!opened)
    return Error{opened.error()};
  Result<LoadedLayer> layer =
      loadLayer(opened->checkpoint, opened->config, module);
  if (!layer)
    return Error{layer.error()};
  act = opened->activation();
  return layer;
}

/// The checkpoint that `count` host tensors and a config.json text make:
/// one in-memory safetensors file whose tensors are named `prefix` + their
/// names (as a directory's would be), read by the same adapters. Errors
/// name the tensor and what was expected.
Result<OpenedCheckpoint> checkpointFromTensors(const char *configJson,
                                               const humming_tensor *tensors,
                                               int64_t count,
                                               const std::string &prefix) {
  Result<Json> config = parseJson(configJson);
  if (!config)
    return Error{concat("config: ", config.error())};
  std::vector<std::pair<std::string, TensorView>> views;
  for (int64_t i = 0; i < count; ++i) {
    const humming_tensor &t = tensors[i];
    const std::string where = concat("tensor ", i, " (",
                                     t.name ? t.name : "(null)", ")");
    if (!t.name || !*t.name)
      return Error{concat("tensor ", i, ": expected a name, got ",
                          t.name ? "''" : "NULL")};
    for (const auto &[have, view] : views)
      if (have == prefix + t.name)
        return Error{concat(where, ": the name is given twice")};
    std::optional<DType> dtype = t.dtype ? parseDType(t.dtype) : std::nullopt;
    if (!dtype)
      return Error{concat(where, ": expected a safetensors dtype such as I32, "
                                 "F16, BF16, F32, U8, F8_E4M3, got '",
                          t.dtype ? t.dtype : "(null)", "'")};
    if (t.rank < 0 || t.rank > 8 || (t.rank > 0 && !t.shape))
      return Error{concat(where, ": expected a rank of 0 to 8 with its shape, "
                                 "got rank ",
                          t.rank, t.shape ? "" : " and no shape")};
    TensorView v;
    v.dtype = *dtype;
    for (int64_t d = 0; d < t.rank; ++d) {
      if (t.shape[d] < 0 || t.shape[d] > (int64_t(1) << 40))
        return Error{concat(where, ": dimension ", d,
                            " is out of range: ", t.shape[d])};
      v.shape.push_back(t.shape[d]);
    }
    const size_t need = storageBytes(v.dtype, v.numel());
    if (t.bytes != need || (need && !t.data))
      return Error{concat(where, ": expected ", need, " bytes of ", t.dtype,
                          " data, got ", t.data ? t.bytes : 0)};
    v.data = static_cast<const uint8_t *>(t.data);
    v.nbytes = need;
    views.emplace_back(prefix + t.name, v);
  }
  Result<SafetensorsFile> file =
      SafetensorsFile::fromBytes(serializeSafetensors(views), "tensors");
  if (!file)
    return Error{file.error()};
  std::vector<SafetensorsFile> files;
  files.push_back(file.take());
  Result<Checkpoint> checkpoint = Checkpoint::fromParts(
      "(tensors)", config.take(), nullptr, std::move(files));
  if (!checkpoint)
    return Error{checkpoint.error()};
  return openCheckpoint(checkpoint.take());
}

int checkShardArgs(const char *parallel, const char *activations);
/// The layer (or rank `rank`'s shard of it) of a converted checkpoint module,
/// with 16-bit `model` activations or the checkpoint's own
/// (humming_layer_create_from_checkpoint_shard's arguments, checked).
int createFromLoaded(LoadedLayer loaded, ScalarType model, const char *module,
                     const char *parallel, int64_t rank, int64_t size,
                     const char *activations, humming_layer **out);

} // namespace

extern "C" {

const char *humming_last_error(void) { return lastError.c_str(); }

int humming_layer_create(int64_t n, int64_t k,
                         const humming_weight_schema *weight,
                         const char *activation, int f16Accumulation,
                         humming_layer **out) {
  Result<WeightSchema> w = creationArgs(weight, out);
  if (!w)
    return fail(w.error());
  Result<ScalarType> act = sixteenBitActivation(activation);
  if (!act)
    return fail(act.error());
  ComputeOptions compute;
  compute.f16Accumulation = f16Accumulation != 0;
  return handOut(Layer::create(n, k, *w, InputSchema{*act, ActScaling::None, 0},
                               compute, *act),
                 out);
}

} // extern "C"

namespace {
/// The MoE options of humming_layer_create_moe's arguments.
Result<MoeOptions> moeOptions(const char *routing, int64_t topK,
                              int64_t blockSize, int routerWeights) {
  MoeOptions moe;
  const GemmType routings[] = {GemmType::Indexed, GemmType::GroupedContiguous,
                               GemmType::GroupedMasked};
  if (!routing || !parseEnum(routing, routings, moe.routing))
    return Error{concat("routing: expected indexed, grouped_contiguous or "
                        "grouped_masked, got '",
                        routing ? routing : "(null)", "'")};
  moe.topK = topK;
  moe.blockSize = blockSize;
  moe.routerWeights = routerWeights != 0;
  return moe;
}

MoeRouting moeRouting(uint64_t sortedIds, uint64_t expertIds,
                      uint64_t numTokensPadded, int64_t sortedLength,
                      int64_t blockSize, uint64_t expertLayout,
                      uint64_t routerWeights) {
  MoeRouting r;
  r.sortedIds = sortedIds;
  r.expertIds = expertIds;
  r.numTokensPadded = numTokensPadded;
  r.sortedLength = sortedLength;
  r.blockSize = blockSize;
  r.expertLayout = expertLayout;
  r.routerWeights = routerWeights;
  return r;
}

/// The input schema and output type of humming_layer_create_quantized's
/// `activation`, `scaling` and `output`.
Result<std::pair<InputSchema, ScalarType>>
quantizedActivations(const char *activation, const char *scaling,
                     const char *output) {
  Result<ScalarType> act =
      typeAmong("activation", activation,
                {ScalarType::e4m3(), ScalarType::e5m2(), ScalarType::sint(8),
                 ScalarType::sint(4)},
                "f8E4M3FN, f8E5M2, si8 or si4");
  if (!act)
    return Error{act.error()};
  const ActScaling scalings[] = {ActScaling::Token, ActScaling::Static};
  InputSchema in{*act, ActScaling::Token, 0};
  // "group<g>": per row and g of K.
  long long group = 0;
  char close = 0, extra = 0;
  if (scaling && std::sscanf(scaling, "group<%lld%c%c", &group, &close,
                             &extra) == 2 &&
      close == '>' && group > 0) {
    in.scaling = ActScaling::Group;
    in.groupK = group;
  } else if (!scaling || !parseEnum(scaling, scalings, in.scaling)) {
    return Error{concat("scaling: expected token, static or group<g>, got '",
                        scaling ? scaling : "(null)", "'")};
  }
  Result<ScalarType> outType = typeAmong(
      "output", output, {ScalarType::f16(), ScalarType::bf16()}, "f16 or bf16");
  if (!outType)
    return Error{outType.error()};
  return std::make_pair(in, *outType);
}

/// humming_layer_create_moe and _create_batched: the schema and the
/// activations checked, then `options()` (the MoE options, or why not).
template <typename Options>
int createMoeLayer(int64_t n, int64_t k, int64_t experts,
                   const humming_weight_schema *weight, const char *activation,
                   Options options, humming_layer **out) {
  Result<WeightSchema> w = creationArgs(weight, out);
  if (!w)
    return fail(w.error());
  Result<ScalarType> act = sixteenBitActivation(activation);
  if (!act)
    return fail(act.error());
  Result<MoeOptions> moe = options();
  if (!moe)
    return fail(moe.error());
  WeightSchema stacked = *w;
  stacked.experts = experts;
  return handOut(Layer::createMoe(n, k, stacked,
                                  InputSchema{*act, ActScaling::None, 0}, *moe,
                                  {}, *act),
                 out);
}
} // namespace

extern "C" {

int humming_layer_create_moe(int64_t n, int64_t k, int64_t experts,
                             const humming_weight_schema *weight,
                             const char *activation, const char *routing,
                             int64_t topK, int64_t blockSize,
                             int routerWeights, humming_layer **out) {
  return createMoeLayer(
      n, k, experts, weight, activation,
      [&]() { return moeOptions(routing, topK, blockSize, routerWeights); },
      out);
}

int humming_layer_create_batched(int64_t n, int64_t k, int64_t batch,
                                 const humming_weight_schema *weight,
                                 const char *activation, humming_layer **out) {
  return createMoeLayer(
      n, k, batch, weight, activation,
      []() -> Result<MoeOptions> {
        MoeOptions moe;
        moe.routing = GemmType::GroupedMasked;
        moe.allRows = true;
        return moe;
      },
      out);
}

int64_t humming_layer_moe_block_size(const humming_layer *layer, int64_t m) {
  return layer ? layer->layer.moeBlockSize(m) : 0;
}

int humming_layer_forward_moe(const humming_layer *layer, void *stream,
                              uint64_t input, uint64_t output, int64_t m,
                              uint64_t sortedIds, uint64_t expertIds,
                              uint64_t numTokensPadded, int64_t sortedLength,
                              int64_t blockSize, uint64_t expertLayout,
                              uint64_t routerWeights) {
  if (!layer)
    return fail("expected a layer, got NULL");
  return check(layer->layer.forwardMoe(
      stream, input, output, m,
      moeRouting(sortedIds, expertIds, numTokensPadded, sortedLength,
                 blockSize, expertLayout, routerWeights)));
}

int humming_layer_create_quantized(int64_t n, int64_t k,
                                   const humming_weight_schema *weight,
                                   const char *activation, const char *scaling,
                                   const char *output, humming_layer **out) {
  Result<WeightSchema> w = creationArgs(weight, out);
  if (!w)
    return fail(w.error());
  Result<std::pair<InputSchema, ScalarType>> io =
      quantizedActivations(activation, scaling, output);
  if (!io)
    return fail(io.error());
  return handOut(Layer::create(n, k, *w, io->first, {}, io->second), out);
}

int humming_layer_create_moe_quantized(int64_t n, int64_t k, int64_t experts,
                                       const humming_weight_schema *weight,
                                       const char *activation,
                                       const char *scaling, const char *output,
                                       const char *routing, int64_t topK,
                                       int64_t blockSize, int routerWeights,
                                       humming_layer **out) {
  Result<WeightSchema> w = creationArgs(weight, out);
  if (!w)
    return fail(w.error());
  Result<std::pair<InputSchema, ScalarType>> io =
      quantizedActivations(activation, scaling, output);
  if (!io)
    return fail(io.error());
  Result<MoeOptions> moe = moeOptions(routing, topK, blockSize, routerWeights);
  if (!moe)
    return fail(moe.error());
  WeightSchema stacked = *w;
  stacked.experts = experts;
  return handOut(
      Layer::createMoe(n, k, stacked, io->first, *moe, {}, io->second), out);
}

int humming_layer_forward_moe_quantized(
    const humming_layer *layer, void *stream, uint64_t codes, uint64_t scales,
    uint64_t output, int64_t m, uint64_t sortedIds, uint64_t expertIds,
    uint64_t numTokensPadded, int64_t sortedLength, int64_t blockSize,
    uint64_t expertLayout, uint64_t routerWeights) {
  if (!layer)
    return fail("expected a layer, got NULL");
  if (layer->layer.inputSchema().type.bits == 16)
    return fail(concat("the layer takes ",
                       layer->layer.inputSchema().type.str(),
                       " activations: call humming_layer_forward_moe"));
  if (layer->layer.inputSchema().scaling != ActScaling::None && !scales)
    return fail("expected the codes' f32 scales, got a null pointer");
  return check(layer->layer.forwardMoe(
      stream, codes, output, m,
      moeRouting(sortedIds, expertIds, numTokensPadded, sortedLength,
                 blockSize, expertLayout, routerWeights),
      scales));
}

int humming_layer_forward_quantized(const humming_layer *layer, void *stream,
                                    uint64_t codes, uint64_t scales,
                                    uint64_t output, int64_t m) {
  if (!layer)
    return fail("expected a layer, got NULL");
  return check(
      layer->layer.forwardQuantized(stream, codes, scales, output, m));
}

void humming_layer_destroy(humming_layer *layer) { delete layer; }

int humming_layer_create_from_checkpoint(const char *dir, const char *module,
                                         humming_layer **out) {
  return humming_layer_create_from_checkpoint_shard(dir, module, "column", 0,
                                                    1, "16-bit", out);
}

int humming_layer_create_from_checkpoint_quantized(const char *dir,
                                                   const char *module,
                                                   humming_layer **out) {
  return humming_layer_create_from_checkpoint_shard(dir, module, "column", 0,
                                                    1, "checkpoint", out);
}

int humming_layer_create_from_checkpoint_shard(const char *dir,
                                               const char *module,
                                               const char *parallel,
                                               int64_t rank, int64_t size,
                                               const char *activations,
                                               humming_layer **out) {
  if (!out)
    return fail("expected an output pointer, got NULL");
  *out = nullptr;
  if (int rc = checkShardArgs(parallel, activations))
    return rc;
  ScalarType model = ScalarType::f16();
  Result<LoadedLayer> loaded = loadCheckpointLayer(dir, module, model);
  if (!loaded)
    return fail(loaded.error());
  return createFromLoaded(loaded.take(), model, module, parallel, rank, size,
                          activations, out);
}

int humming_layer_create_from_tensors(const char *configJson,
                                      const humming_tensor *tensors,
                                      int64_t count, const char *module,
                                      const char *parallel, int64_t rank,
                                      int64_t size, const char *activations,
                                      humming_layer **out) {
  if (!out)
    return fail("expected an output pointer, got NULL");
  *out = nullptr;
  if (!configJson)
    return fail("expected the model's config.json text (with its "
                "quantization_config), got NULL");
  if (count < 1 || !tensors)
    return fail(concat("expected at least one tensor, got ",
                       tensors ? count : 0));
  if (int rc = checkShardArgs(parallel, activations))
    return rc;
  const std::string name = module && *module ? module : "layer";
  Result<OpenedCheckpoint> opened =
      checkpointFromTensors(configJson, tensors, count, name + ".");
  if (!opened)
    return fail(opened.error());
  Result<LoadedLayer> loaded =
      loadLayer(opened->checkpoint, opened->config, name);
  if (!loaded)
    return fail(loaded.error());
  return createFromLoaded(loaded.take(), opened->activation(), name.c_str(),
                          parallel, rank, size, activations, out);
}

int64_t humming_layer_canonical_tensor(const humming_layer *layer,
                                       const char *which, const char **dtype,
                                       int64_t *shape, int64_t *rank,
                                       void *data, int64_t capacity) {
  auto failed = [](std::string message) {
    fail(std::move(message));
    return int64_t(-1);
  };
  if (!layer)
    return failed("expected a layer, got NULL");
  Result<const QuantizedWeights *> held = layer->layer.canonicalTensors();
  if (!held)
    return failed(held.error());
  const QuantizedWeights *w = *held;
  if (!w)
    return failed("the layer holds no weights yet: quantize or load them "
                  "first");
  const std::string what = which ? which : "(null)";
  const Tensor *t = what == "weight"         ? &w->weight
                    : what == "scales"       ? (w->scales ? &*w->scales : nullptr)
                    : what == "zero_points"  ? (w->zeroPoints ? &*w->zeroPoints : nullptr)
                    : what == "global_scale" ? (w->globalScale ? &*w->globalScale : nullptr)
                    : what == "bias"         ? (w->bias ? &*w->bias : nullptr)
                                             : nullptr;
  const bool known = what == "weight" || what == "scales" ||
                     what == "zero_points" || what == "global_scale" ||
                     what == "bias";
  if (!known)
    return failed(concat("expected weight, scales, zero_points, global_scale "
                         "or bias, got '",
                         what, "'"));
  if (!t) {
    ok();
    if (rank)
      *rank = -1;
    return 0;
  }
  if (t->shape.size() > 8)
    return failed(concat(what, ": rank ", t->shape.size(), " over 8"));
  if (dtype)
    *dtype = dtypeName(t->dtype);
  if (rank)
    *rank = int64_t(t->shape.size());
  if (shape)
    std::copy(t->shape.begin(), t->shape.end(), shape);
  const int64_t bytes = int64_t(t->data.size());
  if (data) {
    if (capacity < bytes)
      return failed(concat(what, ": expected room for ", bytes,
                           " bytes, got ", capacity));
    std::memcpy(data, t->data.data(), size_t(bytes));
  }
  ok();
  return bytes;
}

} // extern "C"

namespace {

int checkShardArgs(const char *parallel, const char *activations) {
  const std::string acts = activations ? activations : "(null)";
  if (acts != "16-bit" && acts != "checkpoint")
    return fail(concat("activations: expected 16-bit or checkpoint, got '",
                       acts, "'"));
  const std::string how = parallel ? parallel : "(null)";
  if (how != "column" && how != "row")
    return fail(concat("parallel: expected column or row, got '", how, "'"));
  return 0;
}

int createFromLoaded(LoadedLayer loaded, ScalarType model, const char *module,
                     const char *parallel, int64_t rank, int64_t size,
                     const char *activations, humming_layer **out) {
  CheckpointLoad load;
  load.parallel = std::string(parallel) == "row" ? TensorParallel::Row
                                                 : TensorParallel::Column;
  load.rank = rank;
  load.size = size;
  load.checkpointActivations = std::string(activations) == "checkpoint";
  return handOut(Layer::fromLoaded(std::move(loaded), model, module, load),
                 out);
}

} // namespace

extern "C" {

const char *humming_layer_activation(const humming_layer *layer) {
  if (!layer)
    return "";
  // (The types Layer::create accepts.)
  const ScalarType &t = layer->layer.inputSchema().type;
  return t == ScalarType::f16()    ? "f16"
         : t == ScalarType::bf16() ? "bf16"
         : t == ScalarType::e4m3() ? "f8E4M3FN"
         : t == ScalarType::e5m2() ? "f8E5M2"
         : t == ScalarType::sint(8) ? "si8"
         : t == ScalarType::sint(4) ? "si4"
                                    : "";
}

int64_t humming_layer_activation_group(const humming_layer *layer) {
  if (!layer || layer->layer.inputSchema().scaling != ActScaling::Group)
    return 0;
  return layer->layer.inputSchema().groupK;
}

const char *humming_layer_activation_scaling(const humming_layer *layer) {
  if (!layer)
    return "";
  switch (layer->layer.inputSchema().scaling) {
  case ActScaling::None:
    return "none";
  case ActScaling::Token:
    return "token";
  case ActScaling::Static:
    return "static";
  case ActScaling::Group:
    return "group";
  }
  return "";
}

int humming_layer_load_checkpoint(humming_layer *layer, const char *dir,
                                  const char *module) {
  if (!layer)
    return fail("expected a layer, got NULL");
  ScalarType act = ScalarType::f16();
  Result<LoadedLayer> loaded = loadCheckpointLayer(dir, module, act);
  if (!loaded)
    return fail(loaded.error());
  std::string have = concat(formatWeightSchema(layer->layer.weightSchema()), " ",
                            layer->layer.n(), "x", layer->layer.k());
  // Unpadded checkpoint tensors fit a layer that pads them (Layer::create
  // pads sizes the kernels cannot take; loadQuantized pads the tensors).
  WeightSchema fits = loaded->weight;
  if (fits.padN == 0 && fits.padK == 0) {
    fits.padN = layer->layer.weightSchema().padN;
    fits.padK = layer->layer.weightSchema().padK;
  }
  std::string got = concat(formatWeightSchema(fits), " ", loaded->n, "x",
                           loaded->k);
  if (have != got)
    return fail(concat(module, ": expected the layer's ", have,
                       ", the checkpoint has ", got));
  if (Status s = layer->layer.loadQuantized(std::move(loaded->tensors)); !s)
    return fail(concat(module, ": ", s.error()));
  return check(layer->layer.setInputPermutation(std::move(loaded->kPermutation)));
}

int64_t humming_layer_n(const humming_layer *layer) {
  return layer ? layer->layer.n() : 0;
}

int64_t humming_layer_k(const humming_layer *layer) {
  return layer ? layer->layer.k() : 0;
}

int64_t humming_layer_activation_k(const humming_layer *layer) {
  return layer ? layer->layer.activationK() : 0;
}

int humming_layer_quantize(humming_layer *layer, const float *weights,
                           const float *bias) {
  if (!layer || !weights)
    return fail("expected a layer and weights, got NULL");
  // A MoE layer's weights are [E, N, K] and its bias [E, N].
  const int64_t e = std::max<int64_t>(1, layer->layer.weightSchema().experts);
  int64_t n = layer->layer.n(), k = layer->layer.k();
  std::vector<double> w(weights, weights + e * n * k);
  std::vector<double> b;
  if (bias)
    b.assign(bias, bias + e * n);
  return check(layer->layer.quantize(w.data(), bias ? b.data() : nullptr));
}

int humming_layer_quantize_on_device(humming_layer *layer, const char *device,
                                     const char *chip, uint64_t weights,
                                     const char *dtype, const float *bias) {
  if (!layer || !dtype)
    return fail("expected a layer and a dtype, got NULL");
  std::optional<DType> d = parseDType(dtype);
  if (!d)
    return fail(concat("expected the dtype F16, BF16 or F32, got '", dtype,
                       "'"));
  const int64_t e = std::max<int64_t>(1, layer->layer.weightSchema().experts);
  std::vector<double> b;
  if (bias)
    b.assign(bias, bias + e * layer->layer.n());
  return check(layer->layer.quantizeOnDevice(targetOf(device, chip, false),
                                             weights, *d,
                                             bias ? b.data() : nullptr));
}

int humming_layer_load_quantized(humming_layer *layer, const void *weight,
                                 size_t weightBytes, const void *scales,
                                 size_t scalesBytes, const void *zeroPoints,
                                 size_t zeroPointsBytes,
                                 const void *globalScale,
                                 size_t globalScaleBytes, const void *bias,
                                 size_t biasBytes) {
  if (!layer)
    return fail("expected a layer, got NULL");
  const WeightSchema &w = layer->layer.weightSchema();
  const InputSchema &in = layer->layer.inputSchema();
  const int64_t np = layer->layer.n() + w.padN, kp = layer->layer.k() + w.padK;
  DType param = layer->layer.outputType() == ScalarType::bf16() ? DType::BF16
                                                                : DType::F16;
  QuantizedWeights q;
  // One tensor from host bytes: the schema decides its shape and dtype.
  auto take = [&](WeightOperand op, const char *name, bool wanted,
                  const void *data, size_t bytes,
                  DType dtype) -> Result<std::optional<Tensor>> {
    if (!wanted) {
      if (data || bytes)
        return Error{concat(name, ": the schema has none, got ", bytes,
                            " bytes")};
      return std::optional<Tensor>();
    }
    ShapeOrDiag shape = expectedShape(op, w, in, np, kp, false);
    if (shape.error)
      return Error{concat(name, ": ", *shape.error)};
    Tensor t(dtype, shape.shape);
    if (!data || bytes != t.data.size())
      return Error{concat(name, ": expected ", t.data.size(), " bytes (",
                          dtypeName(dtype), " ", formatShape(shape.shape),
                          "), got ", data ? bytes : 0)};
    std::memcpy(t.data.data(), data, bytes);
    return std::optional<Tensor>(std::move(t));
  };
  std::optional<DType> scaleDType = storageFor(w.scaleType);
  Result<std::optional<Tensor>> tw =
      take(WeightOperand::Weight, "weight", true, weight, weightBytes, DType::I32);
  if (!tw)
    return fail(tw.error());
  q.weight = std::move(**tw);
  Result<std::optional<Tensor>> ts =
      take(WeightOperand::Scales, "scales", w.hasScaleTensor(), scales,
           scalesBytes, scaleDType ? *scaleDType : DType::F32);
  if (!ts)
    return fail(ts.error());
  q.scales = ts.take();
  Result<std::optional<Tensor>> tz = take(
      WeightOperand::ZeroPoints, "zero_points",
      w.zeroPoint != ZeroPointKind::None, zeroPoints, zeroPointsBytes,
      w.zeroPoint == ZeroPointKind::Int ? DType::I32 : param);
  if (!tz)
    return fail(tz.error());
  q.zeroPoints = tz.take();
  Result<std::optional<Tensor>> tg =
      take(WeightOperand::GlobalScale, "global_scale", w.hasGlobalScale(),
           globalScale, globalScaleBytes, DType::F32);
  if (!tg)
    return fail(tg.error());
  q.globalScale = tg.take();
  Result<std::optional<Tensor>> tb =
      take(WeightOperand::Bias, "bias", w.bias, bias, biasBytes, param);
  if (!tb)
    return fail(tb.error());
  q.bias = tb.take();
  return check(layer->layer.loadQuantized(std::move(q)));
}

int humming_layer_transform(humming_layer *layer, const char *device,
                            const char *chip, int compileOnly) {
  return humming_layer_transform_tuned(layer, device, chip, compileOnly,
                                       nullptr);
}

int humming_layer_transform_tuned(humming_layer *layer, const char *device,
                                  const char *chip, int compileOnly,
                                  const char *tileConfig) {
  if (!layer)
    return fail("expected a layer, got NULL");
  LayerTarget target = targetOf(device, chip, compileOnly);
  target.tileConfig = tileConfig ? tileConfig : "";
  target.activationRows = layer->activationRows;
  target.activationsGathered = layer->activationsGathered;
  target.streams = layer->streams;
  target.probe = layer->probe;
  Status s = layer->layer.transform(target);
  layer->reports.clear();
  for (const std::string &r : layer->layer.transformStats().compilerReports)
    layer->reports += r + "\n";
  return check(s);
}

int humming_layer_set_activation_rows(humming_layer *layer, int64_t rows) {
  if (!layer)
    return fail("expected a layer, got NULL");
  if (rows < 0)
    return fail(concat("expected rows >= 0, got ", rows));
  layer->activationRows = rows;
  return ok();
}

int humming_layer_set_streams(humming_layer *layer, int64_t streams) {
  if (!layer)
    return fail("expected a layer, got NULL");
  if (Status s = humming::rt::StreamScratch::checkCount(streams); !s)
    return check(s);
  layer->streams = streams;
  return ok();
}

int humming_layer_set_activations_gathered(humming_layer *layer,
                                           int gathered) {
  if (!layer)
    return fail("expected a layer, got NULL");
  layer->activationsGathered = gathered != 0;
  return ok();
}

int64_t humming_layer_input_permutation(const humming_layer *layer,
                                        int32_t *out, int64_t capacity) {
  if (!layer)
    return -1;
  const std::vector<int32_t> &perm = layer->layer.inputPermutation();
  if (out && capacity >= int64_t(perm.size()))
    std::copy(perm.begin(), perm.end(), out);
  return int64_t(perm.size());
}

int humming_layer_set_input_permutation(humming_layer *layer,
                                        const int32_t *perm, int64_t count) {
  if (!layer)
    return fail("expected a layer, got NULL");
  if (count < 0 || (count > 0 && !perm))
    return fail(concat("expected a permutation of ", layer->layer.k(),
                       " columns, got ", count < 0 ? count : 0,
                       perm ? "" : " (NULL)"));
  return check(layer->layer.setInputPermutation(
      std::vector<int32_t>(perm, perm + count)));
}

int humming_layer_set_batch_invariant(humming_layer *layer, int on) {
  if (!layer)
    return fail("expected a layer, got NULL");
  return check(layer->layer.setBatchInvariant(on != 0));
}

int humming_layer_batch_invariant(const humming_layer *layer) {
  return layer && layer->layer.batchInvariant() ? 1 : 0;
}

int humming_layer_forward_gathering(const humming_layer *layer, void *stream,
                                    uint64_t input, uint64_t scratch,
                                    uint64_t output, int64_t m) {
  if (!layer)
    return fail("expected a layer, got NULL");
  return check(layer->layer.forwardGathering(stream, input, scratch, output, m));
}

int humming_layer_forward(const humming_layer *layer, void *stream,
                          uint64_t input, uint64_t output, int64_t m) {
  if (!layer)
    return fail("expected a layer, got NULL");
  return check(layer->layer.forward(stream, input, output, m));
}

int humming_layer_transform_stats(const humming_layer *layer,
                                  humming_transform_stats *stats) {
  if (!layer || !stats)
    return fail("expected a layer and a stats pointer, got NULL");
  const TransformStats &s = layer->layer.transformStats();
  stats->compiled = s.compiled;
  stats->cached = s.cached;
  stats->kernel_seconds = s.kernelSeconds;
  stats->slowest_kernel_seconds = s.slowestKernelSeconds;
  stats->weight_seconds = s.weightSeconds;
  return ok();
}

const char *humming_compiler(void) {
  // Chosen once per process: the text outlives every call.
  static const Result<std::string> compiler = humming::jitCompiler();
  if (!compiler) {
    fail(compiler.error());
    return nullptr;
  }
  ok();
  return compiler->c_str();
}

const char *humming_layer_compiler_reports(const humming_layer *layer) {
  return layer ? layer->reports.c_str() : "";
}

int humming_layer_set_probe(humming_layer *layer, int mode) {
  if (!layer)
    return fail("expected a layer, got NULL");
  switch (mode) {
  case HUMMING_PROBE_AUTO:
    layer->probe = FirstUseProbe::Auto;
    return ok();
  case HUMMING_PROBE_ALWAYS:
    layer->probe = FirstUseProbe::Always;
    return ok();
  case HUMMING_PROBE_NEVER:
    layer->probe = FirstUseProbe::Never;
    return ok();
  default:
    return fail(concat("expected HUMMING_PROBE_AUTO (0), HUMMING_PROBE_ALWAYS "
                       "(1) or HUMMING_PROBE_NEVER (2), got ",
                       mode));
  }
}

const char *humming_layer_probe(const humming_layer *layer) {
  return layer ? layer->layer.transformStats().probe.c_str() : "";
}

int humming_device_facts(const char *device, const char *chip,
                         int64_t *sm_count, double *memory_gbs) {
  if (!sm_count || !memory_gbs)
    return fail("expected output pointers, got NULL");
  const bool named = device && *device, chipped = chip && *chip;
  if (!named && !chipped)
    return fail("expected a device or a chip, got neither");
  // The facts transform's tiles use (tileDeviceFacts); a device name the
  // table lacks falls back to the chip's representative where a chip is
  // given, as a transform for the current device does.
  const bool byName = named && (!chipped || lookupDevice(device));
  Result<DeviceInfo> facts =
      tileDeviceFacts(byName ? device : "", chipped ? chip : "");
  if (!facts)
    return fail(facts.error());
  *sm_count = facts->smCount;
  *memory_gbs = facts->memoryBandwidthGBs;
  return ok();
}

int humming_layer_kernel_count(const humming_layer *layer) {
  return layer ? int(layer->layer.kernels().size()) : 0;
}

int humming_layer_is_prepared(const humming_layer *layer) {
  return layer && layer->layer.prepared() ? 1 : 0;
}

} // extern "C"

int humming_quantizer_create(const char *type, const char *scaling,
                             int64_t groupK, const char *source, int64_t k,
                             humming_quantizer **out) {
  if (!out)
    return fail("expected an output pointer, got NULL");
  *out = nullptr;
  Result<ScalarType> t = typeAmong(
      "type", type,
      {ScalarType::e4m3(), ScalarType::e5m2(), ScalarType::sint(8),
       ScalarType::sint(4), ScalarType::e2m1()},
      "e4m3, e5m2, int8, int4 or e2m1");
  if (!t)
    return fail(t.error());
  const ActScaling scalings[] = {ActScaling::Token, ActScaling::Group,
                                 ActScaling::Static};
  InputSchema in{*t, ActScaling::Token, 0};
  if (!scaling || !parseEnum(scaling, scalings, in.scaling))
    return fail(concat("scaling: expected token, group or static, got '",
                       scaling ? scaling : "(null)", "'"));
  if (in.scaling == ActScaling::Group)
    in.groupK = groupK;
  else if (groupK != 0)
    return fail(concat("group_k: expected 0 with ", scaling,
                       " scaling, got ", groupK));
  std::optional<ScalarType> src =
      source ? ScalarType::parse(source) : std::nullopt;
  if (!src)
    return fail(concat("source: expected f16, bf16 or f32, got '",
                       source ? source : "(null)", "'"));
  Result<ActivationQuantizer> q = ActivationQuantizer::create(in, *src, k);
  if (!q)
    return fail(q.error());
  *out = new humming_quantizer{q.take()};
  return ok();
}

void humming_quantizer_destroy(humming_quantizer *quantizer) {
  delete quantizer;
}

int humming_quantizer_set_codes_k(humming_quantizer *quantizer,
                                  int64_t codesK) {
  if (!quantizer)
    return fail("expected a quantizer, got NULL");
  const ActivationQuantizer &q = quantizer->quantizer;
  Result<ActivationQuantizer> made = ActivationQuantizer::create(
      q.inputSchema(), q.sourceType(), q.k(), codesK);
  if (!made)
    return fail(made.error());
  quantizer->quantizer = made.take();
  return ok();
}

int humming_quantizer_transform(humming_quantizer *quantizer,
                                const char *device, const char *chip,
                                int compileOnly) {
  if (!quantizer)
    return fail("expected a quantizer, got NULL");
  return check(quantizer->quantizer.transform(targetOf(device, chip, compileOnly)));
}

int humming_quantizer_forward(const humming_quantizer *quantizer, void *stream,
                              uint64_t input, uint64_t codes, uint64_t scales,
                              int64_t m) {
  if (!quantizer)
    return fail("expected a quantizer, got NULL");
  return check(quantizer->quantizer.forward(stream, input, codes, scales, m));
}

namespace {
/// humming_moe_layer_create and _create_quantized: the two schemas checked,
/// then the block of `io` (the activations and the output type, or why
/// the C arguments name none) handed to the caller.
int createMoeLayer(const MoeLayerShape &shape,
                   const humming_weight_schema *gateUp,
                   const humming_weight_schema *down,
                   const Result<std::pair<InputSchema, ScalarType>> &io,
                   humming_moe_layer **out) {
  if (!gateUp || !down || !out)
    return fail("expected two weight schemas and an output pointer, got NULL");
  *out = nullptr;
  Result<WeightSchema> gu = toSchema(*gateUp);
  if (!gu)
    return fail(concat("gate_up: ", gu.error()));
  Result<WeightSchema> dn = toSchema(*down);
  if (!dn)
    return fail(concat("down: ", dn.error()));
  if (!io)
    return fail(io.error());
  Result<MoeLayer> layer =
      MoeLayer::create(shape, *gu, *dn, io->first, io->second);
  if (!layer)
    return fail(layer.error());
  *out = new humming_moe_layer{layer.take()};
  return ok();
}
} // namespace

int humming_moe_layer_create(int64_t hidden, int64_t intermediate,
                             int64_t experts, int64_t topK, int64_t blockSize,
                             const humming_weight_schema *gateUp,
                             const humming_weight_schema *down,
                             const char *activation, humming_moe_layer **out) {
  Result<ScalarType> act = sixteenBitActivation(activation);
  Result<std::pair<InputSchema, ScalarType>> io =
      act ? Result<std::pair<InputSchema, ScalarType>>(
                std::make_pair(InputSchema{*act, ActScaling::None, 0}, *act))
          : Result<std::pair<InputSchema, ScalarType>>(Error{act.error()});
  return createMoeLayer({hidden, intermediate, experts, topK, blockSize},
                        gateUp, down, io, out);
}

int humming_moe_layer_create_quantized(
    int64_t hidden, int64_t intermediate, int64_t experts, int64_t topK,
    int64_t blockSize, const humming_weight_schema *gateUp,
    const humming_weight_schema *down, const char *activation,
    const char *scaling, const char *output, humming_moe_layer **out) {
  return createMoeLayer({hidden, intermediate, experts, topK, blockSize},
                        gateUp, down,
                        quantizedActivations(activation, scaling, output), out);
}

int humming_moe_layer_create_from_checkpoint(
    const char *dir, const char *pattern, int64_t experts, int64_t topK,
    int64_t blockSize, const char *gate, const char *up, const char *down,
    humming_moe_layer **out) {
  if (!dir || !pattern || !out)
    return fail("expected a checkpoint directory, an experts' module pattern "
                "and an output pointer, got NULL");
  *out = nullptr;
  Result<MoeLayer> layer = MoeLayer::fromCheckpoint(
      dir, pattern, experts, topK, blockSize, gate ? gate : "gate_proj",
      up ? up : "up_proj", down ? down : "down_proj");
  if (!layer)
    return fail(layer.error());
  *out = new humming_moe_layer{layer.take()};
  return ok();
}

int humming_moe_layer_create_from_tensors(
    const char *configJson, const humming_tensor *tensors, int64_t count,
    const char *pattern, int64_t experts, int64_t topK, int64_t blockSize,
    const char *gate, const char *up, const char *down,
    humming_moe_layer **out) {
  if (!configJson || !pattern || !out)
    return fail("expected the model's config.json text, an experts' module "
                "pattern and an output pointer, got NULL");
  *out = nullptr;
  if (count < 1 || !tensors)
    return fail(concat("expected at least one tensor, got ",
                       tensors ? count : 0));
  Result<OpenedCheckpoint> opened =
      checkpointFromTensors(configJson, tensors, count, "");
  if (!opened)
    return fail(opened.error());
  Result<MoeLayer> layer = MoeLayer::fromCheckpoint(
      *opened, pattern, experts, topK, blockSize, gate ? gate : "gate_proj",
      up ? up : "up_proj", down ? down : "down_proj");
  if (!layer)
    return fail(layer.error());
  *out = new humming_moe_layer{layer.take()};
  return ok();
}

void humming_moe_layer_destroy(humming_moe_layer *layer) { delete layer; }

int64_t humming_moe_layer_hidden(const humming_moe_layer *layer) {
  return layer ? layer->layer.shape().hidden : -1;
}

int64_t humming_moe_layer_intermediate(const humming_moe_layer *layer) {
  return layer ? layer->layer.shape().intermediate : -1;
}

const char *humming_moe_layer_activation(const humming_moe_layer *layer) {
  if (!layer)
    return nullptr;
  return layer->layer.outputType() == ScalarType::bf16() ? "bf16" : "f16";
}

int humming_moe_layer_quantize(humming_moe_layer *layer, const float *gateUp,
                               const float *down) {
  if (!layer || !gateUp || !down)
    return fail("expected a MoE layer and gate_up and down weights, got NULL");
  const MoeLayerShape &s = layer->layer.shape();
  const int64_t perProjection = s.experts * s.hidden * s.intermediate;
  std::vector<double> gu(gateUp, gateUp + 2 * perProjection);
  std::vector<double> dn(down, down + perProjection);
  return check(layer->layer.quantize(gu.data(), dn.data()));
}

int humming_moe_layer_set_activation(humming_moe_layer *layer, double alpha,
                                     double upOffset, double limit) {
  if (!layer)
    return fail("expected a MoE layer, got NULL");
  return check(layer->layer.setActivation({alpha, upOffset, limit}));
}

int humming_moe_layer_transform(humming_moe_layer *layer, const char *device,
                                const char *chip, int compileOnly,
                                int64_t maxTokens) {
  if (!layer)
    return fail("expected a MoE layer, got NULL");
  LayerTarget target = targetOf(device, chip, compileOnly);
  target.streams = layer->streams;
  return check(layer->layer.transform(target, maxTokens));
}

int humming_moe_layer_set_streams(humming_moe_layer *layer, int64_t streams) {
  if (!layer)
    return fail("expected a MoE layer, got NULL");
  if (Status s = humming::rt::StreamScratch::checkCount(streams); !s)
    return check(s);
  layer->streams = streams;
  return ok();
}

int humming_moe_layer_forward(const humming_moe_layer *layer, void *stream,
                              uint64_t x, uint64_t topkIds,
                              uint64_t topkWeights, uint64_t y, int64_t m) {
  if (!layer)
    return fail("expected a MoE layer, got NULL");
  return check(layer->layer.forward(stream, x, topkIds, topkWeights, y, m));
}

int humming_moe_grouping_create(int64_t experts, int64_t topK,
                                int64_t maxTokens, const int64_t *rowBytes,
                                int64_t count, humming_moe_grouping **out) {
  if (!out || (count > 0 && !rowBytes))
    return fail("expected the row widths (count > 0) and an output pointer, "
                "got NULL");
  *out = nullptr;
  if (count < 0 || count > 64)
    return fail(concat("expected 0 .. 64 row widths, got ", count));
  Result<MoeGrouping> g = MoeGrouping::create(
      experts, topK, maxTokens,
      std::vector<int64_t>(rowBytes, rowBytes + (count > 0 ? count : 0)));
  if (!g)
    return fail(g.error());
  *out = new humming_moe_grouping{g.take()};
  return ok();
}

void humming_moe_grouping_destroy(humming_moe_grouping *grouping) {
  delete grouping;
}

int humming_moe_grouping_transform(humming_moe_grouping *grouping,
                                   const char *device, const char *chip,
                                   int compileOnly) {
  if (!grouping)
    return fail("expected a MoE grouping, got NULL");
  return check(
      grouping->grouping.transform(targetOf(device, chip, compileOnly)));
}

int64_t humming_moe_grouping_rows(const humming_moe_grouping *grouping,
                                  int64_t m) {
  return grouping ? grouping->grouping.groupedRows(m) : -1;
}

int64_t
humming_moe_grouping_layout_size(const humming_moe_grouping *grouping) {
  return grouping ? grouping->grouping.layoutSize() : -1;
}

int humming_moe_grouping_forward(const humming_moe_grouping *grouping,
                                 void *stream, uint64_t topkIds, int64_t m,
                                 uint64_t positions, uint64_t expertLayout) {
  if (!grouping)
    return fail("expected a MoE grouping, got NULL");
  return check(grouping->grouping.forward(stream, topkIds, m, positions,
                                          expertLayout));
}

int humming_moe_grouping_scatter(const humming_moe_grouping *grouping,
                                 void *stream, int64_t rowBytes, uint64_t rows,
                                 int64_t m, uint64_t positions,
                                 uint64_t grouped) {
  if (!grouping)
    return fail("expected a MoE grouping, got NULL");
  return check(grouping->grouping.scatter(stream, rowBytes, rows, m,
                                          positions, grouped));
}

int humming_moe_grouping_scatter_weights(const humming_moe_grouping *grouping,
                                         void *stream, uint64_t topkWeights,
                                         int64_t m, uint64_t positions,
                                         uint64_t grouped) {
  if (!grouping)
    return fail("expected a MoE grouping, got NULL");
  return check(grouping->grouping.scatterWeights(stream, topkWeights, m,
                                                 positions, grouped));
}

int humming_moe_grouping_gather(const humming_moe_grouping *grouping,
                                void *stream, int64_t rowBytes,
                                uint64_t grouped, int64_t m,
                                uint64_t positions, uint64_t rows) {
  if (!grouping)
    return fail("expected a MoE grouping, got NULL");
  return check(grouping->grouping.gather(stream, rowBytes, grouped, m,
                                         positions, rows));
}
