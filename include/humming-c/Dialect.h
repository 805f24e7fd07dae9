/*===- humming-c/Dialect.h - The humming dialect's C API ----------*- C -*-===
 *
 * The humming dialect, its passes and its attributes for compilers that
 * embed them through MLIR's C API (mlir-c conventions: MlirContext,
 * MlirAttribute, dialect handles). Link MLIRHummingCAPI.
 *
 *   MlirContext ctx = mlirContextCreate();
 *   MlirDialectRegistry registry = mlirDialectRegistryCreate();
 *   mlirHummingRegisterAllDialects(registry); // humming + what it lowers to
 *   mlirContextAppendDialectRegistry(ctx, registry);
 *   mlirRegisterHummingPasses();              // passes and the pipeline
 *
 * Attribute constructors take the attribute's fields in a plain struct and
 * return a null attribute (mlirAttributeIsNull) when they break a rule of
 * the dialect, after reporting why through the context's diagnostic
 * handlers; getters fill the same struct back.
 *
 *===----------------------------------------------------------------------===*/

#ifndef HUMMING_C_DIALECT_H
#define HUMMING_C_DIALECT_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** mlirGetDialectHandle__humming__(). */
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(Humming, humming);

/** Adds humming and every upstream dialect its pipeline lowers through
 *  (arith, func, gpu, llvm, memref, nvgpu, nvvm, scf, vector), with the
 *  translations the pipeline needs. */
MLIR_CAPI_EXPORTED void
mlirHummingRegisterAllDialects(MlirDialectRegistry registry);

/** Registers every humming pass and humming-compile-pipeline with the
 *  global pass registry (idempotent): mlirParsePassPipeline then knows
 *  them. */
MLIR_CAPI_EXPORTED void mlirRegisterHummingPasses(void);

/* ---- #humming.weight_schema -------------------------------------------- */

typedef enum {
  MlirHummingGranularityChannel = 0,
  MlirHummingGranularityGroup = 1,
  MlirHummingGranularityBlock = 2,
  MlirHummingGranularityTensor = 3,
  MlirHummingGranularityGroupTensor = 4,
} MlirHummingGranularity;

typedef enum {
  MlirHummingZeroPointNone = 0,
  MlirHummingZeroPointInt = 1,
  MlirHummingZeroPointFloat = 2,
} MlirHummingZeroPoint;

typedef enum {
  MlirHummingFormatCanonical = 0,
  MlirHummingFormatGPTQ = 1,
  MlirHummingFormatGPTQv2 = 2,
  MlirHummingFormatAWQ = 3,
} MlirHummingFormat;

/** The fields of #humming.weight_schema. `type` and `scale` are MLIR types
 *  (ui4 is an unsigned 4-bit integer type, e4m3 f8E4M3FN, ...). */
typedef struct {
  MlirType type;
  MlirType scale;
  MlirHummingGranularity granularity;
  int64_t groupN; /**< block only */
  int64_t groupK; /**< group, block, group_tensor */
  MlirHummingZeroPoint zeroPoint;
  bool globalScale;
  bool bias;
  int64_t experts; /**< 0: a dense layer */
  int64_t padN, padK;
  MlirHummingFormat format;
} MlirHummingWeightSchema;

MLIR_CAPI_EXPORTED bool mlirAttributeIsAHummingWeightSchema(MlirAttribute a);
MLIR_CAPI_EXPORTED MlirAttribute mlirHummingWeightSchemaAttrGet(
    MlirContext ctx, const MlirHummingWeightSchema *schema);
/** The fields of a weight schema attribute (zeroed for another attribute). */
MLIR_CAPI_EXPORTED MlirHummingWeightSchema
mlirHummingWeightSchemaAttrGetValue(MlirAttribute a);

/* ---- #humming.input_schema --------------------------------------------- */

typedef enum {
  MlirHummingScalingNone = 0,
  MlirHummingScalingToken = 1,
  MlirHummingScalingGroup = 2,
  MlirHummingScalingStatic = 3,
} MlirHummingScaling;

