/*===- humming-c/humming.h - The C API of humming::Layer -----------*- C -*-===
 *
 * For foreign-function interfaces (the Python package, other runtimes):
 * describe a dense quantized layer, give it weights, transform it for a
 * target and run it on device pointers; quantize activations to 8 bits. Every function returns 0 on success
 * and nonzero on failure; humming_last_error() then says what was expected
 * and what was found (per thread, valid until the next call on it).
 *
 *===----------------------------------------------------------------------===*/

#ifndef HUMMING_C_HUMMING_H
#define HUMMING_C_HUMMING_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct humming_layer humming_layer;

/** What a quantized weight is (the fields of #humming.weight_schema). */
typedef struct {
  /** Element type: "uint1".."uint8", "int4", "int8", "e4m3", "e5m2",
   *  "e2m1", "e2m3", "e3m2", or any "eXmY" small float. */
  const char *type;
  /** Scale type: "f16", "bf16", "e4m3", "e5m2", "ue8m0", "f32". */
  const char *scale_type;
  /** "channel", "group", "block", "tensor" or "group_tensor". */
  const char *granularity;
  /** Group size along K (group, block, group_tensor). */
  int64_t group_k;
  /** Block size along N (block). */
  int64_t group_n;
  /** "none" (or NULL), "int" or "float". */
  const char *zero_point;
  /** Nonzero: the layer has a bias [N] in the output type. */
  int bias;
  /** Weights stored padded to N + pad_n rows and K + pad_k columns. */
  int64_t pad_n, pad_k;
} humming_weight_schema;

/** The message of the last failed call on this thread ("" if none). */
const char *humming_last_error(void);

/** A layer y[M, N] = x[M, K] * W^T with `activation` "f16" or "bf16"
 *  activations and outputs of the same type. */
int humming_layer_create(int64_t n, int64_t k,
                         const humming_weight_schema *weight,
                         const char *activation, int f16_accumulation,
                         humming_layer **out);
void humming_layer_destroy(humming_layer *layer);

/** A mixture-of-experts GEMM (humming::Layer::createMoe): `experts` experts
 *  of N x K each as `weight` describes one; `routing` "indexed" (vLLM's
 *  moe_align_block_size layout; outputs [M * top_k, N]), "grouped_contiguous"
 *  (rows sorted by expert, offsets [E + 1]) or "grouped_masked" ([E *
 *  max_tokens, K] rows, counts [E]); top_k (indexed; 1 otherwise);
 *  block_size (indexed: 0 chooses it per M, humming_layer_moe_block_size,
 *  else a fixed multiple of 16); router_weights nonzero: each output row is
 *  multiplied by its f32 router weight. Weights and bias are [E, N, K] /
 *  [E, N] (humming_layer_quantize); 16-bit activations. */
int humming_layer_create_moe(int64_t n, int64_t k, int64_t experts,
                             const humming_weight_schema *weight,
                             const char *activation, const char *routing,
                             int64_t top_k, int64_t block_size,
                             int router_weights, humming_layer **out);
/** A batch of `batch` matmuls with one quantized weight matrix [N, K] per
 *  batch element (weights [batch, N, K]): the MoE GEMM with one expert per
 *  batch element and grouped_masked routing without counts (C++
 *  MoeOptions::allRows). humming_layer_forward_moe runs it over m = batch x
 *  rows input rows (element e's rows e x rows .. (e + 1) x rows - 1) with
 *  every routing pointer 0. */
int humming_layer_create_batched(int64_t n, int64_t k, int64_t batch,
                                 const humming_weight_schema *weight,
                                 const char *activation, humming_layer **out);
/** The indexed routing's block_size to route m tokens with (the fixed one,
 *  or the block_m of m's kernel); 0 before transform or for other layers. */
int64_t humming_layer_moe_block_size(const humming_layer *layer, int64_t m);
/** A MoE layer's GEMM over m rows (indexed: tokens; grouped: rows of the
 *  input) routed by device pointers (4-byte aligned; 0 where the routing
 *  has no such tensor): indexed sorted_ids [sorted_length], expert_ids,
 *  num_tokens_padded [1] aligned with block_size (0: the layer's fixed
 *  one); grouped expert_layout; router_weights f32 per output row. */
