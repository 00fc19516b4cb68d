// rlx_mir.observe_minmax and rlx_mir.choose_qparams verifier errors, located.
// RUN: rlx-opt %s -split-input-file -verify-diagnostics

func.func @no_running(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{observe_minmax averaging_constant needs running(%min, %max)}}
  %a, %b = rlx_mir.observe_minmax %x averaging_constant = 5.000000e-01 : tensor<4x6xf32>
  return
}

// -----

func.func @constant_range(%x: tensor<4x6xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{observe_minmax averaging_constant must be in (0, 1], got 0}}
  %a, %b = rlx_mir.observe_minmax %x running(%s, %s : tensor<f32>, tensor<f32>) averaging_constant = 0.0 : tensor<4x6xf32>
  return
}

// -----

func.func @running_type(%x: tensor<4x6xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{observe_minmax running_min must be tensor<4xf32> (the statistics' type), got tensor<f32>}}
  %a, %b = rlx_mir.observe_minmax %x running(%s, %s : tensor<f32>, tensor<f32>) axis = 0 : tensor<4x6xf32>
  return
}

// -----

func.func @scalar_axis(%x: tensor<f32>) {
  // expected-error @+1 {{observe_minmax axis needs an input of rank >= 1}}
  %a, %b = rlx_mir.observe_minmax %x axis = 0 : tensor<f32>
  return
}

// -----

func.func @range(%s: tensor<f32>) {
  // expected-error @+1 {{choose_qparams range [5, 2] must be increasing, hold 0 and lie within the signed byte's [-128, 127]}}
  %a, %b = rlx_mir.choose_qparams %s, %s quant_min = 5 quant_max = 2 : tensor<f32>
  return
}

// -----

func.func @rank(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{choose_qparams needs f32 or f64 statistics of rank 0 or 1, got tensor<4x6xf32>}}
  %a, %b = rlx_mir.choose_qparams %x, %x : tensor<4x6xf32>
  return
}

// -----

func.func @f16(%x: tensor<4xf16>) {
  // expected-error @+1 {{choose_qparams needs f32 or f64 statistics of rank 0 or 1, got tensor<4xf16>}}
  %a, %b = rlx_mir.choose_qparams %x, %x : tensor<4xf16>
  return
}

// -----

func.func @no_zero(%s: tensor<f32>) {
  // expected-error @+1 {{choose_qparams range [1, 127] must be increasing, hold 0 and lie within the signed byte's [-128, 127]}}
  %a, %b = rlx_mir.choose_qparams %s, %s quant_min = 1 quant_max = 127 : tensor<f32>
  return
}

// -----

func.func @tiny_eps(%s: tensor<f32>) {
  // expected-error @+1 {{choose_qparams eps must be a finite nonzero f32 for f32 statistics}}
  %a, %b = rlx_mir.choose_qparams %s, %s eps = 1.0e-50 : tensor<f32>
  return
}

// -----

// One running value alone (only the generic form can say it).
func.func @half_running(%x: tensor<4x6xf32>, %s: tensor<f32>) {
  // expected-error @+2 {{observe_minmax running needs both running_min and running_max}}
  // expected-error @+1 {{failed to infer returned types}}
  %a:2 = "rlx_mir.observe_minmax"(%x, %s) <{operandSegmentSizes = array<i32: 1, 1, 0>}> : (tensor<4x6xf32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)
  return
}
