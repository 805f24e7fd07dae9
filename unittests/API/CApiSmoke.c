/*===- CApiSmoke.c - The C API, compiled as C ------------------------------===
 *
 * Proves the header is C: a layer created, quantized and transformed
 * compile-only through the C API, and its errors. Returns 0 or writes what
 * went wrong into `why`.
 *
 *===----------------------------------------------------------------------===*/

#include "humming-c/humming.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int humming_c_smoke(char *why, size_t size) {
  humming_weight_schema w;
  memset(&w, 0, sizeof w);
  w.type = "uint4";
  w.scale_type = "f16";
  w.granularity = "group";
  w.group_k = 128;
  humming_layer *layer = NULL;
  if (humming_layer_create(256, 512, &w, "f16", 0, &layer) != 0) {
    snprintf(why, size, "create: %s", humming_last_error());
    return 1;
  }
  float *weights = (float *)malloc(sizeof(float) * 256 * 512);
  for (int i = 0; i < 256 * 512; ++i)
    weights[i] = (float)((i % 17) - 8) * 0.01f;
  int rc = humming_layer_quantize(layer, weights, NULL);
  free(weights);
  if (rc != 0) {
    snprintf(why, size, "quantize: %s", humming_last_error());
    humming_layer_destroy(layer);
    return 1;
  }
  if (humming_layer_forward(layer, NULL, 0, 0, 1) == 0 ||
      strcmp(humming_last_error(), "call transform() before forward()") != 0) {
    snprintf(why, size, "forward before transform: '%s'", humming_last_error());
    humming_layer_destroy(layer);
    return 1;
  }
  if (humming_layer_transform(layer, "H200", NULL, 1) != 0) {
    snprintf(why, size, "transform: %s", humming_last_error());
    humming_layer_destroy(layer);
    return 1;
  }
  /* 256 x 512 on the H200: M ranges 1-8, 9-64, 65-512, 513- (equal tiles
     merged, not across 8 / 9). */
  if (humming_layer_kernel_count(layer) != 4 || !humming_layer_is_prepared(layer)) {
    snprintf(why, size, "expected 4 prepared kernels, got %d (prepared %d)",
             humming_layer_kernel_count(layer), humming_layer_is_prepared(layer));
    humming_layer_destroy(layer);
    return 1;
  }
  humming_transform_stats stats;
  if (humming_layer_transform_stats(layer, &stats) != 0 ||
      stats.compiled + stats.cached != 4 || stats.kernel_seconds < 0 ||
      stats.slowest_kernel_seconds > stats.kernel_seconds ||
      stats.weight_seconds < 0) {
    snprintf(why, size, "transform stats: %d compiled, %d cached, %g s, %g s, %g s",
             stats.compiled, stats.cached, stats.kernel_seconds,
             stats.slowest_kernel_seconds, stats.weight_seconds);
    humming_layer_destroy(layer);
    return 1;
  }
  /* No kernel of this layer relies on what a compiler might drop. */
  if (humming_layer_compiler_reports(layer)[0] != '\0') {
    snprintf(why, size, "compiler reports: %s",
             humming_layer_compiler_reports(layer));
    humming_layer_destroy(layer);
    return 1;
  }
  humming_layer_destroy(layer);

  /* The activation quantizer: per-token e4m3 codes from bf16, compile-only
   * for the H200 (the launch runs in the GPU suite). */
  humming_quantizer *q = NULL;
  if (humming_quantizer_create("e4m3", "token", 0, "bf16", 4096, &q) != 0) {
    snprintf(why, size, "quantizer create: %s", humming_last_error());
    return 1;
  }
  if (humming_quantizer_transform(q, "H200", NULL, 1) != 0) {
    snprintf(why, size, "quantizer transform: %s", humming_last_error());
    humming_quantizer_destroy(q);
    return 1;
  }
  if (humming_quantizer_forward(q, NULL, 0x1000, 0x2000, 0x3000, 4) == 0 ||
      strcmp(humming_last_error(),
             "the quantizer was transformed compile-only for sm_90a; "
             "transform it for a device to run it") != 0) {
    snprintf(why, size, "quantizer forward compile-only: '%s'",
             humming_last_error());
    humming_quantizer_destroy(q);
    return 1;
  }
  humming_quantizer_destroy(q);

  /* A layer from tensors as an engine holds them: a compressed-tensors
   * int8 channel layer (weight [64, 128] i8, weight_scale [64, 1] f16),
   * its canonical weight read back. */
  {
    static signed char codes[64 * 128];
    static unsigned short scale[64];
    for (int i = 0; i < 64 * 128; ++i)
      codes[i] = (signed char)((i % 255) - 127);
    for (int i = 0; i < 64; ++i)
      scale[i] = 0x2000; /* 2^-7 in f16 */
    int64_t wshape[2] = {64, 128}, sshape[2] = {64, 1};
    humming_tensor ts[2] = {
        {"weight", "I8", 2, wshape, codes, sizeof codes},
        {"weight_scale", "F16", 2, sshape, scale, sizeof scale}};
    const char *config =
        "{\"torch_dtype\": \"float16\", \"quantization_config\": "
        "{\"quant_method\": \"compressed-tensors\", \"format\": "
        "\"int-quantized\", \"config_groups\": {\"g\": {\"targets\": "
        "[\"Linear\"], \"weights\": {\"num_bits\": 8, \"type\": "
        "\"int\", \"symmetric\": true, \"strategy\": \"channel\"}}}}}";
    humming_layer *t = NULL;
    if (humming_layer_create_from_tensors(config, ts, 2, "proj", "column", 0,
                                          1, "16-bit", &t) != 0) {
      snprintf(why, size, "create from tensors: %s", humming_last_error());
      return 1;
    }
    const char *dtype = NULL;
    int64_t shape[8], rank = 0;
    int64_t bytes = humming_layer_canonical_tensor(t, "weight", &dtype, shape,
                                                   &rank, NULL, 0);
    if (humming_layer_n(t) != 64 || humming_layer_k(t) != 128 ||
        bytes != 64 * 128 || rank != 2 || shape[0] != 64 ||
        strcmp(dtype, "I32") != 0) {
      snprintf(why, size,
               "from tensors: N %lld, K %lld, weight %lld bytes, rank %lld, "
               "dtype %s",
               (long long)humming_layer_n(t), (long long)humming_layer_k(t),
               (long long)bytes, (long long)rank, dtype ? dtype : "(null)");
      humming_layer_destroy(t);
      return 1;
    }
    humming_layer_destroy(t);
  }
  return 0;
}
