// The int8-activation path of the matvec generator: which formats it reads
// (the integer ggml formats and 4-bit MatMulNBits),
// and the lane step over int8 x codes (x staged by stage_i8.wgsl: xq codes
// [TOKENS][TILE / 16] vec4<u32>, xd scales [TOKENS][TILE / 32], xsum code sums
// [TOKENS][TILE / 16]).
#include "kernels/matvec/lane_step.hpp"

#include <fmt/format.h>

#include <vector>

#include "kernels/matvec/generator.hpp"
#include "util/error.hpp"

namespace blockq::matvec {

bool int8_supported(const WeightKind& kind) {
  if (kind.onnx) return kind.bits == 4;  // 8-bit units hold 16 elements, half an x block
  switch (kind.format) {
    case Format::Q8_0: case Format::Q4_0: case Format::Q4_1: case Format::Q5_0: case Format::Q5_1:
    case Format::Q4_K: case Format::Q5_K: case Format::Q6_K: return true;
    default: return false;
  }
}

namespace detail {

// The int8-activation form of the step (features.dot4): per scale group, the
// products of weight and x codes are summed exactly in i32 by dot4I8Packed,
// the code offset times the group's x code sum is taken off, and the token's
// accumulator gets (scale * x scale) * f32(sum), then (min * x scale) *
// f32(x code sum) for formats with a min.
std::string unit_loop_i8(const KernelSpec& s, const UnitInfo& ui) {
  const std::vector<std::string> ws = weight_names(s);
  BQ_ASSERT(ui.group == 16 || ui.group == 32, "int8 path: scale groups of {}", ui.group);
  const uint32_t gch = ui.group / 8;
  const auto& un = unit_name;
  // x reads: the staged arrays, or (timing probe GlobalX) accessors of the
  // same indices in global memory.
  const bool gx = probe_of(s) == Probe::GlobalX;
  auto rd = [&](const char* arr, const std::string& idx) {
    return gx ? fmt::format("{}g({})", arr, idx) : fmt::format("{}[{}]", arr, idx);
  };
  std::string o = unit_loads(s);
  for (uint32_t j = 0; j < s.unroll; ++j) {
    o += fmt::format("        if (uu{0} < u1) {{\n", j);
    o += fmt::format("          let xb = (uu{0} - u0) * (UNIT / 16u);  // the unit's first vec4 in xq\n", j);
    o += fmt::format("          let db = (uu{0} - u0) * (UNIT / 32u);  // its first block in xd\n", j);
    for (uint32_t g = 0; g < ui.groups(); ++g) {
      const uint32_t c0 = g * gch;
      for (uint32_t c = c0; c < c0 + gch; ++c)
        for (uint32_t i = 0; i < s.rpl; ++i)
          for (const auto& w : ws)
            o += fmt::format("          let w{0}{1}r{2} = ichunk{1}({3}, {0}u);\n", c, w, i, un(j, w, i));
      for (uint32_t i = 0; i < s.rpl; ++i)
        for (const auto& w : ws) {
          o += fmt::format("          let sc{0}{1}r{2} = scale{1}({3}, {0}u);\n", g, w, i, un(j, w, i));
          o += fmt::format("          let of{0}{1}r{2} = ioff{1}({3}, {0}u);\n", g, w, i, un(j, w, i));
          if (ui.has_min) o += fmt::format("          let mn{0}{1}r{2} = min{1}({3}, {0}u);\n", g, w, i, un(j, w, i));
        }
      const uint32_t e0 = g * ui.group;  // the group's first element in the unit
      for (uint32_t t = 0; t < s.tokens; ++t) {
        for (uint32_t c = c0; c < c0 + gch; c += 2)
          o += fmt::format("          let xv{0}_{1} = {2};\n", c / 2, t,
                           rd("xq", fmt::format("{}u * TB * 2u + xb + {}u", t, c / 2)));
        if (ui.group == 32)
          o += fmt::format("          let sq{0}_{1} = {2} + {3};\n", g, t,
                           rd("xsum", fmt::format("2u * ({}u * TB + db) + {}u", t, e0 / 16)),
                           rd("xsum", fmt::format("2u * ({}u * TB + db) + {}u", t, e0 / 16 + 1)));
        else
          o += fmt::format("          let sq{0}_{1} = {2};\n", g, t,
                           rd("xsum", fmt::format("2u * ({}u * TB + db) + {}u", t, e0 / 16)));
        o += fmt::format("          let dx{0}_{1} = {2};\n", g, t, rd("xd", fmt::format("{}u * TB + db + {}u", t, e0 / 32)));
        for (uint32_t i = 0; i < s.rpl; ++i)
          for (const auto& w : ws) {
            const std::string wr = w + "r" + std::to_string(i);
            std::string dot;
            for (uint32_t c = c0; c < c0 + gch; ++c) {
              const uint32_t h = (c % 2) * 2;
              dot += fmt::format("{0}dot4I8Packed(w{1}{2}.x, xv{3}_{4}[{5}u]) + dot4I8Packed(w{1}{2}.y, xv{3}_{4}[{6}u])",
                                 c == c0 ? "" : " + ", c, wr, c / 2, t, h, h + 1);
            }
            const std::string iv = fmt::format("i{}{}_{}", wr, g, t);
            o += fmt::format("          let {} = ({}) - of{}{} * sq{}_{};\n", iv, dot, g, wr, g, t);
            o += fmt::format("          {0} = {0} + (sc{1}{2} * dx{1}_{3}) * f32({4});\n", acc(w, t, i), g, wr, t, iv);
            if (ui.has_min)
              o += fmt::format("          {0} = {0} + (mn{1}{2} * dx{1}_{3}) * f32(sq{1}_{3});\n", acc(w, t, i), g, wr, t);
          }
      }
    }
    o += "        }\n";
  }
  return o;
}

}  // namespace detail

}  // namespace blockq::matvec
