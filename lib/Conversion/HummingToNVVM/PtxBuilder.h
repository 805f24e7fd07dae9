//===- PtxBuilder.h - The lowering's one way to inline PTX ------*- C++ -*-===//
//
// Every llvm.inline_asm the kernel emitters make comes from here: the few
// instructions MLIR 22's NVVM dialect has no op for, or whose op (or LLVM
// intrinsic) has semantics the kernels cannot use. docs/Rationale.md
// ("Inline PTX") lists each method and why it is not an NVVM op; everything
// else is emitted as NVVM / LLVM dialect ops.
//
//===----------------------------------------------------------------------===//

#ifndef HUMMING_LIB_CONVERSION_HUMMINGTONVVM_PTXBUILDER_H
#define HUMMING_LIB_CONVERSION_HUMMINGTONVVM_PTXBUILDER_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::humming {

class PtxBuilder {
public:
  explicit PtxBuilder(ImplicitLocOpBuilder &b) : b(b) {}

  /// (x & mask) | orValue as one lop3.b32 (LUT 0xEA), pure: LLVM may move
  /// and merge it. PTX has no lop3 op in NVVM; LLVM would split the
  /// and/or pair into two LOP3s (one immediate each) where the mask and
  /// orValue are both constants.
  Value maskOr(Value x, uint32_t mask, Value orValue);


  /// `v` (i32) through a volatile mov.b32: the same value, which LLVM can
  /// neither see through nor move, so what is computed from it inside a
  /// loop stays inside (the MoE kernels' passes recompute the thread's
  /// coordinates from it; hoisted out of the pass loop they stayed live
  /// across the kernel: 79 -> 231 registers). No NVVM op hides a value.
  Value opaque(Value v);

  /// griddepcontrol.wait then griddepcontrol.launch_dependents with a
  /// memory clobber. NVVM's griddepcontrol op lowers to intrinsics that
  /// are IntrNoMem, which would let loads and copies move across the wait.
  void gridDependencyWait();

  /// `text` (a wgmma.fence / wgmma.wait_group) with each of `vals` read and
  /// rewritten (tied "+r" / "+f" / "+l"): the values' other uses stay on
  /// their side of it. NVVM's wgmma.fence / wait ops take no operands, so
  /// nothing would stop LLVM moving the fragments' and accumulators'
  /// definitions and uses across them (ptxas then serializes the wgmmas).
  SmallVector<Value> wgmmaFence(ArrayRef<Value> vals);
  SmallVector<Value> wgmmaWait(int64_t pending, ArrayRef<Value> vals);

  /// Spins until the phase of parity `parity` (i32) of the mbarrier at
  /// `bar` (ptr<3>) has completed: mbarrier.try_wait.parity in a PTX loop,
  /// without a suspend-time hint. nvvm.mbarrier.try_wait.parity (the same
  /// loop) requires the hint, with which the W8A16 M = 128 kernel took
  /// 3.8 % longer on the H200 (bench/NOTES.md, "Upstream NVVM ops");
  /// nvvm.mbarrier.try_wait (one test) in an scf.while made a CFG loop
  /// around which the 128-token consumer spilled.
  void mbarrierWaitParity(Value bar, Value parity);

  /// bar.red.or.pred on named barrier `id` for `threads` threads: whether
  /// `pred` (i32) is non-zero in any of them, as an i32 (0 or 1).
  /// nvvm.barrier takes a reduction only on barrier 0 over the whole block;
  /// the wgmma workspace split reduces over the consumer warpgroups alone.
  Value barrierReduceOr(int64_t id, int64_t threads, Value pred);

  /// wgmma.mma_async m64 n`n` of operand type `type` (f16 / bf16: k16;
  /// e4m3 / e5m2 / s8: k32) with the A fragment in registers (`a`: four
  /// b32), B by shared-memory descriptor `descB`, accumulators `acc` (n / 2,
  /// f32; s32 for s8; read and written), scale-d 1 (`accumulate`; 0: D =
  /// A B, the sums' old values ignored). nvvm.wgmma.mma_async takes A by
  /// descriptor only.
  SmallVector<Value> wgmmaRegisterA(int64_t n, StringRef type,
                                    ArrayRef<Value> a, Value descB,
                                    ArrayRef<Value> acc,
                                    bool accumulate = true);

private:
  LLVM::InlineAsmOp asmOp(TypeRange results, ValueRange operands,
                          StringRef text, StringRef constraints,
                          bool sideEffects);
  SmallVector<Value> tied(StringRef text, ArrayRef<Value> vals);

  ImplicitLocOpBuilder &b;
};

} // namespace mlir::humming

#endif // HUMMING_LIB_CONVERSION_HUMMINGTONVVM_PTXBUILDER_H
