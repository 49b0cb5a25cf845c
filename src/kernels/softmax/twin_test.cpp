// Tests of the softmax twin against its float64 reference on random data.
#include "kernels/softmax/twin.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/common/reduce_twin.hpp"
#include "support/bounds.hpp"
#include "support/random.hpp"

namespace blockq::twin {
namespace {

using testing_support::first_poisoned;
using testing_support::poison;
using testing_support::random_floats;
using testing_support::kU;
using testing_support::softmax_rel_bound;

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

}  // namespace
}  // namespace blockq::twin
