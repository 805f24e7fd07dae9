/*===- humming-capi-test.c - The dialect's C API, from C ------------------===
 *
 * Registers humming through its C API, builds each attribute from its
 * fields and reads them back, shows that a broken description gives a null
 * attribute and a diagnostic, and compiles a module with a humming.gemm
 * through humming-compile-pipeline with MLIR's C pass manager. Checked by
 * capi.test (the CHECK lines below, in output order).
 *
 *===----------------------------------------------------------------------===*/

#include "humming-c/Dialect.h"

#include "mlir-c/BuiltinAttributes.h"
#include "mlir-c/BuiltinTypes.h"
#include "mlir-c/Diagnostics.h"
#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"

#include <stdio.h>
#include <string.h>

static void printToStdout(MlirStringRef s, void *unused) {
  (void)unused;
  fwrite(s.data, 1, s.length, stdout);
}

static MlirLogicalResult printDiagnostic(MlirDiagnostic d, void *unused) {
  (void)unused;
  fputs("diagnostic: ", stdout);
  mlirDiagnosticPrint(d, printToStdout, NULL);
  fputs("\n", stdout);
  return mlirLogicalResultSuccess();
}

static void printAttr(const char *label, MlirAttribute a) {
  printf("%s: ", label);
  if (mlirAttributeIsNull(a))
    fputs("null", stdout);
  else
    mlirAttributePrint(a, printToStdout, NULL);
  fputs("\n", stdout);
}

static void countOps(MlirOperation op, int *ops) {
  ++*ops;
  for (unsigned r = 0; r < mlirOperationGetNumRegions(op); ++r) {
    MlirRegion region = mlirOperationGetRegion(op, r);
    for (MlirBlock b = mlirRegionGetFirstBlock(region); !mlirBlockIsNull(b);
         b = mlirBlockGetNextInRegion(b))
      for (MlirOperation o = mlirBlockGetFirstOperation(b);
           !mlirOperationIsNull(o); o = mlirOperationGetNextInBlock(o))
        countOps(o, ops);
  }
}

