//===- Matrix.cpp - PTX warp matrix instructions ---------------------------===//

#include "Matrix.h"

#include <cmath>
#include <cstring>

namespace rlx::emu {

float halfToFloat(uint16_t h) {
  uint32_t sign = (h >> 15) & 1u, exp = (h >> 10) & 31u, man = h & 1023u;
  float v;
  if (exp == 0)
    v = std::ldexp(static_cast<float>(man), -24);
  else if (exp == 31)
    v = man ? NAN : INFINITY;
  else
    v = std::ldexp(static_cast<float>(man | 1024u), static_cast<int>(exp) - 25);
  return sign ? -v : v;
}

float bf16ToFloat(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float v;
  std::memcpy(&v, &bits, 4);
  return v;
}

namespace {
float element(MmaType type, uint32_t reg, unsigned half) {
  uint16_t bits = static_cast<uint16_t>(reg >> (16 * half));
  return type == MmaType::BF16 ? bf16ToFloat(bits) : halfToFloat(bits);
}
} // namespace

void mmaM16N8K16(MmaType type, const uint32_t a[32][4], const uint32_t b[32][2],
                 const float c[32][4], float d[32][4]) {
  float A[16][16], B[16][8], C[16][8];
  for (uint32_t lane = 0; lane < 32; ++lane) {
    uint32_t g = lane / 4, t = lane % 4;
    for (uint32_t i = 0; i < 4; ++i)
      for (unsigned h = 0; h < 2; ++h)
        A[g + 8 * (i & 1)][2 * t + 8 * (i >> 1) + h] = element(type, a[lane][i], h);
    for (uint32_t i = 0; i < 2; ++i)
      for (unsigned h = 0; h < 2; ++h)
        B[2 * t + 8 * i + h][g] = element(type, b[lane][i], h);
    for (uint32_t i = 0; i < 4; ++i)
      C[g + 8 * (i >> 1)][2 * t + (i & 1)] = c[lane][i];
  }
  for (uint32_t lane = 0; lane < 32; ++lane) {
    uint32_t g = lane / 4, t = lane % 4;
    for (uint32_t i = 0; i < 4; ++i) {
      uint32_t row = g + 8 * (i >> 1), col = 2 * t + (i & 1);
      double sum = 0;
      for (uint32_t k = 0; k < 16; ++k)
        sum += static_cast<double>(A[row][k]) * static_cast<double>(B[k][col]);
      d[lane][i] = static_cast<float>(sum + static_cast<double>(C[row][col]));
    }
  }
}

void ldmatrixM8N8(uint32_t num, bool trans, const uint8_t rows[32][16], uint32_t out[32][4]) {
  for (uint32_t m = 0; m < num; ++m) {
    uint16_t M[8][8];
    for (uint32_t r = 0; r < 8; ++r)
      std::memcpy(M[r], rows[8 * m + r], 16);
    for (uint32_t lane = 0; lane < 32; ++lane) {
      uint32_t r = lane / 4, c = 2 * (lane % 4);
      uint16_t lo = trans ? M[c][r] : M[r][c];
      uint16_t hi = trans ? M[c + 1][r] : M[r][c + 1];
      out[lane][m] = static_cast<uint32_t>(lo) | static_cast<uint32_t>(hi) << 16;
    }
  }
}

} // namespace rlx::emu
