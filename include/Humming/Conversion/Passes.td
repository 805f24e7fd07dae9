//===- Passes.td - humming conversion passes ---------------*- tablegen -*-===//

#ifndef HUMMING_CONVERSION_PASSES_TD
#define HUMMING_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def HummingLowerToNVVMPass : Pass<"humming-lower-to-nvvm", "::mlir::ModuleOp"> {
  let summary = "Lower humming.gemm to an NVVM kernel and its launch";
  let description = [{
    Replaces every `humming.gemm` by a `gpu.launch_func` of a kernel generated
    into the module's `gpu.module @humming_kernels`. The kernel body is built
    from arith, scf, llvm and nvvm operations (`nvvm.mma.sync` m16n8k16 with
    fp32 accumulation); the launch passes device pointers and M as the
    runtime ABI (Humming/Target/KernelABI.h) says.

    Canonical weights (no `layout`) get one general kernel that reads the
    canonical layout directly and dequantizes in registers: every integer
    width 1-8 (implicit, integer or float zero points), signed integers,
    every small float, channel, group, block, tensor and group_tensor scales
    in any scale type, global scales, bias, padded N and K and any M, on
    fp16 and bf16 activations.

    Weights in the prepared mma_sync layout (Humming/Quant/PreparedLayout.h)
    get one kernel per `tile_configs` entry (written by
    `humming-select-tiles`), chosen by M in the host code and recorded in the
    module's `humming.kernels` table, one emitter per MMA generation:
    `mma = mma_sync` (sm_80 and later: a cp.async pipeline of `stages`
    slots in dynamic shared memory, ldmatrix for activations, per-warp,
    shared-activation or cooperative copies, in-block split-K over
    block_k / warp_k warp groups) and `mma = wgmma` (sm_90a: the transposed
    product with the dequantized weights as the register A operand,
    optionally warp-specialized with mbarriers, TMA tensor and bulk
    copies). Both dequantize bit-plane weights in pairs with magic numbers
    or exponent placement.

    `humming.moe_gemm` (prepared weights only) lowers to the same kernels
    with a routing prologue: each block reads its expert and rows (indexed,
    grouped_contiguous or grouped_masked) into a row table in shared
    memory, gathers and scatters through it and offsets the weight-side
    pointers to its expert; the host code chooses the kernel by the tokens
    per expert and launches the routing's grid (KernelABI.h `moeGrid`).
    `humming.moe_align`, `humming.silu_and_mul` and `humming.moe_sum` lower
    to small kernels of their own.

    `split_k` CTAs share a tile's K through a module workspace or, with a
    cluster split, a thread block cluster's distributed shared memory; with
    `f16_accumulation` the mma_sync kernels accumulate in f16. The kernels
    are NVVM ops wherever MLIR has one (mma.sync, ldmatrix, cp.async,
    mbarriers, TMA, fences, barriers, cluster ops, setmaxregister); the few
    instructions without one are inline PTX from one builder
    (docs/Rationale.md, "Inline PTX").
    8/4-bit activations and MoE on canonical weights, f16 accumulation on
    canonical weights, tile
    features the kernels lack (stream-K, multicast, `grid_cap`,
    `write_splits`, `cp_async = false`),
    `tile_configs` on canonical weights and every other humming op
    (`dequantize`, `repack`, `quantize` of weights) are diagnosed, not
    dropped. A module with a `humming.target` must
    be compiled for that target's chip and PTX version (`chip=` and
    `ptx-version=` must name them; `compileToPtx` and humming-translate take
    the version from the target).

    ```sh
    humming-opt --humming-lower-to-nvvm="chip=sm_90a" layer.mlir
    ```
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_80\"",
           "Chip the kernels are generated for (sm_80 or newer)">,
    Option<"ptxVersion", "ptx-version", "unsigned", /*default=*/"0",
           "PTX ISA version x10 the kernels will be emitted with (0: the "
           "chip's minimum); checked here, before any code generation">,
    Option<"onlyKernel", "only-kernel", "int", /*default=*/"-1",
           "Generate only prepared kernel #i (its M range's); the others "
           "become empty stubs never to be launched from this module. The "
           "JIT runs one pipeline per kernel, in parallel">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect",
  ];
}

def HummingKernelParamsPass
    : Pass<"humming-kernel-params", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Give TMA-activation kernels their tensor-map parameter";
  let description = [{
    Runs after `convert-gpu-to-nvvm` (the named pipeline does). A prepared
    kernel with `tma = [a]` reads its activations through a tensor map the
    runtime encodes per launch and passes by value after M
    (Humming/Target/KernelABI.h, `input_map` in the kernel table). The
    lowering leaves calls of `__humming_input_map` where the kernel needs
    the map's address; this pass appends the parameter — a 128-byte
    `llvm.byval` array, 64-byte aligned, `nvvm.grid_constant`, so the PTX
    declares `.param .align 64 .b8 name_param_8[128]` and takes its address
    with `cvta.param` — replaces the calls with it and erases the
    declaration. Kernels without such calls are unchanged; a call outside
    a kernel is an error.
  }];
  let dependentDialects = [
    "::mlir::LLVM::LLVMDialect",
    "::mlir::NVVM::NVVMDialect",
  ];
}

#endif // HUMMING_CONVERSION_PASSES_TD
