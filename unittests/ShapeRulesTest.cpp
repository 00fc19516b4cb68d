//===- ShapeRulesTest.cpp - Unit tests of the shared shape rules ----------===//

#include "RLX/Dialect/Common/IR/ShapeRules.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::rlx;

namespace {
constexpr int64_t kDyn = ShapedType::kDynamic;

Shape reshape(ArrayRef<int64_t> in, ArrayRef<int64_t> pattern) {
  auto r = inferReshape(std::nullopt, in, pattern);
  return succeeded(r) ? *r : Shape{-42};
}

TEST(ShapeRules, ReshapeSplitsAndMerges) {
  EXPECT_EQ(reshape({1, kDyn, 2048}, {1, -1, 32, 64}), (Shape{1, kDyn, 32, 64}));
  EXPECT_EQ(reshape({1, kDyn, 32, 64}, {1, -1, 2048}), (Shape{1, kDyn, 2048}));
  EXPECT_EQ(reshape({2, 3, 4}, {6, 4}), (Shape{6, 4}));
  EXPECT_EQ(reshape({24}, {2, -1, 4}), (Shape{2, 3, 4}));
}

// L4: a reshape of a dynamic tensor where only the middle dim is dynamic must
// give exactly the bound sizes once the input is static (never a folded
// wrong shape such as 1 for the dynamic dim).
TEST(ShapeRules, ReshapeMiddleDynamicThenSpecialized) {
  EXPECT_EQ(reshape({kDyn}, {1, -1, 8}), (Shape{1, kDyn, 8}));
  EXPECT_EQ(reshape({32}, {1, -1, 8}), (Shape{1, 4, 8}));
  EXPECT_EQ(reshape({kDyn, 8}, {1, -1, 8}), (Shape{1, kDyn, 8}));
  EXPECT_EQ(reshape({4, 8}, {1, -1, 8}), (Shape{1, 4, 8}));
}

TEST(ShapeRules, ReshapeRejectsBadPatterns) {
  EXPECT_TRUE(failed(inferReshape(std::nullopt, {2, 4}, {3, 3})));
  EXPECT_TRUE(failed(inferReshape(std::nullopt, {kDyn}, {-1, -1})));
  EXPECT_TRUE(failed(inferReshape(std::nullopt, {30}, {1, -1, 8})));
  EXPECT_TRUE(failed(inferReshape(std::nullopt, {2, 4}, {0, 8})));
}

TEST(ShapeRules, ReshapeScalars) {
  EXPECT_EQ(reshape({}, {1, 1}), (Shape{1, 1}));
  EXPECT_EQ(reshape({1, 1}, {}), (Shape{}));
}

TEST(ShapeRules, BroadcastFollowsNumpy) {
  auto b = broadcastShapes(std::nullopt, {2, 1, 8}, {3, 1});
  ASSERT_TRUE(succeeded(b));
  EXPECT_EQ(*b, (Shape{2, 3, 8}));
  auto d = broadcastShapes(std::nullopt, {kDyn, 8}, {4, 1});
  ASSERT_TRUE(succeeded(d));
  EXPECT_EQ(*d, (Shape{4, 8}));
  EXPECT_TRUE(failed(broadcastShapes(std::nullopt, {2, 3}, {4})));
}

TEST(ShapeRules, MatmulTransposesAndBatches) {
  auto m = inferMatmul(std::nullopt, {1, kDyn, 2048}, {512, 2048}, false, true);
  ASSERT_TRUE(succeeded(m));
  EXPECT_EQ(*m, (Shape{1, kDyn, 512}));
  auto t = inferMatmul(std::nullopt, {4, 8}, {4, 5}, true, false);
  ASSERT_TRUE(succeeded(t));
  EXPECT_EQ(*t, (Shape{8, 5}));
  EXPECT_TRUE(failed(inferMatmul(std::nullopt, {2, 4}, {5, 4}, false, false)));
}

TEST(ShapeRules, AttentionGqaAndLayouts) {
  AttentionConfig cfg;
  cfg.numHeads = 14;
  cfg.numKvHeads = 2;
  cfg.headDim = 64;
  auto s = inferAttention(std::nullopt, cfg, {1, 37, 896}, {1, 37, 128},
                          {1, 37, 128}, std::nullopt);
  ASSERT_TRUE(succeeded(s));
  EXPECT_EQ(*s, (Shape{1, 37, 896}));
  cfg.layout = AttnLayout::BHSD;
  auto r = inferAttention(std::nullopt, cfg, {2, 14, 5, 64}, {2, 2, 9, 64},
                          {2, 2, 9, 96}, std::nullopt);
  ASSERT_TRUE(succeeded(r));
  EXPECT_EQ(*r, (Shape{2, 14, 5, 96}));
  cfg.numKvHeads = 3;
  EXPECT_TRUE(failed(inferAttention(std::nullopt, cfg, {2, 14, 5, 64},
                                    {2, 3, 9, 64}, {2, 3, 9, 64}, std::nullopt)));
}

TEST(ShapeRules, DiagnosticCarriesLocation) {
  MLIRContext ctx;
  std::string message;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    message = d.str();
    return success();
  });
  Location loc = FileLineColLoc::get(&ctx, "layer.mlir", 3, 7);
  EXPECT_TRUE(failed(checkEps(loc, -1.0)));
  EXPECT_EQ(message, "eps must be a finite value > 0, got -1");
}

TEST(ShapeRules, SliceAndConcat) {
  auto s = inferSlice(std::nullopt, {1, kDyn, 3072}, {0, 0, 2048}, {-1, -1, 512},
                      {1, 1, 1});
  ASSERT_TRUE(succeeded(s));
  EXPECT_EQ(*s, (Shape{1, kDyn, 512}));
  auto t = inferSlice(std::nullopt, {10}, {1}, {-1}, {3});
  ASSERT_TRUE(succeeded(t));
  EXPECT_EQ(*t, (Shape{3}));
  SmallVector<ArrayRef<int64_t>> inputs;
  Shape a{1, 16, 512}, b{1, 1, 512};
  inputs.push_back(a);
  inputs.push_back(b);
  auto c = inferConcat(std::nullopt, inputs, -2);
  ASSERT_TRUE(succeeded(c));
  EXPECT_EQ(*c, (Shape{1, 17, 512}));
}
} // namespace
