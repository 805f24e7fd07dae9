//===- WeightQuantizeCases.h - Weights quantized on a GPU -------*- C++ -*-===//
//
// The weight quantization cases of humming-gpu-test (WeightQuantizeCases.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_TOOLS_GPU_TEST_WEIGHTQUANTIZECASES_H
#define HUMMING_TOOLS_GPU_TEST_WEIGHTQUANTIZECASES_H

#include "Humming/Runtime/CudaDriver.h"

#include <string>

struct WeightQuantizeTally {
  int passed = 0, failed = 0;
};

/// Quantizes every weight case whose name contains `filter` on the device
/// (Layer::quantizeOnDevice) and on the host (Layer::quantize) from the
/// same values and compares the canonical tensors byte for byte, then
/// transforms the layer for `chip`; one line per case ("<case> ok" /
/// "FAIL <why>"). Without `quick`, two model-sized cases also time a
/// quantization and a cached transform.
WeightQuantizeTally runWeightQuantizeCases(const humming::rt::CudaDriver &cu,
                                           const std::string &chip,
                                           const std::string &filter,
                                           bool quick);

#endif // HUMMING_TOOLS_GPU_TEST_WEIGHTQUANTIZECASES_H
