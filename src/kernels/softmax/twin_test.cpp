// Tests of the softmax and single-query attention twins against their float64
// references on random data.
#include "kernels/softmax/twin.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/common/reduce_twin.hpp"
#include "support/random.hpp"

namespace blockq::twin {
namespace {

using testing_support::first_poisoned;
using testing_support::poison;
using testing_support::random_floats;

constexpr double kU = 0x1p-24;

// Relative error bound of every softmax output (op order in twin.hpp), given
// max |x*scale| = vmax over a row of n and the extra absolute error ds of the
// inputs: the exponent d = v - m is off by at most ds*2 + u(|v| + |m| + |d|),
// expf adds 1 ulp (2u), and the tree sum of positive terms adds
// (ceil(n/wg) + log2(wg)) u; the quotient u. The e error enters twice (e_j, s).
double softmax_rel_bound(double vmax, double ds, uint32_t n, uint32_t wg) {
  const double e = 2 * kU + 4 * vmax * kU + 2 * ds;
  return 2 * e + (double((n + wg - 1) / wg) + std::log2(wg) + 1) * kU;
}

TEST(SoftmaxTwin, NoFpContraction) {
  volatile float a = 1.0f + 0x1p-12f, c = -(1.0f + 0x1p-11f);
  EXPECT_EQ(mul_then_add(a, a, c), 0.0f) << "build with -ffp-contract=off";
}

TEST(SoftmaxTwin, MatchesFloat64) {
  uint32_t seed = 21;
  for (uint32_t n : {1u, 3u, 64u, 1000u, 32000u}) {
    for (uint32_t wg : {1u, 32u, 64u, 256u}) {
      for (float scale : {1.0f, 0.125f}) {
        const uint32_t rows = 2;
        const auto x = random_floats(size_t(rows) * n, seed++, -8.0f, 8.0f);
        std::vector<float> y(x.size());
        poison(y);
        std::vector<double> ref(x.size());
        softmax(x, y, rows, n, {wg}, scale);
        softmax_ref(x, ref, rows, n, scale);
        const double rel = softmax_rel_bound(8.0 * scale, 0.0, n, wg);
        ASSERT_EQ(first_poisoned(y), -1);
        for (size_t i = 0; i < y.size(); ++i) {
          EXPECT_LE(std::fabs(y[i] - ref[i]), rel * ref[i])
              << "n " << n << " wg " << wg << " i " << i;
        }
      }
    }
  }
}

TEST(SoftmaxTwin, CausalMask) {
  uint32_t seed = 22;
  // A prompt of 4 rows after 2 cached positions, 9 columns (3 beyond the last row's view).
  const uint32_t rows = 4, n = 9;
  const SoftmaxMask mask{true, 2};
  const auto x = random_floats(size_t(rows) * n, seed++, -5.0f, 5.0f);
  std::vector<float> y(x.size());
  poison(y);
  std::vector<double> ref(x.size());
  softmax(x, y, rows, n, {4}, 0.5f, mask);
  softmax_ref(x, ref, rows, n, 0.5f, mask);
  for (uint32_t r = 0; r < rows; ++r) {
    double sum = 0.0;
    for (uint32_t j = 0; j < n; ++j) {
      const float got = y[r * n + j];
      if (j > mask.n_past + r) {
        EXPECT_EQ(got, 0.0f) << "masked r " << r << " j " << j;
        EXPECT_EQ(ref[r * n + j], 0.0);
      } else {
        EXPECT_GT(got, 0.0f);
        EXPECT_LE(std::fabs(got - ref[r * n + j]),
                  softmax_rel_bound(2.5, 0, n, 4) * ref[r * n + j]);
      }
      sum += got;
    }
    EXPECT_NEAR(sum, 1.0, 1e-6);
  }
  // In place gives the same bits.
  std::vector<float> z = x;
  softmax(z, z, rows, n, {4}, 0.5f, mask);
  EXPECT_EQ(z, y);
}

struct AttnCase {
  uint32_t n_head, n_kv_head, head_dim, n_ctx, wg;
  float qmax;  // |q| range: 2 gives flat score rows, 16 peaked ones
};

// Bound per output (h, d): scores are off by ds_j <= (head_dim + 3) u S_j with
// S_j = scale * sum_d |q_d k_jd| (sequential dot, product, f32 scale); that
// moves each p_j by a relative 2 max ds; the softmax bound above; then the
// sequential weighted sum of n_ctx products adds (n_ctx + 1) u sum p_j |v_jd|:
//   |out - ref| <= (softmax_rel_bound(max|s|, max ds) + (n_ctx + 1) u) * max_j |v_jd|.
TEST(AttentionTwin, MatchesFloat64) {
  uint32_t seed = 31;
  const AttnCase cases[] = {{8, 8, 64, 1, 64, 2},      {8, 2, 64, 7, 32, 2},
                            {32, 8, 128, 100, 64, 2},  {4, 1, 80, 1000, 256, 2},
                            {14, 2, 64, 333, 128, 16}, {2, 1, 128, 2048, 64, 16},
                            {6, 3, 32, 64, 1, 16}};
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
    attention_decode(q, k, v, out, sh, {c.wg});
    attention_decode_ref(q, k, v, ref, sh);
    ASSERT_EQ(first_poisoned(out), -1);
    const double scale = 1.0 / std::sqrt(double(c.head_dim));
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
      const double rel = softmax_rel_bound(smax, dsmax, c.n_ctx, c.wg) + (c.n_ctx + 1) * kU;
      for (uint32_t d = 0; d < c.head_dim; ++d) {
        double vmax = 0;
        for (uint32_t j = 0; j < c.n_ctx; ++j) {
          vmax = std::max(vmax, double(std::fabs(v[j * kv_row + kh * c.head_dim + d])));
        }
        const size_t o = size_t(h) * c.head_dim + d;
        EXPECT_LE(std::fabs(out[o] - ref[o]), rel * vmax)
            << "heads " << c.n_head << "/" << c.n_kv_head << " n_ctx " << c.n_ctx << " h " << h
            << " d " << d;
      }
    }
  }
}

// With one cached position p = 1 exactly, so out[h] = v[0, h / group] bit for
// bit: this pins the GQA mapping (query head h reads kv head h / group).
TEST(AttentionTwin, GroupedHeadsReadTheirKvHead) {
  uint32_t seed = 32;
  const AttentionShape sh{12, 3, 16, 1};
  const auto q = random_floats(12 * 16, seed++, -2.0f, 2.0f);
  const auto k = random_floats(3 * 16, seed++, -2.0f, 2.0f);
  const auto v = random_floats(3 * 16, seed++, -2.0f, 2.0f);
  std::vector<float> out(q.size());
  poison(out);
  attention_decode(q, k, v, out, sh, {8});
  for (uint32_t h = 0; h < 12; ++h) {
    for (uint32_t d = 0; d < 16; ++d) EXPECT_EQ(out[h * 16 + d], v[(h / 4) * 16 + d]) << h;
  }
}

}  // namespace
}  // namespace blockq::twin
