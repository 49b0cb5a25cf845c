// Tests of the RoPE twin against its float64 reference and against ggml's
// pair conventions on hand-worked rows.
#include "kernels/rope/twin.hpp"

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

constexpr double kU = 0x1p-24;

TEST(RopeTwin, NoFpContraction) {
  volatile float a = 1.0f + 0x1p-12f, c = -(1.0f + 0x1p-11f);
  EXPECT_EQ(mul_then_add(a, a, c), 0.0f) << "build with -ffp-contract=off";
}

// ggml's pairing on one head of 4 dims at position 1, base 10000:
// pair 0 turns by 1 rad, pair 1 by 10000^-0.5 = 0.01 rad.
TEST(RopeTwin, PairConventions) {
  const double t0 = 1.0, t1 = 0.01;
  const RopeShape sh{1, 1, 4};
  const int32_t pos[] = {1};
  {
    std::vector<float> x = {1, 2, 3, 4};
    rope(x, pos, sh, {4, 10000.0f, 1.0f, RopeMode::Normal});  // pairs (0,1), (2,3)
    const double want[] = {1 * cos(t0) - 2 * sin(t0), 1 * sin(t0) + 2 * cos(t0),
                           3 * cos(t1) - 4 * sin(t1), 3 * sin(t1) + 4 * cos(t1)};
    for (int k = 0; k < 4; ++k) EXPECT_NEAR(x[k], want[k], 1e-6) << k;
  }
  {
    std::vector<float> x = {1, 2, 3, 4};
    rope(x, pos, sh, {4, 10000.0f, 1.0f, RopeMode::Neox});  // pairs (0,2), (1,3)
    const double want[] = {1 * cos(t0) - 3 * sin(t0), 2 * cos(t1) - 4 * sin(t1),
                           1 * sin(t0) + 3 * cos(t0), 2 * sin(t1) + 4 * cos(t1)};
    for (int k = 0; k < 4; ++k) EXPECT_NEAR(x[k], want[k], 1e-6) << k;
  }
  {
    // freq_scale 0.5 at position 2 is position 1 unscaled.
    std::vector<float> x = {1, 2, 3, 4}, y = x;
    const int32_t pos2[] = {2};
    rope(x, pos2, sh, {4, 10000.0f, 0.5f, RopeMode::Normal});
    rope(y, pos, sh, {4, 10000.0f, 1.0f, RopeMode::Normal});
    for (int k = 0; k < 4; ++k) EXPECT_NEAR(x[k], y[k], 1e-6) << k;
  }
  {
    // Freq factors 2 at position 2 are position 1 without factors (the
    // division by 2 is exact), pair by pair: factor 1 on pair 0 turns it by 2 rad.
    std::vector<float> x = {1, 2, 3, 4}, y = x, z = x;
    const int32_t pos2[] = {2};
    const float two[] = {2.0f, 2.0f}, mixed[] = {1.0f, 2.0f};
    rope(x, pos2, sh, {4, 10000.0f, 1.0f, RopeMode::Normal, two});
    rope(y, pos, sh, {4, 10000.0f, 1.0f, RopeMode::Normal});
    for (int k = 0; k < 4; ++k) EXPECT_EQ(x[k], y[k]) << k;
    rope(z, pos2, sh, {4, 10000.0f, 1.0f, RopeMode::Normal, mixed});
    EXPECT_NEAR(z[0], 1 * cos(2.0) - 2 * sin(2.0), 1e-6);
    EXPECT_EQ(z[2], y[2]);
    EXPECT_EQ(z[3], y[3]);
  }
}

TEST(RopeTwin, PositionZeroAndPassThroughAreExact) {
  uint32_t seed = 5;
  const RopeShape sh{2, 3, 80};
  const int32_t pos[] = {0, 77};
  for (RopeMode mode : {RopeMode::Normal, RopeMode::Neox}) {
    const auto x0 = random_floats(size_t(2) * 3 * 80, seed++, -3.0f, 3.0f);
    auto x = x0;
    rope(x, pos, sh, {32, 10000.0f, 1.0f, mode});
    for (uint32_t h = 0; h < 3; ++h) {
      for (uint32_t d = 0; d < 80; ++d) EXPECT_EQ(x[h * 80 + d], x0[h * 80 + d]);  // pos 0
      for (uint32_t d = 32; d < 80; ++d) EXPECT_EQ(x[(3 + h) * 80 + d], x0[(3 + h) * 80 + d]);
    }
  }
}

