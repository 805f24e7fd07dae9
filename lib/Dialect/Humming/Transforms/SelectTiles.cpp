//===- SelectTiles.cpp - humming-select-tiles -----------------------------===//
//
// Writes tile_configs on prepared-weight GEMMs from the device heuristics
// (Humming/Target/TileHeuristics.h) or a forced configuration.
//
//===----------------------------------------------------------------------===//

#include "Humming/Dialect/Humming/IR/HummingOps.h"
#include "Humming/Dialect/Humming/Transforms/Passes.h"
#include "Humming/Target/TileHeuristics.h"

#include "mlir/AsmParser/AsmParser.h"

#define DEBUG_TYPE "humming-select-tiles"

namespace mlir::humming {
#define GEN_PASS_DEF_HUMMINGSELECTTILESPASS
#include "Humming/Dialect/Humming/Transforms/Passes.h.inc"
} // namespace mlir::humming

using namespace mlir;
using namespace mlir::humming;
namespace hq = ::humming;

namespace {
struct SelectTilesPass
    : public mlir::humming::impl::HummingSelectTilesPassBase<SelectTilesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = module.getContext();
    auto fail = [&](const Twine &why) {
      module.emitError() << "humming-select-tiles: " << why;
      signalPassFailure();
    };

    // A forced configuration serves every M (hq::forcedTileConfigs).
    ArrayAttr forced;
    if (!forceTileConfig.empty()) {
      auto parsed = dyn_cast_or_null<TileConfigAttr>(
          parseAttribute(forceTileConfig, ctx));
      if (!parsed)
        return fail("expected force-tile-config to be a #humming.tile_config, "
                    "got '" + forceTileConfig + "'");
      SmallVector<Attribute> attrs;
      for (const hq::TileConfig &c : hq::forcedTileConfigs(parsed.toHost())) {
        TileConfigAttr a = TileConfigAttr::fromHost(
            [&] { return module.emitError() << "humming-select-tiles: "; }, ctx,
            c);
        if (!a)
          return signalPassFailure();
        attrs.push_back(a);
      }
      forced = ArrayAttr::get(ctx, attrs);
    }

    if (!target.empty() && !this->device.empty() && target != this->device)
      return fail("expected target= and device= to name the same device, got '" +
                  target + "' and '" + this->device + "'");
    if (!target.empty())
      this->device = target;
    // The device whose facts the heuristics use.
    hq::DeviceInfo device;
    if (TargetAttr target = lookupTarget(module)) {
      // device= may repeat the module's device, not replace it: the
      // module's attributes were checked against that one.
      if (!this->device.empty() &&
          StringRef(this->device).lower() != target.getDevice().lower())
        return fail(
            target.getDevice().empty()
                ? "the module's humming.target gives its device's facts (" +
                      target.getHostChip().str() +
                      "); expected no device=, got '" + this->device + "'"
                : "the module's humming.target names " +
                      target.getDevice().str() + " (" +
                      target.getHostChip().str() +
                      "); expected device= to name it too or be left out, "
                      "got '" +
                      this->device + "'");
      device = target.toHost();
    } else if (!this->device.empty() || !chip.empty()) {
      hq::Result<hq::DeviceInfo> facts = hq::tileDeviceFacts(this->device, chip);
      if (!facts)
        return fail(facts.error());
      device = *facts;
    } else if (!forced) {
      bool anyPrepared = false;
      module.walk([&](GemmOp op) { anyPrepared |= bool(op.getLayoutAttr()); });
      module.walk(
          [&](MoeGemmOp op) { anyPrepared |= bool(op.getLayoutAttr()); });
      if (anyPrepared)
        return fail("expected a humming.target on the module, device= or "
                    "chip= to choose tiles for prepared weights");
      return;
    }

    auto select = [&](auto op, std::optional<hq::MoeShape> moe) {
      if (!op.getLayoutAttr())
        return; // the canonical-weight kernel is fixed
      if (forced) {
        op.setTileConfigsAttr(forced);
        return;
      }
      if (ArrayAttr tiles = op.getTileConfigsAttr(); tiles && !tiles.empty())
        return; // chosen by hand
      hq::WeightSchema w = op.getWeightSchema().toHost();
      hq::InputSchema in = op.getInputSchema().toHost();
      int64_t n = cast<MemRefType>(op.getOutput().getType()).getDimSize(1) + w.padN;
      int64_t k = cast<MemRefType>(op.getInput().getType()).getDimSize(1) + w.padK;
      hq::ComputeOptions compute;
      if (ComputeAttr c = op.getComputeAttr())
        compute = c.toHost();
      hq::Result<std::vector<hq::TileConfig>> tiles =
          moe ? hq::selectMoeTiles(w, in, compute, n, k, device, *moe)
              : hq::selectMmaSyncTiles(w, in, compute, n, k, device);
      if (!tiles) {
        op.emitOpError() << "humming-select-tiles: " << tiles.error();
        return signalPassFailure();
      }
      // Tiles of a device whose MMAs the layout's chip lacks (weights
      // prepared for sm_80, tiles for an H100) would fail the op's verifier
      // with a message about one tile; say what is wrong instead. Tiles of
      // another device of the same family are fine (what-if studies).
      hq::Chip layoutChip = op.getLayoutAttr().getHostChip();
      for (const hq::TileConfig &t : *tiles)
        if (!layoutChip.supportsMma(t.mma)) {
          op.emitOpError()
              << "humming-select-tiles: the tiles for " << device.name << " ("
              << device.chip << ") use " << hq::toString(t.mma)
              << ", which the weights' chip " << layoutChip.str()
              << " does not have; expected weights prepared for "
              << device.chip << " or a " << layoutChip.str() << " device";
          return signalPassFailure();
        }
      SmallVector<Attribute> attrs;
      for (const hq::TileConfig &t : *tiles) {
        TileConfigAttr a = TileConfigAttr::fromHost(
            [&] { return op.emitOpError() << "humming-select-tiles: "; }, ctx, t);
        if (!a)
          return signalPassFailure();
        attrs.push_back(a);
      }
      op.setTileConfigsAttr(ArrayAttr::get(ctx, attrs));
    };
    module.walk([&](GemmOp op) { select(op, std::nullopt); });
    module.walk([&](MoeGemmOp op) {
      hq::MoeShape moe;
      moe.gemm = op.getCompute().getGemm();
      moe.experts = op.getWeightSchema().getExperts();
      moe.topK = op.getTopK().value_or(1);
      moe.blockSize = op.getBlockSize().value_or(0);
      moe.routerWeights = bool(op.getTopkWeights());
      select(op, moe);
    });
  }
};
} // namespace
