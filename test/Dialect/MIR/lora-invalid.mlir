// RUN: rlx-opt %s -split-input-file -verify-diagnostics

func.func @rank_one(%x: tensor<8xf32>, %w: tensor<6x8xf32>, %a: tensor<2x8xf32>, %b: tensor<6x2xf32>) {
  // expected-error @+1 {{lora_matmul needs input [..., in], weight [out, in], lora_a [r, in] and lora_b [out, r], got 8, 6x8, 2x8 and 6x2}}
  %y = rlx_mir.lora_matmul %x, %w, %a, %b scales = [2.0] : tensor<8xf32>, tensor<6x8xf32>, tensor<2x8xf32>, tensor<6x2xf32>
  return
}

// -----

func.func @a_transposed(%x: tensor<3x8xf32>, %w: tensor<6x8xf32>, %a: tensor<8x2xf32>, %b: tensor<6x2xf32>) {
  // expected-error @+1 {{lora_matmul shapes disagree}}
  %y = rlx_mir.lora_matmul %x, %w, %a, %b scales = [2.0] : tensor<3x8xf32>, tensor<6x8xf32>, tensor<8x2xf32>, tensor<6x2xf32>
  return
}

// -----

func.func @rank_mismatch(%x: tensor<3x8xf32>, %w: tensor<6x8xf32>, %a: tensor<2x8xf32>, %b: tensor<6x4xf32>) {
  // expected-error @+1 {{lora_matmul shapes disagree}}
  %y = rlx_mir.lora_matmul %x, %w, %a, %b scales = [2.0] : tensor<3x8xf32>, tensor<6x8xf32>, tensor<2x8xf32>, tensor<6x4xf32>
  return
}

// -----

func.func @two_scales(%x: tensor<3x8xf32>, %w: tensor<6x8xf32>, %a: tensor<2x8xf32>, %b: tensor<6x2xf32>) {
  // expected-error @+1 {{lora_matmul needs one scale per adapter: 2 scales for 1 adapters}}
  %y = rlx_mir.lora_matmul %x, %w, %a, %b scales = [2.0, 1.0] : tensor<3x8xf32>, tensor<6x8xf32>, tensor<2x8xf32>, tensor<6x2xf32>
  return
}

// -----

func.func @nan_scale(%x: tensor<3x8xf32>, %w: tensor<6x8xf32>, %a: tensor<2x8xf32>, %b: tensor<6x2xf32>) {
  // expected-error @+1 {{lora_matmul scales must be finite}}
  %y = rlx_mir.lora_matmul %x, %w, %a, %b scales = [0x7FF8000000000000] : tensor<3x8xf32>, tensor<6x8xf32>, tensor<2x8xf32>, tensor<6x2xf32>
  return
}

// -----

func.func @mixed(%x: tensor<3x8xbf16>, %w: tensor<6x8xf32>, %a: tensor<2x8xf32>, %b: tensor<6x2xf32>) {
  // expected-error @+1 {{element type mismatch: input is bf16 but weight is f32}}
  %y = rlx_mir.lora_matmul %x, %w, %a, %b scales = [2.0] : tensor<3x8xbf16>, tensor<6x8xf32>, tensor<2x8xf32>, tensor<6x2xf32>
  return
}

// -----

func.func @ids_shape(%x: tensor<2x5x8xf32>, %w: tensor<6x8xf32>, %a: tensor<3x2x8xf32>, %b: tensor<3x6x2xf32>, %ids: tensor<2xi64>) {
  // expected-error @+1 {{lora_matmul adapter ids must be one per row, the input's shape without its last axis 2x5, got 2}}
  %y = rlx_mir.lora_matmul %x, %w, %a, %b adapters(%ids : tensor<2xi64>) scales = [1.0, 1.0, 1.0] : tensor<2x5x8xf32>, tensor<6x8xf32>, tensor<3x2x8xf32>, tensor<3x6x2xf32>
  return
}

// -----

func.func @adapter_count(%x: tensor<2x5x8xf32>, %w: tensor<6x8xf32>, %a: tensor<3x2x8xf32>, %b: tensor<2x6x2xf32>, %ids: tensor<2x5xi64>) {
  // expected-error @+1 {{lora_matmul shapes disagree}}
  %y = rlx_mir.lora_matmul %x, %w, %a, %b adapters(%ids : tensor<2x5xi64>) scales = [1.0, 1.0, 1.0] : tensor<2x5x8xf32>, tensor<6x8xf32>, tensor<3x2x8xf32>, tensor<2x6x2xf32>
  return
}

// -----

func.func @two_dynamic(%x: tensor<?x?x8xf32>, %w: tensor<6x8xf32>, %a: tensor<1x2x8xf32>, %b: tensor<1x6x2xf32>, %ids: tensor<?x?xi64>) {
  // expected-error @+1 {{lora_matmul with adapter ids takes at most one dynamic dim in the input's leading axes, got ?x?}}
  %y = rlx_mir.lora_matmul %x, %w, %a, %b adapters(%ids : tensor<?x?xi64>) scales = [1.0] : tensor<?x?x8xf32>, tensor<6x8xf32>, tensor<1x2x8xf32>, tensor<1x6x2xf32>
  return
}

// -----

func.func @dynamic_in(%x: tensor<2x5x?xf32>, %w: tensor<6x?xf32>, %a: tensor<1x2x?xf32>, %b: tensor<1x6x2xf32>, %ids: tensor<2x5xi64>) {
  // expected-error @+1 {{lora_matmul with adapter ids needs at least one adapter and static in, out and r}}
  %y = rlx_mir.lora_matmul %x, %w, %a, %b adapters(%ids : tensor<2x5xi64>) scales = [1.0] : tensor<2x5x?xf32>, tensor<6x?xf32>, tensor<1x2x?xf32>, tensor<1x6x2xf32>
  return
}

// -----

func.func @no_adapters(%x: tensor<2x5x8xf32>, %w: tensor<6x8xf32>, %a: tensor<0x2x8xf32>, %b: tensor<0x6x2xf32>, %ids: tensor<2x5xi64>) {
  // expected-error @+1 {{lora_matmul with adapter ids needs at least one adapter}}
  %y = rlx_mir.lora_matmul %x, %w, %a, %b adapters(%ids : tensor<2x5xi64>) scales = [] : tensor<2x5x8xf32>, tensor<6x8xf32>, tensor<0x2x8xf32>, tensor<0x6x2xf32>
  return
}
