// Reference codecs of the non-linear 4-bit formats IQ4_NL (blocks of 32) and
// IQ4_XS (super-blocks of 256 with 6-bit sub-block scales): quantizers that
// produce the same bytes as ggml's quantize_row_iq4_{nl,xs}_ref (its
// quantize_row_iq4_nl_impl without importance weights, same float operations
// in the same order), and ggml's dequantizers.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "quant/blocks.hpp"
#include "quant/codecs.hpp"

#include "quant/no_fma.hpp"  // last: it applies to the code below

namespace blockq::codec {
namespace {

constexpr float kGroupMaxEps = 1e-15f;  // ggml's GROUP_MAX_EPS

// ggml's best_index_int8 over the 16 levels: the nearest level's index (the
// upper one when x is exactly between two).
int nearest_level(float x) {
  const int8_t* v = kIq4nlValues;
  if (x <= v[0]) return 0;
  if (x >= v[15]) return 15;
  int lo = 0, hi = 15;
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if (x < v[mid]) hi = mid;
    else lo = mid;
  }
  return x - v[hi - 1] < v[hi] - x ? hi - 1 : hi;
}

// One block of 32 (weights x^2): the scale of the absmax grid refined by
// least squares, then ntry grids on either side of it (ggml's ntry; IQ4_NL's
// reference takes none). L gets the first grid's levels; an all-zero block
// returns 0 and leaves L as it was.
float fit_block(const float* x, uint8_t* L, int ntry) {
  float weight[32];
  for (int j = 0; j < 32; ++j) weight[j] = x[j] * x[j];
  const float vmax = signed_absmax(x, 32);
  if (std::fabs(vmax) < kGroupMaxEps) return 0.f;
  const float v0 = static_cast<float>(kIq4nlValues[0]);
  float d = ntry > 0 ? -vmax / v0 : vmax / v0;
  float id = 1 / d;
  float sumqx = 0, sumq2 = 0;
  for (int j = 0; j < 32; ++j) {
    const int l = nearest_level(id * x[j]);
    L[j] = static_cast<uint8_t>(l);
    const float q = static_cast<float>(kIq4nlValues[l]);
    sumqx += weight[j] * q * x[j];
    sumq2 += weight[j] * q * q;
  }
  d = sumq2 > 0 ? sumqx / sumq2 : 0.f;
  float best = d * sumqx;
  for (int itry = -ntry; itry <= ntry; ++itry) {
    id = static_cast<float>(itry + kIq4nlValues[0]) / vmax;
    sumqx = sumq2 = 0;
    for (int j = 0; j < 32; ++j) {
      const float q = static_cast<float>(kIq4nlValues[nearest_level(id * x[j])]);
      sumqx += weight[j] * q * x[j];
      sumq2 += weight[j] * q * q;
    }
    if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
      d = sumqx / sumq2;
      best = d * sumqx;
    }
  }
  return d;
}

// Levels L[32 i + j] (low nibble) and L[32 i + 16 + j] (high) into qs[16 i + j].
void pack_levels(const uint8_t* L, uint8_t* qs, int blocks32) {
  for (int i = 0; i < blocks32; ++i)
    for (int j = 0; j < 16; ++j) qs[16 * i + j] = static_cast<uint8_t>(L[32 * i + j] | (L[32 * i + 16 + j] << 4));
}

// IQ4_XS's 6-bit scale of sub-block ib (0..63; the value is d * (ls - 32)).
int xs_scale(const block_iq4_xs& b, int ib) {
  return ((b.scales_l[ib / 2] >> (4 * (ib % 2))) & 0xF) | (((b.scales_h >> (2 * ib)) & 3) << 4);
}

}  // namespace

// ---- IQ4_NL

void quantize_iq4_nl(const float* in, uint8_t* blocks, size_t n) {
  check_elems(n, 32, "iq4_nl");
  // ggml leaves an all-zero block's levels as the block before left them
  // (unset for the first); they start at 0 here. Its d is 0 either way.
  uint8_t L[32] = {};
  for (size_t i = 0; i < n / 32; ++i) {
    block_iq4_nl b;
    b.d = f32_to_f16(fit_block(in + 32 * i, L, -1));
    pack_levels(L, b.qs, 1);
    store_block(blocks, i, b);
  }
}

void dequantize_iq4_nl(const uint8_t* blocks, float* out, size_t n) {
  check_elems(n, 32, "iq4_nl");
  for (size_t i = 0; i < n / 32; ++i) {
    const auto b = load_block<block_iq4_nl>(blocks, i);
    const float d = f16_to_f32(b.d);
    float* y = out + 32 * i;
    for (int j = 0; j < 16; ++j) {
      y[j] = d * static_cast<float>(kIq4nlValues[b.qs[j] & 0xF]);
      y[j + 16] = d * static_cast<float>(kIq4nlValues[b.qs[j] >> 4]);
    }
  }
}

// ---- IQ4_XS

void quantize_iq4_xs(const float* in, uint8_t* blocks, size_t n) {
  check_elems(n, kQK_K, "iq4_xs");
  uint8_t L[kQK_K] = {};
  float scales[kQK_K / 32];
  for (size_t i = 0; i < n / kQK_K; ++i) {
    const float* x = in + i * kQK_K;
    block_iq4_xs b;
    for (int ib = 0; ib < kQK_K / 32; ++ib) scales[ib] = fit_block(x + 32 * ib, L + 32 * ib, 7);
    const float max_scale = signed_absmax(scales, kQK_K / 32);
    // Sub-block scales as 6-bit multiples of d = -max / 32, and every level
    // again against the scale as stored.
    const float d = -max_scale / 32;
    b.d = f32_to_f16(d);
    b.scales_h = 0;
    const float id = d != 0 ? 1 / d : 0.f;
    for (int ib = 0; ib < kQK_K / 32; ++ib) {
      int l = std::max(-32, std::min(31, nearest_int(id * scales[ib])));
      const float dl = d * static_cast<float>(l);
      const float idl = dl != 0 ? 1 / dl : 0.f;
      for (int j = 0; j < 32; ++j) L[32 * ib + j] = static_cast<uint8_t>(nearest_level(idl * x[32 * ib + j]));
      l += 32;
      if (ib % 2 == 0) b.scales_l[ib / 2] = static_cast<uint8_t>(l & 0xF);
      else b.scales_l[ib / 2] = static_cast<uint8_t>(b.scales_l[ib / 2] | ((l & 0xF) << 4));
      b.scales_h = static_cast<uint16_t>(b.scales_h | ((l >> 4) << (2 * ib)));
    }
    pack_levels(L, b.qs, kQK_K / 32);
    store_block(blocks, i, b);
  }
}

void dequantize_iq4_xs(const uint8_t* blocks, float* out, size_t n) {
  check_elems(n, kQK_K, "iq4_xs");
  for (size_t i = 0; i < n / kQK_K; ++i) {
    const auto b = load_block<block_iq4_xs>(blocks, i);
    const float d = f16_to_f32(b.d);
    for (int ib = 0; ib < kQK_K / 32; ++ib) {
      const float dl = d * static_cast<float>(xs_scale(b, ib) - 32);
      const uint8_t* qs = b.qs + 16 * ib;
      float* y = out + i * kQK_K + 32 * ib;
      for (int j = 0; j < 16; ++j) {
        y[j] = dl * static_cast<float>(kIq4nlValues[qs[j] & 0xF]);
        y[j + 16] = dl * static_cast<float>(kIq4nlValues[qs[j] >> 4]);
      }
    }
  }
}

}  // namespace blockq::codec
