// rlx_mir.gated_delta_rule verifier errors, located.
// RUN: rlx-opt %s -split-input-file -verify-diagnostics

func.func @rank(%q: tensor<2x5x4xf32>, %g: tensor<2x5x4xf32>) {
  // expected-error @+1 {{gated_delta_rule needs query [B, L, H, Dk] with a static Dk >= 1, got 2x5x4}}
  %o, %s = rlx_mir.gated_delta_rule %q, %q, %q, %g, %g : tensor<2x5x4xf32>, tensor<2x5x4xf32>,
      tensor<2x5x4xf32>, tensor<2x5x4xf32>, tensor<2x5x4xf32>
  return
}

// -----

func.func @key(%q: tensor<2x5x4x3xf32>, %k: tensor<2x5x4x2xf32>, %g: tensor<2x5x4xf32>) {
  // expected-error @+1 {{gated_delta_rule key must be [B, L, H, Dk] = [2, 5, 4, 3], got [2, 5, 4, 2]}}
  %o, %s = rlx_mir.gated_delta_rule %q, %k, %q, %g, %g : tensor<2x5x4x3xf32>, tensor<2x5x4x2xf32>,
      tensor<2x5x4x3xf32>, tensor<2x5x4xf32>, tensor<2x5x4xf32>
  return
}

// -----

func.func @state(%q: tensor<2x5x4x3xf32>, %v: tensor<2x5x4x6xf32>, %g: tensor<2x5x4xf32>,
                 %s0: tensor<2x4x6x3xf32>) {
  // expected-error @+1 {{gated_delta_rule state must be [B, H, Dk, Dv] = [2, 4, 3, 6], got [2, 4, 6, 3]}}
  %o, %s = rlx_mir.gated_delta_rule %q, %q, %v, %g, %g state(%s0 : tensor<2x4x6x3xf32>)
      : tensor<2x5x4x3xf32>, tensor<2x5x4x3xf32>, tensor<2x5x4x6xf32>, tensor<2x5x4xf32>,
        tensor<2x5x4xf32>
  return
}

// -----

func.func @scale(%q: tensor<2x5x4x3xf32>, %g: tensor<2x5x4xf32>) {
  // expected-error @+1 {{gated_delta_rule scale must be positive and finite}}
  %o, %s = rlx_mir.gated_delta_rule %q, %q, %q, %g, %g scale = 0.0 : tensor<2x5x4x3xf32>,
      tensor<2x5x4x3xf32>, tensor<2x5x4x3xf32>, tensor<2x5x4xf32>, tensor<2x5x4xf32>
  return
}