int humming_layer_forward_moe(const humming_layer *layer, void *stream,
                              uint64_t input, uint64_t output, int64_t m,
                              uint64_t sorted_ids, uint64_t expert_ids,
                              uint64_t num_tokens_padded,
                              int64_t sorted_length, int64_t block_size,
                              uint64_t expert_layout, uint64_t router_weights);
/** A MoE layer of 8-bit activations: humming_layer_create_moe's routing and
 *  humming_layer_create_quantized's `activation` ("f8E4M3FN", "f8E5M2",
 *  "si8"), `scaling` ("token", "static", "group<g>") and `output`.
 *  humming_layer_forward_moe_quantized runs it on codes and their scales
 *  (or humming_layer_forward_moe on 16-bit activations of the output type
 *  after humming_layer_set_activation_rows). */
int humming_layer_create_moe_quantized(int64_t n, int64_t k, int64_t experts,
                                       const humming_weight_schema *weight,
                                       const char *activation,
                                       const char *scaling, const char *output,
                                       const char *routing, int64_t top_k,
                                       int64_t block_size, int router_weights,
                                       humming_layer **out);
/** humming_layer_forward_moe on 8-bit `codes` [m, K] with their f32
 *  `scales` (as humming_layer_forward_quantized takes them). */
int humming_layer_forward_moe_quantized(
    const humming_layer *layer, void *stream, uint64_t codes, uint64_t scales,
    uint64_t output, int64_t m, uint64_t sorted_ids, uint64_t expert_ids,
    uint64_t num_tokens_padded, int64_t sorted_length, int64_t block_size,
    uint64_t expert_layout, uint64_t router_weights);

/** Quantizes float weights [N, K] (row-major; a MoE layer's [E, N, K]) and,
 *  when the schema has one, a bias [N] ([E, N]). */
int humming_layer_quantize(humming_layer *layer, const float *weights,
                           const float *bias);

/** humming_layer_quantize on the GPU: fp weights [N, K] ([E, N, K]) at
 *  device address `weights` in the safetensors dtype `dtype` ("F16",
 *  "BF16" or "F32"), quantized by the weight quantization kernel into the
 *  tensors humming_layer_quantize makes from those values, bit for bit
 *  (they stay on the device for humming_layer_transform's repack and come
 *  to the host when humming_layer_canonical_tensor reads them); `bias` as
 *  there. `device` / `chip` name the current device. Integer codes, or
 *  float codes (e4m3, e5m2, e2m1), with f16 / bf16 / f32 / e8m0 / fp8 group
 *  or channel scales, global scales (NVFP4), tensor scales and f32 block
 *  scales whose blocks tile the padded K: other schemas (zero points with
 *  a global scale, blocks that do not tile K) fail with a message that
 *  ends "(quantize() runs on the host)" (quantize them on the host). */
int humming_layer_quantize_on_device(humming_layer *layer, const char *device,
                                     const char *chip, uint64_t weights,
                                     const char *dtype, const float *bias);

/** Loads canonical tensors from host memory (the humming standard format,
 *  padded sizes): weight int32 [N, K*b/32]; scales [N, K/g] in the scale
 *  type (channel [N, 1], block f32 [ceil(N/gn), ceil(K/gk)]); int zero
 *  points int32 [N*b/32, K/g], float ones [N, K/g] in the output type;
 *  global scale f32 [1]; bias [N] in the output type. Absent tensors are
 *  NULL with size 0; every size is checked against the schema. */
int humming_layer_load_quantized(humming_layer *layer, const void *weight,
                                 size_t weight_bytes, const void *scales,
                                 size_t scales_bytes, const void *zero_points,
                                 size_t zero_points_bytes,
                                 const void *global_scale,
                                 size_t global_scale_bytes, const void *bias,
                                 size_t bias_bytes);

