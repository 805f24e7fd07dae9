//===- MmaSync.h - The mma.sync GEMM kernel ---------------------*- C++ -*-===//

#ifndef HUMMING_LIB_CONVERSION_HUMMINGTONVVM_MMASYNC_H
#define HUMMING_LIB_CONVERSION_HUMMINGTONVVM_MMASYNC_H

#include "Humming/Quant/Schema.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"

namespace mlir::humming {

/// Everything the kernel is specialised on (the JIT bakes every constant in).
struct GemmKernelSpec {
  ::humming::WeightSchema weight;
  ::humming::InputSchema input;
  ::humming::ScalarType output = ::humming::ScalarType::f16();
  int64_t nOut = 0; ///< logical N (columns written)
  int64_t kAct = 0; ///< logical K (columns of the activations)
  int64_t np = 0;   ///< padded N of the weights
  int64_t kp = 0;   ///< padded K of the weights
};

/// Appends the kernel `name` for `spec` to `module`. Its parameters follow
/// Humming/Target/KernelABI.h.
gpu::GPUFuncOp buildMmaSyncGemmKernel(OpBuilder &builder, Location loc,
                                      gpu::GPUModuleOp module, StringRef name,
                                      const GemmKernelSpec &spec);

/// The shape of a prepared-layout mma_sync kernel (from a tile_config):
/// warps of warpM x 64 outputs, warpsN of them along N, kSplit warp groups
/// splitting each block_k chunk of K (kTilesPerWarp k-tiles of 16 each), and
/// loads issued stages - 1 iterations ahead.
struct PreparedTile {
  int64_t warpM = 16;
  int64_t warpsN = 1;
  int64_t kSplit = 1;
  int64_t kTilesPerWarp = 2;
  int64_t stages = 3;

  int64_t blockN() const { return 64 * warpsN; }
  int64_t threads() const { return 32 * warpsN * kSplit; }
  /// f32 slots of shared memory for the in-block split-K reduction.
  int64_t workspaceFloats() const;
};

/// Appends the prepared-layout kernel `name` for `spec` and `tile`.
gpu::GPUFuncOp buildMmaSyncPreparedKernel(OpBuilder &builder, Location loc,
                                          gpu::GPUModuleOp module,
                                          StringRef name,
                                          const GemmKernelSpec &spec,
                                          const PreparedTile &tile);

} // namespace mlir::humming

#endif // HUMMING_LIB_CONVERSION_HUMMINGTONVVM_MMASYNC_H
