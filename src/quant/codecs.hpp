// Internal to src/quant: the per-format reference codecs behind the traits
// table, and the scalar helpers they share. Every function takes n elements
// (a multiple of the format's block size, else blockq::Error) and raw block
// bytes with no alignment requirement.
#pragma once
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "quant/half.hpp"
#include "util/error.hpp"

namespace blockq::codec {

// Throws blockq::Error unless n is a multiple of the block size.
inline void check_elems(size_t n, size_t block_elems, std::string_view format) {
  BQ_CHECK(n % block_elems == 0, "{}: {} elements is not a multiple of the block size {}", format, n,
           block_elems);
}

// Block i of a byte run, copied out / in (the bytes may be unaligned).
template <typename Block>
inline Block load_block(const uint8_t* blocks, size_t i) {
  Block b;
  std::memcpy(&b, blocks + i * sizeof(Block), sizeof(Block));
  return b;
}
template <typename Block>
inline void store_block(uint8_t* blocks, size_t i, const Block& b) {
  std::memcpy(blocks + i * sizeof(Block), &b, sizeof(Block));
}

// Round to nearest, ties to even, by ggml's magic-number trick: exact for
// |v| <= 4194303; outside that range (and for NaN) it returns what ggml's
// release build returns, never undefined behaviour.
inline int nearest_int(float v) {
  const float biased = v + 12582912.0f;  // 1.5 * 2^23
  const uint32_t bits = std::bit_cast<uint32_t>(biased);
  return static_cast<int>(bits & 0x007fffffu) - 0x00400000;
}

// C's float -> int conversion (truncation toward zero) for values in range;
// out-of-range values and NaN give INT32_MIN, as x86's cvttss2si does, so the
// quantizers stay defined (and match ggml on x86) for non-finite input.
inline int32_t trunc_to_int(float v) {
  if (!(v > -2147483648.0f && v < 2147483648.0f)) return INT32_MIN;
  return static_cast<int32_t>(v);
}

void dequantize_f32(const uint8_t* in, float* out, size_t n);
void quantize_f32(const float* in, uint8_t* out, size_t n);
void dequantize_f16(const uint8_t* in, float* out, size_t n);
void quantize_f16(const float* in, uint8_t* out, size_t n);
void dequantize_bf16(const uint8_t* in, float* out, size_t n);
void quantize_bf16(const float* in, uint8_t* out, size_t n);

void dequantize_q4_0(const uint8_t* blocks, float* out, size_t n);
void quantize_q4_0(const float* in, uint8_t* blocks, size_t n);
void dequantize_q4_1(const uint8_t* blocks, float* out, size_t n);
void quantize_q4_1(const float* in, uint8_t* blocks, size_t n);
void dequantize_q5_0(const uint8_t* blocks, float* out, size_t n);
void quantize_q5_0(const float* in, uint8_t* blocks, size_t n);
void dequantize_q5_1(const uint8_t* blocks, float* out, size_t n);
void quantize_q5_1(const float* in, uint8_t* blocks, size_t n);
void dequantize_q8_0(const uint8_t* blocks, float* out, size_t n);
void quantize_q8_0(const float* in, uint8_t* blocks, size_t n);

void dequantize_q4_K(const uint8_t* blocks, float* out, size_t n);
void quantize_q4_K(const float* in, uint8_t* blocks, size_t n);
void dequantize_q5_K(const uint8_t* blocks, float* out, size_t n);
void quantize_q5_K(const float* in, uint8_t* blocks, size_t n);
void dequantize_q6_K(const uint8_t* blocks, float* out, size_t n);
void quantize_q6_K(const float* in, uint8_t* blocks, size_t n);
void dequantize_q2_K(const uint8_t* blocks, float* out, size_t n);
void quantize_q2_K(const float* in, uint8_t* blocks, size_t n);
void dequantize_q3_K(const uint8_t* blocks, float* out, size_t n);
void quantize_q3_K(const float* in, uint8_t* blocks, size_t n);
void dequantize_iq4_nl(const uint8_t* blocks, float* out, size_t n);
void quantize_iq4_nl(const float* in, uint8_t* blocks, size_t n);
void dequantize_iq4_xs(const uint8_t* blocks, float* out, size_t n);
void quantize_iq4_xs(const float* in, uint8_t* blocks, size_t n);

// The element of largest magnitude among x[0..n) with its sign (the first one
// on ties): the symmetric formats derive their scales from it.
inline float signed_absmax(const float* x, int n) {
  float amax = 0.0f;
  float vmax = 0.0f;
  for (int j = 0; j < n; ++j) {
    const float a = x[j] < 0 ? -x[j] : x[j];
    if (amax < a) {
      amax = a;
      vmax = x[j];
    }
  }
  return vmax;
}

// The symmetric K formats' first pass (Q3_K, Q6_K): fits each of the 16
// sub-blocks of 16 of x[256] with fit(x + 16 j, L + 16 j) into scales[j] and
// returns the scale of largest magnitude, with its sign (the first on ties).
template <typename Fit>
float fit_subblocks16(const float* x, int8_t* L, float* scales, Fit&& fit) {
  for (int j = 0; j < 16; ++j) scales[j] = fit(x + 16 * j, L + 16 * j);
  return signed_absmax(scales, 16);
}

// ggml's make_qkx2_quants (kquants.cpp): the affine fit of n <= 32 values
// (x ~ scale * L - the_min, L in [0, nmax], the_min >= 0) with weights w,
// by squared (use_mad false) or absolute error; returns the scale.
float fit_affine(int n, int nmax, const float* x, const float* w, uint8_t* L, float* the_min, float rmin,
                 float rdelta, int nstep, bool use_mad);

}  // namespace blockq::codec
