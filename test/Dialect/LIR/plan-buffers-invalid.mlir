// The planner needs static sizes and the buffer form, and says what to do.
// RUN: rlx-opt %s --rlx-lir-plan-buffers -split-input-file -verify-diagnostics

func.func @dynamic(%n: index, %x: memref<?xf32> {rlx.input = "x"}) {
  // expected-error @+1 {{rlx-lir-plan-buffers needs static buffer sizes, got 'memref<?xf32>'; bind the dynamic dims with rlx-mir-specialize{dims=<name>=<size>,...} before MIR → LIR}}
  %a = memref.alloc(%n) : memref<?xf32>
  memref.copy %x, %a : memref<?xf32> to memref<?xf32>
  return
}

// -----

// expected-error @+1 {{rlx-lir-plan-buffers needs the buffer form; run rlx-lir-bufferize first}}
func.func @tensors(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// The arena argument would not match a call: entry points only (this left
// the call with the wrong operands, IR that does not verify).
// expected-error @+1 {{rlx-lir-plan-buffers plans entry points, and @callee has callers (its arena argument would not match them); inline the calls first, before MIR → LIR, without the inliner's canonicalization (--inline="default-pipeline=": its folds include an upstream TOSA cast fold that turns i1 true into -1.0)}}
func.func @callee(%a: memref<2x4xf32> {rlx.param = "a"}, %out: memref<4x4xf32> {rlx.output = "y"}) {
  %t = memref.alloc() : memref<4x4xf32>
  memref.copy %t, %out : memref<4x4xf32> to memref<4x4xf32>
  return
}
func.func @caller(%a: memref<2x4xf32>, %out: memref<4x4xf32>) {
  call @callee(%a, %out) : (memref<2x4xf32>, memref<4x4xf32>) -> ()
  return
}
