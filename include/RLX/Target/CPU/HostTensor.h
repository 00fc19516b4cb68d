//===- HostTensor.h - Host arrays, .npy files, seeded values ----*- C++ -*-===//
//
// What rlx-run and the Python package hand to compiled models: a dense
// row-major array with a dtype name, readable from and writable to NumPy's
// .npy format, and reproducible seeded values (the generator python/rlx
// mirrors, so a NumPy reference can rebuild the same weights).
//
//===----------------------------------------------------------------------===//

#ifndef RLX_TARGET_CPU_HOSTTENSOR_H
#define RLX_TARGET_CPU_HOSTTENSOR_H

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class Type;
}

namespace mlir::rlx {

struct HostTensor {
  /// f32, f64, f16, bf16, i64, i32, i8, i1 (one byte per element).
  std::string dtype = "f32";
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;

  int64_t numElements() const;
  static size_t elementBytes(StringRef dtype);
  static HostTensor zeros(StringRef dtype, ArrayRef<int64_t> shape);
  /// The element as a double (for comparisons and printing).
  double at(int64_t i) const;
  /// Stores `v` as element i: rounded to nearest for floats; for integers
  /// truncated toward zero, saturating at the type's range, NaN as 0.
  void set(int64_t i, double v);
};

/// The dtype name of an MLIR element type, or "" when it has none.
std::string dtypeOf(Type elementType);
/// The dtype name of an element type spelled as MLIR prints it (the GPU
/// artifact's manifest: "f32", "f8E4M3FN"), or "" when it has none.
std::string dtypeOf(StringRef elementType, MLIRContext *context);

/// Reads a .npy file (C order; dtypes f4, f8, f2, i8, i4, i1, b1, u1; V2
/// (ml_dtypes bfloat16) and u2 (bf16 bit patterns, as rlx-gpu-run writes
/// them) as bf16, V1 (ml_dtypes float8_e4m3fn) as f8e4m3fn).
FailureOr<HostTensor> readNpy(StringRef path, std::string &error);
/// Writes a .npy file; bf16 is written as f4 (exactly).
LogicalResult writeNpy(StringRef path, const HostTensor &t, std::string &error);
/// Converts between dtypes (float rounding to nearest even; bf16 supported;
/// to integers as HostTensor::set stores them).
HostTensor convert(const HostTensor &t, StringRef dtype);
/// The conversion of a value given at run time (--input, Python's run(),
/// rlx-gpu-run) to an argument's dtype: allowed when every value converts
/// exactly (bf16 -> f32, int32 -> int64, int64 ids that fit in int32, byte
/// arrays for FP8/FP4 bytes); anything that would round, overflow or change
/// a value is an error naming `name`, the dtypes and the first such value.
FailureOr<HostTensor> convertExact(const HostTensor &t, StringRef dtype, StringRef name,
                                   std::string &error);

/// Bytes of `count` elements of `dtype`, or nullopt when that overflows.
std::optional<uint64_t> tensorBytes(StringRef dtype, ArrayRef<int64_t> shape);
/// The bytes a runner may hold: RLX_MEMORY_BUDGET (bytes, or with a K/M/G/T
/// suffix) when set, else the machine's physical memory.
uint64_t memoryBudget();
/// The same; a malformed RLX_MEMORY_BUDGET sets `error` (and the machine's
/// memory is returned).
uint64_t memoryBudget(std::string &error);
/// A tensor a runner will allocate: `what` names it ("argument 'x'").
struct BudgetItem {
  std::string what;
  std::string dtype;
  std::vector<int64_t> shape;
};
/// Fails naming the first of `items` whose size overflows or does not fit
/// the memory budget, or their total with `extraBytes` (`extraWhat`, e.g.
/// the arena): a diagnostic before anything is allocated.
LogicalResult checkMemoryBudget(ArrayRef<BudgetItem> items, uint64_t extraBytes,
                                StringRef extraWhat, std::string &error);

/// The RLX seeded generator: standard normal values for tensor `name`,
/// element i: Box-Muller on two splitmix64 draws from the stream seeded with
/// seed ^ fnv1a64(name). python/rlx/random.py computes the same numbers.
class SeededStream {
public:
  SeededStream(uint64_t seed, StringRef name);
  /// Element i as a standard normal value.
  double normal(uint64_t i) const;
  /// Element i as a uniform integer in [0, bound).
  uint64_t uniformInt(uint64_t i, uint64_t bound) const;

private:
  uint64_t key;
};

/// Fills `t` (any float dtype) with shift + scale * normal(i).
void fillNormal(HostTensor &t, const SeededStream &stream, double scale, double shift);

} // namespace mlir::rlx

#endif // RLX_TARGET_CPU_HOSTTENSOR_H
