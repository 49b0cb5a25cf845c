// The matvec kernel's weight layout per format: W [n rows, k cols] repacked
// into a `main` array of vec4<u32> (quant data, 16-byte aligned loads) and a
// `side` array of u32 (scales, high bits, zero points), row chunk by row
// chunk. Units (the elements a lane decodes per step) are described here too.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/common/spec.hpp"
#include "quant/onnx.hpp"

namespace blockq::matvec {

// A weight as it arrives on the host: raw ggml rows, or an ONNX matrix.
struct HostWeight {
  WeightKind kind;
  uint32_t n = 0;                      // rows
  uint32_t k = 0;                      // columns (the reduction length)
  std::span<const uint8_t> ggml;       // n * row_bytes(format, k) bytes
  const OnnxBlockMatrix* onnx = nullptr;
};

struct UnitInfo {
  uint32_t unit;    // elements per unit (a multiple of 8)
  uint32_t chunks;  // unit / 8
  uint32_t kp;      // k padded to whole units
  bool has_side;    // the format uses a side array
  // Elements per scale group (a multiple of 8 dividing unit): the kernel sums
  // the raw codes times x over a group, then multiplies by the group's scale
  // once. 0 for the float formats, which have no scale.
  uint32_t group = 0;
  bool has_min = false;  // y = scale * q + min: the kernel adds min * sum(x) per group
  uint32_t groups() const { return group ? unit / group : 0; }
};
UnitInfo unit_info(const WeightKind& kind, uint32_t k);

// Rows [row0, row0 + rows) of w in the kernel's layout.
struct Packed {
  std::vector<uint32_t> main;  // a multiple of 4 words
  std::vector<uint32_t> side;  // may be empty
  uint32_t side_off = 0;       // word offset of the side's second section
};
Packed pack_rows(const HostWeight& w, uint32_t row0, uint32_t rows);

// Word offset of the side's second section for `rows` rows (it is a
// compile-time constant of the kernel, so chunks share one value when their
// row counts match).
uint32_t side_offset(const WeightKind& kind, uint32_t k, uint32_t rows);

// Bytes per row of each array (for chunk sizing and bandwidth accounting).
struct RowBytes {
  double main, side;
};
RowBytes row_bytes(const WeightKind& kind, uint32_t k);

// Checks that the weight's description is usable (format supported by
// matvec, k a multiple of the block, byte sizes), throwing blockq::Error.
void validate(const HostWeight& w);

}  // namespace blockq::matvec
