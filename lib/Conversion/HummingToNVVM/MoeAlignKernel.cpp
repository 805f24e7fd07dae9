//===- MoeAlignKernel.cpp - MoE routing on the GPU ------------------------===//
//
// The kernel of humming.moe_align: top-k expert ids [M, top_k] to the
// indexed routing of humming.moe_gemm (vLLM's moe_align_block_size):
// sorted_ids holds each expert's token*top_k+k ids, each expert padded to a
// multiple of block_size with the sentinel M*top_k; expert_ids the expert of
// each block of block_size ids; num_tokens_padded their total. Ids outside
// 0 .. E-1 (an expert_map's -1) are skipped: those (token, k) rows are
// nobody's.
//
// One block of kMoeAlignThreads threads (E <= kMoeAlignThreads):
//   1. counts[e] = 0; each thread adds its ids' experts with shared-memory
//      atomics;
//   2. a block-wide exclusive scan of the padded counts (warp shuffles, then
//      one value per warp) gives each expert's first slot;
//   3. thread e writes expert e's expert_ids and the sentinels of its
//      padding, thread 0 the total;
//   4. each thread places its ids at its expert's cursor (an atomic add:
//      the order inside an expert varies from run to run; a row's sums do
//      not depend on where in its block it lies).
//
// humming.moe_group runs the same block: grouped_contiguous is the scan
// with block_size 1 writing the offsets [E + 1] and each id's position
// (its cursor slot); grouped_masked skips the scan (expert e starts at
// e * max_tokens), writes the counts capped at max_tokens and positions
// past the cap as -1. Ids of no expert get position -1.
//
//===----------------------------------------------------------------------===//

#include "EmitterBase.h"
#include "Kernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>

using namespace mlir;
using namespace mlir::humming;
namespace hq = ::humming;
namespace abi = ::humming::abi;

namespace {

class MoeAlignEmitter : EmitterBase {
public:
  MoeAlignEmitter(ImplicitLocOpBuilder &b, const MoeAlignKernelSpec &spec,
                  ArrayRef<Value> params, Value shared)
      : EmitterBase(b, params), spec(spec), shared(shared) {}

