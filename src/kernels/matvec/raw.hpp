// The matvec twin's block decode: each weight element as the raw code the
// kernel's chunk functions produce (q, or q minus a constant offset or zero
// point, exact in f32), with the scale and min of each scale group, computed
// in f32 the way the fmt/*.wgsl snippets compute them.
#pragma once
#include <cstdint>
#include <vector>

#include "kernels/matvec/layout.hpp"

namespace blockq::matvec {

// Rows [row0, row0 + rows) of w. Per row, kp codes (padding codes 0), and for
// scaled formats (unit_info(...).group > 0) kp / group scales and, for
// formats with a min, kp / group mins, so that the element is
// scale * code + min. Float formats give their values in `code`, no scales.
struct RawRows {
  std::vector<float> code;   // [rows][kp]
  std::vector<float> scale;  // [rows][kp / group], empty for float formats
  std::vector<float> min;    // [rows][kp / group], empty without a min
};
RawRows raw_rows(const HostWeight& w, uint32_t row0, uint32_t rows);

}  // namespace blockq::matvec
