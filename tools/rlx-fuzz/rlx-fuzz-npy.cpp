//===- rlx-fuzz-npy.cpp - libFuzzer target: the .npy reader --------------===//
//
// Input: a .npy file. mlir::rlx::readNpy takes a path, so the bytes go to a
// per-process temporary file first (in $TMPDIR, /dev/shm when there is
// one). An array that reads is then touched the way rlx-run uses it: every
// element read (at), converted to f32 and back to its dtype, written with
// writeNpy and read again.
//
// Findings: crashes, sanitizer reports and (unless RLX_FUZZ_STRICT=0) an
// array whose data size does not match its shape and dtype, or one that
// writeNpy writes and readNpy does not read back equal.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "RLX/Target/CPU/HostTensor.h"

#include "llvm/ADT/Twine.h"

#include <string>

using namespace mlir;

static std::string inPath, outPath;

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  inPath = rlx_fuzz::tempPath("npy", ".in.npy");
  outPath = rlx_fuzz::tempPath("npy", ".out.npy");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  rlx_fuzz::writeFile(inPath, data, size);
  std::string error;
  FailureOr<rlx::HostTensor> t = rlx::readNpy(inPath, error);
  if (failed(t))
    return 0;
  int64_t n = t->numElements();
  size_t bytes = rlx::HostTensor::elementBytes(t->dtype);
  if (n < 0 || static_cast<uint64_t>(n) * bytes != t->data.size()) {
    rlx_fuzz::checkFailed("npy-size", llvm::Twine("readNpy: ") + t->dtype + " array of " + llvm::Twine(n) +
                          " elements holds " + llvm::Twine(t->data.size()) + " bytes");
    return 0;
  }
  // Element access and conversions (bounded: large arrays are as good as
  // small ones here).
  double sum = 0;
  for (int64_t i = 0; i < n && i < 4096; ++i)
    sum += t->at(i);
  (void)sum;
  if (n <= 4096) {
    rlx::HostTensor f32 = rlx::convert(*t, "f32");
    rlx::HostTensor back = rlx::convert(f32, t->dtype);
    (void)back;
  }

  if (failed(rlx::writeNpy(outPath, *t, error)))
    return 0;
  FailureOr<rlx::HostTensor> again = rlx::readNpy(outPath, error);
  if (failed(again)) {
    rlx_fuzz::checkFailed("npy-reread", "writeNpy output does not read back: " + error);
    return 0;
  }
  // bf16 is written as f32 (exactly), float8_e4m3fn as its bytes (u1).
  rlx::HostTensor expect = t->dtype == "bf16" ? rlx::convert(*t, "f32") : *t;
  if (t->dtype == "f8e4m3fn")
    expect.dtype = "u8";
  if (again->dtype != expect.dtype)
    rlx_fuzz::checkFailed("npy-roundtrip-dtype", "writeNpy writes a " + t->dtype +
                                                     " array that reads back as " + again->dtype);
  else if (again->shape != expect.shape || again->data != expect.data)
    rlx_fuzz::checkFailed("npy-roundtrip", "readNpy(writeNpy(t)) != t for a " + t->dtype + " array");
  return 0;
}
