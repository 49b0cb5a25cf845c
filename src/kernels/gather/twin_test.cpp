// Tests of the GatherBlockQuantized and embedding twins against their float64
// references, hand-worked values, and their input errors.
#include "kernels/gather/twin.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "quant/half.hpp"
#include "support/random.hpp"
#include "util/error.hpp"

namespace blockq::twin {
namespace {

using testing_support::first_poisoned;
using testing_support::poison;
using testing_support::random_bytes;
using testing_support::random_floats;

constexpr double kU = 0x1p-24;
constexpr uint16_t kPoison16 = 0x7dad;  // a NaN f32_to_f16 never produces

int64_t count(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// Expects fn to throw blockq::Error whose message contains every part.
template <class Fn>
void expect_error(Fn&& fn, std::vector<std::string> parts) {
  try {
    fn();
    ADD_FAILURE() << "no blockq::Error thrown";
  } catch (const Error& e) {
    for (const auto& p : parts)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

// data [2, 16] bytes, 4 bits: 2 rows of 32 values, block_size 16 -> 2 blocks per row.
TEST(GatherBlockQuantizedTwin, HandWorked4Bit) {
  std::vector<uint8_t> data(32, 0x88);
  data[16] = 0x3A;  // row 1, values 0 (lo = 10) and 1 (hi = 3)
  data[24] = 0xF1;  // row 1, values 16 (lo = 1) and 17 (hi = 15)
  const std::vector<float> scales = {1.0f, 1.0f, 0.5f, -2.0f};  // [2, 2]
  const std::vector<uint8_t> zp = {0x88, 0x52};                 // [2, 1]: row 1 zp 2, 5
  const std::vector<int64_t> idx = {1};
  GbqInputs in{data, {2, 16}, std::span<const int64_t>(idx), {1}, scales, {2, 2}, zp, {2, 1}};
  const GbqSpec spec{4, 16, 0, 1};
  EXPECT_EQ(gbq_plan(in, spec).out_shape, (Shape{1, 32}));
  std::vector<float> out(32);
  gather_block_quantized(in, spec, out);
  EXPECT_EQ(out[0], 4.0f);     // (10 - 2) * 0.5
  EXPECT_EQ(out[1], 0.5f);     // (3 - 2) * 0.5
  EXPECT_EQ(out[2], 3.0f);     // (8 - 2) * 0.5
  EXPECT_EQ(out[16], 8.0f);    // (1 - 5) * -2
  EXPECT_EQ(out[17], -20.0f);  // (15 - 5) * -2
  in.zero_points = {};         // default zero point 8
  gather_block_quantized(in, spec, out);
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[17], -14.0f);
  std::vector<uint16_t> h(32);
  gather_block_quantized_f16(in, spec, h);
  EXPECT_EQ(h[0], 0x3c00);   // 1.0
  EXPECT_EQ(h[17], 0xcb00);  // -14.0
}

// 8 bits, 20 values per row, block_size 16: the second block is partial.
TEST(GatherBlockQuantizedTwin, HandWorked8BitPartialBlock) {
  std::vector<uint8_t> data(60);
  for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(100 + i);
  const std::vector<float> scales = {1, 2, 3, 4, 5, 6};  // [3, 2]
  const std::vector<uint8_t> zp = {100, 110, 120, 130, 140, 150};
  const std::vector<int32_t> idx = {-1, 0};
  GbqInputs in{data, {3, 20}, std::span<const int32_t>(idx), {2}, scales, {3, 2}, zp, {3, 2}};
  std::vector<float> out(40);
  gather_block_quantized(in, {8, 16, 0, -1}, out);
  EXPECT_EQ(out[0], (140 - 140) * 5.0f);   // row 2 col 0: byte 140
  EXPECT_EQ(out[17], (157 - 150) * 6.0f);  // row 2 col 17: block 1
  EXPECT_EQ(out[20 + 19], (119 - 110) * 2.0f);
  in.zero_points = {};  // default 128
  gather_block_quantized(in, {8, 16, 0, 1}, out);
  EXPECT_EQ(out[20 + 3], (103 - 128) * 1.0f);
}

struct GbqCase {
  Shape logical;  // data shape in values (last dim = cols)
  int64_t gather_axis;
  Shape indices_shape;
  uint32_t bits, block_size;
  bool zp, idx64;
  float scale_mag;
};

// f32: one rounded product of exact operands, |y - ref| <= 2^-24 |ref|.
// f16: RNE of that f32, |h - ref| <= (2^-11 + 2^-22) |ref| + 2^-25 (subnormal
// spacing 2^-24), and bit-equal to f32_to_f16 of the f32 output.
TEST(GatherBlockQuantizedTwin, MatchesFloat64) {
  const GbqCase cases[] = {
      {{50, 256}, 0, {7}, 4, 128, false, false, 0.1f},
      {{50, 256}, 0, {7}, 4, 32, true, true, 0.1f},
      {{33, 96}, 0, {}, 8, 64, true, false, 0.05f},         // rank-0 indices, partial block
      {{33, 100}, -2, {2, 3}, 8, 16, false, true, 0.05f},   // partial block of 4
      {{17, 48}, 0, {2, 2, 3}, 4, 32, true, false, 1e-6f},  // f16 subnormals
      {{9, 40}, 0, {4}, 2, 16, true, true, 0.2f},
      {{9, 64}, 0, {3, 2}, 2, 64, false, false, 0.2f},
      {{4, 11, 64}, 1, {5}, 4, 16, true, true, 0.1f},  // gather the middle axis
      {{4, 11, 80}, 0, {2, 2}, 8, 32, true, false, 0.1f},
      {{3, 5, 6, 32}, 2, {3}, 4, 16, false, true, 0.1f},
  };
  uint32_t seed = 100;
  for (const GbqCase& c : cases) {
    SCOPED_TRACE(::testing::Message()
                 << "bits " << c.bits << " bs " << c.block_size << " zp " << c.zp << " idx64 "
                 << c.idx64 << " rank " << c.logical.size() << " gather " << c.gather_axis);
    const int64_t per_byte = 8 / c.bits, r = int64_t(c.logical.size());
    Shape dshape = c.logical;
    dshape.back() /= per_byte;
    const int64_t nb = (c.logical.back() + c.block_size - 1) / c.block_size;
    Shape sshape = dshape, zshape = dshape;
    sshape.back() = nb;
    zshape.back() = (nb + per_byte - 1) / per_byte;
    const auto data = random_bytes(size_t(count(dshape)), seed++);
    const auto scales = random_floats(size_t(count(sshape)), seed++, -c.scale_mag, c.scale_mag);
    const auto zp = random_bytes(size_t(count(zshape)), seed++);
    const int64_t g = c.gather_axis < 0 ? c.gather_axis + r : c.gather_axis;
    const int64_t dim = c.logical[size_t(g)];
    std::mt19937 rng(seed++);
    std::uniform_int_distribution<int64_t> pick(-dim, dim - 1);
    std::vector<int64_t> i64(size_t(count(c.indices_shape)));
    for (auto& v : i64) v = pick(rng);
    std::vector<int32_t> i32(i64.begin(), i64.end());
    GbqInputs in{data, dshape, std::span<const int64_t>(i64), c.indices_shape, scales, sshape};
    if (!c.idx64) in.indices = std::span<const int32_t>(i32);
    if (c.zp) in.zero_points = zp, in.zero_points_shape = zshape;
    const GbqSpec spec{c.bits, c.block_size, c.gather_axis, -1};

    const GbqPlan plan = gbq_plan(in, spec);
    Shape want(c.logical.begin(), c.logical.begin() + g);
    want.insert(want.end(), c.indices_shape.begin(), c.indices_shape.end());
    want.insert(want.end(), c.logical.begin() + g + 1, c.logical.end());
    ASSERT_EQ(plan.out_shape, want);
    ASSERT_EQ(plan.out_elems, size_t(count(want)));

    std::vector<float> out(plan.out_elems);
    poison(out);
    std::vector<uint16_t> h(plan.out_elems, kPoison16);
    std::vector<double> ref(plan.out_elems);
    gather_block_quantized(in, spec, out);
    gather_block_quantized_f16(in, spec, h);
    gather_block_quantized_ref(in, spec, ref);
    ASSERT_EQ(first_poisoned(out), -1);
    for (size_t o = 0; o < out.size(); ++o) {
      ASSERT_LE(std::fabs(out[o] - ref[o]), kU * std::fabs(ref[o])) << o;
      ASSERT_EQ(h[o], f32_to_f16(out[o])) << o;
      const double hv = f16_to_f32(h[o]);
      ASSERT_LE(std::fabs(hv - ref[o]), (0x1p-11 + 0x1p-22) * std::fabs(ref[o]) + 0x1p-25) << o;
    }
    // A negative index gathers the same slice as index + dim.
    std::vector<int64_t> shifted(i64);
    for (auto& v : shifted) v = v < 0 ? v + dim : v - dim;
    GbqInputs in2 = in;
    in2.indices = std::span<const int64_t>(shifted);
    std::vector<float> out2(plan.out_elems);
    gather_block_quantized(in2, spec, out2);
    EXPECT_EQ(out2, out);
  }
}

GbqInputs small_inputs(const std::vector<uint8_t>& data, const std::vector<float>& scales,
                       const std::vector<int32_t>& idx, Shape idx_shape) {
  // data [6, 16] bytes = [6, 32] 4-bit values, block 16 -> scales [6, 2].
  return GbqInputs{
      data, {6, 16}, std::span<const int32_t>(idx), std::move(idx_shape), scales, {6, 2}, {}, {}};
}

TEST(GatherBlockQuantizedTwin, OutOfRangeIndexNamesValueAndPosition) {
  const auto data = random_bytes(96, 7);
  const auto scales = random_floats(12, 8, 0.01f, 0.1f);
  const GbqSpec spec{4, 16, 0, 1};
  std::vector<int32_t> idx = {0, 1, 2, 3, 6, 5};  // [2, 3]; 6 at flat 4 = [1, 1]
  std::vector<float> out(6 * 32);
  poison(out);
  expect_error(
      [&] {
        gather_block_quantized(small_inputs(data, scales, idx, {2, 3}), spec, out);
      },
      {"index 6", "indices[1, 1]", "flat position 4", "[-6, 6)"});
  EXPECT_EQ(first_poisoned(out), 0) << "nothing may be written before the error";
  idx[4] = -7;
  std::vector<double> ref(6 * 32);
  expect_error(
      [&] {
        gather_block_quantized_ref(small_inputs(data, scales, idx, {2, 3}), spec, ref);
      },
      {"index -7", "indices[1, 1]", "flat position 4"});
  std::vector<uint16_t> h(6 * 32);
  expect_error(
      [&] {
        gather_block_quantized_f16(small_inputs(data, scales, idx, {2, 3}), spec, h);
      },
      {"index -7"});
  // int64 beyond int32, in a rank-3 indices tensor [1, 2, 1].
  const std::vector<int64_t> big = {2, int64_t(1) << 40};
  GbqInputs in = small_inputs(data, scales, {}, {});
  in.indices = std::span<const int64_t>(big);
  in.indices_shape = {1, 2, 1};
  std::vector<float> out2(2 * 32);
  expect_error([&] { gather_block_quantized(in, spec, out2); },
               {"index 1099511627776", "indices[0, 1, 0]", "flat position 1"});
}

TEST(GatherBlockQuantizedTwin, BadAttributesAndShapes) {
  const auto data = random_bytes(96, 9);
  const auto scales = random_floats(12, 10, 0.01f, 0.1f);
  const std::vector<int32_t> idx = {1, 2};
  const auto in = small_inputs(data, scales, idx, {2});
  EXPECT_NO_THROW(gbq_plan(in, {4, 16, 0, 1}));
  expect_error([&] { gbq_plan(in, {3, 16, 0, 1}); }, {"bits 3"});
  expect_error([&] { gbq_plan(in, {4, 24, 0, 1}); }, {"block_size 24"});
  expect_error([&] { gbq_plan(in, {4, 8, 0, 1}); }, {"block_size 8"});
  expect_error([&] { gbq_plan(in, {4, 16, 0, 0}); }, {"quantize_axis 0"});
  expect_error([&] { gbq_plan(in, {4, 16, 1, 1}); }, {"gather_axis 1"});
  expect_error([&] { gbq_plan(in, {4, 16, -3, 1}); }, {"gather_axis -3"});
  expect_error([&] { gbq_plan(in, {4, 32, 0, 1}); }, {"scales shape [6, 2]", "[6, 1]"});
  auto bad = in;
  bad.data_shape = {6, 15};
  expect_error([&] { gbq_plan(bad, {4, 16, 0, 1}); }, {"data has 96 bytes"});
  bad = in;
  bad.indices_shape = {3};
  expect_error([&] { gbq_plan(bad, {4, 16, 0, 1}); }, {"indices has 2 values"});
  const std::vector<uint8_t> zp(12);
  bad = in;
  bad.zero_points = zp;
  bad.zero_points_shape = {6, 2};  // 4-bit: two blocks pack into one byte -> [6, 1]
  expect_error([&] { gbq_plan(bad, {4, 16, 0, 1}); }, {"zero_points shape [6, 2]", "[6, 1]"});
  bad.zero_points_shape = {6, 1};
  expect_error([&] { gbq_plan(bad, {4, 16, 0, 1}); }, {"zero_points has 12 bytes"});
  // 8 bits: [6, 16] values in one block of 16 per row; zero_points like scales.
  const std::vector<float> s8(6);
  const std::vector<uint8_t> z8(6);
  GbqInputs in8{data, {6, 16}, std::span<const int32_t>(idx), {2}, s8, {6, 1}, z8, {6, 1}};
  EXPECT_NO_THROW(gbq_plan(in8, {8, 16, 0, 1}));
  in8.zero_points_shape = {6, 2};
  expect_error([&] { gbq_plan(in8, {8, 16, 0, 1}); }, {"zero_points shape [6, 2]"});
}

// Embedding: each format's row decoded by traits vs the float64 block decode.
// Bound per value: |got - ref| <= 4u * mag (mag = |d*q| + |m|: at most three
// f32 roundings, as in ggml's K-quant decode d1 * q - m1); F32/F16/BF16 exact.
TEST(EmbedRowsTwin, MatchesFloat64AllFormats) {
  const uint64_t n_vocab = 37, n_embd = 512;
  uint32_t seed = 500;
  for (Format f : kAllFormats) {
    const FormatTraits& tr = traits(f);
    SCOPED_TRACE(std::string(tr.name));
    const auto src = random_floats(n_vocab * n_embd, seed++, -2.0f, 2.0f);
    const size_t rb = row_bytes(f, n_embd);
    std::vector<uint8_t> table(rb * n_vocab);
    for (uint64_t v = 0; v < n_vocab; ++v)
      tr.quantize(src.data() + v * n_embd, table.data() + v * rb, n_embd);
    const std::vector<int32_t> ids = {0, 36, 5, 5, 17, 1, 35, 20};
    const EmbedSpec spec{f, n_vocab, n_embd};
    std::vector<float> out(ids.size() * n_embd);
    poison(out);
    std::vector<double> ref(out.size()), mag(out.size());
    embed_rows(table, ids, out, spec);
    embed_rows_ref(table, ids, ref, spec, mag);
    ASSERT_EQ(first_poisoned(out), -1);
    for (size_t i = 0; i < out.size(); ++i) {
      if (!tr.quantized) {
        ASSERT_EQ(double(out[i]), ref[i]) << i;
      }
      ASSERT_LE(std::fabs(out[i] - ref[i]), 4 * kU * mag[i]) << i;
    }
    // The decode reproduces the source within the format's own error (sanity).
    double worst = 0;
    for (size_t t = 0; t < ids.size(); ++t) {
      for (uint64_t k = 0; k < n_embd; ++k) {
        worst = std::max(worst, std::fabs(ref[t * n_embd + k] - src[ids[t] * n_embd + k]));
      }
    }
    // Q2_K has 4 levels a sub-block of 16: steps of about 4 / 3 on this data.
    EXPECT_LT(worst, f == Format::Q2_K ? 1.0 : 0.5) << "decode far from the quantized source";
  }
}

TEST(EmbedRowsTwin, BadIdsAndTable) {
  const uint64_t n_vocab = 10, n_embd = 64;
  const auto src = random_floats(n_vocab * n_embd, 77, -1.0f, 1.0f);
  std::vector<uint8_t> table(row_bytes(Format::Q8_0, n_embd) * n_vocab);
  for (uint64_t v = 0; v < n_vocab; ++v) {
    traits(Format::Q8_0)
        .quantize(src.data() + v * n_embd, table.data() + v * row_bytes(Format::Q8_0, n_embd),
                  n_embd);
  }
  const EmbedSpec spec{Format::Q8_0, n_vocab, n_embd};
  std::vector<float> out(3 * n_embd);
  std::vector<double> ref(3 * n_embd);
  poison(out);
  const std::vector<int32_t> high = {1, 2, 10};
  expect_error([&] { embed_rows(table, high, out, spec); }, {"token id 10", "position 2"});
  EXPECT_EQ(first_poisoned(out), 0);
  const std::vector<int32_t> neg = {-1, 2, 3};
  expect_error([&] { embed_rows_ref(table, neg, ref, spec); }, {"token id -1", "position 0"});
  const std::vector<int32_t> ok = {1, 2, 3};
  expect_error([&] { embed_rows(std::span(table).first(table.size() - 1), ok, out, spec); },
               {"q8_0", "needs"});
  expect_error([&] { embed_rows(table, ok, out, {Format::Q8_0, n_vocab, 48}); }, {});
}

}  // namespace
}  // namespace blockq::twin
