// ONNX Runtime's block-quantized layout (MatMulNBits / GatherBlockQuantized):
// validation, code access, the reference quantizer and the dequantizers.
#include "quant/onnx.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "util/error.hpp"

#include "quant/no_fma.hpp"  // last: it applies to the code below

namespace blockq {
namespace {

uint64_t checked_mul(uint64_t a, uint64_t b, const char* what) {
  BQ_CHECK(b == 0 || a <= std::numeric_limits<uint64_t>::max() / b, "onnx block matrix: {} overflows", what);
  return a * b;
}

void set_code(OnnxBlockMatrix& m, uint64_t row, uint64_t col, uint32_t code) {
  if (m.bits == 8) {
    m.data[row * m.row_data_bytes() + col] = static_cast<uint8_t>(code);
  } else {
    uint8_t& byte = m.data[row * m.row_data_bytes() + col / 2];
    const int shift = (col % 2) ? 4 : 0;
    byte = static_cast<uint8_t>((byte & ~(0xf << shift)) | ((code & 0xf) << shift));
  }
}

void set_zero_point(OnnxBlockMatrix& m, uint64_t row, uint64_t block, uint32_t zp) {
  auto& zps = *m.zero_points;
  if (m.bits == 8) {
    zps[row * m.zp_row_bytes() + block] = static_cast<uint8_t>(zp);
  } else {
    uint8_t& byte = zps[row * m.zp_row_bytes() + block / 2];
    const int shift = (block % 2) ? 4 : 0;
    byte = static_cast<uint8_t>((byte & ~(0xf << shift)) | ((zp & 0xf) << shift));
  }
}

// round(v) clamped to [0, max_code]; NaN gives 0.
uint32_t clamp_code(float v, uint32_t max_code) {
  const float r = std::round(v);
  if (r >= static_cast<float>(max_code)) return max_code;
  if (r > 0) return static_cast<uint32_t>(r);
  return 0;
}

}  // namespace

void check_onnx_block_params(uint32_t bits, uint32_t block_size) {
  BQ_CHECK(bits == 4 || bits == 8, "onnx block matrix: bits must be 4 or 8, got {}", bits);
  BQ_CHECK(block_size >= 16 && (block_size & (block_size - 1)) == 0,
           "onnx block matrix: block_size must be a power of two >= 16, got {}", block_size);
}

void OnnxBlockMatrix::validate() const {
  check_onnx_block_params(bits, block_size);
  checked_mul(rows, cols, "rows * cols");
  const uint64_t nblocks = checked_mul(rows, blocks_per_row(), "rows * blocks");
  const uint64_t data_bytes = checked_mul(rows, row_data_bytes(), "data size");
  BQ_CHECK(data.size() == data_bytes,
           "onnx block matrix [{}, {}] bits {} block_size {}: data has {} bytes, expected {}", rows, cols,
           bits, block_size, data.size(), data_bytes);
  BQ_CHECK(scales.size() == nblocks, "onnx block matrix [{}, {}] block_size {}: {} scales, expected {}", rows,
           cols, block_size, scales.size(), nblocks);
  if (zero_points) {
    const uint64_t zp_bytes = checked_mul(rows, zp_row_bytes(), "zero point size");
    BQ_CHECK(zero_points->size() == zp_bytes,
             "onnx block matrix [{}, {}] bits {} block_size {}: zero_points has {} bytes, expected {}", rows,
             cols, bits, block_size, zero_points->size(), zp_bytes);
  }
}

uint32_t OnnxBlockMatrix::code(uint64_t row, uint64_t col) const {
  if (bits == 8) return data[row * row_data_bytes() + col];
  const uint8_t byte = data[row * row_data_bytes() + col / 2];
  return (col % 2) ? (byte >> 4) : (byte & 0xf);
}

uint32_t OnnxBlockMatrix::zero_point(uint64_t row, uint64_t block) const {
  if (!zero_points) return default_zero_point();
  if (bits == 8) return (*zero_points)[row * zp_row_bytes() + block];
  const uint8_t byte = (*zero_points)[row * zp_row_bytes() + block / 2];
  return (block % 2) ? (byte >> 4) : (byte & 0xf);
}

OnnxBlockMatrix onnx_quantize(std::span<const float> x, uint64_t rows, uint64_t cols, uint32_t bits,
                              uint32_t block_size, OnnxQuantMode mode, bool explicit_zero_points) {
  check_onnx_block_params(bits, block_size);
  BQ_CHECK(x.size() == checked_mul(rows, cols, "rows * cols"),
           "onnx_quantize: {} floats for a [{}, {}] matrix", x.size(), rows, cols);
  OnnxBlockMatrix m;
  m.bits = bits;
  m.block_size = block_size;
  m.rows = rows;
  m.cols = cols;
  m.data.assign(checked_mul(rows, m.row_data_bytes(), "data size"), 0);
  m.scales.assign(rows * m.blocks_per_row(), 0.0f);
  const bool store_zp = mode == OnnxQuantMode::Asymmetric || explicit_zero_points;
  if (store_zp) m.zero_points.emplace(rows * m.zp_row_bytes(), uint8_t{0});
  const uint32_t max_code = m.max_code();

  for (uint64_t r = 0; r < rows; ++r) {
    for (uint64_t b = 0; b < m.blocks_per_row(); ++b) {
      const uint64_t start = b * block_size;
      const uint64_t len = std::min<uint64_t>(block_size, cols - start);
      const float* v = x.data() + r * cols + start;
      float scale = 0.0f;
      uint32_t zp = m.default_zero_point();
      if (mode == OnnxQuantMode::Symmetric) {
        float amax = 0.0f, vmax = 0.0f;  // the element of largest magnitude, signed
        for (uint64_t i = 0; i < len; ++i) {
          if (amax < std::fabs(v[i])) {
            amax = std::fabs(v[i]);
            vmax = v[i];
          }
        }
        scale = vmax / -static_cast<float>(m.default_zero_point());
      } else {
        float lo = 0.0f, hi = 0.0f;  // the range always includes 0
        for (uint64_t i = 0; i < len; ++i) {
          lo = std::min(lo, v[i]);
          hi = std::max(hi, v[i]);
        }
        scale = (hi - lo) / static_cast<float>(max_code);
        zp = scale != 0.0f ? clamp_code(-lo / scale, max_code) : 0;
      }
      const float inv = scale != 0.0f ? 1.0f / scale : 0.0f;
      m.scales[r * m.blocks_per_row() + b] = scale;
      if (store_zp) set_zero_point(m, r, b, zp);
      for (uint64_t i = 0; i < block_size; ++i) {
        const uint32_t c = i < len ? clamp_code(v[i] * inv + static_cast<float>(zp), max_code) : zp;
        set_code(m, r, start + i, c);
      }
    }
  }
  return m;
}

void dequantize_row(const OnnxBlockMatrix& m, uint64_t row, std::span<float> out) {
  BQ_CHECK(row < m.rows, "onnx dequantize_row: row {} of {}", row, m.rows);
  BQ_CHECK(out.size() == m.cols, "onnx dequantize_row: output has {} floats, the row {}", out.size(), m.cols);
  const uint64_t nb = m.blocks_per_row();
  for (uint64_t b = 0; b < nb; ++b) {
    const float scale = m.scales[row * nb + b];
    const int zp = static_cast<int>(m.zero_point(row, b));
    const uint64_t end = std::min<uint64_t>(m.cols, (b + 1) * m.block_size);
    for (uint64_t c = b * m.block_size; c < end; ++c) {
      out[c] = static_cast<float>(static_cast<int>(m.code(row, c)) - zp) * scale;
    }
  }
}

std::vector<float> dequantize(const OnnxBlockMatrix& m) {
  m.validate();
  std::vector<float> out(m.rows * m.cols);
  for (uint64_t r = 0; r < m.rows; ++r) {
    dequantize_row(m, r, std::span<float>(out).subspan(r * m.cols, m.cols));
  }
  return out;
}

std::vector<uint8_t> to_gather_data(const OnnxBlockMatrix& m) {
  m.validate();
  BQ_CHECK(m.cols * m.bits % 8 == 0, "onnx gather data: {} columns of {} bits is not whole bytes", m.cols,
           m.bits);
  const uint64_t row_bytes = m.cols * m.bits / 8;
  std::vector<uint8_t> out(m.rows * row_bytes);
  for (uint64_t r = 0; r < m.rows; ++r) {
    std::copy_n(m.data.begin() + static_cast<ptrdiff_t>(r * m.row_data_bytes()), row_bytes,
                out.begin() + static_cast<ptrdiff_t>(r * row_bytes));
  }
  return out;
}

OnnxBlockMatrix from_gather_data(uint32_t bits, uint32_t block_size, uint64_t rows, uint64_t cols,
                                 std::span<const uint8_t> data, std::span<const float> scales,
                                 std::optional<std::span<const uint8_t>> zero_points) {
  check_onnx_block_params(bits, block_size);
  BQ_CHECK(cols * bits % 8 == 0, "onnx gather data: {} columns of {} bits is not whole bytes", cols, bits);
  const uint64_t row_bytes = cols * bits / 8;
  BQ_CHECK(data.size() == checked_mul(rows, row_bytes, "data size"),
           "onnx gather data [{}, {}] bits {}: {} bytes, expected {}", rows, cols, bits, data.size(),
           rows * row_bytes);
  OnnxBlockMatrix m;
  m.bits = bits;
  m.block_size = block_size;
  m.rows = rows;
  m.cols = cols;
  m.scales.assign(scales.begin(), scales.end());
  if (zero_points) m.zero_points.emplace(zero_points->begin(), zero_points->end());
  m.data.assign(checked_mul(rows, m.row_data_bytes(), "data size"), 0);
  m.validate();
  for (uint64_t r = 0; r < rows; ++r) {
    std::copy_n(data.begin() + static_cast<ptrdiff_t>(r * row_bytes), row_bytes,
                m.data.begin() + static_cast<ptrdiff_t>(r * m.row_data_bytes()));
    const uint64_t last = m.blocks_per_row() - 1;
    for (uint64_t c = cols; c < m.blocks_per_row() * block_size; ++c) set_code(m, r, c, m.zero_point(r, last));
  }
  return m;
}

}  // namespace blockq
