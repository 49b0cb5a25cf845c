// The matvec CPU twin and float64 reference (order stated in twin.hpp).
#include "kernels/matvec/twin.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

#include "kernels/common/reduce_twin.hpp"
#include "kernels/common/split_sum.hpp"
#include "kernels/matvec/generator.hpp"
#include "kernels/matvec/raw.hpp"
#include "util/error.hpp"

namespace blockq::matvec {

namespace {

float dot4(const float* a, const float* b) {
  float s = a[0] * b[0];
  s = s + a[1] * b[1];
  s = s + a[2] * b[2];
  s = s + a[3] * b[3];
  return s;
}

uint32_t partner_dim(const KernelSpec& s, uint32_t slot_global) {
  // Row of slot g in the pair order (see neox_row in the generator).
  const auto& h = s.hooks;
  if (h.rope_rows && slot_global >= h.rope_rows) return slot_global;  // not rotated
  const uint32_t sl = slot_global % h.head_dim;
  uint32_t d = sl;
  if (h.rope_mode == RopeMode::Neox && sl < h.n_rot) d = (sl % 2 == 0) ? sl / 2 : sl / 2 + h.n_rot / 2;
  return slot_global - sl + d;
}

// The RMSNorm scale of token t's x [k] (twin order).
float rms_scale(const KernelSpec& s, const float* x) {
  const float ss = rms_sum_squares(x, s.k, s.wg);
  const float mean = ss / static_cast<float>(s.k);
  const float shift = mean + s.hooks.eps;
  return 1.0f / std::sqrt(shift);
}

// The staged input of token t: x, or the RMSNorm of x times nw (twin order),
// or with kRmsLate x times nw (the scale then multiplies the row sums).
std::vector<float> staged(const KernelSpec& s, const TwinInputs& in, uint32_t t, uint32_t kp) {
  std::vector<float> xs(kp, 0.f);
  const float* x = in.x.data() + size_t{t} * s.k;
  if (s.hooks.prologue == Prologue::None) {
    std::copy(x, x + s.k, xs.begin());
    return xs;
  }
  if (s.variant & kRmsLate) {
    for (uint32_t i = 0; i < s.k; ++i) xs[i] = x[i] * in.norm_w[i];
    return xs;
  }
  const float scale = rms_scale(s, x);
  for (uint32_t i = 0; i < s.k; ++i) {
    const float v = x[i] * scale;
    xs[i] = v * in.norm_w[i];
  }
  return xs;
}

// Sum of the staged x over each scale group (the kernel's staging order).
std::vector<float> group_sums(const float* xs, const UnitInfo& ui) {
  std::vector<float> out(ui.kp / ui.group);
  for (size_t g = 0; g < out.size(); ++g) {
    const float* v = xs + g * ui.group;
    float s4[4] = {v[0], v[1], v[2], v[3]};
    for (uint32_t j = 4; j < ui.group; j += 4)
      for (int c = 0; c < 4; ++c) s4[c] = s4[c] + v[j + c];
    out[g] = (s4[0] + s4[1]) + (s4[2] + s4[3]);
  }
  return out;
}

// One row of a weight in twin form: codes, and per group scale and min.
struct RowView {
  const float* code;
  const float* scale;  // null for float formats
  const float* min;    // null without a min
};

// The kernel's sum for one row (codes padded to kp; sx: group sums of xs).
float slice_sum(const KernelSpec& s, const RowView& w, const float* xs, const float* sx, const UnitInfo& ui,
                uint32_t kb, uint32_t ke) {
  std::vector<float> lanes(s.tpr, 0.f);
  const uint32_t gch = ui.group ? ui.group / 8 : 1;
  for (uint32_t t0 = kb; t0 < ke; t0 += s.tile) {
    const uint32_t u0 = t0 / ui.unit, u1 = std::min(ke, t0 + s.tile) / ui.unit;
    for (uint32_t l = 0; l < s.tpr; ++l)
      for (uint32_t u = u0 + l; u < u1; u += s.tpr)
        for (uint32_t c0 = 0; c0 < ui.chunks; c0 += gch) {
          float p = 0.f;
          for (uint32_t c = c0; c < c0 + gch; ++c) {
            const uint32_t e = u * ui.unit + 8 * c;
            const float d = dot4(w.code + e, xs + e) + dot4(w.code + e + 4, xs + e + 4);
            p = c == c0 ? d : p + d;
          }
          if (!w.scale) {
            lanes[l] = lanes[l] + p;
            continue;
          }
          const uint32_t g = (u * ui.unit + 8 * c0) / ui.group;
          lanes[l] = lanes[l] + w.scale[g] * p;
          if (w.min) lanes[l] = lanes[l] + w.min[g] * sx[g];
        }
  }
  return twin::detail::tree_reduce<twin::detail::SumOp>(lanes);
}

// The int8 form of slice_sum (features.dot4): integer products per group.
float slice_sum_i8(const KernelSpec& s, const RowView& w, const QuantX& qx, const UnitInfo& ui, uint32_t kb,
                   uint32_t ke) {
  std::vector<float> lanes(s.tpr, 0.f);
  for (uint32_t t0 = kb; t0 < ke; t0 += s.tile) {
    const uint32_t u0 = t0 / ui.unit, u1 = std::min(ke, t0 + s.tile) / ui.unit;
    for (uint32_t l = 0; l < s.tpr; ++l)
      for (uint32_t u = u0 + l; u < u1; u += s.tpr)
        for (uint32_t e0 = u * ui.unit; e0 < (u + 1) * ui.unit; e0 += ui.group) {
          int32_t isum = 0, sq = 0;
          for (uint32_t e = e0; e < e0 + ui.group; ++e) {
            isum += static_cast<int32_t>(w.code[e]) * qx.q[e];
            sq += qx.q[e];
          }
          const uint32_t g = e0 / ui.group;
          const float dx = qx.scale[e0 / 32];
          lanes[l] = lanes[l] + (w.scale[g] * dx) * static_cast<float>(isum);
          if (w.min) lanes[l] = lanes[l] + w.min[g] * (dx * static_cast<float>(sq));
        }
  }
  return twin::detail::tree_reduce<twin::detail::SumOp>(lanes);
}

// Split-k: each slice of units [slice * ups, ...) is summed this way on its
// own, and the slice sums are added in order (split_sum::sum_slices).
float row_sum(const KernelSpec& s, const RowView& w, const float* xs, const float* sx, const QuantX* qx,
              const UnitInfo& ui) {
  const uint32_t ups = (ui.kp / ui.unit + s.splits - 1) / s.splits;
  std::vector<float> slices;
  for (uint32_t sl = 0; sl < s.splits; ++sl) {
    const uint32_t kb = sl * ups * ui.unit, ke = std::min(ui.kp, kb + ups * ui.unit);
    slices.push_back(qx ? slice_sum_i8(s, w, *qx, ui, kb, ke) : slice_sum(s, w, xs, sx, ui, kb, ke));
  }
  return split_sum::sum_slices(slices);
}

// 127 / a as the kernel's qinv computes it (fmt/i8/helpers.wgsl).
float qinv(float a) {
  if (a < kInt8Tiny) return 0.f;
  float r = std::bit_cast<float>(0x7ef311c3u - std::bit_cast<uint32_t>(a));
  for (int i = 0; i < 3; ++i) r = std::fma(r, std::fma(-a, r, 1.0f), r);
  return 127.0f * r;
}

}  // namespace

float rms_sum_squares(const float* x, uint32_t k, uint32_t wg) {
  BQ_ASSERT(k % 4 == 0 && twin::is_pow2(wg) && wg <= twin::kMaxTwinWg,
            "rms_sum_squares: k = {} must be a multiple of 4, wg = {} a power of two", k, wg);
  std::vector<float> part(wg, 0.0f);
  for (uint32_t i = 0; i < k / 4; ++i) {
    const float* q = x + 4 * size_t{i};
    const float s0 = q[0] * q[0], s1 = q[1] * q[1], s2 = q[2] * q[2], s3 = q[3] * q[3];
    part[i % wg] = part[i % wg] + ((s0 + s1) + (s2 + s3));
  }
  const uint32_t rl = std::min(wg, 32u), per = wg / rl;
  float total = 0.0f;
  for (uint32_t j = 0; j < rl; ++j) {
    float a = 0.0f;
    for (uint32_t i = 0; i < per; ++i) a = a + part[j * per + i];
    total = total + a;
  }
  return total;
}

QuantX quantize_x(std::span<const float> x) {
  BQ_ASSERT(x.size() % 32 == 0);
  QuantX out;
  out.q.resize(x.size());
  out.scale.resize(x.size() / 32);
  out.sum.assign(x.size() / 16, 0);
  for (size_t b = 0; b < x.size() / 32; ++b) {
    float am = 0.f;
    for (size_t i = 0; i < 32; ++i) am = std::max(am, std::fabs(x[32 * b + i]));
    const float inv = qinv(am);
    for (size_t i = 0; i < 32; ++i) {
      const float v = std::nearbyint(x[32 * b + i] * inv);
      const int32_t c = static_cast<int32_t>(std::clamp(v, -127.0f, 127.0f));
      out.q[32 * b + i] = static_cast<int8_t>(c);
      out.sum[2 * b + i / 16] += c;
    }
    out.scale[b] = am * kInv127;
  }
  return out;
}

std::vector<float> dequantize_rows(const HostWeight& w, uint32_t row0, uint32_t rows) {
  const UnitInfo ui = unit_info(w.kind, w.k);
  std::vector<float> out(size_t{rows} * ui.kp, 0.f);
  if (w.kind.onnx) {
    std::vector<float> row(w.onnx->blocks_per_row() * w.kind.block_size);
    for (uint32_t r = 0; r < rows; ++r) {
      dequantize_row(*w.onnx, row0 + r, std::span<float>(row.data(), w.k));
      std::copy(row.begin(), row.begin() + w.k, out.begin() + size_t{r} * ui.kp);
    }
    return out;
  }
  const size_t rb = blockq::row_bytes(w.kind.format, w.k);
  for (uint32_t r = 0; r < rows; ++r)
    traits(w.kind.format).dequantize(w.ggml.data() + size_t{row0 + r} * rb, out.data() + size_t{r} * ui.kp, w.k);
  return out;
}

std::vector<float> twin(const KernelSpec& s, const TwinInputs& in) {
  BQ_ASSERT(in.a && in.x.size() == size_t{s.m} * s.k);
  const UnitInfo ui = unit_info(s.weight, s.k);
  const bool silu = s.hooks.epilogue == Epilogue::SiluGate;
  BQ_ASSERT(!silu || in.b);
  const RawRows wa = raw_rows(*in.a, 0, s.n);
  const RawRows wb = silu ? raw_rows(*in.b, 0, s.n) : RawRows{};
  const uint32_t gpr = ui.group ? ui.kp / ui.group : 0;
  auto view = [&](const RawRows& w, uint32_t r) {
    return RowView{w.code.data() + size_t{r} * ui.kp, w.scale.empty() ? nullptr : w.scale.data() + size_t{r} * gpr,
                   w.min.empty() ? nullptr : w.min.data() + size_t{r} * gpr};
  };
  std::vector<float> sums(size_t{s.m} * s.n), sums_b(silu ? size_t{s.m} * s.n : 0);
  for (uint32_t t = 0; t < s.m; ++t) {
    const std::vector<float> xs = staged(s, in, t, ui.kp);
    const std::vector<float> sx = ui.has_min ? group_sums(xs.data(), ui) : std::vector<float>{};
    const QuantX qx = s.features.dot4 ? quantize_x(xs) : QuantX{};
    const QuantX* qp = s.features.dot4 ? &qx : nullptr;
    // kRmsLate: the RMSNorm scale times each row sum, before the bias.
    const bool late = (s.variant & kRmsLate) != 0;
    const float nsl = late ? rms_scale(s, in.x.data() + size_t{t} * s.k) : 1.0f;
    for (uint32_t r = 0; r < s.n; ++r) {
      float v = row_sum(s, view(wa, r), xs.data(), sx.data(), qp, ui);
      if (late) v = v * nsl;
      if (s.hooks.bias) v = v + in.bias[r];
      sums[size_t{t} * s.n + r] = v;
      if (silu) {
        const float b = row_sum(s, view(wb, r), xs.data(), sx.data(), qp, ui);
        sums_b[size_t{t} * s.n + r] = late ? b * nsl : b;
      }
    }
  }
  std::vector<float> y(size_t{s.m} * s.n);
  const auto& h = s.hooks;
  for (uint32_t t = 0; t < s.m; ++t)
    for (uint32_t g = 0; g < s.n; ++g) {  // g: slot in the pair order (= row unless NeoX)
      const uint32_t r = h.epilogue == Epilogue::Rope ? partner_dim(s, g) : g;
      const size_t i = size_t{t} * s.n + r;
      const float v = sums[i];
      switch (h.epilogue) {
        case Epilogue::Store: y[i] = v; break;
        case Epilogue::Acc: y[i] = in.y_in[i] + v; break;
        case Epilogue::SiluGate: {
          const float e = std::exp(-v);
          const float den = 1.0f + e;
          const float sl = v / den;
          y[i] = sl * sums_b[i];
          break;
        }
        case Epilogue::Rope: {
          const uint32_t sl = g % h.head_dim;
          if (sl >= h.n_rot || (h.rope_rows && g >= h.rope_rows)) {
            y[i] = v;
            break;
          }
          const float p = sums[size_t{t} * s.n + partner_dim(s, g ^ 1u)];
          const float ex = -2.0f * static_cast<float>(sl / 2) / static_cast<float>(h.n_rot);
          const float tp = static_cast<float>(in.pos[t]) * h.rope_scale;
          const float theta = tp * std::pow(h.rope_base, ex);
          const float c = std::cos(theta), sn = std::sin(theta);
          y[i] = (sl % 2 == 0) ? v * c - p * sn : p * sn + v * c;
          break;
        }
      }
    }
  return y;
}

std::vector<double> reference(const KernelSpec& s, const TwinInputs& in) {
  const UnitInfo ui = unit_info(s.weight, s.k);
  const bool silu = s.hooks.epilogue == Epilogue::SiluGate;
  std::vector<float> wa = dequantize_rows(*in.a, 0, s.n);
  std::vector<float> wb = silu ? dequantize_rows(*in.b, 0, s.n) : std::vector<float>{};
  std::vector<double> sums(size_t{s.m} * s.n), sums_b(silu ? size_t{s.m} * s.n : 0);
  std::vector<double> xs(s.k);
  for (uint32_t t = 0; t < s.m; ++t) {
    const float* x = in.x.data() + size_t{t} * s.k;
    double scale = 1.0;
    if (s.hooks.prologue == Prologue::RmsNorm) {
      double ss = 0;
      for (uint32_t i = 0; i < s.k; ++i) ss += double(x[i]) * x[i];
      scale = 1.0 / std::sqrt(ss / s.k + double(s.hooks.eps));
    }
    for (uint32_t i = 0; i < s.k; ++i)
      xs[i] = s.hooks.prologue == Prologue::RmsNorm ? x[i] * scale * in.norm_w[i] : double(x[i]);
    for (uint32_t r = 0; r < s.n; ++r) {
      double a = 0, b = 0;
      for (uint32_t i = 0; i < s.k; ++i) {
        a += double(wa[size_t{r} * ui.kp + i]) * xs[i];
        if (silu) b += double(wb[size_t{r} * ui.kp + i]) * xs[i];
      }
      if (s.hooks.bias) a += in.bias[r];
      sums[size_t{t} * s.n + r] = a;
      if (silu) sums_b[size_t{t} * s.n + r] = b;
    }
  }
  std::vector<double> y(sums.size());
  const auto& h = s.hooks;
  for (uint32_t t = 0; t < s.m; ++t)
    for (uint32_t g = 0; g < s.n; ++g) {
      const uint32_t r = h.epilogue == Epilogue::Rope ? partner_dim(s, g) : g;
      const size_t i = size_t{t} * s.n + r;
      const double v = sums[i];
      switch (h.epilogue) {
        case Epilogue::Store: y[i] = v; break;
        case Epilogue::Acc: y[i] = in.y_in[i] + v; break;
        case Epilogue::SiluGate: y[i] = v / (1.0 + std::exp(-v)) * sums_b[i]; break;
        case Epilogue::Rope: {
          const uint32_t sl = g % h.head_dim;
          if (sl >= h.n_rot || (h.rope_rows && g >= h.rope_rows)) {
            y[i] = v;
            break;
          }
          const double p = sums[size_t{t} * s.n + partner_dim(s, g ^ 1u)];
          const double theta = double(in.pos[t]) * h.rope_scale *
                               std::pow(double(h.rope_base), -2.0 * (sl / 2) / double(h.n_rot));
          y[i] = (sl % 2 == 0) ? v * std::cos(theta) - p * std::sin(theta)
                               : p * std::sin(theta) + v * std::cos(theta);
          break;
        }
      }
    }
  return y;
}

}  // namespace blockq::matvec
