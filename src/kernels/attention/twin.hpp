// CPU twin of the attention kernel (attention.wgsl, combine.wgsl) for one
// query token over a KV cache, in the kernel's order, and its float64
// reference.
//
// Shapes: q [n_head, head_dim]; k, v caches [>= n, n_kv_head, head_dim];
// out [n_head, head_dim]. Head h reads kv head kh = h / (n_head / n_kv_head);
// the token sees positions 0..n-1. The positions are cut into chunks of
// `chunk`; chunk c (positions j0 = c * chunk .. j0 + jn - 1) is one
// workgroup of wg invocations:
//   s[j]  = (sum over d = 0..head_dim-1 in order of q[h,d] * k[j0+j,kh,d]) * scale
//           (acc from 0.0f, acc = acc + product; scale = 1.0f / sqrtf(head_dim))
//   m_c   = strided_max(j -> s[j], jn, wg)           (kernels/common/reduce_twin.hpp)
//   e[j]  = expf(s[j] - m_c)
//   l_c   = strided_sum(j -> e[j], jn, wg)
//   o_c[d]: R = the largest power of two <= wg / min(head_dim / 4, wg)
//           position groups (a lane sums 4 dims); group r sums j = r, r + R,
//           ... < jn in order (acc from
//           0.0f, acc = acc + e[j] * v[j0+j,kh,d]); the R partials meet by the
//           tree of reduce_twin.hpp (tree_reduce_sum).
// One chunk dispatched (chunks == 1): out = o_0 / l_0. Otherwise a combine
// over the sc = min(ceil(n / chunk), chunks) chunks, each sequential in c:
//   M = max(M, m_c) from -FLT_MAX;  w_c = expf(m_c - M)
//   L = L + w_c * l_c from 0.0f;  out[d] = (acc = acc + w_c * o_c[d] from 0.0f) / L
// n == 0 (a padding token) gives out = 0.
//
// attention_rows, the prompt kernel (rows.wgsl): chunk c's partial runs over
// tiles of `keys` positions from j0 in order, from m = -FLT_MAX, l = 0, o = 0:
//   s[j]  as above, for the tile's nv visible positions
//   mt    = max over j of s[j] (from -FLT_MAX);  mn = max(m, mt);  a = expf(m - mn)
//   p[j]  = expf(s[j] - mn);  part_e = (part_e + p[e + lanes * u] for u in order, from 0.0f), e < lanes
//   l     = l * a + (sum + part_e for e in order, from 0.0f);  m = mn;  o[d] = o[d] * a, then o[d] = o[d] + p[j] * v[j0+j,kh,d] in order
// then out = o / l with one chunk dispatched, else the combine above.
#pragma once
#include <cstdint>
#include <span>

namespace blockq::twin {

struct AttentionShape {
  uint32_t n_head = 0;
  uint32_t n_kv_head = 0;  // divides n_head (GQA group = n_head / n_kv_head)
  uint32_t head_dim = 0;
  uint32_t n_ctx = 0;  // positions the token sees (n); the cache may be longer
};

struct AttentionSpec {
  uint32_t wg = 64;      // invocations per workgroup (a power of two)
  uint32_t chunk = 64;   // positions per workgroup (a multiple of wg)
  uint32_t chunks = 1;   // chunks dispatched (the grid's z); 1: no combine
};

// The V position groups of a workgroup of wg invocations over head_dim dims.
uint32_t attention_v_groups(uint32_t wg, uint32_t head_dim);

// q: [n_head, head_dim]; k, v: [>= n_ctx, n_kv_head, head_dim]; out: [n_head, head_dim].
void attention_decode(std::span<const float> q, std::span<const float> k, std::span<const float> v,
                      std::span<float> out, const AttentionShape& shape, const AttentionSpec& spec);

struct AttentionRowsSpec {
  uint32_t keys = 32;   // positions a tile
  uint32_t lanes = 1;   // lanes a query row's sum is split over (a power of two dividing keys)
  uint32_t chunk = 32;  // positions per workgroup (a multiple of keys)
  uint32_t chunks = 1;  // chunks dispatched (the grid's z); 1: no combine
};

// The prompt kernel's order, for one token; shapes as attention_decode's.
void attention_rows(std::span<const float> q, std::span<const float> k, std::span<const float> v,
                    std::span<float> out, const AttentionShape& shape, const AttentionRowsSpec& spec);

// Float64 reference; out: [n_head, head_dim].
void attention_decode_ref(std::span<const float> q, std::span<const float> k, std::span<const float> v,
                          std::span<double> out, const AttentionShape& shape);

}  // namespace blockq::twin
