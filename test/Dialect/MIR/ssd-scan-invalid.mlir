// rlx_mir.ssd_scan verifier errors, located.
// RUN: rlx-opt %s -split-input-file -verify-diagnostics

func.func @rank(%x: tensor<2x5x4xf32>, %dt: tensor<2x5x4xf32>, %a: tensor<4xf32>,
                %b: tensor<2x5x2x3xf32>) {
  // expected-error @+1 {{ssd_scan needs x [B, L, H, P] with a static P >= 1, got 2x5x4}}
  %y, %h = rlx_mir.ssd_scan %x, %dt, %a, %b, %b : tensor<2x5x4xf32>, tensor<2x5x4xf32>,
      tensor<4xf32>, tensor<2x5x2x3xf32>, tensor<2x5x2x3xf32>
  return
}

// -----

func.func @groups(%x: tensor<2x5x4x2xf32>, %dt: tensor<2x5x4xf32>, %a: tensor<4xf32>,
                  %b: tensor<2x5x3x3xf32>) {
  // expected-error @+1 {{ssd_scan: 4 heads are not a multiple of the 3 groups of B and C}}
  %y, %h = rlx_mir.ssd_scan %x, %dt, %a, %b, %b : tensor<2x5x4x2xf32>, tensor<2x5x4xf32>,
      tensor<4xf32>, tensor<2x5x3x3xf32>, tensor<2x5x3x3xf32>
  return
}

// -----

func.func @a_per_head(%x: tensor<2x5x4x2xf32>, %dt: tensor<2x5x4xf32>, %a: tensor<4x3xf32>,
                      %b: tensor<2x5x2x3xf32>) {
  // expected-error @+1 {{ssd_scan A must be [H] = [4], got [4, 3]}}
  %y, %h = rlx_mir.ssd_scan %x, %dt, %a, %b, %b : tensor<2x5x4x2xf32>, tensor<2x5x4xf32>,
      tensor<4x3xf32>, tensor<2x5x2x3xf32>, tensor<2x5x2x3xf32>
  return
}

// -----

func.func @state(%x: tensor<2x5x4x2xf32>, %dt: tensor<2x5x4xf32>, %a: tensor<4xf32>,
                 %b: tensor<2x5x2x3xf32>, %s: tensor<2x4x3x2xf32>) {
  // expected-error @+1 {{ssd_scan state must be [B, H, P, N] = [2, 4, 2, 3], got [2, 4, 3, 2]}}
  %y, %h = rlx_mir.ssd_scan %x, %dt, %a, %b, %b state(%s : tensor<2x4x3x2xf32>)
      : tensor<2x5x4x2xf32>, tensor<2x5x4xf32>, tensor<4xf32>, tensor<2x5x2x3xf32>,
        tensor<2x5x2x3xf32>
  return
}

// -----

func.func @limits(%x: tensor<2x5x4x2xf32>, %dt: tensor<2x5x4xf32>, %a: tensor<4xf32>,
                  %b: tensor<2x5x2x3xf32>) {
  // expected-error @+1 {{ssd_scan dt_min 2.00 is above dt_max 1.00}}
  %y, %h = rlx_mir.ssd_scan %x, %dt, %a, %b, %b dt_min = 2.0 dt_max = 1.0
      : tensor<2x5x4x2xf32>, tensor<2x5x4xf32>, tensor<4xf32>, tensor<2x5x2x3xf32>,
        tensor<2x5x2x3xf32>
  return
}

// -----

func.func @mixed(%x: tensor<2x5x4x2xf32>, %dt: tensor<2x5x4xbf16>, %a: tensor<4xf32>,
                 %b: tensor<2x5x2x3xf32>) {
  // expected-error @+1 {{element type mismatch: x is f32 but dt is bf16}}
  %y, %h = rlx_mir.ssd_scan %x, %dt, %a, %b, %b : tensor<2x5x4x2xf32>, tensor<2x5x4xbf16>,
      tensor<4xf32>, tensor<2x5x2x3xf32>, tensor<2x5x2x3xf32>
  return
}

// -----

func.func @infinite_limit(%x: tensor<2x5x4x2xf32>, %dt: tensor<2x5x4xf32>, %a: tensor<4xf32>,
                          %b: tensor<2x5x2x3xf32>) {
  // expected-error @+1 {{ssd_scan dt_min and dt_max must be finite (leave one out for no bound)}}
  %y, %h = rlx_mir.ssd_scan %x, %dt, %a, %b, %b dt_max = 0x7FF0000000000000
      : tensor<2x5x4x2xf32>, tensor<2x5x4xf32>, tensor<4xf32>, tensor<2x5x2x3xf32>,
        tensor<2x5x2x3xf32>
  return
}
