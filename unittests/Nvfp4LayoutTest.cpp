//===- Nvfp4LayoutTest.cpp - The blocked NVFP4 scale layout ----------------===//
//
// nvfp4::blockedScaleMap against the layout as the PTX ISA's block-scaled
// MMA section and cuBLASLt describe it, written here independently: a
// 128 × 4 tile of scales (rows × 16-element blocks) is stored as 32 rows of
// 16 bytes, row r holding rows r, r + 32, r + 64, r + 96 of the tile, each
// as its 4 consecutive block scales; tiles are row-major over [N/128, K/64].
//
//===----------------------------------------------------------------------===//

#include "RLX/Dialect/MIR/IR/Nvfp4Math.h"

#include "mlir/IR/MLIRContext.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::rlx;

TEST(Nvfp4Layout, BlockedScaleMapIsTheTiledLayoutAndItsInverse) {
  MLIRContext ctx;
  AffineMap map = nvfp4::blockedScaleMap(&ctx), inverse = nvfp4::blockedScaleInverseMap(&ctx);
  ASSERT_EQ(map.getNumResults(), 4u);
  ASSERT_EQ(inverse.getNumResults(), 2u);
  const int64_t n = 384, blocks = 12; // [N, K/16] with K = 192
  std::vector<int> seen(n * blocks, 0);
  for (int64_t row = 0; row < n; ++row)
    for (int64_t b = 0; b < blocks; ++b) {
      int64_t tileRow = row % 128, tileCol = b % 4;
      // Byte offset within the 512-byte tile, then the tile's index.
      int64_t byte = (tileRow % 32) * 16 + (tileRow / 32) * 4 + tileCol;
      SmallVector<int64_t> expected{row / 128, b / 4, byte / 16, byte % 16};
      SmallVector<int64_t> got = map.compose(ArrayRef<int64_t>{row, b});
      EXPECT_EQ(got, expected) << "scale (" << row << ", " << b << ")";
      SmallVector<int64_t> back = inverse.compose(ArrayRef<int64_t>(got));
      EXPECT_EQ(back, (SmallVector<int64_t>{row, b}));
      int64_t flat = ((got[0] * (blocks / 4) + got[1]) * 32 + got[2]) * 16 + got[3];
      ASSERT_LT(flat, n * blocks);
      ++seen[flat];
    }
  // A bijection onto the blocked tensor.
  for (int count : seen)
    EXPECT_EQ(count, 1);
}
