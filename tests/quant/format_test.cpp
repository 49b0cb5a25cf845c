// The traits table (ggml ids, block sizes, names, snippet names), lookups by
// id and by name, row sizes, and the errors thrown on bad sizes.
#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <vector>

#include "quant/blocks.hpp"
#include "quant/format.hpp"
#include "support/random.hpp"
#include "util/error.hpp"

namespace blockq {
namespace {

struct Expected {
  Format f;
  const char* name;
  uint32_t ggml_type, block_elems, block_bytes;
  bool quantized;
};

const Expected kExpected[] = {
    {Format::F32, "f32", 0, 1, 4, false},     {Format::F16, "f16", 1, 1, 2, false},
    {Format::BF16, "bf16", 30, 1, 2, false},  {Format::Q4_0, "q4_0", 2, 32, 18, true},
    {Format::Q4_1, "q4_1", 3, 32, 20, true},  {Format::Q5_0, "q5_0", 6, 32, 22, true},
    {Format::Q5_1, "q5_1", 7, 32, 24, true},  {Format::Q8_0, "q8_0", 8, 32, 34, true},
    {Format::Q4_K, "q4_K", 12, 256, 144, true}, {Format::Q5_K, "q5_K", 13, 256, 176, true},
    {Format::Q6_K, "q6_K", 14, 256, 210, true}, {Format::Q2_K, "q2_K", 10, 256, 84, true},
    {Format::Q3_K, "q3_K", 11, 256, 110, true}, {Format::IQ4_NL, "iq4_nl", 20, 32, 18, true},
    {Format::IQ4_XS, "iq4_xs", 23, 256, 136, true},
};

TEST(Format, TraitsTable) {
  ASSERT_EQ(std::size(kExpected), std::size(kAllFormats));
  for (const auto& e : kExpected) {
    const auto& t = traits(e.f);
    EXPECT_EQ(t.format, e.f);
    EXPECT_EQ(t.name, e.name);
    EXPECT_EQ(t.ggml_type, e.ggml_type) << e.name;
    EXPECT_EQ(t.block_elems, e.block_elems) << e.name;
    EXPECT_EQ(t.block_bytes, e.block_bytes) << e.name;
    EXPECT_EQ(t.quantized, e.quantized) << e.name;
    std::string lower(e.name);
    for (auto& ch : lower) ch = char(std::tolower(static_cast<unsigned char>(ch)));
    EXPECT_EQ(t.wgsl_decode, lower + ".wgsl");
    EXPECT_NE(t.dequantize, nullptr);
    EXPECT_NE(t.quantize, nullptr);
  }
  EXPECT_EQ(sizeof(block_q4_K), traits(Format::Q4_K).block_bytes);
}

TEST(Format, FromGgml) {
  for (const auto& e : kExpected) EXPECT_EQ(format_from_ggml(e.ggml_type), e.f) << e.name;
  for (uint32_t id : {4u, 5u, 9u, 15u, 16u, 24u, 28u, 29u, 31u, 39u, 1000u}) {
    EXPECT_EQ(format_from_ggml(id), std::nullopt) << id;
  }
}

TEST(Format, FromName) {
  for (const auto& e : kExpected) {
    EXPECT_EQ(format_from_name(e.name), e.f);
    std::string upper = e.name;
    for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    EXPECT_EQ(format_from_name(upper), e.f) << upper;
  }
  EXPECT_EQ(format_from_name("q4_k"), Format::Q4_K);
  EXPECT_EQ(format_from_name("Q6_k"), Format::Q6_K);
  for (const char* bad : {"", "q4", "q4_0 ", "q8_K", "iq2_xs", "f64", "q8_1"}) {
    EXPECT_EQ(format_from_name(bad), std::nullopt) << bad;
  }
}

TEST(Format, RowBytes) {
  EXPECT_EQ(row_bytes(Format::F32, 7), 28u);
  EXPECT_EQ(row_bytes(Format::F16, 7), 14u);
  EXPECT_EQ(row_bytes(Format::BF16, 3), 6u);
  EXPECT_EQ(row_bytes(Format::Q8_0, 4096), 128u * 34u);
  EXPECT_EQ(row_bytes(Format::Q4_0, 64), 36u);
  EXPECT_EQ(row_bytes(Format::Q6_K, 512), 420u);
  EXPECT_EQ(row_bytes(Format::Q4_K, 0), 0u);
  EXPECT_THROW(row_bytes(Format::Q8_0, 33), Error);
  EXPECT_THROW(row_bytes(Format::Q4_K, 128), Error);
  try {
    row_bytes(Format::Q5_K, 300);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("q5_K"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("300"), std::string::npos) << e.what();
  }
  EXPECT_THROW(row_bytes(Format::Q8_0, ~uint64_t{0} / 32 * 32), Error);  // 2^59 blocks of 34 bytes overflow
}

TEST(Format, CodecsRejectPartialBlocks) {
  std::vector<float> x(300, 1.0f);
  std::vector<uint8_t> b(1024);
  for (const Format f : kAllFormats) {
    const auto& t = traits(f);
    if (t.block_elems == 1) continue;
    EXPECT_THROW(t.quantize(x.data(), b.data(), t.block_elems + 1), Error) << t.name;
    EXPECT_THROW(t.dequantize(b.data(), x.data(), t.block_elems - 1), Error) << t.name;
  }
}

TEST(Format, CheckedWrappersValidateSizes) {
  const auto x = testing_support::random_floats(256, 1);
  std::vector<uint8_t> blocks(row_bytes(Format::Q4_K, 256));
  EXPECT_NO_THROW(quantize(Format::Q4_K, x, blocks));
  std::vector<uint8_t> short_blocks(blocks.size() - 1);
  EXPECT_THROW(quantize(Format::Q4_K, x, short_blocks), Error);
  std::vector<float> y(256);
  EXPECT_NO_THROW(dequantize(Format::Q4_K, blocks, y));
  EXPECT_THROW(dequantize(Format::Q4_K, short_blocks, y), Error);
  std::vector<float> y_partial(255);
  EXPECT_THROW(dequantize(Format::Q4_K, blocks, y_partial), Error);
  EXPECT_THROW(dequantize(Format::Q8_0, blocks, 256), Error);  // 144 bytes are not 8 Q8_0 blocks
  EXPECT_THROW(quantize(Format::Q8_0, std::span<const float>(x).first(40)), Error);
}

TEST(Format, EmptyInputIsFine) {
  for (const Format f : kAllFormats) {
    EXPECT_TRUE(quantize(f, std::span<const float>()).empty());
    EXPECT_TRUE(dequantize(f, std::span<const uint8_t>(), 0).empty());
  }
}

TEST(Format, BlocksAreUnalignedSafe) {
  // Blocks at an odd address decode the same as aligned ones.
  const auto x = testing_support::random_floats(512, 2);
  for (const Format f : kAllFormats) {
    const auto q = quantize(f, x);
    std::vector<uint8_t> shifted(q.size() + 1);
    std::copy(q.begin(), q.end(), shifted.begin() + 1);
    std::vector<float> a(512), b(512);
    traits(f).dequantize(q.data(), a.data(), 512);
    traits(f).dequantize(shifted.data() + 1, b.data(), 512);
    EXPECT_EQ(a, b) << traits(f).name;
    std::vector<uint8_t> out(q.size() + 1);
    traits(f).quantize(x.data(), out.data() + 1, 512);
    EXPECT_TRUE(std::equal(q.begin(), q.end(), out.begin() + 1)) << traits(f).name;
  }
}

}  // namespace
}  // namespace blockq