/** A layer read from a checkpoint directory (config.json and safetensors;
 *  GPTQ, AWQ, compressed-tensors, FP8, ModelOpt, Quark, MXFP4 ...):
 *  `module` names it ("model.layers.0.mlp.down_proj"). Activations and
 *  outputs are the model's 16-bit type. */
int humming_layer_create_from_checkpoint(const char *dir, const char *module,
                                         humming_layer **out);

/** The same layer with the checkpoint's own 8-bit activations (FP8 and
 *  W8A8-INT8 checkpoints with dynamic per-token activation scales, W4A8):
 *  a layer as humming_layer_create_quantized makes (prepared weights; humming_layer_forward_quantized, or
 *  humming_layer_set_activation_rows for 16-bit input); outputs in the
 *  model's 16-bit type. Refused, with the reason, where the checkpoint's
 *  activations are 16-bit, have no kernel (per-group scales, 4-bit) or a
 *  static scale (not read from checkpoints yet). */
int humming_layer_create_from_checkpoint_quantized(const char *dir,
                                                   const char *module,
                                                   humming_layer **out);

/** One rank's share of a checkpoint layer under tensor parallelism:
 *  `parallel` "column" (N split into `size` shards: q/k/v, gate/up) or
 *  "row" (K split: o, down; the bias stays with rank 0, so the sum over
 *  ranks adds it once); `activations` "16-bit" (the model's type, as
 *  humming_layer_create_from_checkpoint) or "checkpoint" (its own 8-bit
 *  ones, as humming_layer_create_from_checkpoint_quantized). A shard
 *  boundary that would cut a scale group, a block or a packed word is an
 *  error that says which. */
int humming_layer_create_from_checkpoint_shard(const char *dir,
                                               const char *module,
                                               const char *parallel,
                                               int64_t rank, int64_t size,
                                               const char *activations,
                                               humming_layer **out);

/** A tensor as a checkpoint stores it, in host memory:
 *  `name` relative to its module ("qweight", "scales", "weight_packed",
 *  "weight_scale" ...), a safetensors dtype ("I32", "F16", "BF16", "F32",
 *  "U8", "I8", "F8_E4M3", "F8_E8M0" ...), row-major little-endian `data` of
 *  exactly the bytes its dtype and shape take. */
typedef struct {
  const char *name;
  const char *dtype;
  int64_t rank;
  const int64_t *shape;
  const void *data;
  size_t bytes;
} humming_tensor;

/** humming_layer_create_from_checkpoint_shard for tensors a host already
 *  holds (a serving engine's loaded parameters) rather than a directory:
 *  `config_json` is the model's config.json text (its
 *  quantization_config and torch_dtype decide the format, as for a
 *  directory), `tensors` the module's `count` tensors under their
 *  checkpoint names, `module` its name for the config's per-module rules
 *  (NULL or "": "layer"). Every format the directory loader reads (GPTQ,
 *  AWQ, compressed-tensors, FP8, ModelOpt, Quark, MXFP4 ...), act-order and
 *  tensor-parallel shards included. The tensors are copied. */
int humming_layer_create_from_tensors(const char *config_json,
                                      const humming_tensor *tensors,
                                      int64_t count, const char *module,
                                      const char *parallel, int64_t rank,
                                      int64_t size, const char *activations,
                                      humming_layer **out);

/** The canonical tensor `which` ("weight", "scales", "zero_points",
 *  "global_scale", "bias") the layer holds (padded sizes, as
 *  humming_layer_load_quantized takes them back): its safetensors dtype,
 *  rank and shape (`shape` has room for 8), and, where `data` is not NULL,
 *  its bytes (`capacity` at least that many). Returns its size in bytes; 0
 *  with *rank = -1 when the schema has no such tensor; -1 on error (no
 *  weights yet, an unknown name, too little room). Any out pointer may be
 *  NULL. */
int64_t humming_layer_canonical_tensor(const humming_layer *layer,
                                       const char *which, const char **dtype,
                                       int64_t *shape, int64_t *rank,
                                       void *data, int64_t capacity);

