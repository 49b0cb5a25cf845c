// CPU twins of the softmax kernel (rows, optional scale and causal mask) and of
// single-query attention over a KV cache, with their float64 references.
//
// Softmax of a row x[0..n) (one workgroup of spec.wg invocations per row; the
// reductions follow kernels/common/reduce_twin.hpp):
//   v[j] = x[j] * scale                      (f32 product)
//   m    = strided_max(j -> v[j], n, wg)     (masked j: term -FLT_MAX)
//   e[j] = expf(v[j] - m)                    (masked j: 0.0f)
//   s    = strided_sum(j -> e[j], n, wg)
//   y[j] = e[j] / s                          (a true division; masked j: 0.0f)
// Causal mask: row r may see columns j <= n_past + r; the others are masked.
//
// Attention for one query token (decode), head h, kv head kh = h / (n_head / n_kv_head):
//   q [n_head, head_dim], k/v cache [n_ctx, n_kv_head, head_dim], out [n_head, head_dim]
//   scale   = 1.0f / sqrtf((float)head_dim)
//   dot[j]  = sum over d = 0..head_dim-1 in order of q[h,d] * k[j,kh,d]
//             (acc from 0.0f; acc = acc + product, separate ops)
//   p[j]    = softmax of dot[0..n_ctx) with that scale, as above (no mask:
//             every cached position is visible to the newest token)
//   out[h,d]= sum over j = 0..n_ctx-1 in order of p[j] * v[j,kh,d]
//             (acc from 0.0f; acc = acc + product)
#pragma once
#include <cstdint>
#include <span>

namespace blockq::twin {

struct SoftmaxSpec {
  uint32_t wg = 64;  // invocations per row (power of two); sets the reduction order
};

// Mask of a [rows, n] score block. With causal set, row r sees columns
// 0..n_past+r (a prompt of `rows` tokens after n_past cached ones).
struct SoftmaxMask {
  bool causal = false;
  uint32_t n_past = 0;
};

// x, y: [rows, n]; y may alias x.
void softmax(std::span<const float> x, std::span<float> y, uint32_t rows, uint32_t n,
             const SoftmaxSpec& spec, float scale = 1.0f, SoftmaxMask mask = {});

// Float64 reference of the same (max-subtracted, in double); y: [rows, n].
void softmax_ref(std::span<const float> x, std::span<double> y, uint32_t rows, uint32_t n,
                 float scale = 1.0f, SoftmaxMask mask = {});

struct AttentionShape {
  uint32_t n_head = 0;
  uint32_t n_kv_head = 0;  // divides n_head (GQA group = n_head / n_kv_head)
  uint32_t head_dim = 0;
  uint32_t n_ctx = 0;  // cached positions used (>= 1); the cache may be longer
};

struct AttentionSpec {
  uint32_t wg = 64;  // invocations per head (power of two); sets the softmax order
};

// q: [n_head, head_dim]; k, v: [>= n_ctx, n_kv_head, head_dim]; out: [n_head, head_dim].
void attention_decode(std::span<const float> q, std::span<const float> k, std::span<const float> v,
                      std::span<float> out, const AttentionShape& shape, const AttentionSpec& spec);

// Float64 reference; out: [n_head, head_dim].
void attention_decode_ref(std::span<const float> q, std::span<const float> k,
                          std::span<const float> v, std::span<double> out,
                          const AttentionShape& shape);

}  // namespace blockq::twin
