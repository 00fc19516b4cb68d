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