/** Act-order layers (GPTQ desc_act): the weights' column j is input column
 *  perm[j]. Returns the permutation's length (0: the natural order; -1 for
 *  NULL) and, where `capacity` allows, writes it to `out`. Such a layer
 *  takes activations gathered by it (x[:, perm]): say so with
 *  humming_layer_set_activations_gathered before transform (8-bit
 *  activations: transform refuses the layer otherwise; 16-bit ones: see
 *  humming_layer_forward_gathering). */
int64_t humming_layer_input_permutation(const humming_layer *layer,
                                        int32_t *out, int64_t capacity);
int humming_layer_set_activations_gathered(humming_layer *layer,
                                           int gathered);
/** Without that acknowledgement a layer of 16-bit activations gathers
 *  them itself: run it with humming_layer_forward_gathering, which gathers
 *  x's columns into `scratch` (m x K 16-bit elements of device memory, 16-
 *  byte aligned, apart from x) with one kernel and then multiplies
 *  (Layer::forwardGathering). */
int humming_layer_forward_gathering(const humming_layer *layer, void *stream,
                                    uint64_t input, uint64_t scratch,
                                    uint64_t output, int64_t m);
/** Sets the act-order permutation (what humming_layer_input_permutation
 *  gives; a saved layer's state): a permutation of 0 .. K - 1, or count 0
 *  for the natural order. */
int humming_layer_set_input_permutation(humming_layer *layer,
                                        const int32_t *perm, int64_t count);

/** Batch invariance (Layer::setBatchInvariant; the original's
 *  use_batch_invariant): nonzero gives every M one K decomposition, so a
 *  row's output is bitwise the same whatever else the batch holds. Before
 *  humming_layer_transform (a transformed layer is transformed again); a
 *  MoE layer refuses it. humming_layer_batch_invariant says whether it is
 *  on (0 for NULL). */
int humming_layer_set_batch_invariant(humming_layer *layer, int on);
int humming_layer_batch_invariant(const humming_layer *layer);

/** The layer's activation type ("f16", "bf16", "f8E4M3FN", "f8E5M2",
 *  "si8", "si4") and scaling ("none", "token", "static", "group"); "" for
 *  NULL. With "group", humming_layer_activation_group gives the group's
 *  size along K (0 otherwise). */
const char *humming_layer_activation(const humming_layer *layer);
const char *humming_layer_activation_scaling(const humming_layer *layer);
int64_t humming_layer_activation_group(const humming_layer *layer);

/** Loads the weights of `module` from a checkpoint into an existing layer,
 *  whose shape and schema must be the checkpoint layer's. */
int humming_layer_load_checkpoint(humming_layer *layer, const char *dir,
                                  const char *module);

/** The layer's logical sizes. */
int64_t humming_layer_n(const humming_layer *layer);
int64_t humming_layer_k(const humming_layer *layer);
/** The width of the activation codes humming_layer_forward_quantized takes:
 *  K, or for 8- and 4-bit activations K rounded up to 16 bytes of codes
 *  (the codes past K zero, as humming_quantizer_set_codes_k writes them). */
int64_t humming_layer_activation_k(const humming_layer *layer);

/** Prepares the weights and compiles the kernels for a known `device`
 *  ("H200") or a `chip` ("sm_90a"; either may be NULL); unless
 *  `compile_only`, uploads the weights and loads the kernels on the current
 *  CUDA device, which must be that chip. */
int humming_layer_transform(humming_layer *layer, const char *device,
                            const char *chip, int compile_only);

/** humming_layer_transform with a `tile_config` ("#humming.tile_config<...>",
 *  or NULL for the device heuristics) that serves every M: tuning, as
 *  humming-select-tiles' force-tile-config. Prepared layouts only. */
int humming_layer_transform_tuned(humming_layer *layer, const char *device,
                                  const char *chip, int compile_only,
                                  const char *tile_config);

