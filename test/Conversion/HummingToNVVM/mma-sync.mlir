// RUN: humming-opt %s --humming-lower-to-nvvm="chip=sm_90a" -split-input-file | FileCheck %s

// W4A16 group 128: the launch, the kernel and its two m16n8k16 MMAs.

// CHECK-LABEL: func.func @gemm_w4a16_g128
// CHECK:       %[[M:.*]] = memref.dim %{{.*}}, %c0
// CHECK:       %[[M32:.*]] = arith.index_cast %[[M]] : index to i32
// CHECK:       %[[GY:.*]] = arith.ceildivui %[[M]], %c16
// CHECK:       gpu.launch_func @humming_kernels::@gemm_w4a16_g128_gemm0 blocks in (%c2, %[[GY]], %c1) threads in (%c512, %c1, %c1)
// CHECK-SAME:    args(%{{.*}} : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %{{.*}} : !llvm.ptr<1>, %[[M32]] : i32)
// CHECK-NOT:   humming.gemm
// CHECK:       gpu.module @humming_kernels
// Four warp groups split K inside the block and meet in shared memory.
// CHECK:       gpu.func @gemm_w4a16_g128_gemm0(%{{.*}}: !llvm.ptr<1>, {{.*}}, %{{.*}}: i32) workgroup(%[[WS:.*]] : memref<3072xf32, #gpu.address_space<workgroup>>) kernel attributes {known_block_size = array<i32: 512, 1, 1>}
// Each iteration runs two k-steps (unrolled) of 16, every fourth k-step
// belonging to this warp group: step 2 * 4 * 16 = 128. Unsigned codes
// dequantize with the magic-number trick in packed f16 arithmetic.
// CHECK:         scf.for %{{.*}} = %{{.*}} to %c128{{.*}} step %c128
// CHECK:           arith.subf %{{.*}}, %{{.*}} : vector<2xf16>
// CHECK:           arith.mulf %{{.*}}, %{{.*}} : vector<2xf16>
// CHECK-COUNT-4: nvvm.mma.sync A[{{.*}}]  B[{{.*}}]  C[{{.*}}]  {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK:         memref.store %{{.*}}, %[[WS]]
// CHECK:         gpu.barrier
// CHECK-COUNT-24: memref.load %[[WS]]
// CHECK:         gpu.return
func.func @gemm_w4a16_g128(%a: memref<?x128xf16>, %w: memref<128x16xi32>, %s: memref<128x1xf16>, %c: memref<?x128xf16>) {
  humming.gemm %a, %w scales(%s : memref<128x1xf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<128>>,
       input_schema = #humming.input_schema<type = f16>}
      : memref<?x128xf16>, memref<128x16xi32> -> memref<?x128xf16>
  return
}

// -----

// bf16 operands travel as i32 (NVVM's convention for bf16 MMA).
// CHECK-LABEL: gpu.func @gemm_w8a16_bf16_gemm0
// CHECK-COUNT-4: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>{{.*}} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
func.func @gemm_w8a16_bf16(%a: memref<?x64xbf16>, %w: memref<64x16xi32>, %s: memref<64x1xbf16>, %c: memref<?x64xbf16>) {
  humming.gemm %a, %w scales(%s : memref<64x1xbf16>) into %c
      {weight_schema = #humming.weight_schema<type = ui8, scale = bf16>, input_schema = #humming.input_schema<type = bf16>}
      : memref<?x64xbf16>, memref<64x16xi32> -> memref<?x64xbf16>
  return
}

// -----

// Absent operands are null pointers; padding shows in the grid (padded N)
// and in the stores (logical N).
// CHECK-LABEL: func.func @gemm_padded_zp
// CHECK:       llvm.mlir.zero : !llvm.ptr<1>
// CHECK:       gpu.func @gemm_padded_zp_gemm0
// CHECK:         arith.constant 56 : i32
func.func @gemm_padded_zp(%a: memref<?x96xf16>, %w: memref<64x16xi32>, %s: memref<64x4xf16>, %z: memref<8x4xi32>, %c: memref<?x56xf16>) {
  humming.gemm %a, %w scales(%s : memref<64x4xf16>) zero_points(%z : memref<8x4xi32>) into %c
      {weight_schema = #humming.weight_schema<type = ui4, scale = f16, granularity = group<32>, zero_point = int, pad_n = 8, pad_k = 32>,
       input_schema = #humming.input_schema<type = f16>}
      : memref<?x96xf16>, memref<64x16xi32> -> memref<?x56xf16>
  return
}
