// ONNX Runtime's block-quantized layout (MatMulNBits / GatherBlockQuantized):
// parameter checks, MatMulNBits tensor sizes, a hand-built matrix, the
// reference quantizer's error bounds (symmetric and asymmetric, 4 and 8 bits,
// partial last blocks), and conversion to and from the gather layout.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "quant/onnx.hpp"
#include "support/random.hpp"
#include "util/error.hpp"

namespace blockq {
namespace {

using testing_support::random_normal;

TEST(Onnx, BlockParams) {
  for (const uint32_t bs : {16u, 32u, 64u, 128u, 256u}) {
    EXPECT_NO_THROW(check_onnx_block_params(4, bs));
    EXPECT_NO_THROW(check_onnx_block_params(8, bs));
  }
  for (const uint32_t bits : {0u, 1u, 2u, 3u, 5u, 16u}) EXPECT_THROW(check_onnx_block_params(bits, 32), Error);
  for (const uint32_t bs : {0u, 1u, 8u, 24u, 48u, 100u}) EXPECT_THROW(check_onnx_block_params(4, bs), Error);
  const std::vector<float> x(64, 1.0f);
  EXPECT_THROW(onnx_quantize(x, 2, 32, 4, 24, OnnxQuantMode::Symmetric), Error);
  EXPECT_THROW(onnx_quantize(x, 2, 33, 4, 32, OnnxQuantMode::Symmetric), Error);  // x.size() != rows*cols
}

TEST(Onnx, MatMulNBitsTensorSizes) {
  // B [N][ceil(K/bs)][bs*bits/8], scales [N*ceil(K/bs)], zero_points
  // [N*ceil(ceil(K/bs)*bits/8)].
  const uint64_t N = 3, K = 100;
  const auto w = random_normal(N * K, 201);
  const auto m4 = onnx_quantize(w, N, K, 4, 32, OnnxQuantMode::Asymmetric);
  EXPECT_EQ(m4.blocks_per_row(), 4u);
  EXPECT_EQ(m4.data.size(), N * 4 * 16);
  EXPECT_EQ(m4.scales.size(), N * 4);
  ASSERT_TRUE(m4.zero_points);
  EXPECT_EQ(m4.zero_points->size(), N * 2);
  const auto m8 = onnx_quantize(w, N, K, 8, 64, OnnxQuantMode::Asymmetric);
  EXPECT_EQ(m8.data.size(), N * 2 * 64);
  EXPECT_EQ(m8.scales.size(), N * 2);
  EXPECT_EQ(m8.zero_points->size(), N * 2);
  const auto m3 = onnx_quantize(random_normal(2 * 48, 202), 2, 48, 4, 16, OnnxQuantMode::Asymmetric);
  EXPECT_EQ(m3.zp_row_bytes(), 2u);  // 3 blocks: the last high nibble is padding, left 0
  for (uint64_t r = 0; r < 2; ++r) EXPECT_EQ((*m3.zero_points)[2 * r + 1] >> 4, 0);
  const auto sym = onnx_quantize(w, N, K, 4, 32, OnnxQuantMode::Symmetric);
  EXPECT_FALSE(sym.zero_points);
  EXPECT_NO_THROW(sym.validate());
}

TEST(Onnx, HandBuiltMatrix) {
  // [2, 20], 4 bits, block 16: 2 blocks per row, 8-byte blobs, 1 zp byte per row.
  OnnxBlockMatrix m;
  m.bits = 4;
  m.block_size = 16;
  m.rows = 2;
  m.cols = 20;
  m.data.assign(32, 0x88);
  m.data[0] = 0x21;   // row 0: col 0 = 1, col 1 = 2
  m.data[8] = 0xf0;   // row 0: col 16 = 0, col 17 = 15
  m.data[17] = 0x5a;  // row 1: col 2 = 10, col 3 = 5
  m.scales = {0.5f, 2.0f, -1.0f, 0.25f};
  m.zero_points = std::vector<uint8_t>{0x93, 0x0f};  // row 0: zp 3, 9; row 1: zp 15, 0
  ASSERT_NO_THROW(m.validate());
  EXPECT_EQ(m.code(0, 17), 15u);
  EXPECT_EQ(m.zero_point(0, 1), 9u);
  std::vector<float> row(20);
  dequantize_row(m, 0, row);
  EXPECT_EQ(row[0], (1 - 3) * 0.5f);
  EXPECT_EQ(row[1], (2 - 3) * 0.5f);
  EXPECT_EQ(row[2], (8 - 3) * 0.5f);
  EXPECT_EQ(row[16], (0 - 9) * 2.0f);
  EXPECT_EQ(row[17], (15 - 9) * 2.0f);
  EXPECT_EQ(row[19], (8 - 9) * 2.0f);
  dequantize_row(m, 1, row);
  EXPECT_EQ(row[2], (10 - 15) * -1.0f);
  EXPECT_EQ(row[3], (5 - 15) * -1.0f);
  EXPECT_EQ(row[16], 8 * 0.25f);
  m.zero_points.reset();  // default zero point 8
  dequantize_row(m, 0, row);
  EXPECT_EQ(row[0], (1 - 8) * 0.5f);
  // 8 bits, block 16: one code per byte.
  OnnxBlockMatrix e{8, 16, 1, 16, std::vector<uint8_t>(16, 130), {0.5f}, std::nullopt};
  e.data[3] = 0;
  std::vector<float> r8(16);
  dequantize_row(e, 0, r8);
  EXPECT_EQ(r8[0], 1.0f);     // (130 - 128) * 0.5
  EXPECT_EQ(r8[3], -64.0f);   // (0 - 128) * 0.5
}

TEST(Onnx, ValidateNamesBadSizes) {
  const auto good = onnx_quantize(random_normal(4 * 64, 203), 4, 64, 4, 32, OnnxQuantMode::Asymmetric);
  auto short_data = good;
  short_data.data.pop_back();
  EXPECT_THROW(short_data.validate(), Error);
  auto extra_scale = good;
  extra_scale.scales.push_back(1.0f);
  EXPECT_THROW(extra_scale.validate(), Error);
  auto extra_zp = good;
  extra_zp.zero_points = std::vector<uint8_t>(good.zero_points->size() + 1);
  EXPECT_THROW(extra_zp.validate(), Error);
  auto m = good;
  m.block_size = 48;
  EXPECT_THROW(m.validate(), Error);
  EXPECT_THROW(dequantize(m), Error);
  std::vector<float> row(64), short_row(63);
  EXPECT_THROW(dequantize_row(good, 4, row), Error);
  EXPECT_THROW(dequantize_row(good, 0, short_row), Error);
}

TEST(Onnx, SymmetricQuantizerByHand) {
  std::vector<float> x(16, 1.0f);
  const float head[] = {-8, -4, 0, 4, 7, 8, 0.4f, 0.6f};
  std::copy(std::begin(head), std::end(head), x.begin());
  const auto m = onnx_quantize(x, 1, 16, 4, 16, OnnxQuantMode::Symmetric);
  EXPECT_EQ(m.scales[0], 1.0f);  // -8 / -8: the first element of largest magnitude
  const uint32_t want[] = {0, 4, 8, 12, 15, 15, 8, 9};  // 8 clamps to 15
  for (int i = 0; i < 8; ++i) EXPECT_EQ(m.code(0, i), want[i]) << i;
}

TEST(Onnx, QuantizerErrorBounds) {
  struct Case {
    uint32_t bits, block;
    OnnxQuantMode mode;
    double rms;
  };
  const uint64_t rows = 7;
  for (const uint64_t cols : {uint64_t{256}, uint64_t{100}, uint64_t{17}}) {
    for (const auto& c : {Case{4, 32, OnnxQuantMode::Symmetric, 0.11}, Case{4, 16, OnnxQuantMode::Asymmetric, 0.09},
                          Case{8, 64, OnnxQuantMode::Symmetric, 0.009}, Case{8, 128, OnnxQuantMode::Asymmetric, 0.009}}) {
      auto x = random_normal(rows * cols, 204);
      for (uint64_t i = 0; i < x.size(); ++i) x[i] *= static_cast<float>(1 + i % 5);
      const auto m = onnx_quantize(x, rows, cols, c.bits, c.block, c.mode);
      ASSERT_NO_THROW(m.validate());
      std::vector<float> y = dequantize(m);
      ASSERT_EQ(y.size(), x.size());
      EXPECT_LE(testing_support::rms_rel_err(y, x), c.rms) << c.bits << " bits, cols " << cols;
      for (uint64_t r = 0; r < rows; ++r) {
        for (uint64_t col = 0; col < cols; ++col) {
          const float scale = std::fabs(m.scales[r * m.blocks_per_row() + col / c.block]);
          // Half a step, or one step at a clamped end (symmetric top level,
          // asymmetric with a rounded zero point).
          ASSERT_LE(std::fabs(x[r * cols + col] - y[r * cols + col]), scale * 1.0001f) << r << "," << col;
        }
        // Padding codes of a partial block equal its zero point.
        for (uint64_t col = cols; col < m.blocks_per_row() * c.block; ++col) {
          ASSERT_EQ(m.code(r, col), m.zero_point(r, m.blocks_per_row() - 1));
        }
      }
    }
  }
}

TEST(Onnx, ExplicitDefaultZeroPointsChangeNothing) {
  const auto x = random_normal(5 * 80, 205);
  for (const uint32_t bits : {4u, 8u}) {
    const auto a = onnx_quantize(x, 5, 80, bits, 32, OnnxQuantMode::Symmetric);
    const auto b = onnx_quantize(x, 5, 80, bits, 32, OnnxQuantMode::Symmetric, true);
    ASSERT_TRUE(b.zero_points);
    for (uint64_t r = 0; r < 5; ++r) {
      for (uint64_t k = 0; k < b.blocks_per_row(); ++k) EXPECT_EQ(b.zero_point(r, k), 1u << (bits - 1));
    }
    EXPECT_EQ(a.data, b.data);
    EXPECT_EQ(dequantize(a), dequantize(b));
  }
}

TEST(Onnx, AsymmetricUsesTheRange) {
  // All-positive data: the range [0, max] gives zero point 0.
  auto x = testing_support::random_floats(64, 206, 1.0f, 2.0f);
  const auto m = onnx_quantize(x, 1, 64, 4, 64, OnnxQuantMode::Asymmetric);
  EXPECT_EQ(m.zero_point(0, 0), 0u);
  float hi = 0;
  for (const float v : x) hi = std::max(hi, v);
  EXPECT_FLOAT_EQ(m.scales[0], hi / 15);
}

TEST(Onnx, GatherLayout) {
  for (const uint64_t cols : {uint64_t{64}, uint64_t{100}}) {
    for (const uint32_t bits : {4u, 8u}) {
      const auto m = onnx_quantize(random_normal(3 * cols, 207), 3, cols, bits, 32, OnnxQuantMode::Asymmetric);
      const auto g = to_gather_data(m);
      ASSERT_EQ(g.size(), 3 * cols * bits / 8);
      const auto back = from_gather_data(bits, 32, 3, cols, g, m.scales, std::span<const uint8_t>(*m.zero_points));
      EXPECT_EQ(back.data, m.data) << cols << " cols, " << bits << " bits";
      EXPECT_EQ(dequantize(back), dequantize(m));
      if (cols % 32 == 0) {
        EXPECT_EQ(g, m.data);
      }
    }
  }
  const auto odd = onnx_quantize(random_normal(2 * 33, 208), 2, 33, 4, 32, OnnxQuantMode::Symmetric);
  EXPECT_THROW(to_gather_data(odd), Error);  // 33 four-bit codes are not whole bytes
  const std::vector<uint8_t> data(2 * 32);
  const std::vector<float> scales(2 * 2);
  EXPECT_THROW(from_gather_data(4, 32, 2, 64, std::span<const uint8_t>(data).first(63), scales, std::nullopt), Error);
  EXPECT_THROW(from_gather_data(4, 32, 2, 64, data, std::span<const float>(scales).first(3), std::nullopt), Error);
  EXPECT_NO_THROW(from_gather_data(4, 32, 2, 64, data, scales, std::nullopt));
}

}  // namespace
}  // namespace blockq