/** y = x * W^T on `stream` (a CUstream, NULL: the legacy default stream);
 *  `input` [M, K] and `output` [M, N] are device pointers. No
 *  synchronization. Calls on one layer may overlap in time on several
 *  streams: what a call writes and reads back (split-K workspace, codes)
 *  has a block per stream, allocated at the stream's first call (or taken
 *  from those humming_layer_set_streams reserved, during graph capture);
 *  later calls on that stream allocate nothing. */
int humming_layer_forward(const humming_layer *layer, void *stream,
                          uint64_t input, uint64_t output, int64_t m);

/** A layer of 8-bit activations: `activation` "f8E4M3FN", "f8E5M2" or
 *  "si8" (two's-complement int8; integer weights only) or "si4"
 *  (two's-complement int4 packed two per byte, the lower k in the low
 *  nibble; 4-bit integer weights without zero points) codes with f32
 *  scales, `scaling` "token" (one per row), "static" (one for all) or
 *  "group<g>" (one per row and g of K, g a power of two >= 64: f8E4M3FN,
 *  f8E5M2 or si8 over weights of that type without zero points, sm_90a;
 *  DeepSeek-V3's FP8 is "group<128>" over f8E4M3FN weights with block<128,
 *  128> scales), `output` "f16" or "bf16" (also the type of the bias and of
 *  float zero points). Runs over prepared weights (sm_90a: wgmma; si8 from
 *  sm_80 and fp8 from sm_89: mma.sync m16n8k32; si4: mma.sync m16n8k64
 *  from sm_80); the
 *  activations come from humming_quantizer_forward (or any producer of the
 *  same codes and scales). */
int humming_layer_create_quantized(int64_t n, int64_t k,
                                   const humming_weight_schema *weight,
                                   const char *activation, const char *scaling,
                                   const char *output, humming_layer **out);

/** For the next transform of a layer of 8-bit activations scaled per
 *  token (or 8-bit ones per group): humming_layer_forward then takes 16-bit
 *  activations (the output
 *  type) of up to `rows` rows and quantizes them itself
 *  (LayerTarget::activationRows); 0, the default, refuses them. */
int humming_layer_set_activation_rows(humming_layer *layer, int64_t rows);

/** For the next transform: the per-stream scratch blocks made up front
 *  (LayerTarget::streams, default 2, at most 64). A layer may be called
 *  from several streams at once; what a call writes and reads back (the
 *  split-K workspace, the codes of humming_layer_set_activation_rows) has a
 *  block per stream, made at the stream's first call — except during CUDA
 *  graph capture, where the stream takes one of these, and a call with
 *  none left fails saying so. */
int humming_layer_set_streams(humming_layer *layer, int64_t streams);

/** y = dequantized(codes) * W^T for a layer of 8-bit activations: `codes`
 *  [M, humming_layer_activation_k] one byte each (16-byte aligned),
 *  `scales` their f32 scales ([M] per token, [M, ceil(K / g)] per group,
 *  [1] static). As humming_layer_forward otherwise. */
int humming_layer_forward_quantized(const humming_layer *layer, void *stream,
                                    uint64_t codes, uint64_t scales,
                                    uint64_t output, int64_t m);

/** What the last transform did and what it cost. */
typedef struct humming_transform_stats {
  int compiled; /**< kernels made by the pipeline and a compiler */
  int cached;   /**< kernels read from the kernel cache */
  /** Wall seconds to get every kernel (compiled in parallel, or cached)
   *  and load it into the device's context. */
  double kernel_seconds;
  /** Wall seconds of the slowest kernel alone (one thread each). */
  double slowest_kernel_seconds;
  /** Wall seconds to prepare the weights for the chip and upload them. */
  double weight_seconds;
} humming_transform_stats;

/** After transform: fills *stats. */
int humming_layer_transform_stats(const humming_layer *layer,
                                  humming_transform_stats *stats);

/** After transform: the compiler's reports of lost performance for the
 *  layer's kernels ("kernel <i>: <line>", one per line; "" when none, and
 *  for NULL). Owned by the layer, valid until its next transform or
 *  destroy. */
const char *humming_layer_compiler_reports(const humming_layer *layer);

