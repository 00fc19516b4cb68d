// rlx-math-approximations: exp, log, tanh and erf on f32 become upstream's
// polynomial approximations (fma chains that vectorize); sin/cos keep libm.
// Accuracy is covered by test/python/test_mir_ops.py (test_unary, 1e-5).
// The implicit check-nots cover the whole output (CHECK-NOT lines only saw the
// text before the first match of the next CHECK).
// RUN: rlx-opt %s --rlx-math-approximations | FileCheck %s \
// RUN:   --implicit-check-not=math.exp --implicit-check-not=math.log \
// RUN:   --implicit-check-not=math.tanh --implicit-check-not=math.erf

// CHECK-LABEL: func @approximated
// CHECK-COUNT-5: math.fma
// CHECK:     return
func.func @approximated(%x: f32, %v: vector<8xf32>) -> (f32, f32, f32, f32, vector<8xf32>) {
  %a = math.exp %x : f32
  %b = math.log %x : f32
  %c = math.tanh %x : f32
  %d = math.erf %x : f32
  %e = math.exp %v : vector<8xf32>
  return %a, %b, %c, %d, %e : f32, f32, f32, f32, vector<8xf32>
}

// CHECK-LABEL: func @kept
// CHECK: math.sin
// CHECK: math.cos
func.func @kept(%x: f32) -> (f32, f32) {
  %s = math.sin %x : f32
  %c = math.cos %x : f32
  return %s, %c : f32, f32
}