  void emit() {
    using P = arith::CmpIPredicate;
    const int64_t E = spec.experts, T = kMoeAlignThreads;
    // grouped_contiguous: no padding between experts.
    const int64_t B =
        spec.routing == abi::kRoutingContiguous ? 1 : spec.blockSize;
    Value tid = index32(gpu::ThreadIdOp::create(b, gpu::Dimension::x));
    Value lane = arith::AndIOp::create(b, tid, c32(31));
    Value warp = arith::ShRUIOp::create(b, tid, c32(5));
    Value m = param(abi::ParamM);
    Value total = arith::MulIOp::create(b, m, c32(spec.topK));
    Value ids = param(abi::ParamInput);
    // Shared: counts / cursors [E], then the warps' sums [32].
    auto at = [&](Value i32Index) {
      return arith::IndexCastOp::create(b, b.getIndexType(), i32Index);
    };
    auto sharedLoad = [&](Value i) {
      return memref::LoadOp::create(b, shared, ValueRange{at(i)});
    };
    auto sharedStore = [&](Value v, Value i) {
      memref::StoreOp::create(b, v, shared, ValueRange{at(i)});
    };
    auto sharedAdd = [&](Value i, Value v) {
      return memref::AtomicRMWOp::create(b, arith::AtomicRMWKind::addi, v,
                                         shared, ValueRange{at(i)});
    };
    const bool contiguous = spec.routing == abi::kRoutingContiguous;
    const bool masked = spec.routing == abi::kRoutingMasked;
    // The thread's ids: i = tid, tid + T, ... < M * top_k; `body` for those
    // of an expert in 0 .. E - 1, `other` (if any) for the rest.
    auto forEachId = [&](function_ref<void(Value, Value)> body,
                         function_ref<void(Value)> other = nullptr) {
      auto loop = scf::ForOp::create(b, tid, total, c32(T));
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value i = loop.getInductionVar();
      Value e = load(i32, ids, ext64(i));
      Value ok = arith::AndIOp::create(b, arith::CmpIOp::create(b, P::sge, e, c32(0)),
                                       arith::CmpIOp::create(b, P::slt, e, c32(E)));
      auto ifOk = scf::IfOp::create(b, ok, /*withElseRegion=*/bool(other));
      b.setInsertionPointToStart(ifOk.thenBlock());
      body(i, e);
      if (other) {
        b.setInsertionPointToStart(ifOk.elseBlock());
        other(i);
      }
    };
    Value isExpert = arith::CmpIOp::create(b, P::slt, tid, c32(E));
    {
      auto ifE = scf::IfOp::create(b, isExpert, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifE.thenBlock());
      sharedStore(c32(0), tid);
    }
    gpu::BarrierOp::create(b);
    forEachId([&](Value, Value e) { sharedAdd(e, c32(1)); });
    gpu::BarrierOp::create(b);
    if (masked) {
      // grouped_masked: expert e's rows start at e * max_tokens; its count
      // is capped there, ids past the cap get position -1.
      const int64_t cap = spec.maxTokens;
      {
        auto ifE = scf::IfOp::create(b, isExpert, /*withElseRegion=*/false);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifE.thenBlock());
        Value count = sharedLoad(tid);
        store(arith::MinUIOp::create(b, count, c32(cap)),
              param(abi::ParamRowIds), ext64(tid));
      }
      gpu::BarrierOp::create(b); // every count is read: cursors from 0
      {
        auto ifE = scf::IfOp::create(b, isExpert, /*withElseRegion=*/false);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifE.thenBlock());
        sharedStore(c32(0), tid);
      }
      gpu::BarrierOp::create(b);
      Value positions = param(abi::ParamOutput);
      forEachId(
          [&](Value i, Value e) {
            Value j = sharedAdd(e, c32(1));
            Value row = arith::AddIOp::create(
                b, arith::MulIOp::create(b, e, c32(cap)), j);
            store(arith::SelectOp::create(
                      b, arith::CmpIOp::create(b, P::ult, j, c32(cap)), row,
                      c32(-1)),
                  positions, ext64(i));
          },
          [&](Value i) { store(c32(-1), positions, ext64(i)); });
      return;
    }
    // The padded count of expert tid, scanned across the block.
    Value count = arith::SelectOp::create(
        b, isExpert, sharedLoad(arith::MinUIOp::create(b, tid, c32(E - 1))),
        c32(0));
    Value padded = arith::MulIOp::create(
        b, arith::DivUIOp::create(b, arith::AddIOp::create(b, count, c32(B - 1)),
                                  c32(B)),
        c32(B));
    Value incl = padded;
    auto shuffleUp = [&](Value v, int64_t d) {
      return gpu::ShuffleOp::create(b, v, c32(d), c32(32), gpu::ShuffleMode::UP)
          .getShuffleResult();
    };
    for (int64_t d = 1; d < 32; d *= 2)
      incl = arith::AddIOp::create(
          b, incl,
          arith::SelectOp::create(b, arith::CmpIOp::create(b, P::uge, lane, c32(d)),
                                  shuffleUp(incl, d), c32(0)));
    const int64_t sums = E; // warp sums at [E, E + 32)
    {
      auto ifLast = scf::IfOp::create(
          b, arith::CmpIOp::create(b, P::eq, lane, c32(31)), false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifLast.thenBlock());
      sharedStore(incl, arith::AddIOp::create(b, warp, c32(sums)));
    }
    gpu::BarrierOp::create(b);
    {
      // Warp 0 scans the warps' sums in place.
      auto ifWarp0 = scf::IfOp::create(
          b, arith::CmpIOp::create(b, P::eq, warp, c32(0)), false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifWarp0.thenBlock());
      Value slot = arith::AddIOp::create(b, lane, c32(sums));
      Value v = arith::SelectOp::create(
          b, arith::CmpIOp::create(b, P::ult, lane, c32(T / 32)),
          sharedLoad(slot), c32(0));
      for (int64_t d = 1; d < 32; d *= 2)
        v = arith::AddIOp::create(
            b, v,
            arith::SelectOp::create(b, arith::CmpIOp::create(b, P::uge, lane, c32(d)),
                                    shuffleUp(v, d), c32(0)));
      sharedStore(v, slot);
    }
    gpu::BarrierOp::create(b);
    Value before = arith::SelectOp::create(
        b, arith::CmpIOp::create(b, P::eq, warp, c32(0)), c32(0),
        sharedLoad(arith::AddIOp::create(
            b, arith::MaxUIOp::create(b, warp, c32(1)), c32(sums - 1))));
    Value first = arith::SubIOp::create(
        b, arith::AddIOp::create(b, before, incl), padded);
    Value all = sharedLoad(c32(sums + T / 32 - 1));
    gpu::BarrierOp::create(b); // every count is read: the cursors replace them
    {
      auto ifE = scf::IfOp::create(b, isExpert, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifE.thenBlock());
      sharedStore(first, tid);
      if (contiguous) // the offsets (offsets[E] below)
        store(first, param(abi::ParamRowIds), ext64(tid));
      else
        writeExpertBlocks(first, count, padded, total, B);
    }
    {
      auto ifFirst = scf::IfOp::create(
          b, arith::CmpIOp::create(b, P::eq, tid, c32(0)), false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifFirst.thenBlock());
      if (contiguous)
        store(all, param(abi::ParamRowIds), c64(E));
      else
        store(all, param(abi::ParamRowsPadded), c64(0));
    }
    gpu::BarrierOp::create(b);
    if (contiguous) {
      Value positions = param(abi::ParamOutput);
      forEachId(
          [&](Value i, Value e) {
            store(sharedAdd(e, c32(1)), positions, ext64(i));
          },
          [&](Value i) { store(c32(-1), positions, ext64(i)); });
      return;
    }
    forEachId([&](Value i, Value e) {
      Value slot = sharedAdd(e, c32(1));
      store(i, param(abi::ParamRowIds), ext64(slot));
    });
  }