/** The first-use probe (Layer::transform on a chip Humming's GPU suite has
 *  not run on: the kernels checked on the GPU against a simpler family,
 *  which replaces them where they disagree; FirstUseProbe.h). `mode`
 *  HUMMING_PROBE_AUTO (the default: on such chips), HUMMING_PROBE_ALWAYS or
 *  HUMMING_PROBE_NEVER; the environment variable HUMMING_PROBE replaces it
 *  when set. Before transform. */
#define HUMMING_PROBE_AUTO 0
#define HUMMING_PROBE_ALWAYS 1
#define HUMMING_PROBE_NEVER 2
int humming_layer_set_probe(humming_layer *layer, int mode);
/** After transform: what the probe found (the kernels compared, at which
 *  M, how far apart, what the layer kept) or why it did not run; "" after
 *  a compile-only transform and for NULL. Owned by the layer, valid until
 *  its next transform or destroy. */
const char *humming_layer_probe(const humming_layer *layer);

/** The process's kernel compiler, "<name> (<version>)" (e.g.
 *  "nvjitlink+ptxas (nvJitLink 13.0 / ptxas 13.0.88)"); NULL, with
 *  humming_last_error, where none could be chosen. Valid for the process. */
const char *humming_compiler(void);

/** The facts the tile heuristics use for a known `device` ("H200"), else
 *  for the representative device of `chip` ("sm_90a"), as a transform
 *  without a known device name does: the SM count and the peak memory
 *  bandwidth in GB/s (what a decode kernel's floor is measured against). */
int humming_device_facts(const char *device, const char *chip,
                         int64_t *sm_count, double *memory_gbs);

/** After transform: the number of kernels (one per M range) and whether
 *  the weights use the prepared (fast) layout. */
int humming_layer_kernel_count(const humming_layer *layer);
int humming_layer_is_prepared(const humming_layer *layer);

/* ---- Activation quantization (the original's quant_input) ------------ */

typedef struct humming_quantizer humming_quantizer;

/** A quantizer of activations [M, K] of `source` ("f16", "bf16" or "f32")
 *  to codes of `type` ("e4m3", "e5m2", "int8"; "int4" or "e2m1" packed two
 *  per byte, the lower k in the low nibble) with f32 scales
 *  per "token", per "group" of `group_k` elements, or one "static" scale;
 *  the codes follow the host reference bit for bit. */
int humming_quantizer_create(const char *type, const char *scaling,
                             int64_t group_k, const char *source, int64_t k,
                             humming_quantizer **out);
void humming_quantizer_destroy(humming_quantizer *quantizer);
/** Rows of `codes_k` codes (at least K; 0: K) instead of K: the columns
 *  past K get the code of zero, as a layer whose K is not a multiple of 16
 *  bytes of codes takes them (humming_layer_activation_k). Per token and
 *  static scaling; drops an earlier transform (transform again). */
int humming_quantizer_set_codes_k(humming_quantizer *quantizer,
                                  int64_t codes_k);
/** Compiles the kernel for a known `device` or a `chip` (either may be
 *  NULL; e4m3 and e5m2 need sm_89 or later) through the kernel cache and,
 *  unless `compile_only`, loads it on the current CUDA device. */
int humming_quantizer_transform(humming_quantizer *quantizer,
                                const char *device, const char *chip,
                                int compile_only);
/** Quantizes `m` rows of `input` (device pointer, 16-byte aligned) into
 *  `codes` ([M, codes_k] bytes, [M, codes_k / 2] for 4-bit codes; codes_k
 *  is K unless set; 8-byte aligned) and
 *  `scales` (f32: [M, 1] per token, [M, K / group_k] per group, written;
 *  static: the one scale, read). No allocation, no synchronization. */
int humming_quantizer_forward(const humming_quantizer *quantizer,
                              void *stream, uint64_t input, uint64_t codes,
                              uint64_t scales, int64_t m);

