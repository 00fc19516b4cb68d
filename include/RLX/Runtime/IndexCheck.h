//===- IndexCheck.h - Ids against the rows they index -----------*- C++ -*-===//
//
// One check of index values (token ids, positions) against the row count of
// the table they index (rlx.index_bound, from rlx-mir-index-bounds): the CPU
// runner and the GPU runtime call it before a run, so an id outside the
// vocabulary is an error instead of a clamped lookup. LLVM-free (the GPU
// runtime links no LLVM).
//
//===----------------------------------------------------------------------===//

#ifndef RLX_RUNTIME_INDEXCHECK_H
#define RLX_RUNTIME_INDEXCHECK_H

#include <cstdint>
#include <cstring>
#include <string>

namespace rlx {

/// "" when each of the `count` integers at `data` (`bytes` = 1, 2, 4 or 8
/// each, signed unless `isUnsigned`) is in [0, bound); else an error naming
/// `name`, the first bad value, its position and the bound.
inline std::string checkIndices(const std::string &name, const void *data, uint64_t count,
                                unsigned bytes, bool isUnsigned, int64_t bound) {
  const auto *p = static_cast<const unsigned char *>(data);
  for (uint64_t i = 0; i < count; ++i) {
    int64_t v = 0;
    if (bytes == 8) {
      std::memcpy(&v, p + i * 8, 8);
      if (isUnsigned && v < 0)
        v = INT64_MAX; // above any bound
    } else if (bytes == 4) {
      int32_t s;
      std::memcpy(&s, p + i * 4, 4);
      v = isUnsigned ? int64_t(uint32_t(s)) : int64_t(s);
    } else if (bytes == 2) {
      int16_t s;
      std::memcpy(&s, p + i * 2, 2);
      v = isUnsigned ? int64_t(uint16_t(s)) : int64_t(s);
    } else if (bytes == 1) {
      v = isUnsigned ? int64_t(p[i]) : int64_t(int8_t(p[i]));
    } else {
      return "";
    }
    if (v < 0 || v >= bound)
      return "'" + name + "' element " + std::to_string(i) + " is " + std::to_string(v) +
             ", outside [0, " + std::to_string(bound) + "): it indexes a table of " +
             std::to_string(bound) + " rows (the vocabulary size for token ids)";
  }
  return "";
}

} // namespace rlx

#endif // RLX_RUNTIME_INDEXCHECK_H
