//===- FftRows.h - Fourier transforms as independent rows -------*- C++ -*-===//
//
// The one definition of which fft/rfft/irfft ops a one-block-per-row FFT
// kernel (the GPU's shared-memory Stockham kernel) runs, and of what it
// computes for them: a transform along the last logical axis of a static
// tensor, of a length whose prime factors are small, within the kernel's
// shared-memory budget. rlx-mir-decompose leaves these ops whole on the GPU
// path; the kernel template reads the form from here.
//
//===----------------------------------------------------------------------===//

#ifndef RLX_DIALECT_MIR_IR_FFTROWS_H
#define RLX_DIALECT_MIR_IR_FFTROWS_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir::rlx::mir {

struct FftRows {
  /// fft (complex → complex), rfft (real → the n // 2 + 1 bins), irfft
  /// (the bins → real, the negative frequencies their conjugates).
  enum class Kind { C2C, R2C, C2R };
  Kind kind;
  /// The number of transforms (the product of the other logical dims).
  int64_t rows;
  /// The transform length.
  int64_t n;
  /// Per row: R2C the real samples stored (cut or zero-padded to n), C2R the
  /// bins stored (the first n // 2 + 1 are used, missing ones are 0), C2C n.
  int64_t stored;
  /// e^{+2πi·jk/n} (the inverse transform) instead of e^{−2πi·jk/n}.
  bool inverse;
  /// numpy's norm factor, applied once on the way out.
  double scale;
  /// n's factors in stage order (Stockham: radix-r butterflies at stride
  /// p = the product of the radices before, twiddles e^{∓2πi·t·k/(p·r)}).
  SmallVector<int64_t> radices;
};

/// The largest transform and radix the row kernel takes: two ping-pong
/// planes of the compute type in 32 KiB of shared memory, small dense
/// radix butterflies.
constexpr int64_t kFftRowsMaxBytes = 32 * 1024;
constexpr int64_t kFftRowsMaxRadix = 13;

/// `op`'s row form where it has one (an fft over only its last logical
/// axis, an rfft or irfft along the last axis, static shapes, n within the
/// limits above); nullopt otherwise (the op decomposes).
std::optional<FftRows> fftRows(Operation *op);

} // namespace mlir::rlx::mir

#endif // RLX_DIALECT_MIR_IR_FFTROWS_H
