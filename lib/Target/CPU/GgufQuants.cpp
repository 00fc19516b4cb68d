//===- GgufQuants.cpp - ggml's block formats, dequantized ------------------===//
//
// ggml's dequantize_row_* (ggml-quants.c) for the block formats RLX reads,
// each block as its C struct lays it out (little-endian). Every product is
// its own statement in the order gguf-py's numpy code computes it (and
// contraction into FMAs is off), so the f32 results equal
// gguf.quants.dequantize bit for bit (ggml's own C may differ in the last
// bit where its compiler fuses `d·q − m` into a multiply-add).
//
//===----------------------------------------------------------------------===//

#include "RLX/Runtime/SoftFloat.h"
#include "RLX/Target/CPU/Gguf.h"

#include <cstring>

#pragma clang fp contract(off)

using namespace mlir;
using namespace mlir::rlx;

namespace {

enum : uint32_t {
  F32 = 0, F16 = 1, Q4_0 = 2, Q8_0 = 8, Q4_K = 12, Q5_K = 13, Q6_K = 14, BF16 = 30, MXFP4 = 39
};
constexpr int64_t QK_K = 256;

float half(const uint8_t *p) { return ::rlx::softfloat::f16ToFloat(p[0] | (p[1] << 8)); }

/// The 6-bit scale and min of sub-block j of a Q4_K/Q5_K block
/// (get_scale_min_k4).
void scaleMin(int j, const uint8_t *q, uint8_t &sc, uint8_t &m) {
  if (j < 4) {
    sc = q[j] & 63;
    m = q[j + 4] & 63;
  } else {
    sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

void q4_0(const uint8_t *b, float *y) {
  float d = half(b);
  for (int j = 0; j < 16; ++j) {
    y[j] = d * static_cast<float>((b[2 + j] & 0xF) - 8);
    y[j + 16] = d * static_cast<float>((b[2 + j] >> 4) - 8);
  }
}

void q8_0(const uint8_t *b, float *y) {
  float d = half(b);
  for (int j = 0; j < 32; ++j)
    y[j] = static_cast<float>(static_cast<int8_t>(b[2 + j])) * d;
}

/// Q4_K (qh = null) and Q5_K (qh: the fifth bits, bit c of qh[l] for
/// element l of 32-element chunk c).
void qk45(const uint8_t *b, const uint8_t *qh, const uint8_t *qs, float *y) {
  float d = half(b), dmin = half(b + 2);
  const uint8_t *scales = b + 4;
  for (int c = 0; c < 8; ++c) {
    uint8_t sc, m;
    scaleMin(c, scales, sc, m);
    float dl = d * static_cast<float>(sc);
    float ml = dmin * static_cast<float>(m);
    for (int l = 0; l < 32; ++l) {
      int q = (qs[32 * (c / 2) + l] >> (4 * (c % 2))) & 0xF;
      if (qh)
        q |= ((qh[l] >> c) & 1) << 4;
      float p = dl * static_cast<float>(q);
      y[32 * c + l] = p - ml;
    }
  }
}

void q6_k(const uint8_t *b, float *y) {
  const uint8_t *ql = b, *qh = b + QK_K / 2;
  const int8_t *scales = reinterpret_cast<const int8_t *>(b + QK_K / 2 + QK_K / 4);
  float d = half(b + QK_K / 2 + QK_K / 4 + QK_K / 16);
  // Element e = 128·h + 32·k + l (h: half, k: which nibble/bit pair, l <
  // 32): low 4 bits from ql[64h + l + 32·(k % 2)] (nibble k / 2), high 2
  // bits from qh[32h + l] (bits 2k, 2k+1); scale 16-element group e / 16.
  for (int h = 0; h < 2; ++h)
    for (int k = 0; k < 4; ++k)
      for (int l = 0; l < 32; ++l) {
        int lo = (ql[64 * h + l + 32 * (k % 2)] >> (4 * (k / 2))) & 0xF;
        int hi = (qh[32 * h + l] >> (2 * k)) & 3;
        int e = 128 * h + 32 * k + l;
        float s = d * static_cast<float>(scales[e / 16]);
        y[e] = s * static_cast<float>((lo | (hi << 4)) - 32);
      }
}

void mxfp4(const uint8_t *b, float *y) {
  static const int8_t kvalues[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
  // ggml_e8m0_to_fp32_half: 2^(e - 128) (half the E8M0 scale, the E2M1
  // values above being doubled).
  uint32_t e = b[0];
  uint32_t bits = e < 2 ? 0x00200000u << e : (e - 1) << 23;
  float d;
  std::memcpy(&d, &bits, 4);
  for (int j = 0; j < 16; ++j) {
    y[j] = d * static_cast<float>(kvalues[b[1 + j] & 0xF]);
    y[j + 16] = d * static_cast<float>(kvalues[b[1 + j] >> 4]);
  }
}

} // namespace

StringRef mlir::rlx::ggmlTypeName(uint32_t type) {
  switch (type) {
  case F32: return "f32";
  case F16: return "f16";
  case BF16: return "bf16";
  case Q4_0: return "q4_0";
  case Q8_0: return "q8_0";
  case Q4_K: return "q4_K";
  case Q5_K: return "q5_K";
  case Q6_K: return "q6_K";
  case MXFP4: return "mxfp4";
  default: return "";
  }
}

/// Elements per block and bytes per block of a readable type (0, 0 else).
std::pair<int64_t, int64_t> mlir::rlx::ggmlBlock(uint32_t type) {
  switch (type) {
  case F32: return {1, 4};
  case F16:
  case BF16: return {1, 2};
  case Q4_0: return {32, 18};
  case Q8_0: return {32, 34};
  case Q4_K: return {QK_K, 144};
  case Q5_K: return {QK_K, 176};
  case Q6_K: return {QK_K, 210};
  case MXFP4: return {32, 17};
  default: return {0, 0};
  }
}

LogicalResult mlir::rlx::dequantizeGgml(uint32_t type, ArrayRef<uint8_t> raw, int64_t n,
                                        float *out, std::string &error) {
  auto [block, size] = ggmlBlock(type);
  if (!block) {
    error = "ggml type " + std::to_string(type) + " is not one RLX reads";
    return failure();
  }
  if (n % block || static_cast<uint64_t>(n / block) * size != raw.size()) {
    error = std::to_string(n) + " elements of " + ggmlTypeName(type).str() + " are not " +
            std::to_string(raw.size()) + " bytes";
    return failure();
  }
  const uint8_t *b = raw.data();
  for (int64_t i = 0; i < n / block; ++i, b += size) {
    float *y = out + i * block;
    switch (type) {
    case F32: std::memcpy(y, b, 4); break;
    case F16: *y = half(b); break;
    case BF16: *y = ::rlx::softfloat::bf16ToFloat(b[0] | (b[1] << 8)); break;
    case Q4_0: q4_0(b, y); break;
    case Q8_0: q8_0(b, y); break;
    case Q4_K: qk45(b, nullptr, b + 16, y); break;
    case Q5_K: qk45(b, b + 16, b + 48, y); break;
    case Q6_K: q6_k(b, y); break;
    case MXFP4: mxfp4(b, y); break;
    }
  }
  return success();
}
