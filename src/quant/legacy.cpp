// Reference codecs of the 32-element formats Q4_0, Q4_1, Q5_0, Q5_1 and Q8_0:
// quantizers that produce the same bytes as ggml's quantize_row_*_ref (same
// float operations in the same order) and ggml's dequantizers.
#include <algorithm>
#include <cfloat>
#include <cmath>

#include "quant/blocks.hpp"
#include "quant/codecs.hpp"

#include "quant/no_fma.hpp"  // last: it applies to the code below

namespace blockq::codec {
namespace {

float signed_absmax(const float* x) { return codec::signed_absmax(x, kQK); }

void min_max(const float* x, float& lo, float& hi) {
  lo = FLT_MAX;
  hi = -FLT_MAX;
  for (int j = 0; j < kQK; ++j) {
    if (x[j] < lo) lo = x[j];
    if (x[j] > hi) hi = x[j];
  }
}

// C's (int8_t)v for a float v: truncation, wrapped to 8 bits.
inline int to_i8(float v) { return static_cast<int8_t>(trunc_to_int(v)); }

uint32_t load_qh(const uint8_t (&qh)[4]) {
  return uint32_t{qh[0]} | uint32_t{qh[1]} << 8 | uint32_t{qh[2]} << 16 | uint32_t{qh[3]} << 24;
}
void store_qh(uint8_t (&qh)[4], uint32_t v) {
  for (int k = 0; k < 4; ++k) qh[k] = static_cast<uint8_t>(v >> (8 * k));
}

}  // namespace

// ---- Q4_0: d = signed absmax / -8, q = min(15, trunc(x/d + 8.5)).

void quantize_q4_0(const float* in, uint8_t* blocks, size_t n) {
  check_elems(n, kQK, "q4_0");
  for (size_t i = 0; i < n / kQK; ++i) {
    const float* x = in + i * kQK;
    const float d = signed_absmax(x) / -8.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    block_q4_0 b;
    b.d = f32_to_f16(d);
    for (int j = 0; j < kQK / 2; ++j) {
      const float v0 = x[j] * id;
      const float v1 = x[j + kQK / 2] * id;
      const auto q0 = static_cast<uint8_t>(std::min(15, to_i8(v0 + 8.5f)));
      const auto q1 = static_cast<uint8_t>(std::min(15, to_i8(v1 + 8.5f)));
      b.qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
    }
    store_block(blocks, i, b);
  }
}

void dequantize_q4_0(const uint8_t* blocks, float* out, size_t n) {
  check_elems(n, kQK, "q4_0");
  for (size_t i = 0; i < n / kQK; ++i) {
    const auto b = load_block<block_q4_0>(blocks, i);
    const float d = f16_to_f32(b.d);
    float* y = out + i * kQK;
    for (int j = 0; j < kQK / 2; ++j) {
      y[j] = static_cast<float>((b.qs[j] & 0x0f) - 8) * d;
      y[j + kQK / 2] = static_cast<float>((b.qs[j] >> 4) - 8) * d;
    }
  }
}

// ---- Q4_1: d = (max - min) / 15, m = min, q = min(15, trunc((x - min)/d + 0.5)).

void quantize_q4_1(const float* in, uint8_t* blocks, size_t n) {
  check_elems(n, kQK, "q4_1");
  for (size_t i = 0; i < n / kQK; ++i) {
    const float* x = in + i * kQK;
    float lo, hi;
    min_max(x, lo, hi);
    const float d = (hi - lo) / 15.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    block_q4_1 b;
    b.d = f32_to_f16(d);
    b.m = f32_to_f16(lo);
    for (int j = 0; j < kQK / 2; ++j) {
      const float v0 = (x[j] - lo) * id;
      const float v1 = (x[j + kQK / 2] - lo) * id;
      const auto q0 = static_cast<uint8_t>(std::min(15, to_i8(v0 + 0.5f)));
      const auto q1 = static_cast<uint8_t>(std::min(15, to_i8(v1 + 0.5f)));
      b.qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
    }
    store_block(blocks, i, b);
  }
}

void dequantize_q4_1(const uint8_t* blocks, float* out, size_t n) {
  check_elems(n, kQK, "q4_1");
  for (size_t i = 0; i < n / kQK; ++i) {
    const auto b = load_block<block_q4_1>(blocks, i);
    const float d = f16_to_f32(b.d);
    const float m = f16_to_f32(b.m);
    float* y = out + i * kQK;
    for (int j = 0; j < kQK / 2; ++j) {
      y[j] = static_cast<float>(b.qs[j] & 0x0f) * d + m;
      y[j + kQK / 2] = static_cast<float>(b.qs[j] >> 4) * d + m;
    }
  }
}

// ---- Q5_0: d = signed absmax / -16, q = min(31, trunc(x/d + 16.5)).

void quantize_q5_0(const float* in, uint8_t* blocks, size_t n) {
  check_elems(n, kQK, "q5_0");
  for (size_t i = 0; i < n / kQK; ++i) {
    const float* x = in + i * kQK;
    const float d = signed_absmax(x) / -16.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    block_q5_0 b;
    b.d = f32_to_f16(d);
    uint32_t qh = 0;
    for (int j = 0; j < kQK / 2; ++j) {
      const float v0 = x[j] * id;
      const float v1 = x[j + kQK / 2] * id;
      const auto q0 = static_cast<uint8_t>(std::min(31, to_i8(v0 + 16.5f)));
      const auto q1 = static_cast<uint8_t>(std::min(31, to_i8(v1 + 16.5f)));
      b.qs[j] = static_cast<uint8_t>((q0 & 0x0f) | ((q1 & 0x0f) << 4));
      qh |= uint32_t{(q0 >> 4) & 1u} << j;
      qh |= uint32_t{(q1 >> 4) & 1u} << (j + kQK / 2);
    }
    store_qh(b.qh, qh);
    store_block(blocks, i, b);
  }
}

void dequantize_q5_0(const uint8_t* blocks, float* out, size_t n) {
  check_elems(n, kQK, "q5_0");
  for (size_t i = 0; i < n / kQK; ++i) {
    const auto b = load_block<block_q5_0>(blocks, i);
    const float d = f16_to_f32(b.d);
    const uint32_t qh = load_qh(b.qh);
    float* y = out + i * kQK;
    for (int j = 0; j < kQK / 2; ++j) {
      const int h0 = static_cast<int>((qh >> j) & 1u) << 4;
      const int h1 = static_cast<int>((qh >> (j + kQK / 2)) & 1u) << 4;
      y[j] = static_cast<float>(((b.qs[j] & 0x0f) | h0) - 16) * d;
      y[j + kQK / 2] = static_cast<float>(((b.qs[j] >> 4) | h1) - 16) * d;
    }
  }
}

// ---- Q5_1: d = (max - min) / 31, m = min, q = trunc((x - min)/d + 0.5).

void quantize_q5_1(const float* in, uint8_t* blocks, size_t n) {
  check_elems(n, kQK, "q5_1");
  for (size_t i = 0; i < n / kQK; ++i) {
    const float* x = in + i * kQK;
    float lo, hi;
    min_max(x, lo, hi);
    const float d = (hi - lo) / 31.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    block_q5_1 b;
    b.d = f32_to_f16(d);
    b.m = f32_to_f16(lo);
    uint32_t qh = 0;
    for (int j = 0; j < kQK / 2; ++j) {
      const float v0 = (x[j] - lo) * id;
      const float v1 = (x[j + kQK / 2] - lo) * id;
      const auto q0 = static_cast<uint8_t>(trunc_to_int(v0 + 0.5f));
      const auto q1 = static_cast<uint8_t>(trunc_to_int(v1 + 0.5f));
      b.qs[j] = static_cast<uint8_t>((q0 & 0x0f) | ((q1 & 0x0f) << 4));
      qh |= uint32_t{(q0 >> 4) & 1u} << j;
      qh |= uint32_t{(q1 >> 4) & 1u} << (j + kQK / 2);
    }
    store_qh(b.qh, qh);
    store_block(blocks, i, b);
  }
}

void dequantize_q5_1(const uint8_t* blocks, float* out, size_t n) {
  check_elems(n, kQK, "q5_1");
  for (size_t i = 0; i < n / kQK; ++i) {
    const auto b = load_block<block_q5_1>(blocks, i);
    const float d = f16_to_f32(b.d);
    const float m = f16_to_f32(b.m);
    const uint32_t qh = load_qh(b.qh);
    float* y = out + i * kQK;
    for (int j = 0; j < kQK / 2; ++j) {
      const int h0 = static_cast<int>((qh >> j) & 1u) << 4;
      const int h1 = static_cast<int>((qh >> (j + kQK / 2)) & 1u) << 4;
      y[j] = static_cast<float>((b.qs[j] & 0x0f) | h0) * d + m;
      y[j + kQK / 2] = static_cast<float>((b.qs[j] >> 4) | h1) * d + m;
    }
  }
}

// ---- Q8_0: d = absmax / 127, q = round(x/d) (half away from zero).

void quantize_q8_0(const float* in, uint8_t* blocks, size_t n) {
  check_elems(n, kQK, "q8_0");
  for (size_t i = 0; i < n / kQK; ++i) {
    const float* x = in + i * kQK;
    float amax = 0.0f;
    for (int j = 0; j < kQK; ++j) {
      const float a = std::fabs(x[j]);
      amax = amax > a ? amax : a;  // ggml's MAX(): a NaN wins
    }
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    block_q8_0 b;
    b.d = f32_to_f16(d);
    for (int j = 0; j < kQK; ++j) {
      const float v = x[j] * id;
      b.qs[j] = static_cast<int8_t>(trunc_to_int(std::round(v)));
    }
    store_block(blocks, i, b);
  }
}

void dequantize_q8_0(const uint8_t* blocks, float* out, size_t n) {
  check_elems(n, kQK, "q8_0");
  for (size_t i = 0; i < n / kQK; ++i) {
    const auto b = load_block<block_q8_0>(blocks, i);
    const float d = f16_to_f32(b.d);
    float* y = out + i * kQK;
    for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(b.qs[j]) * d;
  }
}

}  // namespace blockq::codec