private:
  /// Indexed: expert `tid`'s expert_ids (its padded ids over block_size
  /// `B` from `first`) and the sentinel `total` in its padding.
  void writeExpertBlocks(Value first, Value count, Value padded, Value total,
                         int64_t B) {
    Value tid = index32(gpu::ThreadIdOp::create(b, gpu::Dimension::x));
    Value blocks = arith::DivUIOp::create(b, padded, c32(B));
    Value firstBlock = arith::DivUIOp::create(b, first, c32(B));
    {
      auto loop = scf::ForOp::create(b, c32(0), blocks, c32(1));
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(loop.getBody());
      store(tid, param(abi::ParamBlockExperts),
            ext64(arith::AddIOp::create(b, firstBlock,
                                        loop.getInductionVar())));
    }
    auto loop = scf::ForOp::create(b, arith::AddIOp::create(b, first, count),
                                   arith::AddIOp::create(b, first, padded),
                                   c32(1));
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(loop.getBody());
    store(total, param(abi::ParamRowIds), ext64(loop.getInductionVar()));
  }

  const MoeAlignKernelSpec &spec;
  Value shared;
};

} // namespace

std::string mlir::humming::moeAlignKernelProblem(const MoeAlignKernelSpec &s) {
  if (s.experts < 1 || s.experts > kMoeAlignThreads)
    return "expected 1 .. " + std::to_string(kMoeAlignThreads) +
           " experts (one thread of the routing block each), got " +
           std::to_string(s.experts);
  if (s.routing == abi::kRoutingMasked &&
      (s.maxTokens < 1 ||
       s.maxTokens > std::numeric_limits<int32_t>::max() / s.experts))
    return "expected max_tokens in 1 .. (2^31 - 1) / experts, got " +
           std::to_string(s.maxTokens);
  if (s.routing != abi::kRoutingIndexed &&
      s.routing != abi::kRoutingContiguous && s.routing != abi::kRoutingMasked)
    return "expected the indexed, grouped_contiguous or grouped_masked "
           "routing";
  if (s.routing == abi::kRoutingIndexed &&
      (s.blockSize < 16 || s.blockSize > 1024 || s.blockSize % 16 != 0))
    return "expected block_size to be a multiple of 16 in 16 .. 1024, got " +
           std::to_string(s.blockSize);
  if (s.topK < 1 || s.topK > s.experts)
    return "expected top_k in 1 .. " + std::to_string(s.experts) +
           " (the experts), got " + std::to_string(s.topK);
  return "";
}

gpu::GPUFuncOp mlir::humming::buildMoeAlignKernel(OpBuilder &builder,
                                                  Location loc,
                                                  gpu::GPUModuleOp module,
                                                  StringRef name,
                                                  const MoeAlignKernelSpec &spec) {
  MLIRContext *ctx = builder.getContext();
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(module.getBody());
  auto workgroup =
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  auto sharedType = MemRefType::get({spec.experts + 32}, builder.getI32Type(),
                                    MemRefLayoutAttrInterface(), workgroup);
  auto func = gpu::GPUFuncOp::create(builder, loc, name,
                                     kernelFunctionType(builder, /*moe=*/true),
                                     TypeRange{sharedType});
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                builder.getUnitAttr());
  func.setKnownBlockSizeAttr(
      builder.getDenseI32ArrayAttr({int32_t(kMoeAlignThreads), 1, 1}));
  ImplicitLocOpBuilder b(loc, builder);
  b.setInsertionPointToStart(&func.getBody().front());
  SmallVector<Value> params(func.getArguments().begin(),
                            func.getArguments().end());
  MoeAlignEmitter(b, spec, params, func.getWorkgroupAttributions()[0]).emit();
  gpu::ReturnOp::create(b);
  return func;
}
