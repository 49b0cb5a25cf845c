// GPU layouts (Q8_0 scales separated, Q4 one vec4<u32> per block, raw words):
// the documented word layout decodes to the same values as the reference
// dequantizer, and every inverse rebuilds the exact bytes, even of random
// (NaN-scaled) blocks.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <vector>

#include "quant/format.hpp"
#include "quant/half.hpp"
#include "quant/repack.hpp"
#include "support/random.hpp"
#include "util/error.hpp"

// Exact comparisons with the dequantizer: no fused multiply-add here either.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace blockq {
namespace {

using testing_support::random_bytes;
using testing_support::random_normal;

TEST(Repack, ScaleConversionsAreLosslessForEveryPattern) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const auto x = static_cast<uint16_t>(h);
    const float f = scale_f16_to_f32(x);
    ASSERT_EQ(scale_f32_to_f16(f), x) << std::hex << h;
    if (!std::isnan(f)) {
      ASSERT_EQ(std::bit_cast<uint32_t>(f), std::bit_cast<uint32_t>(f16_to_f32(x)));
    }
  }
  EXPECT_EQ(scale_f32_to_f16(1.0f / 3.0f), f32_to_f16(1.0f / 3.0f));  // other floats round as f32_to_f16
  EXPECT_EQ(scale_f32_to_f16(std::bit_cast<float>(0x7f800001u)), 0x7e00);  // payload lost below f16: quiet NaN
}

TEST(Repack, Q8SplitDecodesLikeTheBlocks) {
  const size_t n = 32 * 40;
  const auto q = quantize(Format::Q8_0, random_normal(n, 101));
  const auto ref = dequantize(Format::Q8_0, q, n);
  const auto s = split_q8_0(q);
  ASSERT_EQ(s.elems, n);
  ASSERT_EQ(s.quants.size(), n / 4);
  ASSERT_EQ(s.scales.size(), n / 32);
  for (size_t t = 0; t < n; ++t) {
    const auto qt = static_cast<int8_t>(s.quants[t / 4] >> (8 * (t % 4)));
    ASSERT_EQ(static_cast<float>(qt) * s.scales[t / 32], ref[t]) << t;
  }
  EXPECT_EQ(join_q8_0(s), q);
}

TEST(Repack, Q8SplitIsLosslessOnRandomBytes) {
  const auto bytes = random_bytes(34 * 333, 102);  // includes inf and NaN f16 scales
  EXPECT_EQ(join_q8_0(split_q8_0(bytes)), bytes);
}

TEST(Repack, Q4Vec4DecodesLikeTheBlocks) {
  for (const Format f : {Format::Q4_0, Format::Q4_1}) {
    const size_t n = 32 * 40;
    const auto q = quantize(f, random_normal(n, 103));
    const auto ref = dequantize(f, q, n);
    const auto s = split_q4_vec4(f, q);
    ASSERT_EQ(s.blocks, n / 32);
    ASSERT_EQ(s.quants.size(), 4 * s.blocks);
    ASSERT_EQ(s.mins.size(), f == Format::Q4_1 ? s.blocks : 0);
    for (size_t t = 0; t < n; ++t) {
      const size_t i = t / 32, j = t % 32, k = j % 16;  // qs byte k holds elements k and k+16
      const uint32_t byte = (s.quants[4 * i + k / 4] >> (8 * (k % 4))) & 0xffu;
      const int nib = static_cast<int>(j < 16 ? byte & 0xf : byte >> 4);
      const float want = f == Format::Q4_0 ? static_cast<float>(nib - 8) * s.scales[i]
                                           : static_cast<float>(nib) * s.scales[i] + s.mins[i];
      ASSERT_EQ(want, ref[t]) << traits(f).name << " element " << t;
    }
    EXPECT_EQ(join_q4_vec4(s), q);
  }
}

TEST(Repack, Q4Vec4IsLosslessOnRandomBytes) {
  for (const Format f : {Format::Q4_0, Format::Q4_1}) {
    const auto bytes = random_bytes(traits(f).block_bytes * 257, 104);
    EXPECT_EQ(join_q4_vec4(split_q4_vec4(f, bytes)), bytes) << traits(f).name;
  }
}

TEST(Repack, RawWordsForEveryFormat) {
  for (const Format f : kAllFormats) {
    const auto& t = traits(f);
    for (const size_t nb : {size_t{1}, size_t{3}, size_t{10}}) {
      const auto bytes = random_bytes(t.block_bytes * nb, 105 + t.ggml_type);
      const auto r = to_raw_words(f, bytes);
      ASSERT_EQ(r.bytes, bytes.size());
      ASSERT_EQ(r.words.size(), (bytes.size() + 3) / 4);
      for (size_t k = 0; k < r.words.size() * 4; ++k) {
        const auto got = static_cast<uint8_t>(r.words[k / 4] >> (8 * (k % 4)));
        ASSERT_EQ(got, k < bytes.size() ? bytes[k] : 0) << t.name << " byte " << k;  // zero padded
      }
      EXPECT_EQ(from_raw_words(r), bytes) << t.name;
    }
  }
}

TEST(Repack, RawQ8BlocksDecodeInPlace) {
  // A kernel reading 34-byte blocks straight from the words.
  const size_t n = 32 * 9;
  const auto q = quantize(Format::Q8_0, random_normal(n, 106));
  const auto ref = dequantize(Format::Q8_0, q, n);
  const auto r = to_raw_words(Format::Q8_0, q);
  auto byte_at = [&](size_t k) { return static_cast<uint8_t>(r.words[k / 4] >> (8 * (k % 4))); };
  for (size_t t = 0; t < n; ++t) {
    const size_t base = 34 * (t / 32);
    const auto d = static_cast<uint16_t>(byte_at(base) | byte_at(base + 1) << 8);
    const auto qt = static_cast<int8_t>(byte_at(base + 2 + t % 32));
    ASSERT_EQ(static_cast<float>(qt) * f16_to_f32(d), ref[t]);
  }
}

TEST(Repack, BadInputThrows) {
  const std::vector<uint8_t> partial(35);
  EXPECT_THROW(split_q8_0(partial), Error);
  EXPECT_THROW(split_q4_vec4(Format::Q4_0, partial), Error);
  EXPECT_THROW(split_q4_vec4(Format::Q8_0, std::vector<uint8_t>(34)), Error);
  EXPECT_THROW(to_raw_words(Format::Q6_K, partial), Error);

  auto s = split_q8_0(std::vector<uint8_t>(68, 1));
  s.scales.pop_back();
  EXPECT_THROW(join_q8_0(s), Error);
  auto v = split_q4_vec4(Format::Q4_1, std::vector<uint8_t>(40, 1));
  v.mins.clear();
  EXPECT_THROW(join_q4_vec4(v), Error);
  auto r = to_raw_words(Format::Q4_0, std::vector<uint8_t>(18, 1));
  r.words.push_back(0);
  EXPECT_THROW(from_raw_words(r), Error);
}

TEST(Repack, EmptyRuns) {
  EXPECT_TRUE(join_q8_0(split_q8_0({})).empty());
  EXPECT_TRUE(join_q4_vec4(split_q4_vec4(Format::Q4_1, {})).empty());
  EXPECT_TRUE(from_raw_words(to_raw_words(Format::Q8_0, {})).empty());
}

}  // namespace
}  // namespace blockq