/** A whole mixture-of-experts block (humming::MoeLayer): router top-k ids
 *  -> the indexed gate_up GEMM [E, 2I, H] -> SiLU(gate) * up -> the down
 *  GEMM [E, H, I] with router weights -> the sum over top_k. `activation`
 *  "f16" or "bf16" (x, y and the intermediates); block_size 0 (each call
 *  routes with its tiles' block size: 16 rows per expert at decode, 64 or
 *  128 for prefill) or a fixed multiple of 16 (sorted_ids' padding per
 *  expert). */
typedef struct humming_moe_layer humming_moe_layer;
int humming_moe_layer_create(int64_t hidden, int64_t intermediate,
                             int64_t experts, int64_t top_k,
                             int64_t block_size,
                             const humming_weight_schema *gate_up,
                             const humming_weight_schema *down,
                             const char *activation, humming_moe_layer **out);
/** A MoE block of 8-bit activations: humming_layer_create_quantized's
 *  `activation` ("f8E4M3FN", "f8E5M2", "si8"; integer weights for si8),
 *  `scaling` ("token" or "group<g>": each GEMM quantizes its own input on
 *  the GPU, x and then the gated intermediate, so "static" is refused) and
 *  `output` ("f16" or "bf16": the type of x, y and the intermediates).
 *  humming_moe_layer_forward takes x of the output type. */
int humming_moe_layer_create_quantized(
    int64_t hidden, int64_t intermediate, int64_t experts, int64_t top_k,
    int64_t block_size, const humming_weight_schema *gate_up,
    const humming_weight_schema *down, const char *activation,
    const char *scaling, const char *output, humming_moe_layer **out);
/** A MoE block whose experts come from a checkpoint directory: expert e's
 *  projections are the modules `pattern` ("...experts.{e}") + "." + gate /
 *  up / down (NULL: "gate_proj", "up_proj", "down_proj"), or, for a pattern
 *  without "{e}", the module holding every expert (gpt-oss: gate_up_proj
 *  with interleaved gate and up rows, and `down`); sizes from the tensors,
 *  the model's 16-bit activations. */
int humming_moe_layer_create_from_checkpoint(
    const char *dir, const char *pattern, int64_t experts, int64_t top_k,
    int64_t block_size, const char *gate, const char *up, const char *down,
    humming_moe_layer **out);
/** The same from tensors a host holds (humming_tensor, names relative to
 *  the block: "experts.0.gate_proj.qweight" with `pattern` "experts.{e}")
 *  and the model's config.json text, as humming_layer_create_from_tensors
 *  reads them. */
int humming_moe_layer_create_from_tensors(
    const char *config_json, const humming_tensor *tensors, int64_t count,
    const char *pattern, int64_t experts, int64_t top_k, int64_t block_size,
    const char *gate, const char *up, const char *down,
    humming_moe_layer **out);
void humming_moe_layer_destroy(humming_moe_layer *layer);
/** H, I and the 16-bit type of x and y ("f16" or "bf16"; 8-bit activations
 *  are quantized from it) of a MoE block (-1 / NULL for a NULL layer). */
int64_t humming_moe_layer_hidden(const humming_moe_layer *layer);
int64_t humming_moe_layer_intermediate(const humming_moe_layer *layer);
const char *humming_moe_layer_activation(const humming_moe_layer *layer);
/** Quantizes float weights: gate_up [E, 2I, H] (each expert's gate rows,
 *  then its up rows), down [E, H, I], row-major. */
int humming_moe_layer_quantize(humming_moe_layer *layer, const float *gate_up,
                               const float *down);
/** The gated activation between the GEMMs: with gate g and up u,
 *  g / (1 + e^(-alpha g)) * (u + up_offset), g clamped to at most `limit`
 *  and u to [-limit, limit] where limit > 0. SiLU-and-mul (the default):
 *  1, 0, 0; gpt-oss: 1.702, 1, 7 (set by create_from_checkpoint when
 *  config.json has swiglu_limit). Transform again after changing it. */
int humming_moe_layer_set_activation(humming_moe_layer *layer, double alpha,
                                     double up_offset, double limit);
