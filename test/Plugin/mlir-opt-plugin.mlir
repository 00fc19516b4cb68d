// RLX's dialects and passes in Debian's upstream mlir-opt-22 through
// libRLXPlugin.so: parse HIR, lower to MIR, fuse, and go to planned LIR.
// RUN: mlir-opt-22 --load-dialect-plugin=%rlx_lib_dir/libRLXPlugin.so \
// RUN:   --load-pass-plugin=%rlx_lib_dir/libRLXPlugin.so %s \
// RUN:   --pass-pipeline="builtin.module(convert-rlx-hir-to-mir,rlx-mir-fuse,rlx-mir-specialize{dims=seq=4},convert-rlx-mir-to-lir,rlx-lir-bufferize,rlx-lir-plan-buffers,rlx-lir-verify-plan)" \
// RUN:   | FileCheck %s
// RUN: mlir-opt-22 --load-dialect-plugin=%rlx_lib_dir/libRLXPlugin.so %s | FileCheck %s --check-prefix=PARSE

// PARSE: rlx_hir.swiglu
// CHECK-LABEL: func.func @mlp
// CHECK-SAME:    memref<{{[0-9]+}}xi8> {rlx_lir.arena}
// CHECK:         rlx_lir.kernel "fused_matmul"
// CHECK:           rlx_mir.fused_matmul {{.*}} glu
// CHECK:         rlx_lir.kernel "matmul"
func.func @mlp(%x: tensor<1x?x64xf32> {rlx.input = "x", rlx.dim_names = ["", "seq", ""]},
               %g: tensor<128x64xf32> {rlx.param = "gate"}, %u: tensor<128x64xf32> {rlx.param = "up"},
               %d: tensor<64x128xf32> {rlx.param = "down"}) -> (tensor<1x?x64xf32> {rlx.output = "y"}) {
  %y = rlx_hir.swiglu %x, gate %g, up %u, down %d
      : tensor<1x?x64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>
  return %y : tensor<1x?x64xf32>
}
