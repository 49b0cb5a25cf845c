// The attention twin and its float64 reference (order in twin.hpp).
#include "kernels/attention/twin.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <vector>

#include "kernels/common/reduce_twin.hpp"
#include "util/error.hpp"

namespace blockq::twin {
namespace {

void check_attention(size_t q, size_t k, size_t v, size_t out, const AttentionShape& s) {
  BQ_ASSERT(s.n_head > 0 && s.n_kv_head > 0 && s.n_head % s.n_kv_head == 0 && s.head_dim > 0,
            "attention: n_head {} n_kv_head {} head_dim {}", s.n_head, s.n_kv_head, s.head_dim);
  const size_t qn = size_t(s.n_head) * s.head_dim;
  const size_t kvn = size_t(s.n_ctx) * s.n_kv_head * s.head_dim;
  BQ_ASSERT(q >= qn && out >= qn && k >= kvn && v >= kvn, "attention: q {} k {} v {} out {}", q, k, v, out);
}

// One chunk's max m, sum l and unnormalised o [head_dim] (twin.hpp).
struct Partial {
  float m = -FLT_MAX, l = 0.0f;
  std::vector<float> o;
};

// A score: (sum over d in order of q[d] * k[d], from 0.0f) * scale.
float score(const float* qh, const float* kj, uint32_t head_dim, float scale) {
  float acc = 0.0f;
  for (uint32_t d = 0; d < head_dim; ++d) {
    const float prod = qh[d] * kj[d];
    acc = acc + prod;
  }
  return acc * scale;
}

Partial chunk_partial(const float* qh, const float* k, const float* v, size_t kv_row, size_t kv_off,
                      uint32_t head_dim, uint32_t j0, uint32_t jn, const AttentionSpec& spec, float scale) {
  std::vector<float> s(jn), e(jn);
  for (uint32_t j = 0; j < jn; ++j) s[j] = score(qh, k + (j0 + j) * kv_row + kv_off, head_dim, scale);
  Partial p;
  p.m = strided_max([&](size_t j) { return s[j]; }, jn, spec.wg);
  for (uint32_t j = 0; j < jn; ++j) {
    const float d = s[j] - p.m;
    e[j] = std::exp(d);
  }
  p.l = strided_sum([&](size_t j) { return e[j]; }, jn, spec.wg);
  const uint32_t groups = attention_v_groups(spec.wg, head_dim);
  std::vector<float> part(groups);
  p.o.resize(head_dim);
  for (uint32_t d = 0; d < head_dim; ++d) {
    for (uint32_t r = 0; r < groups; ++r) {
      float acc = 0.0f;
      for (uint32_t j = r; j < jn; j += groups) {
        const float prod = e[j] * v[(j0 + j) * kv_row + kv_off + d];
        acc = acc + prod;
      }
      part[r] = acc;
    }
    p.o[d] = tree_reduce_sum(part);
  }
  return p;
}

// One head's output [head_dim] from its chunks' partials: o / l with one
// chunk dispatched, else the combine (twin.hpp); zeros where no chunk was used.
void finish(const std::vector<Partial>& parts, uint32_t used, uint32_t dispatched, float* oh, uint32_t head_dim) {
  if (used == 0) {
    std::fill(oh, oh + head_dim, 0.0f);
    return;
  }
  if (dispatched == 1) {
    for (uint32_t d = 0; d < head_dim; ++d) oh[d] = parts[0].o[d] / parts[0].l;
    return;
  }
  float m = -FLT_MAX;
  for (uint32_t c = 0; c < used; ++c) m = std::max(m, parts[c].m);
  std::vector<float> w(used);
  float l = 0.0f;
  for (uint32_t c = 0; c < used; ++c) {
    const float d = parts[c].m - m;
    w[c] = std::exp(d);
    const float t = w[c] * parts[c].l;
    l = l + t;
  }
  for (uint32_t d = 0; d < head_dim; ++d) {
    float acc = 0.0f;
    for (uint32_t c = 0; c < used; ++c) {
      const float t = w[c] * parts[c].o[d];
      acc = acc + t;
    }
    oh[d] = acc / l;
  }
}

}  // namespace

uint32_t attention_v_groups(uint32_t wg, uint32_t head_dim) {
  const uint32_t lanes = std::max(1u, std::min(head_dim / 4, wg));  // a lane sums 4 dims
  uint32_t g = 1;
  while (g * 2 <= wg / lanes) g *= 2;
  return g;
}

void attention_decode(std::span<const float> q, std::span<const float> k, std::span<const float> v,
                      std::span<float> out, const AttentionShape& sh, const AttentionSpec& spec) {
  check_attention(q.size(), k.size(), v.size(), out.size(), sh);
  BQ_ASSERT(is_pow2(spec.wg) && spec.chunk % spec.wg == 0 && spec.chunks >= 1, "attention: wg {} chunk {} chunks {}",
            spec.wg, spec.chunk, spec.chunks);
  const uint32_t n = sh.n_ctx;
  const uint32_t used = std::min((n + spec.chunk - 1) / spec.chunk, spec.chunks);
  BQ_ASSERT(spec.chunks > 1 || n <= spec.chunk, "attention: {} positions in one chunk of {}", n, spec.chunk);
  const uint32_t group = sh.n_head / sh.n_kv_head;
  const size_t kv_row = size_t(sh.n_kv_head) * sh.head_dim;
  const float scale = 1.0f / std::sqrt(static_cast<float>(sh.head_dim));
  std::vector<Partial> parts(used);
  for (uint32_t h = 0; h < sh.n_head; ++h) {
    const float* qh = q.data() + size_t(h) * sh.head_dim;
    const size_t kv_off = size_t(h / group) * sh.head_dim;
    for (uint32_t c = 0; c < used; ++c) {
      const uint32_t j0 = c * spec.chunk;
      parts[c] = chunk_partial(qh, k.data(), v.data(), kv_row, kv_off, sh.head_dim, j0,
                               std::min(n - j0, spec.chunk), spec, scale);
    }
    finish(parts, used, spec.chunks, out.data() + size_t(h) * sh.head_dim, sh.head_dim);
  }
}

void attention_rows(std::span<const float> q, std::span<const float> k, std::span<const float> v,
                    std::span<float> out, const AttentionShape& sh, const AttentionRowsSpec& spec) {
  check_attention(q.size(), k.size(), v.size(), out.size(), sh);
  BQ_ASSERT(spec.keys > 0 && spec.chunk % spec.keys == 0 && spec.chunk > 0 && spec.chunks >= 1 && spec.lanes > 0 &&
                spec.keys % spec.lanes == 0,
            "attention rows: keys {} lanes {} chunk {} chunks {}", spec.keys, spec.lanes, spec.chunk, spec.chunks);
  const uint32_t n = sh.n_ctx;
  const uint32_t used = std::min((n + spec.chunk - 1) / spec.chunk, spec.chunks);
  BQ_ASSERT(spec.chunks > 1 || n <= spec.chunk, "attention rows: {} positions in one chunk of {}", n, spec.chunk);
  const uint32_t group = sh.n_head / sh.n_kv_head;
  const size_t kv_row = size_t(sh.n_kv_head) * sh.head_dim;
  const float scale = 1.0f / std::sqrt(static_cast<float>(sh.head_dim));
  std::vector<Partial> parts(used);
  std::vector<float> s(spec.keys);
  for (uint32_t h = 0; h < sh.n_head; ++h) {
    const float* qh = q.data() + size_t(h) * sh.head_dim;
    const size_t kv_off = size_t(h / group) * sh.head_dim;
    for (uint32_t c = 0; c < used; ++c) {
      const uint32_t j0 = c * spec.chunk, jn = std::min(n - j0, spec.chunk);
      Partial& p = parts[c];
      p.m = -FLT_MAX, p.l = 0.0f;
      p.o.assign(sh.head_dim, 0.0f);
      for (uint32_t t0 = 0; t0 < jn; t0 += spec.keys) {
        const uint32_t nv = std::min(spec.keys, jn - t0);
        float mt = -FLT_MAX;
        for (uint32_t j = 0; j < nv; ++j) {
          s[j] = score(qh, k.data() + (j0 + t0 + j) * kv_row + kv_off, sh.head_dim, scale);
          mt = std::max(mt, s[j]);
        }
        const float mn = std::max(p.m, mt);
        const float a = std::exp(p.m - mn);
        for (uint32_t j = 0; j < nv; ++j) s[j] = std::exp(s[j] - mn);
        float sum = 0.0f;
        for (uint32_t e = 0; e < spec.lanes; ++e) {
          float part = 0.0f;
          for (uint32_t j = e; j < nv; j += spec.lanes) part = part + s[j];
          sum = sum + part;
        }
        const float la = p.l * a;
        p.l = la + sum;
        p.m = mn;
        for (uint32_t d = 0; d < sh.head_dim; ++d) {
          float o = p.o[d] * a;
          for (uint32_t j = 0; j < nv; ++j) {
            const float prod = s[j] * v[(j0 + t0 + j) * kv_row + kv_off + d];
            o = o + prod;
          }
          p.o[d] = o;
        }
      }
    }
    finish(parts, used, spec.chunks, out.data() + size_t(h) * sh.head_dim, sh.head_dim);
  }
}

void attention_decode_ref(std::span<const float> q, std::span<const float> k, std::span<const float> v,
                          std::span<double> out, const AttentionShape& sh) {
  check_attention(q.size(), k.size(), v.size(), out.size(), sh);
  const uint32_t group = sh.n_head / sh.n_kv_head;
  const size_t kv_row = size_t(sh.n_kv_head) * sh.head_dim;
  const double scale = 1.0 / std::sqrt(double(sh.head_dim));
  std::vector<double> p(sh.n_ctx);
  for (uint32_t h = 0; h < sh.n_head; ++h) {
    const size_t kv_off = size_t(h / group) * sh.head_dim;
    double* oh = out.data() + size_t(h) * sh.head_dim;
    if (sh.n_ctx == 0) {
      std::fill(oh, oh + sh.head_dim, 0.0);
      continue;
    }
    double m = -INFINITY;
    for (uint32_t j = 0; j < sh.n_ctx; ++j) {
      double acc = 0.0;
      for (uint32_t d = 0; d < sh.head_dim; ++d)
        acc += double(q[size_t(h) * sh.head_dim + d]) * k[j * kv_row + kv_off + d];
      p[j] = acc * scale;
      m = std::max(m, p[j]);
    }
    double s = 0.0;
    for (uint32_t j = 0; j < sh.n_ctx; ++j) s += (p[j] = std::exp(p[j] - m));
    for (uint32_t d = 0; d < sh.head_dim; ++d) {
      double acc = 0.0;
      for (uint32_t j = 0; j < sh.n_ctx; ++j) acc += p[j] * v[j * kv_row + kv_off + d];
      oh[d] = acc / s;
    }
  }
}

}  // namespace blockq::twin
