// Which plain arguments are weights (rlx-import-to-mir's `weights`): by
// default a remark names the heuristic's candidates (static 2-D float
// arguments read only as a matmul's right operand, 1-D ones only added to
// matmul results) and nothing changes; `auto` marks them; `none`; or
// positions and name patterns.
// RUN: rlx-opt %s --rlx-import-to-mir 2>&1 | FileCheck %s --check-prefix=ADVISE
// RUN: rlx-opt %s --rlx-import-to-mir=weights=auto 2>&1 | FileCheck %s --check-prefix=AUTO
// RUN: rlx-opt %s --rlx-import-to-mir=weights=none | FileCheck %s --check-prefix=NONE
// RUN: rlx-opt %s "--rlx-import-to-mir=weights=0,arg[2]" | FileCheck %s --check-prefix=NAMED
// RUN: not rlx-opt %s --rlx-import-to-mir=weights=7 2>&1 | FileCheck %s --check-prefix=BAD

// ADVISE: remark: rlx-import-to-mir: arg1, arg4 are read only as matmul weights and biases but are inputs: what is computed from them alone (concatenations, transposes) runs on every call; weights=auto takes them as parameters
// ADVISE-NOT: rlx.param
// AUTO: remark: rlx-import-to-mir: arg1, arg4 are read only as matmul weights and biases: taken as parameters
// AUTO-LABEL: func.func @layer(%arg0
// AUTO-SAME:    : tensor<2x8xf32>, %arg1: tensor<8x4xf32> {rlx.param = "arg1"}, %arg2: tensor<2x4xf32>, %arg3: tensor<4x4xf32> {rlx.input = "cache"}, %arg4: tensor<4xf32> {rlx.param = "arg4"})
// NONE-NOT:     rlx.param
// NAMED-LABEL: func.func @layer(%arg0
// NAMED-SAME:   : tensor<2x8xf32> {rlx.param = "arg0"}, %arg1: tensor<8x4xf32>, %arg2: tensor<2x4xf32> {rlx.param = "arg2"}
// BAD: error: rlx-import-to-mir: weights names argument 7, but no function has more than 5
func.func @layer(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>, %b: tensor<2x4xf32>, %c: tensor<4x4xf32> {rlx.input = "cache"}, %bias: tensor<4xf32>) -> tensor<2x4xf32> {
  %acc = arith.constant dense<0.0> : tensor<2x4xf32>
  %m = linalg.matmul ins(%x, %w : tensor<2x8xf32>, tensor<8x4xf32>) outs(%acc : tensor<2x4xf32>) -> tensor<2x4xf32>
  %a = tosa.add %m, %b : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %acc2 = arith.constant dense<0.0> : tensor<2x4xf32>
  // Named as an input by the user: stays one.
  %n = linalg.matmul ins(%a, %c : tensor<2x4xf32>, tensor<4x4xf32>) outs(%acc2 : tensor<2x4xf32>) -> tensor<2x4xf32>
  // A 1-D argument only added to a matmul's result is its bias.
  %s = tosa.const_shape {values = dense<[1, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %b2 = tosa.reshape %bias, %s : (tensor<4xf32>, !tosa.shape<2>) -> tensor<1x4xf32>
  %y = tosa.add %n, %b2 : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// A function another calls keeps its arguments (the caller passes them).
// AUTO-LABEL: func.func private @callee(%arg0
// AUTO-NOT:     rlx.param
func.func private @callee(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>) -> tensor<2x4xf32> {
  %acc = arith.constant dense<0.0> : tensor<2x4xf32>
  %m = linalg.matmul ins(%x, %w : tensor<2x8xf32>, tensor<8x4xf32>) outs(%acc : tensor<2x4xf32>) -> tensor<2x4xf32>
  return %m : tensor<2x4xf32>
}
func.func @caller(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>) -> tensor<2x4xf32> {
  %r = func.call @callee(%x, %w) : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}
