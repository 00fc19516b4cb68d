// Flash attention on sm_90a (FlashAttention-3's forward): Llama-3.1-8B's
// heads (32 query heads, 8 kv heads, head_dim 128), bf16, causal. The host
// builds 128B-swizzled TMA tensor maps of Q, K and V seen as
// [B, S, H, head_dim] (the packed last dim split; Q's box spans the 4 query
// heads of a kv head and 32 queries: 128 tile rows), the kernel (384
// threads: a producer warpgroup, two consumers taking turns on named
// barriers 1 and 2) loads Q once and streams K/V stages by TMA under
// mbarriers, computes S = Q·Kᵀ by wgmma from shared memory and O += P·V by
// the register-A wgmma with V MN-major (trans-b), P converted to bf16 in
// registers. PTX has the instructions; ptxas reports no spills, no stack and
// no serialized wgmma (C7513/C7517/C7519/C7520 would be warnings); f32 and
// head dims below 64 keep the other kernels; forcing wgmma where it does not
// apply is a located error.
// RUN: rlx-opt %s --convert-rlx-mir-to-lir --rlx-lir-bufferize --rlx-lir-plan-buffers --convert-rlx-lir-to-gpu | FileCheck %s
// RUN: rlx-opt %s --rlx-lower-to-nvvm="chip=sm_90a assemble=0" | FileCheck %s --check-prefix=PTX
// RUN: rlx-opt %s --rlx-lower-to-nvvm="chip=sm_90a spills=error" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PTXAS --allow-empty
// RUN: not rlx-opt %s --convert-rlx-mir-to-lir --rlx-lir-bufferize --rlx-lir-plan-buffers --convert-rlx-lir-to-gpu="attention-kernel=wgmma strict-kernels=1" 2>&1 | FileCheck %s --check-prefix=FORCED
// RUN: not rlx-opt %s --convert-rlx-mir-to-lir --rlx-lir-bufferize --rlx-lir-plan-buffers --convert-rlx-lir-to-gpu="chip=sm_80 attention-kernel=wgmma strict-kernels=1" 2>&1 | FileCheck %s --check-prefix=SM80

// CHECK-LABEL: func.func @f(
// CHECK: %[[Q4:.*]] = memref.expand_shape %arg1 {{\[\[}}0], [1], [2, 3]] output_shape [2, 1000, 32, 128] : memref<2x1000x4096xbf16> into memref<2x1000x32x128xbf16>
// CHECK: %[[QU:.*]] = memref.cast %[[Q4]] : memref<2x1000x32x128xbf16> to memref<*xbf16>
// CHECK: nvgpu.tma.create.descriptor %[[QU]] box[%{{.*}}, %c32{{.*}}, %c4{{.*}}, %c64{{.*}}] : memref<*xbf16> -> <tensor = memref<1x32x4x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b
// CHECK: memref.expand_shape %arg2 {{\[\[}}0], [1], [2, 3]] output_shape [2, 1000, 8, 128]
// CHECK: nvgpu.tma.create.descriptor {{.*}} -> <tensor = memref<1x128x1x64xbf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b
// CHECK: gpu.launch_func @f_kernels::@f_0_attention blocks in (%c32, %c8, %c2) threads in (%c384, %c1{{.*}}, %c1{{.*}}) dynamic_shared_memory_size %c230504_i32
// CHECK: gpu.func @f_0_attention({{.*}}, %[[MQ:.*]]: !llvm.ptr, %[[MK:.*]]: !llvm.ptr, %[[MV:.*]]: !llvm.ptr) kernel
// CHECK-SAME: nvvm.maxnreg = 168 : i32
// CHECK: nvvm.mbarrier.init
// CHECK: nvvm.fence.mbarrier.init
// CHECK: nvvm.setmaxregister{{ +}}decrease 24
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[MQ]]
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[MK]]
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[MV]]
// CHECK: nvvm.setmaxregister{{ +}}increase 240
// CHECK: nvvm.barrier.arrive id = %{{.*}} number_of_threads = %c256_i32
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %c256_i32
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <zero>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: llvm.inline_asm has_side_effects {{.*}}{rlx.wgmma_fence_operands}
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: scf.for
// CHECK: llvm.inline_asm has_side_effects {{.*}}{rlx.wgmma_register_a = {bf16 = true, n = 128 : i64, scale_d = true, trans_b = true}}
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0

// PTX: .target sm_90a
// PTX-DAG: .maxnreg 168
// PTX-DAG: mbarrier.init.shared.b64
// PTX-DAG: cp.async.bulk.tensor.4d.shared::cluster.global
// PTX-DAG: mbarrier.try_wait.parity.shared.b64
// PTX-DAG: setmaxnreg.dec.sync.aligned.u32 {{(\\09)?}}24;
// PTX-DAG: setmaxnreg.inc.sync.aligned.u32 {{(\\09)?}}240;
// PTX-DAG: bar.arrive 1, 256;
// PTX-DAG: bar.sync {{(\\09)?}}%r{{[0-9]+}}, 256;
// PTX-DAG: wgmma.fence.sync.aligned
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{[^;]*}}, p, 1, 1, 0, 0;
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{[^;]*}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, p, 1, 1, 1;
// PTX-DAG: cvt.rn.bf16x2.f32
// PTX-DAG: ex2.approx
// PTX-DAG: wgmma.wait_group.sync.aligned {{(\\09)?}}1;
// PTXAS-NOT: spills
// PTXAS-NOT: warning
// FORCED: :[[# @LINE + 11]]:8: error: convert-rlx-lir-to-gpu: attention-kernel=wgmma: its query, key, value and output are not all bf16 or all f16
// SM80: error: convert-rlx-lir-to-gpu: attention-kernel=wgmma: sm_80 has no wgmma (sm_90a only)
func.func @f(%q: tensor<2x1000x4096xbf16>, %k: tensor<2x1000x1024xbf16>, %v: tensor<2x1000x1024xbf16>) -> tensor<2x1000x4096xbf16> {
  %o = rlx_mir.attention %q, %k, %v heads = 32, kv_heads = 8, head_dim = 128 causal : tensor<2x1000x4096xbf16>, tensor<2x1000x1024xbf16>, tensor<2x1000x1024xbf16>
  return %o : tensor<2x1000x4096xbf16>
}

// CHECK-LABEL: gpu.func @g_0_attention(
// CHECK-NOT: nvvm.wgmma
// CHECK: gpu.return
func.func @g(%q: tensor<1x100x512xf32>, %k: tensor<1x100x128xf32>, %v: tensor<1x100x128xf32>) -> tensor<1x100x512xf32> {
  %o = rlx_mir.attention %q, %k, %v heads = 8, kv_heads = 2, head_dim = 64 causal : tensor<1x100x512xf32>, tensor<1x100x128xf32>, tensor<1x100x128xf32>
  return %o : tensor<1x100x512xf32>
}
