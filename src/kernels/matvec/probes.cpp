// The matvec kernel's timing probes (Options::probe, bench only): the
// generated kernel with a part cut out or replaced, to show where its time
// goes (docs/KERNELS.md lists them).
#include <fmt/format.h>

#include "kernels/matvec/generator.hpp"
#include "kernels/matvec/lane_step.hpp"
#include "util/template.hpp"

namespace blockq::matvec::detail {

std::string replace_all(std::string s, const std::string& a, const std::string& b) {
  for (size_t i = s.find(a); i != std::string::npos; i = s.find(a, i + b.size())) s.replace(i, a.size(), b);
  return s;
}

// Timing probes (Options::probe, bench only): the same kernel with a part
// cut out, to show where its time goes. Their outputs are meaningless. A
// removed part keeps one read of each binding behind a condition that never
// holds (params.pad is 0), so the pipeline's bindings stay the same.
void apply_probe(const KernelSpec& s, const UnitInfo& ui, Template& t) {
  const Probe p = probe_of(s);
  const std::string never = "params.pad == 0xFFFFFFFFu";
  const std::string a0 = detail::acc("A", 0, 0);
  // A never-taken staging keeps x bound; LoadsNoStage drops the barrier too.
  const std::string keep = s.features.dot4 ? "xblk[0][0] = bitcast<vec4<u32>>(x4[0]);" : "xs[0][0] = x4[0];";
  if (p == Probe::NoStage || p == Probe::Base || p == Probe::LoadsNoStage) {
    t.set("STAGE", fmt::format("    if ({}) {{ {} }}\n{}", never, keep,
                               p == Probe::LoadsNoStage ? "" : "    workgroupBarrier();\n"));
    t.set("SUMX", "");
  }
  if (p == Probe::NoLoop || p == Probe::Base) {
    std::string keep;
    for (const auto& w : detail::weight_names(s)) {
      keep += fmt::format(" + f32(main{}[u].x)", w);
      if (ui.has_side) keep += fmt::format(" + f32(side{}[u])", w);
    }
    t.set("UNIT_LOOP", fmt::format("        if ({}) {{ {} = {}{}; }}\n", never, a0, a0, keep));
  }
  if (p == Probe::Loads || p == Probe::LoadsInterleaved || p == Probe::LoadsNoStage) {
    // The step's loads and the cheapest use of every word: each chunk's
    // first and last code (and each group's scale), with no x read.
    // LoadsInterleaved reads the same bytes of the workgroup's rows as if
    // they were stored step by step: the TPR units of each row for one step
    // next to each other (one row per lane group, units per row a multiple
    // of TPR).
    std::string o = detail::unit_loads(s);
    if (p == Probe::LoadsInterleaved)
      for (const auto& w : detail::weight_names(s))
        o = replace_all(o, fmt::format("load{}(row0, uu0)", w),
                        fmt::format("load{}(0u, wg * RPW * UPR + (uu0 / TPR) * (RPW * TPR) + lr * TPR + uu0 % TPR)", w));
    for (uint32_t j = 0; j < s.unroll; ++j)
      for (uint32_t i = 0; i < s.rpl; ++i)
        for (const auto& w : detail::weight_names(s)) {
          const std::string un = detail::unit_name(j, w, i);
          std::string sum;
          for (uint32_t c = 0; c < ui.chunks; ++c)
            sum += fmt::format(" + chunk{0}({1}, {2}u).a.x + chunk{0}({1}, {2}u).b.w", w, un, c);
          for (uint32_t g = 0; g < ui.groups(); ++g) sum += fmt::format(" + scale{}({}, {}u)", w, un, g);
          o += fmt::format("        {} = {}{};\n", a0, a0, sum);
        }
    t.set("UNIT_LOOP", o);
  }
  if (p == Probe::GlobalX) {
    // No staging: the lane loop reads each x block (codes and meta) at the
    // staged array's index from global memory (x4's words stand in for a
    // pre-quantized x of the same size; the code sums are masked small).
    t.set("STAGE", "");
    t.set("HOOK_FUNCS",
          "fn xblkg(i: u32) -> array<vec4<u32>, 3> {\n"
          "  let m = bitcast<vec4<u32>>(x4[3u * i + 2u]);\n"
          "  return array<vec4<u32>, 3>(bitcast<vec4<u32>>(x4[3u * i]), bitcast<vec4<u32>>(x4[3u * i + 1u]),\n"
          "                             vec4<u32>(m.x, m.y & 255u, m.z & 255u, 0u));\n"
          "}\n");
  }
}

}  // namespace blockq::matvec::detail
