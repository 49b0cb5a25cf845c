// Reference codecs of the low-bit K formats Q2_K and Q3_K (256-element
// super-blocks of 16 sub-blocks of 16): quantizers that produce the same
// bytes as ggml's quantize_row_q{2,3}_K_ref, including their scale searches
// (make_qkx2_quants with absolute error for Q2_K, make_q3_quants for Q3_K,
// same float operations in the same order), and ggml's dequantizers.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "quant/blocks.hpp"
#include "quant/codecs.hpp"

#include "quant/no_fma.hpp"  // last: it applies to the code below

namespace blockq::codec {
namespace {

constexpr float kGroupMaxEps = 1e-15f;  // ggml's GROUP_MAX_EPS: below it a group counts as all zero

// ggml's make_q3_quants with do_rmse: the symmetric fit of 16 values, x ~
// scale * (L - nmax), L - nmax in [-nmax, nmax - 1], weights x^2: the grid
// of the signed absmax, then up to 5 passes that move single levels while
// the weighted least squares improve. L receives 0..2 nmax - 1 (all 0 for
// an all-zero group); returns the scale.
float fit_q3(int nmax, const float* x, int8_t* L) {
  constexpr int n = 16;
  const float vmax = signed_absmax(x, n);
  if (std::fabs(vmax) < kGroupMaxEps) {
    std::fill(L, L + n, int8_t{0});
    return 0.f;
  }
  const float iscale = static_cast<float>(-nmax) / vmax;
  float sumlx = 0;
  float suml2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = std::max(-nmax, std::min(nmax - 1, nearest_int(iscale * x[i])));
    L[i] = static_cast<int8_t>(l);
    const float w = x[i] * x[i];
    const float fl = static_cast<float>(l);
    sumlx += w * x[i] * fl;
    suml2 += w * fl * fl;
  }
  for (int itry = 0; itry < 5; ++itry) {
    int changed = 0;
    for (int i = 0; i < n; ++i) {
      const float w = x[i] * x[i];
      const float li = static_cast<float>(L[i]);
      float slx = sumlx - w * x[i] * li;
      if (slx > 0) {
        float sl2 = suml2 - w * li * li;
        const int new_l = std::max(-nmax, std::min(nmax - 1, nearest_int(x[i] * sl2 / slx)));
        if (new_l != L[i]) {
          const float fl = static_cast<float>(new_l);
          slx += w * x[i] * fl;
          sl2 += w * fl * fl;
          if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
            L[i] = static_cast<int8_t>(new_l);
            sumlx = slx;
            suml2 = sl2;
            ++changed;
          }
        }
      }
    }
    if (!changed) break;
  }
  for (int i = 0; i < n; ++i) L[i] = static_cast<int8_t>(L[i] + nmax);
  return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

// 2-bit levels L[256] into qs[64]: byte 32h + l holds elements 128h + l,
// +32, +64, +96 in bits 0-1, 2-3, 4-5, 6-7.
template <typename T>
void pack_crumbs(const T* L, uint8_t* qs) {
  for (int h = 0; h < kQK_K / 128; ++h)
    for (int l = 0; l < 32; ++l) {
      const T* e = L + 128 * h + l;
      qs[32 * h + l] = static_cast<uint8_t>(e[0] | (e[32] << 2) | (e[64] << 4) | (e[96] << 6));
    }
}

// Q3_K's 6-bit scale of sub-block j, as stored (0..63).
int q3_scale(const uint8_t* scales, int j) {
  const int lo = j < 8 ? (scales[j] & 0xF) : (scales[j - 8] >> 4);
  return lo | (((scales[8 + j % 4] >> (2 * (j / 4))) & 3) << 4);
}

}  // namespace

// ---- Q2_K

void quantize_q2_K(const float* in, uint8_t* blocks, size_t n) {
  check_elems(n, kQK_K, "q2_K");
  constexpr float q4scale = 15.f;
  uint8_t L[kQK_K];
  float weights[16];
  float mins[kQK_K / 16];
  float scales[kQK_K / 16];
  for (size_t i = 0; i < n / kQK_K; ++i) {
    const float* x = in + i * kQK_K;
    block_q2_K b;
    float max_scale = 0;  // the mins are subtracted, so the scales are >= 0
    float max_min = 0;
    for (int j = 0; j < kQK_K / 16; ++j) {
      for (int l = 0; l < 16; ++l) weights[l] = std::fabs(x[16 * j + l]);
      scales[j] = fit_affine(16, 3, x + 16 * j, weights, L + 16 * j, &mins[j], -0.5f, 0.1f, 15, true);
      if (scales[j] > max_scale) max_scale = scales[j];
      if (mins[j] > max_min) max_min = mins[j];
    }
    if (max_scale > 0) {
      const float iscale = q4scale / max_scale;
      // C's int -> uint8_t conversion, as ggml stores it.
      for (int j = 0; j < kQK_K / 16; ++j) b.scales[j] = static_cast<uint8_t>(nearest_int(iscale * scales[j]));
      b.d = f32_to_f16(max_scale / q4scale);
    } else {
      std::fill(std::begin(b.scales), std::end(b.scales), uint8_t{0});
      b.d = f32_to_f16(0.f);
    }
    if (max_min > 0) {
      const float iscale = q4scale / max_min;
      for (int j = 0; j < kQK_K / 16; ++j)
        b.scales[j] = static_cast<uint8_t>(b.scales[j] | (nearest_int(iscale * mins[j]) << 4));
      b.dmin = f32_to_f16(max_min / q4scale);
    } else {
      b.dmin = f32_to_f16(0.f);
    }
    // Requantize against the scales as they were stored (a sub-block whose
    // scale is 0 keeps its fitted levels, as in ggml).
    for (int j = 0; j < kQK_K / 16; ++j) {
      const float d = f16_to_f32(b.d) * static_cast<float>(b.scales[j] & 0xF);
      if (d == 0) continue;
      const float dm = f16_to_f32(b.dmin) * static_cast<float>(b.scales[j] >> 4);
      for (int ii = 0; ii < 16; ++ii) {
        const int l = nearest_int((x[16 * j + ii] + dm) / d);
        L[16 * j + ii] = static_cast<uint8_t>(std::max(0, std::min(3, l)));
      }
    }
    pack_crumbs(L, b.qs);
    store_block(blocks, i, b);
  }
}

