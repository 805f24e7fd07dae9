//===- QuantizeCases.h - humming.quantize of activations on a GPU -*- C++ -*-===//
//
// The activation quantization cases of humming-gpu-test (QuantizeCases.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_TOOLS_GPU_TEST_QUANTIZECASES_H
#define HUMMING_TOOLS_GPU_TEST_QUANTIZECASES_H

#include "Humming/Runtime/CudaDriver.h"

#include <string>

struct QuantizeTally {
  int passed = 0, failed = 0;
};

/// Compiles every activation quantization case whose name contains
/// `filter` for `chip` (fp8 cases from sm_89 on) through
/// humming::ActivationQuantizer and, with a driver, runs
/// each at its M values against the host reference, printing one line per
/// run ("<case> M=<m>  ok" / "FAIL <why>" / "ERROR <why>"); without one
/// (compile-only) a case passes when it compiles. `timing` times the last M
/// of the cases with K >= 4096. `ptxDir`, when set, receives <case>.ptx.
QuantizeTally runQuantizeCases(const humming::rt::CudaDriver *cu,
                               const std::string &chip,
                               const std::string &filter, bool quick,
                               bool timing, const std::string &ptxDir);

#endif // HUMMING_TOOLS_GPU_TEST_QUANTIZECASES_H
