// The int8-activation path of the matvec generator: which formats it reads
// (the integer ggml formats and 4-bit MatMulNBits),
// and the lane step over int8 x codes (x staged by stage_i8.wgsl as xblk
// [TOKENS][TILE / 32] blocks of two code vec4<u32> and a meta vec4; or,
// x_prequantized, read from the quantize kernel's output in global memory,
// xquant.wgsl, whose codes and meta are the same words).
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
    case Format::Q4_K: case Format::Q5_K: case Format::Q6_K: case Format::Q2_K: case Format::Q3_K:
    case Format::IQ4_NL: case Format::IQ4_XS: return true;
    default: return false;
  }
}

uint64_t int8_min_elements(const WeightKind& kind) {
  if (kind.onnx) return kInt8MinElements;
  switch (kind.format) {
    case Format::Q4_0: case Format::Q4_1: case Format::Q5_0: case Format::Q5_1:
    case Format::Q4_K: case Format::Q5_K: case Format::Q8_0: case Format::Q2_K: case Format::Q3_K:
    case Format::Q6_K: return kInt8MinElementsQuad;
    default: return kInt8MinElements;
  }
}

bool int8_by_default(const Limits& lim, const WeightKind& kind, uint32_t n, uint32_t k,
                     std::optional<uint64_t> min_elements) {
  return lim.dot4 && int8_supported(kind) && uint64_t{n} * k >= min_elements.value_or(int8_min_elements(kind));
}

