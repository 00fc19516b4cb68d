// bf16 fused_matmul with more than 8 rows runs on tensor cores on sm_80+:
// ldmatrix from shared memory into mma.sync m16n8k16, no spills, no stack;
// tensor-cores=0 forces the SIMT fallback.
// RUN: rlx-opt %s --rlx-lower-to-nvvm="chip=sm_80 assemble=0" | FileCheck %s --check-prefix=PTX
// RUN: rlx-opt %s --rlx-lower-to-nvvm="chip=sm_80 spills=error" -o /dev/null
// RUN: rlx-opt %s --rlx-lower-to-nvvm="chip=sm_90a spills=error" -o /dev/null
// RUN: rlx-opt %s --rlx-lower-to-nvvm="chip=sm_80 assemble=0 tensor-cores=0" | FileCheck %s --check-prefix=SIMT
// PTX: .target sm_80
// PTX: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX: ldmatrix.sync.aligned.m8n8.x2.shared.b16
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// SIMT-NOT: mma.sync
// SIMT: fma.rn.f32
func.func @f(%x: tensor<37x96xbf16>, %g: tensor<96xbf16>, %w: tensor<256x96xbf16>) -> tensor<37x128xbf16> {
  %n = rlx_mir.rms_norm %x, %g eps = 1.0e-05 : tensor<37x96xbf16>, tensor<96xbf16>
  %m = rlx_mir.matmul %n, %w transpose_b : tensor<37x96xbf16>, tensor<256x96xbf16>
  %gate = rlx_mir.slice %m offsets [0, 0] sizes [37, 128] strides [1, 1] : tensor<37x256xbf16>
  %up = rlx_mir.slice %m offsets [0, 128] sizes [37, 128] strides [1, 1] : tensor<37x256xbf16>
  %s = rlx_mir.silu %gate : tensor<37x128xbf16>
  %y = rlx_mir.mul %s, %up : tensor<37x128xbf16>, tensor<37x128xbf16>
  return %y : tensor<37x128xbf16>
}
