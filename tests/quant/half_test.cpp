// f32 <-> f16 / bf16 conversions: exact values, rounding ties, subnormals,
// overflow, infinities and NaN, and exhaustive round trips of every 16-bit
// pattern.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "quant/half.hpp"

namespace blockq {
namespace {

uint32_t bits(float f) { return std::bit_cast<uint32_t>(f); }
float from_bits(uint32_t u) { return std::bit_cast<float>(u); }

TEST(F16, ExactValues) {
  EXPECT_EQ(f32_to_f16(0.0f), 0x0000);
  EXPECT_EQ(f32_to_f16(-0.0f), 0x8000);
  EXPECT_EQ(f32_to_f16(1.0f), 0x3c00);
  EXPECT_EQ(f32_to_f16(-2.0f), 0xc000);
  EXPECT_EQ(f32_to_f16(0.5f), 0x3800);
  EXPECT_EQ(f32_to_f16(65504.0f), 0x7bff);           // largest finite
  EXPECT_EQ(f32_to_f16(0x1p-14f), 0x0400);           // smallest normal
  EXPECT_EQ(f32_to_f16(0x1p-24f), 0x0001);           // smallest subnormal
  EXPECT_EQ(f32_to_f16(0x3ffp-24f), 0x03ff);         // largest subnormal
  EXPECT_EQ(f16_to_f32(0x3c00), 1.0f);
  EXPECT_EQ(f16_to_f32(0x7bff), 65504.0f);
  EXPECT_EQ(f16_to_f32(0x0001), 0x1p-24f);
  EXPECT_EQ(f16_to_f32(0x8001), -0x1p-24f);
  EXPECT_EQ(f16_to_f32(0x03ff), 0x3ffp-24f);
  EXPECT_EQ(f16_to_f32(0x0400), 0x1p-14f);
  EXPECT_EQ(bits(f16_to_f32(0x8000)), 0x80000000u);  // -0 keeps its sign
}

TEST(F16, RoundsToNearestEven) {
  // Between 1 and 1 + 2^-10: the halfway point goes to the even mantissa.
  EXPECT_EQ(f32_to_f16(1.0f + 0x1p-11f), 0x3c00);                // tie -> even (down)
  EXPECT_EQ(f32_to_f16(1.0f + 0x3p-11f), 0x3c02);                // tie -> even (up)
  EXPECT_EQ(f32_to_f16(from_bits(0x3f801001u)), 0x3c01);         // just above the tie
  EXPECT_EQ(f32_to_f16(from_bits(0x3f800fffu)), 0x3c00);         // just below
  EXPECT_EQ(f32_to_f16(-(1.0f + 0x3p-11f)), 0xbc02);
  // A carry out of the mantissa moves into the exponent.
  EXPECT_EQ(f32_to_f16(2.0f - 0x1p-12f), 0x4000);
}

TEST(F16, SubnormalsAndUnderflow) {
  EXPECT_EQ(f32_to_f16(0x1p-25f), 0x0000);                 // tie with 0 -> 0 (even)
  EXPECT_EQ(f32_to_f16(from_bits(0x33000001u)), 0x0001);   // just above 2^-25
  EXPECT_EQ(f32_to_f16(0x3p-25f), 0x0002);                 // 1.5 units: tie -> 2 (even)
  EXPECT_EQ(f32_to_f16(0x5p-25f), 0x0002);                 // 2.5 units: tie -> 2 (even)
  EXPECT_EQ(f32_to_f16(-0x1p-26f), 0x8000);                // underflow keeps the sign
  EXPECT_EQ(f32_to_f16(from_bits(0x00000001u)), 0x0000);   // f32 subnormals vanish
  EXPECT_EQ(f32_to_f16(from_bits(0x387fffffu)), 0x0400);   // rounds up into the normals
  EXPECT_EQ(f32_to_f16(0x7fdp-25f), 0x03fe);               // 0x3fe.8 units: tie -> even 0x3fe
  EXPECT_EQ(f32_to_f16(0x7ffp-25f), 0x0400);               // 0x3ff.8 units: tie -> even 0x400
}

TEST(F16, OverflowInfAndNan) {
  EXPECT_EQ(f32_to_f16(65519.0f), 0x7bff);             // below the halfway point
  EXPECT_EQ(f32_to_f16(65520.0f), 0x7c00);             // halfway: rounds to even = inf
  EXPECT_EQ(f32_to_f16(1e10f), 0x7c00);
  EXPECT_EQ(f32_to_f16(-1e10f), 0xfc00);
  EXPECT_EQ(f32_to_f16(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(f32_to_f16(-std::numeric_limits<float>::infinity()), 0xfc00);
  // Every NaN becomes the quiet NaN 0x7e00 with its sign, as in ggml.
  EXPECT_EQ(f32_to_f16(std::numeric_limits<float>::quiet_NaN()), 0x7e00);
  EXPECT_EQ(f32_to_f16(from_bits(0x7f800001u)), 0x7e00);
  EXPECT_EQ(f32_to_f16(from_bits(0xffc0deadu)), 0xfe00);
  EXPECT_TRUE(std::isinf(f16_to_f32(0x7c00)));
  EXPECT_LT(f16_to_f32(0xfc00), 0.0f);
  // NaN -> f32 keeps sign and payload and is quiet.
  EXPECT_EQ(bits(f16_to_f32(0x7e00)), 0x7fc00000u);
  EXPECT_EQ(bits(f16_to_f32(0x7c01)), 0x7fc02000u);
  EXPECT_EQ(bits(f16_to_f32(0xfd55)), 0xffeaa000u);
}

TEST(F16, EveryNonNanPatternRoundTrips) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const auto x = static_cast<uint16_t>(h);
    const float f = f16_to_f32(x);
    if (std::isnan(f)) {
      EXPECT_EQ(x & 0x7c00, 0x7c00);
      EXPECT_EQ(f32_to_f16(f), (x & 0x8000) | 0x7e00);
      continue;
    }
    ASSERT_EQ(f32_to_f16(f), x) << std::hex << h;
  }
}

TEST(F16, MatchesDoubleRoundingOnRandomFloats) {
  // Round to nearest even checked against a double-precision computation: the
  // chosen f16 is never farther from x than its neighbours.
  uint32_t s = 12345;
  for (int i = 0; i < 200000; ++i) {
    s = s * 1664525u + 1013904223u;
    const uint32_t e = 100 + (s >> 8) % 45;  // |x| in [2^-27, 2^18): subnormal f16 to overflow
    s = s * 1664525u + 1013904223u;
    const float x = from_bits((s & 0x80000000u) | (e << 23) | ((s >> 3) & 0x7fffffu));
    const uint16_t h = f32_to_f16(x);
    if ((h & 0x7c00) == 0x7c00) {
      EXPECT_GE(std::fabs(x), 65520.0f);
      continue;
    }
    const double err = std::fabs(static_cast<double>(f16_to_f32(h)) - x);
    for (int d : {-1, 1}) {
      const auto nb = static_cast<uint16_t>(h + d);
      if ((nb & 0x7fff) >= 0x7c00 || ((h ^ nb) & 0x8000)) continue;
      const double nerr = std::fabs(static_cast<double>(f16_to_f32(nb)) - x);
      ASSERT_TRUE(err < nerr || (err == nerr && (h & 1) == 0)) << std::hex << bits(x);
    }
  }
}

TEST(Bf16, ValuesRoundingAndSpecials) {
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(f32_to_bf16(-0.0f), 0x8000);
  EXPECT_EQ(f32_to_bf16(from_bits(0x3f808000u)), 0x3f80);  // tie -> even (down)
  EXPECT_EQ(f32_to_bf16(from_bits(0x3f818000u)), 0x3f82);  // tie -> even (up)
  EXPECT_EQ(f32_to_bf16(from_bits(0x3f808001u)), 0x3f81);
  EXPECT_EQ(f32_to_bf16(from_bits(0x3f807fffu)), 0x3f80);
  EXPECT_EQ(f32_to_bf16(from_bits(0x7f7fffffu)), 0x7f80);  // max float rounds to inf
  EXPECT_EQ(f32_to_bf16(from_bits(0x7f7f7fffu)), 0x7f7f);
  EXPECT_EQ(f32_to_bf16(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_EQ(f32_to_bf16(-std::numeric_limits<float>::infinity()), 0xff80);
  EXPECT_EQ(f32_to_bf16(from_bits(0x00000001u)), 0x0000);  // subnormal rounds to 0
  EXPECT_EQ(f32_to_bf16(from_bits(0x007fffffu)), 0x0080);  // ... or up to the smallest normal
  EXPECT_EQ(f32_to_bf16(from_bits(0x00418000u)), 0x0042);  // subnormal tie -> even
  // NaN: truncated and forced quiet, never turned into inf.
  EXPECT_EQ(f32_to_bf16(from_bits(0x7f800001u)), 0x7fc0);
  EXPECT_EQ(f32_to_bf16(from_bits(0xff80ffffu)), 0xffc0);
  EXPECT_EQ(f32_to_bf16(from_bits(0x7fc0deadu)), 0x7fc0);
  EXPECT_EQ(f32_to_bf16(from_bits(0x7fa50000u)), 0x7fe5);
  EXPECT_EQ(bf16_to_f32(0x3f80), 1.0f);
  EXPECT_EQ(bits(bf16_to_f32(0xffc1)), 0xffc10000u);
}

TEST(Bf16, EveryPatternRoundTrips) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const auto x = static_cast<uint16_t>(h);
    const float f = bf16_to_f32(x);
    const uint16_t want = std::isnan(f) ? static_cast<uint16_t>(x | 0x40) : x;
    ASSERT_EQ(f32_to_bf16(f), want) << std::hex << h;
  }
}

TEST(Half, ConversionsAreConstexpr) {
  static_assert(f32_to_f16(1.0f) == 0x3c00);
  static_assert(f16_to_f32(0xc000) == -2.0f);
  static_assert(f32_to_bf16(2.0f) == 0x4000);
  static_assert(bf16_to_f32(0x4000) == 2.0f);
}

}  // namespace
}  // namespace blockq
