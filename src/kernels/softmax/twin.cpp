// Softmax and single-query attention CPU twins and float64 references (see
// twin.hpp for the op order).
#include "kernels/softmax/twin.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <vector>

#include "kernels/common/reduce_twin.hpp"
#include "util/error.hpp"

namespace blockq::twin {
namespace {

// One row: columns 0..visible-1 take part, the rest are masked (y = 0).
void softmax_row(const float* x, float* y, uint32_t n, uint32_t visible, uint32_t wg, float scale) {
  const float m = strided_max(
      [&](size_t j) {
        if (j >= visible) return -FLT_MAX;
        const float v = x[j] * scale;
        return v;
      },
      n, wg);
  for (uint32_t j = 0; j < n; ++j) {
    if (j >= visible) {
      y[j] = 0.0f;
      continue;
    }
    const float v = x[j] * scale;
    const float d = v - m;
    y[j] = std::exp(d);
  }
  const float s = strided_sum([&](size_t j) { return y[j]; }, n, wg);
  for (uint32_t j = 0; j < n; ++j) {
    const float q = y[j] / s;
    y[j] = q;
  }
}

uint32_t visible_cols(uint32_t row, uint32_t n, SoftmaxMask mask) {
  if (!mask.causal) return n;
  const uint64_t v = uint64_t(mask.n_past) + row + 1;
  return static_cast<uint32_t>(std::min<uint64_t>(v, n));
}

void check_attention(size_t q, size_t k, size_t v, size_t out, const AttentionShape& s) {
  BQ_ASSERT(s.n_head > 0 && s.n_kv_head > 0 && s.n_head % s.n_kv_head == 0 && s.head_dim > 0 &&
                s.n_ctx > 0,
            "attention: n_head {} n_kv_head {} head_dim {} n_ctx {}", s.n_head, s.n_kv_head,
            s.head_dim, s.n_ctx);
  const size_t qn = size_t(s.n_head) * s.head_dim;
  const size_t kvn = size_t(s.n_ctx) * s.n_kv_head * s.head_dim;
  BQ_ASSERT(q >= qn && out >= qn && k >= kvn && v >= kvn, "attention: q {} k {} v {} out {}", q, k,
            v, out);
}

}  // namespace

void softmax(std::span<const float> x, std::span<float> y, uint32_t rows, uint32_t n,
             const SoftmaxSpec& spec, float scale, SoftmaxMask mask) {
  const size_t total = size_t(rows) * n;
  BQ_ASSERT(n > 0 && x.size() >= total && y.size() >= total, "softmax: [{}, {}] x {} y {}", rows, n,
            x.size(), y.size());
  for (uint32_t r = 0; r < rows; ++r) {
    softmax_row(x.data() + size_t(r) * n, y.data() + size_t(r) * n, n, visible_cols(r, n, mask),
                spec.wg, scale);
  }
}

void softmax_ref(std::span<const float> x, std::span<double> y, uint32_t rows, uint32_t n,
                 float scale, SoftmaxMask mask) {
  const size_t total = size_t(rows) * n;
  BQ_ASSERT(n > 0 && x.size() >= total && y.size() >= total, "softmax_ref: [{}, {}] x {} y {}",
            rows, n, x.size(), y.size());
  for (uint32_t r = 0; r < rows; ++r) {
    const float* xr = x.data() + size_t(r) * n;
    double* yr = y.data() + size_t(r) * n;
    const uint32_t vis = visible_cols(r, n, mask);
    double m = -INFINITY;
    for (uint32_t j = 0; j < vis; ++j) m = std::max(m, double(xr[j]) * scale);
    double s = 0.0;
    for (uint32_t j = 0; j < n; ++j) {
      yr[j] = j < vis ? std::exp(double(xr[j]) * scale - m) : 0.0;
      s += yr[j];
    }
    for (uint32_t j = 0; j < n; ++j) yr[j] /= s;
  }
}

void attention_decode(std::span<const float> q, std::span<const float> k, std::span<const float> v,
                      std::span<float> out, const AttentionShape& sh, const AttentionSpec& spec) {
  check_attention(q.size(), k.size(), v.size(), out.size(), sh);
  const uint32_t group = sh.n_head / sh.n_kv_head;
  const size_t kv_row = size_t(sh.n_kv_head) * sh.head_dim;  // stride of one position
  const float scale = 1.0f / std::sqrt(static_cast<float>(sh.head_dim));
  std::vector<float> dot(sh.n_ctx), p(sh.n_ctx);
  for (uint32_t h = 0; h < sh.n_head; ++h) {
    const uint32_t kh = h / group;
    const float* qh = q.data() + size_t(h) * sh.head_dim;
    for (uint32_t j = 0; j < sh.n_ctx; ++j) {
      const float* kj = k.data() + j * kv_row + size_t(kh) * sh.head_dim;
      float acc = 0.0f;
      for (uint32_t d = 0; d < sh.head_dim; ++d) {
        const float prod = qh[d] * kj[d];
        acc = acc + prod;
      }
      dot[j] = acc;
    }
    softmax_row(dot.data(), p.data(), sh.n_ctx, sh.n_ctx, spec.wg, scale);
    float* oh = out.data() + size_t(h) * sh.head_dim;
    for (uint32_t d = 0; d < sh.head_dim; ++d) {
      float acc = 0.0f;
      for (uint32_t j = 0; j < sh.n_ctx; ++j) {
        const float prod = p[j] * v[j * kv_row + size_t(kh) * sh.head_dim + d];
        acc = acc + prod;
      }
      oh[d] = acc;
    }
  }
}

void attention_decode_ref(std::span<const float> q, std::span<const float> k,
                          std::span<const float> v, std::span<double> out,
                          const AttentionShape& sh) {
  check_attention(q.size(), k.size(), v.size(), out.size(), sh);
  const uint32_t group = sh.n_head / sh.n_kv_head;
  const size_t kv_row = size_t(sh.n_kv_head) * sh.head_dim;
  const double scale = 1.0 / std::sqrt(double(sh.head_dim));
  std::vector<double> p(sh.n_ctx);
  for (uint32_t h = 0; h < sh.n_head; ++h) {
    const uint32_t kh = h / group;
    double m = -INFINITY;
    for (uint32_t j = 0; j < sh.n_ctx; ++j) {
      double acc = 0.0;
      for (uint32_t d = 0; d < sh.head_dim; ++d) {
        acc +=
            double(q[size_t(h) * sh.head_dim + d]) * k[j * kv_row + size_t(kh) * sh.head_dim + d];
      }
      p[j] = acc * scale;
      m = std::max(m, p[j]);
    }
    double s = 0.0;
    for (uint32_t j = 0; j < sh.n_ctx; ++j) s += (p[j] = std::exp(p[j] - m));
    for (uint32_t d = 0; d < sh.head_dim; ++d) {
      double acc = 0.0;
      for (uint32_t j = 0; j < sh.n_ctx; ++j) {
        acc += p[j] * v[j * kv_row + size_t(kh) * sh.head_dim + d];
      }
      out[size_t(h) * sh.head_dim + d] = acc / s;
    }
  }
}

}  // namespace blockq::twin