int main(void) {
  MlirContext ctx = mlirContextCreate();
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  mlirHummingRegisterAllDialects(registry);
  mlirContextAppendDialectRegistry(ctx, registry);
  mlirDialectRegistryDestroy(registry);
  mlirContextLoadAllAvailableDialects(ctx);
  mlirRegisterHummingPasses();
  mlirContextAttachDiagnosticHandler(ctx, printDiagnostic, NULL, NULL);

  MlirDialect humming = mlirContextGetOrLoadDialect(
      ctx, mlirDialectHandleGetNamespace(mlirGetDialectHandle__humming__()));
  // CHECK: dialect: humming
  printf("dialect: %s\n",
         mlirDialectIsNull(humming) ? "missing"
                                    : mlirDialectGetNamespace(humming).data);

  MlirHummingWeightSchema w;
  memset(&w, 0, sizeof w);
  w.type = mlirIntegerTypeUnsignedGet(ctx, 4);
  w.scale = mlirF16TypeGet(ctx);
  w.granularity = MlirHummingGranularityGroup;
  w.groupK = 128;
  w.zeroPoint = MlirHummingZeroPointInt;
  MlirAttribute ws = mlirHummingWeightSchemaAttrGet(ctx, &w);
  // CHECK: weight schema: #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>, zero_point = int>
  printAttr("weight schema", ws);
  MlirHummingWeightSchema back = mlirHummingWeightSchemaAttrGetValue(ws);
  // CHECK: back: group 128, zero point 1, is a weight schema 1, type ui4 1
  printf("back: group %lld, zero point %d, is a weight schema %d, type ui4 %d\n",
         (long long)back.groupK, (int)back.zeroPoint,
         mlirAttributeIsAHummingWeightSchema(ws),
         mlirTypeEqual(back.type, w.type));

  /* A group of 100 breaks a rule: a diagnostic and a null attribute. */
  w.groupK = 100;
  // CHECK: diagnostic: expected the scale group size to be a power of two, got 100
  // CHECK: broken weight schema: null
  printAttr("broken weight schema", mlirHummingWeightSchemaAttrGet(ctx, &w));
  w.type = mlirF64TypeGet(ctx);
  // CHECK: diagnostic: type: expected an element type humming knows {{.*}}, got 'f64'
  printAttr("f64 weights", mlirHummingWeightSchemaAttrGet(ctx, &w));

  /* Out-of-range enums, a null type and a null description. */
  w.type = mlirIntegerTypeUnsignedGet(ctx, 4);
  w.groupK = 128;
  w.granularity = (MlirHummingGranularity)9;
  // CHECK: diagnostic: expected granularity 0-4, zero point 0-2 and format 0-3, got 9, 1, 0
  printAttr("granularity 9", mlirHummingWeightSchemaAttrGet(ctx, &w));
  w.granularity = MlirHummingGranularityGroup;
  w.scale.ptr = NULL;
  // CHECK: diagnostic: scale: expected a type, got null
  printAttr("null scale", mlirHummingWeightSchemaAttrGet(ctx, &w));
  // CHECK: diagnostic: expected a weight schema, got NULL
  printAttr("null schema", mlirHummingWeightSchemaAttrGet(ctx, NULL));
  MlirHummingInputSchema badIn = {mlirFloat8E4M3FNTypeGet(ctx),
                                  (MlirHummingScaling)7, 0};
  // CHECK: diagnostic: expected scaling 0-3, got 7
  printAttr("scaling 7", mlirHummingInputSchemaAttrGet(ctx, &badIn));
  // CHECK: diagnostic: expected an input schema, got NULL
  printAttr("null input schema", mlirHummingInputSchemaAttrGet(ctx, NULL));

  MlirHummingInputSchema in = {mlirFloat8E4M3FNTypeGet(ctx),
                               MlirHummingScalingToken, 0};
  MlirAttribute is = mlirHummingInputSchemaAttrGet(ctx, &in);
  // CHECK: input schema: #humming.input_schema<type = f8E4M3FN, scaling = token>
  printAttr("input schema", is);
  // CHECK: input back: scaling 1
  printf("input back: scaling %d\n",
         (int)mlirHummingInputSchemaAttrGetValue(is).scaling);

  MlirAttribute target = mlirHummingTargetAttrGetKnown(
      ctx, mlirStringRefCreateFromCString("H200"),
      mlirStringRefCreateFromCString(""), 0);
  // CHECK: target: #humming.target<device = "H200">
  printAttr("target", target);
  MlirStringRef chip = mlirHummingTargetAttrGetChip(target);
  // CHECK: chip sm_90a, ptx 80, 132 SMs
  printf("chip %.*s, ptx %u, %lld SMs\n", (int)chip.length, chip.data,
         mlirHummingTargetAttrGetPtx(target),
         (long long)mlirHummingTargetAttrGetSmCount(target));
  // CHECK: diagnostic: unknown device 'H300'; expected one of {{.*}}H200
  // CHECK: unknown device: null
  printAttr("unknown device",
            mlirHummingTargetAttrGetKnown(
                ctx, mlirStringRefCreateFromCString("H300"),
                mlirStringRefCreateFromCString(""), 0));

  MlirHummingTileConfig t = mlirHummingTileConfigDefault();
  t.blockM = 16;
  t.blockN = 64;
  t.blockK = 64;
  t.warpM = 16;
  t.warpN = 64;
  t.warpK = 32;
  t.stages = 3;
  t.mma = (MlirHummingMma)5;
  // CHECK: diagnostic: expected mma 0-3, got 5
  printAttr("mma 5", mlirHummingTileConfigAttrGet(ctx, &t));
  // CHECK: diagnostic: expected a tile config, got NULL
  printAttr("null tile", mlirHummingTileConfigAttrGet(ctx, NULL));
  t.mma = MlirHummingMmaSync;
  MlirAttribute tile = mlirHummingTileConfigAttrGet(ctx, &t);
  // CHECK: tile: #humming.tile_config<block = [16, 64, 64], warp = [16, 64, 32], stages = 3>
  printAttr("tile", tile);
  // CHECK: tile back: stages 3, warp_k 32
  MlirHummingTileConfig tb = mlirHummingTileConfigAttrGetValue(tile);
  printf("tile back: stages %lld, warp_k %lld\n", (long long)tb.stages,
         (long long)tb.warpK);

  /* A layer through humming-compile-pipeline, with MLIR's pass manager. */
  const char *ir =
      "func.func @layer(%a: memref<?x512xf16>, %w: memref<256x64xi32>,\n"
      "                 %s: memref<256x4xf16>, %c: memref<?x256xf16>) {\n"
      "  humming.gemm %a, %w scales(%s : memref<256x4xf16>) into %c\n"
      "      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, "
      "granularity = group<128>>,\n"
      "       input_schema = #humming.input_schema<type = f16>}\n"
      "      : memref<?x512xf16>, memref<256x64xi32> -> memref<?x256xf16>\n"
      "  return\n"
      "}\n";
  MlirModule module =
      mlirModuleCreateParse(ctx, mlirStringRefCreateFromCString(ir));
  MlirPassManager pm = mlirPassManagerCreate(ctx);
  MlirOpPassManager opm = mlirPassManagerGetAsOpPassManager(pm);
  MlirLogicalResult parsed = mlirParsePassPipeline(
      opm, mlirStringRefCreateFromCString(
               "builtin.module(humming-compile-pipeline{chip=sm_90a})"),
      printToStdout, NULL);
  MlirLogicalResult ran = mlirPassManagerRunOnOp(
      pm, mlirModuleGetOperation(module));
  int ops = 0;
  countOps(mlirModuleGetOperation(module), &ops);
  MlirAttribute kernels = mlirOperationGetAttributeByName(
      mlirModuleGetOperation(module),
      mlirStringRefCreateFromCString("humming.kernels"));
  // CHECK: pipeline: parsed 1, ran 1, kernel table entries 1
  printf("pipeline: parsed %d, ran %d, kernel table entries %ld\n",
         mlirLogicalResultIsSuccess(parsed), mlirLogicalResultIsSuccess(ran),
         mlirAttributeIsNull(kernels) ? -1L
                                      : (long)mlirArrayAttrGetNumElements(kernels));
  mlirPassManagerDestroy(pm);
  mlirModuleDestroy(module);
  mlirContextDestroy(ctx);
  // CHECK: done
  printf("done\n");
  return 0;
}
