// rlx-compile --emit-kernel-ir writes the module as it leaves the kernel
// pipeline (NVVM-level kernels, marked rlx.kernel_ir); --from-kernel-ir
// compiles it again without the kernel pipeline. The wgmma attention kernel
// has named barriers, written in the generic form (LLVM 22's custom form of
// nvvm.barrier with an id does not parse back).
// RUN: rlx-compile %s --no-cubin --no-emulator --attention-kernel wgmma -o %t.art --emit-kernel-ir %t.kernels.mlir
// RUN: FileCheck %s --input-file %t.kernels.mlir
// RUN: rlx-compile %t.kernels.mlir --from-kernel-ir --no-cubin --no-emulator -o %t.art2
// RUN: FileCheck %s --input-file %t.art2/manifest.json --check-prefix=MANIFEST
// RUN: not rlx-compile %s --from-kernel-ir --no-cubin --no-emulator -o %t.art3 2>&1 | FileCheck %s --check-prefix=ERR

// CHECK: module attributes {{{.*}}rlx.kernel_ir
// CHECK: gpu.func @f_0_attention
// CHECK: "nvvm.barrier"(%{{.*}}, %{{.*}}) <{operandSegmentSizes = array<i32: 1, 1, 0>}> : (i32, i32) -> ()
// CHECK: nvvm.wgmma.mma_async
// MANIFEST: "name": "f_0_attention"
// ERR: error: --from-kernel-ir: the module does not come from --emit-kernel-ir (no 'rlx.kernel_ir' attribute)

func.func @f(%q: tensor<1x70x256xbf16> {rlx.input = "q"}, %k: tensor<1x70x128xbf16> {rlx.input = "k"}, %v: tensor<1x70x128xbf16> {rlx.input = "v"}) -> tensor<1x70x256xbf16> {
  %o = rlx_mir.attention %q, %k, %v heads = 2, kv_heads = 1, head_dim = 128 causal : tensor<1x70x256xbf16>, tensor<1x70x128xbf16>, tensor<1x70x128xbf16>
  return %o : tensor<1x70x256xbf16>
}