typedef struct {
  MlirType type; /**< f16, bf16, f8E4M3FN, f8E5M2, si8, si4, f4E2M1FN */
  MlirHummingScaling scaling;
  int64_t groupK; /**< group scaling only */
} MlirHummingInputSchema;

MLIR_CAPI_EXPORTED bool mlirAttributeIsAHummingInputSchema(MlirAttribute a);
MLIR_CAPI_EXPORTED MlirAttribute mlirHummingInputSchemaAttrGet(
    MlirContext ctx, const MlirHummingInputSchema *schema);
MLIR_CAPI_EXPORTED MlirHummingInputSchema
mlirHummingInputSchemaAttrGetValue(MlirAttribute a);

/* ---- #humming.target ---------------------------------------------------- */

MLIR_CAPI_EXPORTED bool mlirAttributeIsAHummingTarget(MlirAttribute a);
/** The target of a known `device` ("H200"), optionally with another `chip`
 *  (empty: the device's) and PTX ISA version `ptx` (0: the chip's
 *  minimum). */
MLIR_CAPI_EXPORTED MlirAttribute mlirHummingTargetAttrGetKnown(
    MlirContext ctx, MlirStringRef device, MlirStringRef chip, unsigned ptx);
/** The strings are owned by the context. */
MLIR_CAPI_EXPORTED MlirStringRef mlirHummingTargetAttrGetDevice(MlirAttribute a);
MLIR_CAPI_EXPORTED MlirStringRef mlirHummingTargetAttrGetChip(MlirAttribute a);
MLIR_CAPI_EXPORTED unsigned mlirHummingTargetAttrGetPtx(MlirAttribute a);
MLIR_CAPI_EXPORTED int64_t mlirHummingTargetAttrGetSmCount(MlirAttribute a);

/* ---- #humming.tile_config ----------------------------------------------- */

typedef enum {
  MlirHummingMmaSync = 0,
  MlirHummingMmaWgmma = 1,
  MlirHummingMmaTcgen05 = 2,
  MlirHummingMmaBlockScaled = 3,
} MlirHummingMma;

/** Bits of MlirHummingTileConfig.tma: the operands copied by TMA. */
enum {
  MlirHummingTmaA = 1,
  MlirHummingTmaB = 2,
  MlirHummingTmaC = 4,
  MlirHummingTmaScales = 8,
  MlirHummingTmaZeroPoints = 16,
  MlirHummingTmaBias = 32,
};

/** The fields of #humming.tile_config (docs in Humming/Quant/Schema.h,
 *  TileConfig). */
typedef struct {
  int64_t mMin, mMax; /**< mMax 0: unbounded */
  int64_t blockM, blockN, blockK;
  int64_t warpM, warpN, warpK;
  int64_t stages;
  MlirHummingMma mma;
  bool warpSpecialized, streamK, mbarrier, cpAsync;
  uint32_t tma;
  int64_t multicastA, multicastB;
  int64_t ctasPerSm, gridCap, writeSplits, splitK;
  bool blockCopies, shareActivations, scaleAfterMma, clusterSplit,
      workspaceSplit, cooperativeSplit;
  int64_t wgmmaInFlight, l2Prefetch, rasterM, persistent, promotionInterval;
  bool weightMap, stagedWeights;
} MlirHummingTileConfig;

/** The defaults of an unwritten field (m = [1, inf], the attribute's
 *  defaults elsewhere), to start from. */
MLIR_CAPI_EXPORTED MlirHummingTileConfig mlirHummingTileConfigDefault(void);
MLIR_CAPI_EXPORTED bool mlirAttributeIsAHummingTileConfig(MlirAttribute a);
MLIR_CAPI_EXPORTED MlirAttribute mlirHummingTileConfigAttrGet(
    MlirContext ctx, const MlirHummingTileConfig *config);
MLIR_CAPI_EXPORTED MlirHummingTileConfig
mlirHummingTileConfigAttrGetValue(MlirAttribute a);

#ifdef __cplusplus
}
#endif

#endif /* HUMMING_C_DIALECT_H */
