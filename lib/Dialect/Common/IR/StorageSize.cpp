//===- StorageSize.cpp - Bytes an element occupies in memory --------------===//

#include "RLX/Dialect/Common/IR/StorageSize.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;

std::optional<int64_t> mlir::rlx::getElementStorageBytes(Type t) {
  if (isa<IndexType>(t))
    return 8;
  if (!t.isIntOrFloat())
    return std::nullopt;
  return storageBytesForBits(t.getIntOrFloatBitWidth());
}

std::optional<int64_t> mlir::rlx::getStorageBytes(ShapedType t) {
  if (!t.hasStaticShape())
    return std::nullopt;
  std::optional<int64_t> bytes = getElementStorageBytes(t.getElementType());
  if (!bytes)
    return std::nullopt;
  int64_t total = *bytes;
  for (int64_t d : t.getShape())
    if (llvm::MulOverflow(total, d, total))
      return std::nullopt;
  return total;
}
