// Reference codecs of the K formats Q4_K, Q5_K and Q6_K (256-element super-
// blocks): quantizers that produce the same bytes as ggml's
// quantize_row_q{4,5,6}_K_ref, including their scale searches (ggml's
// make_qkx2_quants for Q4_K/Q5_K and make_qx_quants for Q6_K, same float
// operations in the same order), and ggml's dequantizers.
#include <algorithm>
#include <cmath>

#include "quant/blocks.hpp"
#include "quant/codecs.hpp"

#include "quant/no_fma.hpp"  // last: it applies to the code below

namespace blockq::codec {
namespace {

constexpr float kGroupMaxEps = 1e-15f;  // below this a group counts as all zero

}  // namespace

// Affine fit of n <= 32 values (x ~ scale * L - the_min, L in [0, nmax], the_min
// >= 0) minimising the weighted squared (or, use_mad, absolute) error: start
// from the min/max grid, then try nstep+1 grids of (nmax + rmin + rdelta*is)
// steps and keep the least squares (scale, min) of whichever grid gives the
// lowest error. Returns the scale; L receives the levels, *the_min the
// (non-negative) offset.
float fit_affine(int n, int nmax, const float* x, const float* w, uint8_t* L, float* the_min, float rmin,
                 float rdelta, int nstep, bool use_mad) {
  BQ_ASSERT(n > 0 && n <= 32, "fit_affine: n = {}", n);
  auto err = [use_mad](float diff) { return use_mad ? std::fabs(diff) : diff * diff; };
  float lo = x[0];
  float hi = x[0];
  float sum_w = w[0];
  float sum_x = sum_w * x[0];
  for (int i = 1; i < n; ++i) {
    if (x[i] < lo) lo = x[i];
    if (x[i] > hi) hi = x[i];
    sum_w += w[i];
    sum_x += w[i] * x[i];
  }
  if (lo > 0) lo = 0;
  if (hi == lo) {
    std::fill(L, L + n, uint8_t{0});
    *the_min = -lo;
    return 0.0f;
  }
  float iscale = static_cast<float>(nmax) / (hi - lo);
  float scale = 1 / iscale;
  float best_error = 0;
  for (int i = 0; i < n; ++i) {
    const int l = nearest_int(iscale * (x[i] - lo));
    L[i] = static_cast<uint8_t>(std::max(0, std::min(nmax, l)));
    const float diff = scale * static_cast<float>(L[i]) + lo - x[i];
    best_error += w[i] * err(diff);
  }
  uint8_t trial[32];
  for (int is = 0; is <= nstep; ++is) {
    iscale = (rmin + rdelta * static_cast<float>(is) + static_cast<float>(nmax)) / (hi - lo);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (int i = 0; i < n; ++i) {
      const int l = std::max(0, std::min(nmax, nearest_int(iscale * (x[i] - lo))));
      trial[i] = static_cast<uint8_t>(l);
      const float fl = static_cast<float>(l);
      sum_l += w[i] * fl;
      sum_l2 += w[i] * fl * fl;
      sum_xl += w[i] * fl * x[i];
    }
    const float det = sum_w * sum_l2 - sum_l * sum_l;
    if (det > 0) {
      float this_scale = (sum_w * sum_xl - sum_x * sum_l) / det;
      float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / det;
      if (this_min > 0) {
        this_min = 0;
        this_scale = sum_xl / sum_l2;
      }
      float cur_error = 0;
      for (int i = 0; i < n; ++i) {
        const float diff = this_scale * static_cast<float>(trial[i]) + this_min - x[i];
        cur_error += w[i] * err(diff);
      }
      if (cur_error < best_error) {
        std::copy(trial, trial + n, L);
        best_error = cur_error;
        scale = this_scale;
        lo = this_min;
      }
    }
  }
  *the_min = -lo;
  return scale;
}

namespace {

// Symmetric fit of 16 values (x ~ scale * (L - nmax), L - nmax in
// [-nmax, nmax-1]) with weights x^2: the grid of the signed absmax, then 18
// neighbouring grids, keeping the one with the best weighted least squares.
float fit_symmetric16(int nmax, const float* x, int8_t* L) {
  constexpr int n = 16;
  const float vmax = signed_absmax(x, n);
  if (std::fabs(vmax) < kGroupMaxEps) {
    std::fill(L, L + n, int8_t{0});
    return 0.0f;
  }
  auto level = [nmax](float v) { return std::max(-nmax, std::min(nmax - 1, nearest_int(v))); };
  float iscale = static_cast<float>(-nmax) / vmax;
  float sumlx = 0;
  float suml2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = level(iscale * x[i]);
    L[i] = static_cast<int8_t>(l + nmax);
    const float w = x[i] * x[i];
    const float fl = static_cast<float>(l);
    sumlx += w * x[i] * fl;
    suml2 += w * fl * fl;
  }
  float scale = suml2 != 0 ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  for (int is = -9; is <= 9; ++is) {
    if (is == 0) continue;
    iscale = -(static_cast<float>(nmax) + 0.1f * static_cast<float>(is)) / vmax;
    sumlx = suml2 = 0;
    for (int i = 0; i < n; ++i) {
      const float fl = static_cast<float>(level(iscale * x[i]));
      const float w = x[i] * x[i];
      sumlx += w * x[i] * fl;
      suml2 += w * fl * fl;
    }
    if (suml2 > 0 && sumlx * sumlx > best * suml2) {
      for (int i = 0; i < n; ++i) L[i] = static_cast<int8_t>(nmax + level(iscale * x[i]));
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

// Sub-block j's 6-bit scale and min from the 12 packed bytes of Q4_K/Q5_K:
// j < 4: low 6 bits of bytes j and j+4; j >= 4: low/high nibble of byte j+4
// plus the top 2 bits of bytes j-4 and j.
void scale_min_k4(int j, const uint8_t* q, uint8_t& sc, uint8_t& m) {
  if (j < 4) {
    sc = q[j] & 63;
    m = q[j + 4] & 63;
  } else {
    sc = static_cast<uint8_t>((q[j + 4] & 0xf) | ((q[j - 4] >> 6) << 4));
    m = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

// The shared first half of the Q4_K and Q5_K quantizers: fits each of the 8
// sub-blocks of one super-block x[256], packs the 6-bit scales and mins and
// the f16 super-scales, and returns the final levels in L[256] (0..nmax).
void quantize_superblock_affine(const float* x, int nmax, float rmin, int nstep, uint16_t& d_out,
                                uint16_t& dmin_out, uint8_t (&packed)[kKScaleSize], uint8_t* L) {
  float scales[kQK_K / 32];
  float mins[kQK_K / 32];
  float weights[32];
  float max_scale = 0;  // the mins are subtracted, so the scales are >= 0
  float max_min = 0;
  for (int j = 0; j < kQK_K / 32; ++j) {
    const float* xs = x + 32 * j;
    float sum_x2 = 0;
    for (int l = 0; l < 32; ++l) sum_x2 += xs[l] * xs[l];
    const float av_x = std::sqrt(sum_x2 / 32);
    for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(xs[l]);
    scales[j] = fit_affine(32, nmax, xs, weights, L + 32 * j, &mins[j], rmin, 0.1f, nstep, false);
    if (scales[j] > max_scale) max_scale = scales[j];
    if (mins[j] > max_min) max_min = mins[j];
  }
  const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
  const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
  for (int j = 0; j < kQK_K / 32; ++j) {
    // C's uint8_t conversion of the int, then the clamp, as ggml does.
    const auto ls = std::min<uint8_t>(63, static_cast<uint8_t>(nearest_int(inv_scale * scales[j])));
    const auto lm = std::min<uint8_t>(63, static_cast<uint8_t>(nearest_int(inv_min * mins[j])));
    if (j < 4) {
      packed[j] = ls;
      packed[j + 4] = lm;
    } else {
      packed[j + 4] = static_cast<uint8_t>((ls & 0xf) | ((lm & 0xf) << 4));
      packed[j - 4] |= static_cast<uint8_t>((ls >> 4) << 6);
      packed[j] |= static_cast<uint8_t>((lm >> 4) << 6);
    }
  }
  d_out = f32_to_f16(max_scale / 63.f);
  dmin_out = f32_to_f16(max_min / 63.f);
  // Requantize against the scales as they were stored.
  for (int j = 0; j < kQK_K / 32; ++j) {
    uint8_t sc, m;
    scale_min_k4(j, packed, sc, m);
    const float d = f16_to_f32(d_out) * static_cast<float>(sc);
    if (d == 0) continue;
    const float dm = f16_to_f32(dmin_out) * static_cast<float>(m);
    for (int ii = 0; ii < 32; ++ii) {
      const int l = nearest_int((x[32 * j + ii] + dm) / d);
      L[32 * j + ii] = static_cast<uint8_t>(std::max(0, std::min(nmax, l)));
    }
  }
}

}  // namespace

// ---- Q4_K

void quantize_q4_K(const float* in, uint8_t* blocks, size_t n) {
  check_elems(n, kQK_K, "q4_K");
  uint8_t L[kQK_K];
  for (size_t i = 0; i < n / kQK_K; ++i) {
    const float* x = in + i * kQK_K;
    block_q4_K b;
    quantize_superblock_affine(x, 15, -1.f, 20, b.d, b.dmin, b.scales, L);
    for (int g = 0; g < kQK_K / 64; ++g) {
      for (int l = 0; l < 32; ++l) {
        b.qs[32 * g + l] = static_cast<uint8_t>(L[64 * g + l] | (L[64 * g + 32 + l] << 4));
      }
    }
    store_block(blocks, i, b);
  }
}

void dequantize_q4_K(const uint8_t* blocks, float* out, size_t n) {
  check_elems(n, kQK_K, "q4_K");
  for (size_t i = 0; i < n / kQK_K; ++i) {
    const auto b = load_block<block_q4_K>(blocks, i);
    const float d = f16_to_f32(b.d);
    const float dmin = f16_to_f32(b.dmin);
    float* y = out + i * kQK_K;
    for (int g = 0; g < kQK_K / 64; ++g) {
      uint8_t sc, m;
      scale_min_k4(2 * g, b.scales, sc, m);
      const float d1 = d * static_cast<float>(sc), m1 = dmin * static_cast<float>(m);
      scale_min_k4(2 * g + 1, b.scales, sc, m);
      const float d2 = d * static_cast<float>(sc), m2 = dmin * static_cast<float>(m);
      const uint8_t* q = b.qs + 32 * g;
      for (int l = 0; l < 32; ++l) y[64 * g + l] = d1 * static_cast<float>(q[l] & 0xf) - m1;
      for (int l = 0; l < 32; ++l) y[64 * g + 32 + l] = d2 * static_cast<float>(q[l] >> 4) - m2;
    }
  }
}

// ---- Q5_K

void quantize_q5_K(const float* in, uint8_t* blocks, size_t n) {
  check_elems(n, kQK_K, "q5_K");
  uint8_t L[kQK_K];
  for (size_t i = 0; i < n / kQK_K; ++i) {
    const float* x = in + i * kQK_K;
    block_q5_K b;
    quantize_superblock_affine(x, 31, -0.5f, 15, b.d, b.dmin, b.scales, L);
    std::fill(std::begin(b.qh), std::end(b.qh), uint8_t{0});
    for (int g = 0; g < kQK_K / 64; ++g) {
      const auto bit_lo = static_cast<uint8_t>(1u << (2 * g));
      const auto bit_hi = static_cast<uint8_t>(2u << (2 * g));
      for (int l = 0; l < 32; ++l) {
        int l1 = L[64 * g + l];
        int l2 = L[64 * g + 32 + l];
        if (l1 > 15) {
          l1 -= 16;
          b.qh[l] |= bit_lo;
        }
        if (l2 > 15) {
          l2 -= 16;
          b.qh[l] |= bit_hi;
        }
        b.qs[32 * g + l] = static_cast<uint8_t>(l1 | (l2 << 4));
      }
    }
    store_block(blocks, i, b);
  }
}

void dequantize_q5_K(const uint8_t* blocks, float* out, size_t n) {
  check_elems(n, kQK_K, "q5_K");
  for (size_t i = 0; i < n / kQK_K; ++i) {
    const auto b = load_block<block_q5_K>(blocks, i);
    const float d = f16_to_f32(b.d);
    const float dmin = f16_to_f32(b.dmin);
    float* y = out + i * kQK_K;
    for (int g = 0; g < kQK_K / 64; ++g) {
      uint8_t sc, m;
      scale_min_k4(2 * g, b.scales, sc, m);
      const float d1 = d * static_cast<float>(sc), m1 = dmin * static_cast<float>(m);
      scale_min_k4(2 * g + 1, b.scales, sc, m);
      const float d2 = d * static_cast<float>(sc), m2 = dmin * static_cast<float>(m);
      const uint8_t* q = b.qs + 32 * g;
      const unsigned bit_lo = 1u << (2 * g), bit_hi = 2u << (2 * g);
      for (int l = 0; l < 32; ++l) {
        const int v = (q[l] & 0xf) + ((b.qh[l] & bit_lo) ? 16 : 0);
        y[64 * g + l] = d1 * static_cast<float>(v) - m1;
      }
      for (int l = 0; l < 32; ++l) {
        const int v = (q[l] >> 4) + ((b.qh[l] & bit_hi) ? 16 : 0);
        y[64 * g + 32 + l] = d2 * static_cast<float>(v) - m2;
      }
    }
  }
}

// ---- Q6_K

void quantize_q6_K(const float* in, uint8_t* blocks, size_t n) {
  check_elems(n, kQK_K, "q6_K");
  int8_t L[kQK_K];
  float scales[kQK_K / 16];
  for (size_t i = 0; i < n / kQK_K; ++i) {
    const float* x = in + i * kQK_K;
    block_q6_K b;
    const float max_scale =
        fit_subblocks16(x, L, scales, [](const float* v, int8_t* l) { return fit_symmetric16(32, v, l); });
    if (std::fabs(max_scale) < kGroupMaxEps) {  // all (near) zero: an all-zero block
      std::memset(&b, 0, sizeof b);
      b.d = f32_to_f16(0.f);
      store_block(blocks, i, b);
      continue;
    }
    const float iscale = -128.f / max_scale;
    b.d = f32_to_f16(1 / iscale);
    for (int ib = 0; ib < kQK_K / 16; ++ib) {
      b.scales[ib] = static_cast<int8_t>(std::min(127, nearest_int(iscale * scales[ib])));
    }
    // Requantize against the scales as they were stored.
    for (int j = 0; j < kQK_K / 16; ++j) {
      const float d = f16_to_f32(b.d) * static_cast<float>(b.scales[j]);
      if (d == 0) continue;
      for (int ii = 0; ii < 16; ++ii) {
        const int l = std::max(-32, std::min(31, nearest_int(x[16 * j + ii] / d)));
        L[16 * j + ii] = static_cast<int8_t>(l + 32);
      }
    }
    for (int h = 0; h < kQK_K / 128; ++h) {
      const int8_t* Lh = L + 128 * h;
      uint8_t* ql = b.ql + 64 * h;
      uint8_t* qh = b.qh + 32 * h;
      for (int l = 0; l < 32; ++l) {
        const int q1 = Lh[l], q2 = Lh[l + 32], q3 = Lh[l + 64], q4 = Lh[l + 96];
        ql[l] = static_cast<uint8_t>((q1 & 0xf) | ((q3 & 0xf) << 4));
        ql[l + 32] = static_cast<uint8_t>((q2 & 0xf) | ((q4 & 0xf) << 4));
        qh[l] = static_cast<uint8_t>((q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6));
      }
    }
    store_block(blocks, i, b);
  }
}

void dequantize_q6_K(const uint8_t* blocks, float* out, size_t n) {
  check_elems(n, kQK_K, "q6_K");
  for (size_t i = 0; i < n / kQK_K; ++i) {
    const auto b = load_block<block_q6_K>(blocks, i);
    const float d = f16_to_f32(b.d);
    float* y = out + i * kQK_K;
    for (int h = 0; h < kQK_K / 128; ++h) {
      const uint8_t* ql = b.ql + 64 * h;
      const uint8_t* qh = b.qh + 32 * h;
      const int8_t* sc = b.scales + 8 * h;
      float* yh = y + 128 * h;
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int q1 = ((ql[l] & 0xf) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int q2 = ((ql[l + 32] & 0xf) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        yh[l] = d * static_cast<float>(sc[is]) * static_cast<float>(q1);
        yh[l + 32] = d * static_cast<float>(sc[is + 2]) * static_cast<float>(q2);
        yh[l + 64] = d * static_cast<float>(sc[is + 4]) * static_cast<float>(q3);
        yh[l + 96] = d * static_cast<float>(sc[is + 6]) * static_cast<float>(q4);
      }
    }
  }
}

}  // namespace blockq::codec
