// CPU twins of the gather kernels and their float64 references:
// (a) com.microsoft.GatherBlockQuantized (ONNX Runtime contrib op) on uint8
//     block-quantized data, f32 or f16 output;
// (b) embedding lookup: rows of a ggml-format [n_vocab, n_embd] table by token id.
//
// (a) Block decode, per output element o = (m, n, k) of the output viewed as
// [outer, n_indices, inner] (outer = prod data dims before gather_axis, inner =
// prod logical data dims after it; the last data dim holds 8/bits values per
// byte, so its logical size is cols = data_shape[r-1] * 8/bits):
//   idx   = indices[n]; idx < 0 ? idx + axis_dim : idx   (outside [-axis_dim, axis_dim): Error)
//   e     = (m * axis_dim + idx) * inner + k              (logical element of data)
//   row   = e / cols, col = e % cols, blk = col / block_size
//   q     = bits 8: data[e]; 4: (data[e/2] >> 4*(e%2)) & 15; 2: (data[e/4] >> 2*(e%4)) & 3
//           (low bits first)
//   zp    = zero_points given: bits 8: zp[row*n_blocks + blk]; bits 4/2: value blk of row
//           `row` of zp, packed like data (per row: ceil(n_blocks*bits/8) bytes);
//           else 2^(bits-1)
//   y     = (float)(q - zp) * scales[row*n_blocks + blk]   (exact int difference, one f32 product)
//   y_f16 = f32_to_f16(y)   (round to nearest even, as WGSL pack2x16float on an exact f32)
// n_blocks = ceil(cols / block_size): the last block of a row may be partial.
// No reduction: the result does not depend on the dispatch.
//
// (b) Row t of the output is traits(format).dequantize of the table row ids[t]
// (the block decode of src/quant, which the WGSL decode snippets mirror).
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "quant/format.hpp"

namespace blockq::twin {

using Shape = std::vector<int64_t>;
using IndexSpan = std::variant<std::span<const int32_t>, std::span<const int64_t>>;

// The op's attributes, with ONNX Runtime's defaults.
struct GbqSpec {
  uint32_t bits = 4;          // 2, 4 or 8 bits per value in the uint8 data
  uint32_t block_size = 128;  // power of two >= 16, along quantize_axis
  int64_t gather_axis = 0;    // in [-r, r-1]; any axis but the quantized one
  int64_t quantize_axis = 1;  // in [-r, r-1]; must resolve to r-1 (uint8 data packs the last axis)
};

// The op's inputs. Shapes are ONNX shapes; data's last dim counts bytes.
struct GbqInputs {
  std::span<const uint8_t> data;  // data_shape, r >= 2
  Shape data_shape;
  IndexSpan indices;  // indices_shape, any rank ({} = a scalar)
  Shape indices_shape;
  std::span<const float> scales;  // data_shape[:-1] + [n_blocks]
  Shape scales_shape;
  std::span<const uint8_t> zero_points;  // optional (empty = absent): data_shape[:-1] +
  Shape zero_points_shape;               //   [n_blocks] (bits 8) or [ceil(n_blocks*bits/8)]
};

// Validated geometry of one call.
struct GbqPlan {
  Shape out_shape;  // data_shape[:g] + indices_shape + logical data_shape[g+1:]
  int64_t gather_axis = 0;
  int64_t outer = 0, axis_dim = 0, inner = 0, n_indices = 0;
  int64_t cols = 0, n_blocks = 0, zp_row_bytes = 0;
  size_t out_elems = 0;
};

// Checks the inputs and attributes (blockq::Error naming the problem) and
// returns the geometry. Indices are checked by the gathers themselves.
GbqPlan gbq_plan(const GbqInputs& in, const GbqSpec& spec);

// out: plan.out_elems values in out_shape order. An index outside
// [-axis_dim, axis_dim) throws blockq::Error naming its value, flat position and
// coordinates, before anything is written. (ONNX Runtime's own kernels write
// zeros for such an index instead.)
void gather_block_quantized(const GbqInputs& in, const GbqSpec& spec, std::span<float> out);
void gather_block_quantized_f16(const GbqInputs& in, const GbqSpec& spec, std::span<uint16_t> out);
// Float64 reference: (q - zp) * scale in double (exact).
void gather_block_quantized_ref(const GbqInputs& in, const GbqSpec& spec, std::span<double> out);

// (b) Embedding table: n_vocab rows of n_embd elements, each row
// row_bytes(format, n_embd) bytes (n_embd a multiple of the block size).
struct EmbedSpec {
  Format format = Format::F32;
  uint64_t n_vocab = 0;
  uint64_t n_embd = 0;
};

// out: [ids.size(), n_embd]. An id outside [0, n_vocab) throws blockq::Error
// naming the id and its position, before anything is written.
void embed_rows(std::span<const uint8_t> table, std::span<const int32_t> ids, std::span<float> out,
                const EmbedSpec& spec);
// Float64 reference with its own decode of each format's blocks (from ggml's
// layouts, f16 fields read exactly). mag, if not empty ([ids.size(), n_embd]),
// gets the sum of |terms| of each value (|d*q| + |m| for the offset formats),
// the scale of its f32 rounding error.
void embed_rows_ref(std::span<const uint8_t> table, std::span<const int32_t> ids,
                    std::span<double> out, const EmbedSpec& spec, std::span<double> mag = {});

}  // namespace blockq::twin