/** For the next transform: the per-stream scratch blocks made up front
 *  (LayerTarget::streams, default 2, at most 64). Each stream that calls
 *  the layer has its own block of routing and intermediate rows for
 *  max_tokens tokens (made at its first call, or taken from these during
 *  CUDA graph capture); 1 or 0 saves that memory where no stream's first
 *  call comes during a capture. */
int humming_moe_layer_set_streams(humming_moe_layer *layer, int64_t streams);
/** Compiles every kernel for the device / chip and, unless compile_only,
 *  makes the per-stream scratch blocks for up to max_tokens tokens. */
int humming_moe_layer_transform(humming_moe_layer *layer, const char *device,
                                const char *chip, int compile_only,
                                int64_t max_tokens);
/** y [m, H] from x [m, H], topk_ids [m, top_k] int32 and topk_weights
 *  [m, top_k] float32 (device pointers) on `stream`. */
int humming_moe_layer_forward(const humming_moe_layer *layer, void *stream,
                              uint64_t x, uint64_t topk_ids,
                              uint64_t topk_weights, uint64_t y, int64_t m);

/** The router's top-k ids into a grouped routing on the GPU and the rows
 *  moved around a grouped GEMM (humming::MoeGrouping; the GEMM:
 *  humming_layer_create_moe with "grouped_contiguous" or
 *  "grouped_masked"). max_tokens 0: grouped_contiguous (rows sorted by
 *  expert, offsets [E + 1]); else grouped_masked (max_tokens rows per
 *  expert, counts [E]). row_bytes[count]: the widths in bytes (multiples
 *  of 4) of the rows scatter and gather will move, e.g. 2 K and 2 N of
 *  16-bit activations and outputs. */
typedef struct humming_moe_grouping humming_moe_grouping;
int humming_moe_grouping_create(int64_t experts, int64_t top_k,
                                int64_t max_tokens, const int64_t *row_bytes,
                                int64_t count, humming_moe_grouping **out);
void humming_moe_grouping_destroy(humming_moe_grouping *grouping);
int humming_moe_grouping_transform(humming_moe_grouping *grouping,
                                   const char *device, const char *chip,
                                   int compile_only);
/** The GEMM's rows for m tokens (m * top_k, or E * max_tokens) and the
 *  expert layout's entries (E + 1, or E); -1 for a NULL grouping. */
int64_t humming_moe_grouping_rows(const humming_moe_grouping *grouping,
                                  int64_t m);
int64_t humming_moe_grouping_layout_size(const humming_moe_grouping *grouping);
/** topk_ids [m, top_k] int32 -> positions [m * top_k] int32 (each id's
 *  grouped row, -1 for ids outside 0 .. E - 1) and the expert layout
 *  (int32 offsets or counts). grouped_masked takes m <= max_tokens. */
int humming_moe_grouping_forward(const humming_moe_grouping *grouping,
                                 void *stream, uint64_t topk_ids, int64_t m,
                                 uint64_t positions, uint64_t expert_layout);
/** grouped[positions[i]] = rows[i / top_k] (rows of row_bytes) for
 *  i < m * top_k. */
int humming_moe_grouping_scatter(const humming_moe_grouping *grouping,
                                 void *stream, int64_t row_bytes,
                                 uint64_t rows, int64_t m, uint64_t positions,
                                 uint64_t grouped);
/** The router weights [m, top_k] float32 into the grouped rows' order. */
int humming_moe_grouping_scatter_weights(const humming_moe_grouping *grouping,
                                         void *stream, uint64_t topk_weights,
                                         int64_t m, uint64_t positions,
                                         uint64_t grouped);
/** rows[i] = grouped[positions[i]] for i < m * top_k (zero where the id
 *  has no row). */
int humming_moe_grouping_gather(const humming_moe_grouping *grouping,
                                void *stream, int64_t row_bytes,
                                uint64_t grouped, int64_t m,
                                uint64_t positions, uint64_t rows);

#ifdef __cplusplus
}
#endif

#endif /* HUMMING_C_HUMMING_H */
