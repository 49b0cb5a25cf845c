// Tests of the SiLU-gate twin against its float64 reference.
#include "kernels/ffn/twin.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "support/random.hpp"

namespace blockq::twin {
namespace {

using testing_support::first_poisoned;
using testing_support::poison;
using testing_support::random_floats;

constexpr double kU = 0x1p-24;

// Bound per element for |g| <= 80 (no overflow): expf <= 1 ulp (2u) damped by
// e/(1+e) <= 1, the sum, the quotient and the product: |h - ref| <= 6 u |ref|.
TEST(SiluGateTwin, MatchesFloat64) {
  uint32_t seed = 3;
  for (size_t n : {1u, 31u, 256u, 11008u}) {
    for (float range : {1.0f, 8.0f, 80.0f}) {
      const auto g = random_floats(n, seed++, -range, range);
      const auto u = random_floats(n, seed++, -4.0f, 4.0f);
      std::vector<float> h(n);
      poison(h);
      std::vector<double> ref(n);
      silu_gate(g, u, h, {256});
      silu_gate_ref(g, u, ref);
      ASSERT_EQ(first_poisoned(h), -1);
      for (size_t k = 0; k < n; ++k) {
        // For g < -80 silu is ~1e-33: still a normal f32, so the relative bound holds.
        EXPECT_LE(std::fabs(h[k] - ref[k]), 6 * kU * std::fabs(ref[k]))
            << "g " << g[k] << " u " << u[k];
      }
    }
  }
}

TEST(SiluGateTwin, WorkgroupSizeDoesNotChangeResult) {
  uint32_t seed = 4;
  const auto g = random_floats(1000, seed++, -6.0f, 6.0f);
  const auto u = random_floats(1000, seed++, -2.0f, 2.0f);
  std::vector<float> a(1000), b(1000);
  silu_gate(g, u, a, {64});
  silu_gate(g, u, b, {256});
  EXPECT_EQ(a, b);
}

TEST(SiluGateTwin, LargeMagnitudes) {
  // Large positive g: silu(g) = g (e underflows to 0, d = 1). Very negative g:
  // exp's argument is clamped to 88, so s = g / (1 + e^88): compare absolutely
  // against the exact value (below 1.5e-36 for g < -88).
  const std::vector<float> g = {100.0f, 30.0f, -90.0f, -120.0f, -1000.0f};
  const std::vector<float> u = {0.5f, -2.0f, 3.0f, 1.5f, -0.25f};
  std::vector<float> h(g.size());
  std::vector<double> ref(g.size());
  silu_gate(g, u, h, {});
  silu_gate_ref(g, u, ref);
  EXPECT_EQ(h[0], 50.0f);
  EXPECT_EQ(h[1], -60.0f);
  for (size_t k = 2; k < g.size(); ++k) {
    EXPECT_FALSE(std::isnan(h[k])) << k;
    EXPECT_LE(std::fabs(h[k] - ref[k]), 1e-35 * std::fabs(u[k])) << k;
  }
}

TEST(SiluGateTwin, InPlace) {
  uint32_t seed = 8;
  auto g = random_floats(100, seed++, -6.0f, 6.0f);
  const auto u = random_floats(100, seed++, -2.0f, 2.0f);
  std::vector<float> h(100);
  silu_gate(g, u, h, {});
  silu_gate(g, u, g, {});
  EXPECT_EQ(g, h);
}

}  // namespace
}  // namespace blockq::twin
