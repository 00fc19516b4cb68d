func.func @f(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) {
  %0 = linalg.transpose ins(%a : tensor<2x3xf32>) outs(%b : tensor<3x2xf32>) permutation = [1, 0