// Bound per rotated output, from the op order in twin.hpp, u = 2^-24:
//   theta rel. error <= (|ex| ln(base) + 4) u   (ex rounding through pow,
//                       powf <= 1 ulp, two products)
//   |y - ref| <= 2 (|a| + |b|) (|theta| (|ex| ln(base) + 4) u + 4u)
// (cosf/sinf <= 1 ulp, two products and a sum; factor 2 margin). With freq
// factors (random in [1, 8], as Llama 3.1's run from 1 to 8) the angle has one
// more rounded division: (|ex| ln(base) + 5) u.
// Pass-through dims must be bit-exact.
TEST(RopeTwin, MatchesFloat64) {
  uint32_t seed = 77;
  std::mt19937 rng(78);
  struct Case {
    uint32_t heads, head_dim, n_rot;
    float base, freq_scale;
    int32_t max_pos;
  };
  const Case cases[] = {{4, 64, 64, 10000.0f, 1.0f, 4096},  {2, 128, 128, 1000000.0f, 1.0f, 32768},
                        {3, 80, 32, 10000.0f, 0.25f, 8192}, {1, 96, 64, 500000.0f, 1.0f, 131072},
                        {5, 16, 2, 10000.0f, 1.0f, 100},    {2, 64, 48, 10000.0f, 4.0f, 2048}};
  for (const Case& cs : cases) {
    for (int variant = 0; variant < 4; ++variant) {
      const RopeMode mode = variant % 2 ? RopeMode::Neox : RopeMode::Normal;
      const bool with_ff = variant >= 2;
      const std::vector<float> ff =
          with_ff ? random_floats(cs.n_rot / 2, seed++, 1.0f, 8.0f) : std::vector<float>{};
      const RopeShape sh{6, cs.heads, cs.head_dim};
      const RopeSpec spec{cs.n_rot, cs.base, cs.freq_scale, mode, ff};
      std::uniform_int_distribution<int32_t> pd(0, cs.max_pos - 1);
      std::vector<int32_t> pos(sh.tokens);
      for (auto& p : pos) p = pd(rng);
      const auto x0 =
          random_floats(size_t(sh.tokens) * sh.heads * sh.head_dim, seed++, -4.0f, 4.0f);
      auto x = x0;
      std::vector<double> ref(x.size());
      rope(x, pos, sh, spec);
      rope_ref(x0, ref, pos, sh, spec);
      const double lnb = std::log(double(cs.base));
      for (uint32_t t = 0; t < sh.tokens; ++t) {
        for (uint32_t h = 0; h < sh.heads; ++h) {
          const size_t row = (size_t(t) * sh.heads + h) * sh.head_dim;
          for (uint32_t i = 0; i < cs.n_rot / 2; ++i) {
            const uint32_t ia = mode == RopeMode::Normal ? 2 * i : i;
            const uint32_t ib = mode == RopeMode::Normal ? 2 * i + 1 : i + cs.n_rot / 2;
            const double ex = 2.0 * i / cs.n_rot;
            const double theta = pos[t] * double(cs.freq_scale) * std::pow(double(cs.base), -ex) /
                                 (with_ff ? double(ff[i]) : 1.0);
            const double ab = std::fabs(x0[row + ia]) + std::fabs(x0[row + ib]);
            const double bound = 2 * ab * (theta * (ex * lnb + (with_ff ? 5 : 4)) * kU + 4 * kU);
            EXPECT_LE(std::fabs(x[row + ia] - ref[row + ia]), bound) << "t " << t << " i " << i;
            EXPECT_LE(std::fabs(x[row + ib] - ref[row + ib]), bound) << "t " << t << " i " << i;
          }
          for (uint32_t d = cs.n_rot; d < sh.head_dim; ++d) {
            EXPECT_EQ(x[row + d], x0[row + d]) << "pass-through dim " << d;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace blockq::twin
