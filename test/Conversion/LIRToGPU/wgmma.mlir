// The sm_90a fused_matmul path: the host builds a 128B-swizzled TMA tensor
// map of each operand (upstream nvgpu.tma.create.descriptor; the lhs
// [2, 37, 136] seen as 74 rows) and passes it to the kernel's !llvm.ptr
// parameters; the kernel (384 threads: a producer warpgroup and two
// consumers) keeps its pipeline in dynamic shared memory, loads with TMA
// under mbarriers and multiplies with wgmma, persistent over the tiles
// (block b takes tiles b, b + grid, ...: a loop from the block id around
// the main loop and the epilogue; no setmaxnreg without a producer
// transform). The PTX has the instructions
// and ptxas no spills, no stack and no serialized wgmma (a warning would
// name C7517/C7519/C7520); sm_80 takes mma.sync.
// RUN: rlx-opt %s --convert-rlx-mir-to-lir --rlx-lir-bufferize --rlx-lir-plan-buffers --convert-rlx-lir-to-gpu | FileCheck %s
// RUN: rlx-opt %s --rlx-lower-to-nvvm="chip=sm_90a assemble=0" | FileCheck %s --check-prefix=PTX
// RUN: rlx-opt %s --rlx-lower-to-nvvm="chip=sm_90a spills=error" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PTXAS --allow-empty
// RUN: rlx-opt %s --rlx-lower-to-nvvm="chip=sm_80 assemble=0" | FileCheck %s --check-prefix=SM80

// CHECK-LABEL: func.func @f(
// CHECK: %[[X2:.*]] = memref.collapse_shape %arg1 {{\[\[}}0, 1], [2]] : memref<2x37x136xbf16> into memref<74x136xbf16>
// CHECK: %[[XU:.*]] = memref.cast %[[X2]] : memref<74x136xbf16> to memref<*xbf16>
// CHECK: %[[XD:.*]] = nvgpu.tma.create.descriptor %[[XU]] box[%c128, %c64] : memref<*xbf16> -> <tensor = memref<128x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = l2promo_128b, oob = zero, interleave = none>
// CHECK: %[[XP:.*]] = builtin.unrealized_conversion_cast %[[XD]] : {{.*}} to !llvm.ptr
// CHECK: %[[WU:.*]] = memref.cast %arg2 : memref<136x136xbf16> to memref<*xbf16>
// CHECK: %[[WD:.*]] = nvgpu.tma.create.descriptor %[[WU]]
// CHECK: %[[WP:.*]] = builtin.unrealized_conversion_cast %[[WD]]
// CHECK: gpu.launch_func @f_kernels::@f_0_fused_matmul blocks in ({{.*}}) threads in ({{.*}}) dynamic_shared_memory_size %{{.*}} args(%arg1 : memref<2x37x136xbf16>, %arg2 : memref<136x136xbf16>, %arg3 : memref<2x37x136xbf16>, %arg4 : memref<2x37x136xbf16>, %[[XP]] : !llvm.ptr, %[[WP]] : !llvm.ptr)
// CHECK: gpu.func @f_0_fused_matmul({{.*}}, %[[MAPA:.*]]: !llvm.ptr, %[[MAPB:.*]]: !llvm.ptr) kernel
// CHECK-SAME: known_block_size = array<i32: 384, 1, 1>
// CHECK: gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK: nvvm.mbarrier.init
// CHECK: gpu.barrier
// CHECK: scf.for %{{.*}} = %block_id_x{{.*}} to %c2{{.*}} step %c2
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[MAPA]]
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[MAPB]]
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <zero>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK: nvvm.wgmma.mma_async {{.*}} D[<f32>, <one>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1

// PTX: .target sm_90a
// PTX-DAG: mbarrier.init.shared.b64
// PTX-DAG: mbarrier.arrive.expect_tx.shared.b64
// PTX-DAG: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX-DAG: wgmma.fence.sync.aligned
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// PTX-DAG: wgmma.commit_group.sync.aligned
// PTX-DAG: wgmma.wait_group.sync.aligned {{(\\09)?}}1;
// PTX-NOT: setmaxnreg
// PTX-NOT: mma.sync
// PTXAS-NOT: warning

// SM80-NOT: wgmma
// SM80: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
func.func @f(%x: tensor<2x37x136xbf16> {rlx.input = "x"}, %w: tensor<136x136xbf16> {rlx.input = "w"},
             %r: tensor<2x37x136xbf16> {rlx.input = "r"}) -> tensor<2x37x136xbf16> {
  %y = rlx_mir.fused_matmul %x, %w transpose_b residual(%r : tensor<2x37x136xbf16>) : tensor<2x37x136xbf16>, tensor<136x136xbf16>
  return %y : tensor<2x37x136xbf16>
}
