// Tests of the workgroup reduction order (common/reduce_twin.hpp) and of the
// RMSNorm twin against its float64 reference on random data.
#include "kernels/norm/twin.hpp"

#include <gtest/gtest.h>

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

constexpr double kU = 0x1p-24;  // unit roundoff of f32

TEST(ReduceTwin, NoFpContraction) {
  // (1+2^-12)^2 = 1 + 2^-11 + 2^-24 rounds (tie to even) to 1 + 2^-11 when
  // rounded alone; a fused multiply-add would return 2^-24.
  volatile float a = 1.0f + 0x1p-12f, c = -(1.0f + 0x1p-11f);
  EXPECT_EQ(mul_then_add(a, a, c), 0.0f) << "compiler contracts a*b+c into an FMA: build with "
                                            "-ffp-contract=off";
}

TEST(ReduceTwin, TreeOrder) {
  // wg 4: (p0 + p2) + (p1 + p3). A left fold gives 1, adjacent pairs give 0.
  const float p[] = {1e8f, 1.0f, -1e8f, 1.0f};
  EXPECT_EQ(tree_reduce_sum(p), 2.0f);
  const float q[] = {3.0f, -7.0f, 9.0f, 2.0f, -1.0f, 0.5f, 4.0f, 8.5f};
  EXPECT_EQ(tree_reduce_max(q), 9.0f);
  const float one[] = {5.0f};
  EXPECT_EQ(tree_reduce_sum(one), 5.0f);
}

TEST(ReduceTwin, StridedOrder) {
  // wg 2: invocation 0 sums terms 0, 2; invocation 1 sums 1, 3; then p0 + p1.
  const float t[] = {1e8f, 1.0f, -1e8f, 1.0f};
  auto term = [&](size_t k) { return t[k]; };
  EXPECT_EQ(strided_sum(term, 4, 2), 2.0f);
  // wg 1 is a left fold: ((1e8 + 1) - 1e8) + 1 = 1 in f32.
  EXPECT_EQ(strided_sum(term, 4, 1), 1.0f);
  // wg larger than n: idle invocations add 0.
  EXPECT_EQ(strided_sum(term, 4, 64), 2.0f);
  // Accumulation within an invocation is in increasing k: wg 2, terms
  // 0: 1e8, 2: 1, 4: -1e8 -> (1e8 + 1) - 1e8 = 0 (not 1).
  const float u[] = {1e8f, 0.0f, 1.0f, 0.0f, -1e8f, 0.0f};
  EXPECT_EQ(strided_sum([&](size_t k) { return u[k]; }, 6, 2), 0.0f);
  EXPECT_EQ(strided_max(term, 4, 2), 1e8f);
  EXPECT_EQ(strided_max(term, 0, 4), -std::numeric_limits<float>::max());
}

TEST(ReduceTwin, StridedSumMatchesFloat64) {
  uint32_t seed = 11;
  for (size_t n : {1u, 5u, 64u, 1000u, 4099u}) {
    for (uint32_t wg : {1u, 8u, 64u, 256u, 1024u}) {
      const auto v = random_floats(n, seed++, -2.0f, 2.0f);
      double ref = 0.0, mag = 0.0;
      for (float x : v) ref += x, mag += std::fabs(x);
      const float got = strided_sum([&](size_t k) { return v[k]; }, n, wg);
      // Standard bound: (terms per partial + tree depth) * u * sum |x|.
      const double bound = (double((n + wg - 1) / wg) + std::log2(wg) + 1) * kU * mag;
      EXPECT_LE(std::fabs(got - ref), bound) << "n " << n << " wg " << wg;
    }
  }
}

// RMSNorm: every op is a product, quotient or sqrt of positive-error terms
// except ss, whose relative error is at most (ceil(n/wg) + log2(wg) + 1) u.
// Bound per element: |y - ref| <= (ceil(n/wg) + log2(wg) + 8) * u * |ref|.
TEST(RmsNormTwin, MatchesFloat64) {
  uint32_t seed = 1234;
  for (uint32_t n : {1u, 7u, 64u, 100u, 257u, 1000u, 4096u}) {
    for (uint32_t wg : {1u, 32u, 64u, 256u}) {
      for (float eps : {1e-6f, 1e-5f}) {
        const uint32_t tokens = 3;
        const auto x = random_floats(size_t(tokens) * n, seed++, -4.0f, 4.0f);
        const auto w = random_floats(n, seed++, -2.0f, 2.0f);
        std::vector<float> y(x.size());
        poison(y);
        std::vector<double> ref(x.size());
        rmsnorm(x, w, y, tokens, n, {wg, eps});
        rmsnorm_ref(x, w, ref, tokens, n, eps);
        const double rel = (double((n + wg - 1) / wg) + std::log2(wg) + 8) * kU;
        ASSERT_EQ(first_poisoned(y), -1);
        double worst = 0.0;
        for (size_t i = 0; i < y.size(); ++i) {
          const double err = std::fabs(y[i] - ref[i]) / std::fabs(ref[i]);
          worst = std::max(worst, err);
        }
        EXPECT_LE(worst, rel) << "n " << n << " wg " << wg << " eps " << eps;
      }
    }
  }
}

TEST(RmsNormTwin, InPlaceAndTinyRows) {
  uint32_t seed = 99;
  const uint32_t n = 96, tokens = 2;
  // Row 1 is tiny so eps dominates the mean of squares.
  auto x = random_floats(size_t(tokens) * n, seed++, -1.5f, 1.5f);
  for (uint32_t k = 0; k < n; ++k) x[n + k] *= 1e-4f;
  const auto w = random_floats(n, seed++, -1.5f, 1.5f);
  std::vector<float> y(x.size());
  const RmsNormSpec spec{32, 1e-5f};
  rmsnorm(x, w, y, tokens, n, spec);
  std::vector<float> inplace = x;
  rmsnorm(inplace, w, inplace, tokens, n, spec);
  EXPECT_EQ(inplace, y);
  std::vector<double> ref(x.size());
  rmsnorm_ref(x, w, ref, tokens, n, spec.eps);
  for (size_t i = 0; i < y.size(); ++i) {
    EXPECT_LE(std::fabs(y[i] - ref[i]), (n / 32 + 5 + 8) * kU * std::fabs(ref[i])) << i;
  }
}

}  // namespace
}  // namespace blockq::twin
