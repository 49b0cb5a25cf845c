// The block-quantized weight layout of ONNX Runtime's contrib ops
// com.microsoft.MatMulNBits (input B) and com.microsoft.GatherBlockQuantized
// (input data): a [rows, cols] matrix quantized along cols in blocks of
// block_size, x = (code - zero_point) * scale, with a reference quantizer.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace blockq {

// A [rows, cols] matrix in MatMulNBits' layout (rows = N, cols = K):
//   data        uint8 [rows][blocks_per_row][block_size * bits / 8]; codes
//               run along cols, 4-bit codes two per byte, low nibble first.
//               The last block of a row is padded to block_size codes when
//               cols is not a multiple of block_size.
//   scales      f32 [rows][blocks_per_row]
//   zero_points uint8 [rows][zp_row_bytes]: 4-bit zero points two per byte,
//               low nibble first (a row with an odd block count leaves the
//               last high nibble 0); 8-bit one per byte. Absent: every zero
//               point is 2^(bits-1).
// GatherBlockQuantized uses the same scales and zero points, with data rows of
// exactly cols * bits / 8 bytes (see to_gather_data / from_gather_data).
struct OnnxBlockMatrix {
  uint32_t bits = 4;         // 4 or 8
  uint32_t block_size = 32;  // a power of two >= 16
  uint64_t rows = 0;
  uint64_t cols = 0;
  std::vector<uint8_t> data;
  std::vector<float> scales;
  std::optional<std::vector<uint8_t>> zero_points;

  uint64_t blocks_per_row() const { return (cols + block_size - 1) / block_size; }
  uint64_t blob_bytes() const { return uint64_t{block_size} * bits / 8; }
  uint64_t row_data_bytes() const { return blocks_per_row() * blob_bytes(); }
  uint64_t zp_row_bytes() const { return (blocks_per_row() * bits + 7) / 8; }
  uint32_t default_zero_point() const { return 1u << (bits - 1); }
  uint32_t max_code() const { return (1u << bits) - 1; }

  // Throws blockq::Error naming what is wrong: bits, block_size, or a vector
  // whose size does not match the shape.
  void validate() const;
  // Code of element (row, col), col < blocks_per_row * block_size (padding
  // included), and the zero point of block `block` of `row`. Unchecked.
  uint32_t code(uint64_t row, uint64_t col) const;
  uint32_t zero_point(uint64_t row, uint64_t block) const;
};

// Throws blockq::Error unless bits is 4 or 8 and block_size a power of two >= 16.
void check_onnx_block_params(uint32_t bits, uint32_t block_size);

enum class OnnxQuantMode {
  Symmetric,   // scale = signed absmax / -2^(bits-1), zero point 2^(bits-1)
  Asymmetric,  // scale = (max(hi,0) - min(lo,0)) / (2^bits - 1), zero point round(-min/scale)
};

// Quantizes x [rows, cols] (row-major) along cols: per block (the valid
// elements of a partial last block only), code = clamp(round(x / scale + zp),
// 0, 2^bits - 1), round half away from zero. Padding codes are the block's
// zero point (they dequantize to 0). Symmetric mode stores no zero points
// unless explicit_zero_points; asymmetric mode always stores them.
OnnxBlockMatrix onnx_quantize(std::span<const float> x, uint64_t rows, uint64_t cols, uint32_t bits,
                              uint32_t block_size, OnnxQuantMode mode,
                              bool explicit_zero_points = false);

// Row `row` as cols floats: out[c] = (code - zero_point) * scale. Throws
// blockq::Error if row >= rows or out.size() != cols.
void dequantize_row(const OnnxBlockMatrix& m, uint64_t row, std::span<float> out);
// The whole matrix, [rows, cols] row-major.
std::vector<float> dequantize(const OnnxBlockMatrix& m);

// GatherBlockQuantized's data: [rows][cols * bits / 8] (no block padding);
// throws blockq::Error if cols * bits is not a multiple of 8.
std::vector<uint8_t> to_gather_data(const OnnxBlockMatrix& m);
// The matrix from GatherBlockQuantized's inputs (padding codes become each
// block's zero point); validates every size.
OnnxBlockMatrix from_gather_data(uint32_t bits, uint32_t block_size, uint64_t rows, uint64_t cols,
                                 std::span<const uint8_t> data, std::span<const float> scales,
                                 std::optional<std::span<const uint8_t>> zero_points);

}  // namespace blockq
