//===- StorageSize.h - Bytes an element occupies in memory ------*- C++ -*-===//
//
// The one definition of how many bytes RLX's generated code gives a value of
// an element type, used by the arena planner, the plan checker, the view op,
// the RLX JSON exporter and the host runtimes (rlx-run, Python, CUDA).
//
// The rule is LLVM's: a memref element is stored as the lowered LLVM type,
// and LLVM stores an iN in its store size, the next power of two bytes. So
// i1 and f4E2M1FN (lowered to i4) take one byte per element, not a bit or a
// nibble. Packed NVFP4 weights are therefore i8/ui8 tensors with two codes
// per byte, never memrefs of f4E2M1FN.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_COMMON_IR_STORAGESIZE_H
#define RLX_DIALECT_COMMON_IR_STORAGESIZE_H

#include <cstdint>
#include <optional>

namespace mlir {
class Type;
class ShapedType;
} // namespace mlir

namespace mlir::rlx {

/// Bytes of one element of `bits` bits: 1 for 1..8 bits, then the next power
/// of two (16 → 2, 32 → 4, 64 → 8). Header-only so that runtimes without
/// MLIR apply the same rule.
constexpr int64_t storageBytesForBits(int64_t bits) {
  int64_t bytes = 1;
  while (bytes * 8 < bits)
    bytes *= 2;
  return bytes;
}

/// Bytes of one element of an integer, index or float type (index: 8).
/// std::nullopt for any other type.
std::optional<int64_t> getElementStorageBytes(Type elementType);

/// Bytes of a static shaped value: elements × element bytes. std::nullopt for
/// a dynamic shape, an element type without a storage size, or a size that
/// does not fit in int64_t.
std::optional<int64_t> getStorageBytes(ShapedType type);

} // namespace mlir::rlx

#endif // RLX_DIALECT_COMMON_IR_STORAGESIZE_H
