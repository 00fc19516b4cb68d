// Flash attention on tensor cores: bf16 GQA attention (8 query heads, 2 kv
// heads, head_dim 64, 100 keys) becomes one kernel of 128 threads per
// (64-row tile of query rows × the 4 query heads of a kv head, kv head,
// batch): 7 × 2 × 1 blocks, Q, K and V tiles in dynamic shared memory,
// cp.async copies, ldmatrix (.trans for V), mma.sync m16n8k16 and exp2; PTX
// and ptxas (no spills, no stack, two blocks per SM); f32 stays on the
// SIMT kernel. (On sm_90a, auto picks the wgmma kernel:
// flash-attention-wgmma.mlir.)
// RUN: rlx-opt %s --convert-rlx-mir-to-lir --rlx-lir-bufferize --rlx-lir-plan-buffers --convert-rlx-lir-to-gpu=chip=sm_80 | FileCheck %s
// RUN: rlx-opt %s --rlx-lower-to-nvvm="chip=sm_80 assemble=0" | FileCheck %s --check-prefix=PTX
// RUN: rlx-opt %s --rlx-lower-to-nvvm="chip=sm_80 spills=error" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PTXAS --allow-empty
// RUN: rlx-opt %s --rlx-lower-to-nvvm="chip=sm_89 spills=error" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PTXAS --allow-empty
// RUN: rlx-opt %s --convert-rlx-mir-to-lir --rlx-lir-bufferize --rlx-lir-plan-buffers --convert-rlx-lir-to-gpu=attention-kernel=simt | FileCheck %s --check-prefix=SIMT
// RUN: not rlx-opt %s --convert-rlx-mir-to-lir --rlx-lir-bufferize --rlx-lir-plan-buffers --convert-rlx-lir-to-gpu="attention-kernel=flash strict-kernels=1" 2>&1 | FileCheck %s --check-prefix=FORCED

// CHECK-LABEL: func.func @f(
// CHECK: gpu.launch_func @f_kernels::@f_0_attention blocks in (%c7, %c2, %c1) threads in (%c128, %c1{{.*}}, %c1{{.*}}) dynamic_shared_memory_size %c27776_i32
// CHECK: gpu.func @f_0_attention(
// CHECK-SAME: nvvm.minctasm = 2 : i32
// CHECK: gpu.dynamic_shared_memory
// CHECK: nvvm.cp.async.shared.global {{.*}}, 16, cache = {{ *}}cg
// CHECK: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<row>, num = 4 : i32
// CHECK: scf.for
// CHECK: nvvm.mma.sync
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<col>, num = 2 : i32
// CHECK: nvvm.mma.sync
// PTX-DAG: .minnctapersm 2
// PTX-DAG: cp.async.cg.shared.global
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX-DAG: ex2.approx
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16
// PTXAS-NOT: spills
// PTXAS-NOT: warning
// SIMT-NOT: nvvm.mma.sync
// SIMT: gpu.func @f_0_attention
// SIMT-NOT: nvvm.mma.sync
// SIMT-LABEL: gpu.func @g_0_attention
// FORCED: :50:8: error: convert-rlx-lir-to-gpu: attention-kernel=flash: its query, key, value and output are not all bf16 or all f16
func.func @f(%q: tensor<1x100x512xbf16>, %k: tensor<1x100x128xbf16>, %v: tensor<1x100x128xbf16>) -> tensor<1x100x512xbf16> {
  %o = rlx_mir.attention %q, %k, %v heads = 8, kv_heads = 2, head_dim = 64 causal : tensor<1x100x512xbf16>, tensor<1x100x128xbf16>, tensor<1x100x128xbf16>
  return %o : tensor<1x100x512xbf16>
}

// CHECK-LABEL: gpu.func @g_0_attention(
// CHECK-NOT: nvvm.mma.sync
// CHECK: gpu.return
func.func @g(%q: tensor<1x100x512xf32>, %k: tensor<1x100x128xf32>, %v: tensor<1x100x128xf32>) -> tensor<1x100x512xf32> {
  %o = rlx_mir.attention %q, %k, %v heads = 8, kv_heads = 2, head_dim = 64 causal : tensor<1x100x512xf32>, tensor<1x100x128xf32>, tensor<1x100x128xf32>
  return %o : tensor<1x100x512xf32>
}