namespace detail {

// The int8-activation form of the step (features.dot4): per scale group, the
// products of weight and x codes are summed exactly in i32 by dot4I8Packed,
// the code offset times the group's x code sum is taken off, and the token's
// accumulator gets (scale * x scale) * f32(sum), then min * (x scale *
// f32(x code sum)) for formats with a min (the bracket once per block and
// token for all the lane's rows; session 45, H100, batch 8: q5_K 14336 x
// 4096 34.3 -> 33.4 us, q2_K 4096 x 14336 29.9 -> 29.4, q4_1 14336 x 4096
// 26.1 -> 25.5, but q4_1 4096 x 14336 29.4 -> 29.8; q4_K unchanged). With
// kBiasedSum the sum starts at 0x4B400000 and f32(sum) is its bits as a
// float less 12582912.
std::string unit_loop_i8(const KernelSpec& s, const UnitInfo& ui) {
  const std::vector<std::string> ws = weight_names(s);
  BQ_ASSERT(ui.group == 16 || ui.group == 32, "int8 path: scale groups of {}", ui.group);
  const uint32_t gch = ui.group / 8;
  const auto& un = unit_name;
  // kBiasedSum: a group's sum is at most 32 * 255 * 127 + 255 * 32 * 127 in
  // magnitude (codes, offset times x code sum), under 2^22, so 0x4B400000 +
  // sum is the float 12582912 + sum exactly.
  const bool biased = (s.variant & kBiasedSum) != 0;
  // x reads: the staged arrays; or (timing probe GlobalX) accessors of the
  // same indices in global memory; or (x_prequantized) the quantize
  // kernel's codes and meta (xquant.wgsl) at the unit's own indices.
  const bool probe_gx = probe_of(s) == Probe::GlobalX;
  const bool pq = x_prequantized(s);
  // Pre-quantized x over 32-element units with every unit of every step in
  // range: the step's x reads come right after its weight loads, before any
  // is used (as the float formats' global-x loop does).
  const uint32_t upr = ui.kp / ui.unit;
  const bool hoist = pq && ui.unit == 32 && (s.variant & kConstSteps) && upr % (s.tpr * s.unroll) == 0;
  // The x reads of unit j, per token t and block b of 32: codes xv{2b}_t,
  // xv{2b+1}_t (16 a vec4) and meta xm{b}_t (names suffixed _j when hoisted).
  // Pre-quantized: the quantize kernel's words; staged: the block xblk[...]
  // as one read (timing probe GlobalX: the same index in global memory).
  auto x_reads = [&](uint32_t j, const std::string& ind) {
    std::string o;
    const std::string sfx = hoist ? fmt::format("_{}", j) : "";
    for (uint32_t g = 0; g < ui.groups(); ++g) {
      const uint32_t c0 = g * gch, e0 = g * ui.group;
      for (uint32_t t = 0; t < s.tokens; ++t) {
        if (!pq) {
          if (e0 % 32 != 0) continue;
          const uint32_t b = e0 / 32;
          const std::string idx = fmt::format("{}u * TB + db + {}u", t, b);
          o += fmt::format("{}let xk{}_{} = {};\n", ind, b, t, probe_gx ? "xblkg(" + idx + ")" : "xblk[" + idx + "]");
          o += fmt::format("{0}let xv{1}_{3} = xk{2}_{3}[0u];\n{0}let xv{4}_{3} = xk{2}_{3}[1u];\n", ind, 2 * b, b, t,
                           2 * b + 1);
          o += fmt::format("{0}let xm{1}_{2} = xk{1}_{2}[2u];\n", ind, b, t);
          continue;
        }
        for (uint32_t c = c0; c < c0 + gch; c += 2)
          o += fmt::format("{}let xv{}_{}{} = xpq(z * TOKENS + {}u, uu{} * (UNIT / 16u) + {}u);\n", ind, c / 2, t,
                           sfx, t, j, c / 2);
        if (e0 % 32 == 0)
          o += fmt::format("{}let xm{}_{}{} = xpm(z * TOKENS + {}u, uu{} * (UNIT / 32u) + {}u);\n", ind, e0 / 32, t,
                           sfx, t, j, e0 / 32);
      }
    }
    return o;
  };
  std::string o = unit_loads(s);
  if (hoist)
    for (uint32_t j = 0; j < s.unroll; ++j) o += x_reads(j, "        ");
  for (uint32_t j = 0; j < s.unroll; ++j) {
    o += fmt::format("        if (uu{0} < u1) {{\n", j);
    if (!pq) o += fmt::format("          let db = (uu{0} - u0) * (UNIT / 32u);  // the unit's first block in xblk\n", j);
    if (!hoist) o += x_reads(j, "          ");
    if (hoist)
      for (uint32_t t = 0; t < s.tokens; ++t) {
        for (uint32_t c = 0; c < ui.chunks; c += 2) o += fmt::format("          let xv{0}_{1} = xv{0}_{1}_{2};\n", c / 2, t, j);
        o += fmt::format("          let xm0_{0} = xm0_{0}_{1};\n", t, j);
      }
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
        // meta (scale, sum of codes 0..15, of 16..31, 0) of the group's block
        const std::string xm = fmt::format("xm{}_{}", e0 / 32, t);
        if (ui.group == 32)
          o += fmt::format("          let sq{0}_{1} = bitcast<i32>({2}.y) + bitcast<i32>({2}.z);\n", g, t, xm);
        else
          o += fmt::format("          let sq{0}_{1} = bitcast<i32>({2}[{3}u]);\n", g, t, xm, 1 + (e0 / 16) % 2);
        o += fmt::format("          let dx{0}_{1} = bitcast<f32>({2}.x);\n", g, t, xm);
        // The block's x sum dx * sq, once for every row the lane sums (the min term).
        if (ui.has_min) o += fmt::format("          let xs{0}_{1} = dx{0}_{1} * f32(sq{0}_{1});\n", g, t);
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
            if (biased) {
              o += fmt::format("          let {} = (0x4B400000 - of{}{} * sq{}_{}) + {};\n", iv, g, wr, g, t, dot);
              o += fmt::format("          {0} = {0} + (sc{1}{2} * dx{1}_{3}) * (bitcast<f32>({4}) - 12582912.0);\n",
                               acc(w, t, i), g, wr, t, iv);
            } else {
              o += fmt::format("          let {} = ({}) - of{}{} * sq{}_{};\n", iv, dot, g, wr, g, t);
              o += fmt::format("          {0} = {0} + (sc{1}{2} * dx{1}_{3}) * f32({4});\n", acc(w, t, i), g, wr, t, iv);
            }
            if (ui.has_min)
              o += fmt::format("          {0} = {0} + mn{1}{2} * xs{1}_{3};\n", acc(w, t, i), g, wr, t);
          }
      }
    }
    o += "        }\n";
  }
  return o;
}

}  // namespace detail

}  // namespace blockq::matvec