void dequantize_q2_K(const uint8_t* blocks, float* out, size_t n) {
  check_elems(n, kQK_K, "q2_K");
  for (size_t i = 0; i < n / kQK_K; ++i) {
    const auto b = load_block<block_q2_K>(blocks, i);
    const float d = f16_to_f32(b.d);
    const float dmin = f16_to_f32(b.dmin);
    float* y = out + i * kQK_K;
    for (int h = 0; h < kQK_K / 128; ++h)
      for (int j = 0; j < 4; ++j)
        for (int half = 0; half < 2; ++half) {
          const uint8_t sc = b.scales[8 * h + 2 * j + half];
          const float dl = d * static_cast<float>(sc & 0xF);
          const float ml = dmin * static_cast<float>(sc >> 4);
          for (int l = 16 * half; l < 16 * half + 16; ++l) {
            const int q = (b.qs[32 * h + l] >> (2 * j)) & 3;
            y[128 * h + 32 * j + l] = dl * static_cast<float>(q) - ml;
          }
        }
  }
}

// ---- Q3_K

void quantize_q3_K(const float* in, uint8_t* blocks, size_t n) {
  check_elems(n, kQK_K, "q3_K");
  int8_t L[kQK_K];
  float scales[kQK_K / 16];
  for (size_t i = 0; i < n / kQK_K; ++i) {
    const float* x = in + i * kQK_K;
    block_q3_K b;
    const float max_scale = fit_subblocks16(x, L, scales, [](const float* v, int8_t* l) { return fit_q3(4, v, l); });
    std::fill(std::begin(b.scales), std::end(b.scales), uint8_t{0});
    if (max_scale != 0) {
      const float iscale = -32.f / max_scale;
      for (int j = 0; j < kQK_K / 16; ++j) {
        // ggml keeps nearest_int's result in an int8_t before the clamp.
        const auto l8 = static_cast<int8_t>(nearest_int(iscale * scales[j]));
        const int l = std::max(-32, std::min(31, int{l8})) + 32;
        if (j < 8)
          b.scales[j] = static_cast<uint8_t>(l & 0xF);
        else
          b.scales[j - 8] = static_cast<uint8_t>(b.scales[j - 8] | ((l & 0xF) << 4));
        b.scales[8 + j % 4] = static_cast<uint8_t>(b.scales[8 + j % 4] | ((l >> 4) << (2 * (j / 4))));
      }
      b.d = f32_to_f16(1 / iscale);
    } else {
      b.d = f32_to_f16(0.f);
    }
    // Requantize against the scales as they were stored (a sub-block whose
    // scale is 0 keeps its fitted levels, as in ggml).
    for (int j = 0; j < kQK_K / 16; ++j) {
      const float d = f16_to_f32(b.d) * static_cast<float>(q3_scale(b.scales, j) - 32);
      if (d == 0) continue;
      for (int ii = 0; ii < 16; ++ii) {
        const int l = std::max(-4, std::min(3, nearest_int(x[16 * j + ii] / d)));
        L[16 * j + ii] = static_cast<int8_t>(l + 4);
      }
    }
    // The high bit of element e goes to bit e / 32 of hmask[e % 32].
    std::fill(std::begin(b.hmask), std::end(b.hmask), uint8_t{0});
    for (int e = 0; e < kQK_K; ++e)
      if (L[e] > 3) {
        b.hmask[e % 32] = static_cast<uint8_t>(b.hmask[e % 32] | (1u << (e / 32)));
        L[e] = static_cast<int8_t>(L[e] - 4);
      }
    pack_crumbs(L, b.qs);
    store_block(blocks, i, b);
  }
}

void dequantize_q3_K(const uint8_t* blocks, float* out, size_t n) {
  check_elems(n, kQK_K, "q3_K");
  for (size_t i = 0; i < n / kQK_K; ++i) {
    const auto b = load_block<block_q3_K>(blocks, i);
    const float d = f16_to_f32(b.d);
    float* y = out + i * kQK_K;
    for (int h = 0; h < kQK_K / 128; ++h)
      for (int j = 0; j < 4; ++j)
        for (int half = 0; half < 2; ++half) {
          const float dl = d * static_cast<float>(q3_scale(b.scales, 8 * h + 2 * j + half) - 32);
          for (int l = 16 * half; l < 16 * half + 16; ++l) {
            const int lo = (b.qs[32 * h + l] >> (2 * j)) & 3;
            const int hi = (b.hmask[l] >> (4 * h + j)) & 1;
            y[128 * h + 32 * j + l] = dl * static_cast<float>(lo - (hi ? 0 : 4));
          }
        }
  }
}

}  // namespace blockq::codec
