// Tests of the attention twin (one chunk and split over chunks) against its
// float64 reference on random data.
#include "kernels/attention/twin.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "support/bounds.hpp"
#include "support/random.hpp"

namespace blockq::twin {
namespace {

using testing_support::first_poisoned;
using testing_support::poison;
using testing_support::random_floats;
using testing_support::kU;
using testing_support::softmax_rel_bound;

struct AttnCase {
  uint32_t n_head, n_kv_head, head_dim, n_ctx, wg, chunk, chunks;
  float qmax;  // |q| range: 2 gives flat score rows, 16 peaked ones
};

// Bound per output (h, d): scores are off by ds_j <= (head_dim + 3) u S_j with
// S_j = scale * sum_d |q_d k_jd|; each chunk's weights by the softmax bound;
// the V sum of a chunk adds (chunk / R + log2 R + 1) u of sum e_j |v_jd|; the
// combine rescales by w_c (exp of a difference of maxima: 2 ds + 4 smax u +
// 2u) and adds two sums over the chunks ((chunks + 2) u each).
TEST(AttentionTwin, MatchesFloat64) {
  uint32_t seed = 31;
  const AttnCase cases[] = {
      {8, 8, 64, 1, 64, 64, 1, 2},          {8, 2, 64, 7, 32, 32, 1, 2},
      {32, 8, 128, 100, 128, 128, 1, 2},    {4, 1, 80, 1000, 256, 256, 4, 2},
      {14, 2, 64, 333, 128, 128, 3, 16},    {2, 1, 128, 2048, 64, 128, 16, 16},
      {6, 3, 32, 64, 4, 4, 16, 16},         {4, 2, 256, 300, 64, 64, 5, 2},
      {3, 1, 16, 40, 32, 32, 8, 2},  // fewer chunks hold positions than are dispatched
  };
  for (const AttnCase& c : cases) {
    const AttentionShape sh{c.n_head, c.n_kv_head, c.head_dim, c.n_ctx};
    const size_t kv_row = size_t(c.n_kv_head) * c.head_dim;
    const auto q = random_floats(size_t(c.n_head) * c.head_dim, seed++, -c.qmax, c.qmax);
    // The cache holds 5 more positions than are used: they must be ignored.
    const auto k = random_floats((c.n_ctx + 5) * kv_row, seed++, -1.0f, 1.0f);
    const auto v = random_floats((c.n_ctx + 5) * kv_row, seed++, -3.0f, 3.0f);
    std::vector<float> out(q.size());
    poison(out);
    std::vector<double> ref(q.size());
    attention_decode(q, k, v, out, sh, {c.wg, c.chunk, c.chunks});
    attention_decode_ref(q, k, v, ref, sh);
    ASSERT_EQ(first_poisoned(out), -1);
    const double scale = 1.0 / std::sqrt(double(c.head_dim));
    const uint32_t groups = attention_v_groups(c.wg, c.head_dim);
    const uint32_t used = std::min((c.n_ctx + c.chunk - 1) / c.chunk, c.chunks);
    for (uint32_t h = 0; h < c.n_head; ++h) {
      const uint32_t kh = h / (c.n_head / c.n_kv_head);
      double smax = 0, dsmax = 0;
      for (uint32_t j = 0; j < c.n_ctx; ++j) {
        double sabs = 0, s = 0;
        for (uint32_t d = 0; d < c.head_dim; ++d) {
          const double t = double(q[h * c.head_dim + d]) * k[j * kv_row + kh * c.head_dim + d];
          s += t, sabs += std::fabs(t);
        }
        smax = std::max(smax, std::fabs(s) * scale);
        dsmax = std::max(dsmax, (c.head_dim + 3) * kU * sabs * scale);
      }
      const double combine = used > 1 ? 2 * (2 * dsmax + 4 * smax * kU + 2 * kU) + 2 * (used + 2) * kU : 0.0;
      const double rel = softmax_rel_bound(smax, dsmax, std::min(c.n_ctx, c.chunk), c.wg) +
                         (double(c.chunk / groups) + std::log2(groups) + 2) * kU + combine;
      for (uint32_t d = 0; d < c.head_dim; ++d) {
        double vmax = 0;
        for (uint32_t j = 0; j < c.n_ctx; ++j)
          vmax = std::max(vmax, double(std::fabs(v[j * kv_row + kh * c.head_dim + d])));
        const size_t o = size_t(h) * c.head_dim + d;
        EXPECT_LE(std::fabs(out[o] - ref[o]), rel * vmax)
            << "heads " << c.n_head << "/" << c.n_kv_head << " n " << c.n_ctx << " chunk " << c.chunk << " x "
            << c.chunks << " h " << h << " d " << d;
      }
    }
  }
}

// With one visible position p = 1 exactly, so out[h] = v[0, h / group] bit
// for bit, with or without the combine: this pins the GQA mapping (query head
// h reads kv head h / group).
TEST(AttentionTwin, GroupedHeadsReadTheirKvHead) {
  uint32_t seed = 32;
  const AttentionShape sh{12, 3, 16, 1};
  const auto q = random_floats(12 * 16, seed++, -2.0f, 2.0f);
  const auto k = random_floats(3 * 16, seed++, -2.0f, 2.0f);
  const auto v = random_floats(3 * 16, seed++, -2.0f, 2.0f);
  for (uint32_t chunks : {1u, 4u}) {
    std::vector<float> out(q.size());
    poison(out);
    attention_decode(q, k, v, out, sh, {8, 8, chunks});
    for (uint32_t h = 0; h < 12; ++h)
      for (uint32_t d = 0; d < 16; ++d) EXPECT_EQ(out[h * 16 + d], v[(h / 4) * 16 + d]) << h << " chunks " << chunks;
  }
}

// A token that sees no position (a batch's padding) gets zeros.
TEST(AttentionTwin, NoPositionGivesZeros) {
  const AttentionShape sh{4, 2, 8, 0};
  const auto q = random_floats(32, 33);
  std::vector<float> k(16), v(16), out(32);
  poison(out);
  attention_decode(q, k, v, out, sh, {4, 4, 3});
  for (float o : out) EXPECT_EQ(o, 0.0f);
}

}  // namespace
}  // namespace blockq::twin
