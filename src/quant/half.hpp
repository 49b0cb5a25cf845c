// Scalar conversions between f32 and the 16-bit float formats of ggml tensors:
// IEEE binary16 (f16) and bfloat16 (bf16), rounding to nearest even, with the
// same results as ggml's reference conversions (GGML_FP32_TO_FP16 and
// GGML_FP32_TO_BF16) for every input, NaN included.
#pragma once
#include <bit>
#include <cstdint>

namespace blockq {

// f32 -> f16, round to nearest even. Overflow gives +-inf; any NaN gives the
// quiet NaN 0x7e00 with the input's sign (as ggml's reference does).
constexpr uint16_t f32_to_f16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t a = x & 0x7fffffffu;
  if (a > 0x7f800000u) return sign | 0x7e00u;   // NaN
  if (a >= 0x477ff000u) return sign | 0x7c00u;  // >= 65520 rounds to inf
  if (a >= 0x38800000u) {                       // normal f16 (>= 2^-14)
    // Round the 23-bit mantissa to 10 bits (a carry moves into the exponent),
    // then rebias the exponent from 127 to 15.
    const uint32_t r = (a + 0x0fffu + ((a >> 13) & 1u)) >> 13;
    return static_cast<uint16_t>(sign | (r - (112u << 10)));
  }
  // Subnormal f16: the value in units of 2^-24, rounded to nearest even.
  const uint32_t e = a >> 23;
  if (e < 102) return sign;  // below 2^-25: rounds to zero
  const uint32_t m = (a & 0x7fffffu) | 0x800000u;  // value = m * 2^(e - 150)
  const uint32_t s = 126 - e;                      // 14..24
  uint32_t q = m >> s;
  const uint32_t rem = m & ((1u << s) - 1u);
  const uint32_t half = 1u << (s - 1);
  if (rem > half || (rem == half && (q & 1u))) ++q;  // may carry to 0x400, the smallest normal
  return static_cast<uint16_t>(sign | q);
}

// f16 -> f32, exact for every finite value and inf. A NaN keeps its sign and
// payload and comes back quiet (as ggml's reference does).
constexpr float f16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1fu;
  const uint32_t m = h & 0x3ffu;
  if (e == 0) {
    if (m == 0) return std::bit_cast<float>(sign);
    const float v = static_cast<float>(m) * 0x1p-24f;  // exact
    return sign ? -v : v;
  }
  if (e == 31) {
    if (m == 0) return std::bit_cast<float>(sign | 0x7f800000u);
    return std::bit_cast<float>(sign | 0x7fc00000u | (m << 13));
  }
  return std::bit_cast<float>(sign | ((e + 112u) << 23) | (m << 13));
}

// f32 -> bf16, round to nearest even; a NaN is truncated and forced quiet.
constexpr uint16_t f32_to_bf16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  const uint32_t round = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + round) >> 16);
}

// bf16 -> f32: exact (the bf16 bits are the high half of the f32).
constexpr float bf16_to_f32(uint16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

}  // namespace blockq
