// WGSL generation for the gemm's pipelined kernel (gemm_pipe.wgsl; Algo
// kPipelined, kPipelinedUnrolled and kPipelinedPaired in generator.hpp):
// staging slots held in registers across the compute of a step, strided
// RM x RN register blocks, split-k slices.
#include <fmt/format.h>

#include "kernels/gemm/generator.hpp"
#include "kernels/gemm/parts.hpp"
#include "util/embedded_wgsl.hpp"
#include "util/template.hpp"

namespace blockq::gemm::detail {

namespace {

const char* kComp = "xyzw";

std::vector<std::string> weight_names(const KernelSpec& s) {
  return weights(s.hooks) == 2 ? std::vector<std::string>{"A", "B"} : std::vector<std::string>{"A"};
}

// Per-invocation slot constants: x slots (xg: x4 index at k = 0, xd: xs
// vec4 index of k row 4c, xq: component) and W slots (wr: row of the chunk,
// we: element offset in the step, wd, wq as for x). A last slot that only
// some invocations fill is clamped for its loads and guarded for its stores.
bool paired(const KernelSpec& s) { return s.variant == kPipelinedPaired; }

// Per-invocation slot constants: x slots (xg: x4 index at k = 0, xd: xs
// vec4 index of k row 4c, or for the paired form xr: that k row and xc: the
// column, xq: component) and W slots (wr: row of the chunk, we: element
// offset in the step, wd or wc, wq as for x). A last slot that only some
// invocations fill is clamped for its loads and guarded for its stores.
std::string slots(const KernelSpec& s, uint32_t nx, uint32_t nw) {
  std::string o;
  for (uint32_t i = 0; i < nx; ++i) {
    o += fmt::format("  let xi{0} = min(li + {0}u * WG, TM * TK4 - 1u);\n", i);
    o += fmt::format("  let xg{0} = min(m0 + xi{0} % TM, mlast) * K4 + xi{0} / TM;\n", i);
    if (paired(s)) {
      o += fmt::format("  let xr{0} = 4u * (xi{0} / TM);\n", i);
      o += fmt::format("  let xc{0} = (xi{0} % TM) / 4u;\n", i);
    } else {
      o += fmt::format("  let xd{0} = 4u * (xi{0} / TM) * XP4 + (xi{0} % TM) / 4u;\n", i);
    }
    o += fmt::format("  let xq{0} = xi{0} % 4u;\n", i);
  }
  for (uint32_t i = 0; i < nw; ++i) {
    o += fmt::format("  let wi{0} = min(li + {0}u * WG, TN * TK4 - 1u);\n", i);
    o += fmt::format("  let wr{0} = min(n0 + wi{0} % TN, rlast);\n", i);
    o += fmt::format("  let we{0} = 4u * (wi{0} / TN);\n", i);
    if (paired(s))
      o += fmt::format("  let wc{0} = (wi{0} % TN) / 4u;\n", i);
    else
      o += fmt::format("  let wd{0} = we{0} * WP4 + (wi{0} % TN) / 4u;\n", i);
    o += fmt::format("  let wq{0} = wi{0} % 4u;\n", i);
  }
  return o;
}

std::string load(const KernelSpec& s, uint32_t nx, uint32_t nw) {
  std::string o;
  for (uint32_t i = 0; i < nx; ++i) o += fmt::format("    let px{0} = x4[xg{0} + k1 / 4u];\n", i);
  for (const auto& w : weight_names(s))
    for (uint32_t i = 0; i < nw; ++i) o += fmt::format("    let pw{0}{1} = ld{0}(wr{1}, k1 + we{1});\n", w, i);
  o.pop_back();
  return o;
}

// Stores the loaded slots into buffer nb (x as is, W decoded); the paired
// form into the constant half `half`.
std::string put(const KernelSpec& s, uint32_t nx, uint32_t nw, uint32_t half = 0) {
  std::string o;
  const uint32_t xtot = s.tile_m * (s.tile / 4), wtot = s.tile_n * (s.tile / 4), wg = s.wg;
  auto guard = [&](uint32_t i, uint32_t tot, const std::string& body) {
    if ((i + 1) * wg <= tot) return body;
    return fmt::format("    if (li + {}u * WG < {}u) {{\n{}    }}\n", i, tot, body);
  };
  for (uint32_t i = 0; i < nx; ++i) {
    std::string b;
    for (uint32_t q = 0; q < 4; ++q)
      b += paired(s) ? fmt::format("    xs[{3}u + xr{0} + {1}u][xc{0}][xq{0}] = px{0}.{2};\n", i, q, kComp[q], half * s.tile)
                     : fmt::format("    xs[nb * XB + xd{0} + {1}u * XP4][xq{0}] = px{0}.{2};\n", i, q, kComp[q]);
    o += guard(i, xtot, b);
  }
  for (const auto& w : weight_names(s))
    for (uint32_t i = 0; i < nw; ++i) {
      std::string b = fmt::format("    let v{0}{1} = dc{0}(wr{1}, k1 + we{1}, pw{0}{1});\n", w, i);
      for (uint32_t q = 0; q < 4; ++q)
        b += paired(s) ? fmt::format("    ws{0}[{4}u + we{1} + {2}u][wc{1}][wq{1}] = v{0}{1}.{3};\n", w, i, q, kComp[q],
                                     half * s.tile)
                       : fmt::format("    ws{0}[nb * WB + wd{1} + {2}u * WP4][wq{1}] = v{0}{1}.{3};\n", w, i, q, kComp[q]);
      o += guard(i, wtot, b);
    }
  o.pop_back();
  return o;
}

// One k row kk of a step: RM / 4 vec4s of x, RN / 4 of each W, RM x RN
// multiply-adds. The paired form reads row `row` (a constant) of its 2-D tiles.
std::string inner_row(const KernelSpec& s, const std::string& kk, const std::string& ind, int64_t row = -1) {
  std::string o;
  for (uint32_t g = 0; g < s.reg_m / 4; ++g)
    o += row >= 0 ? fmt::format("{0}let a{1} = xs[{2}u][{1}u * TMT + ty];\n", ind, g, row)
                  : fmt::format("{0}let a{1} = xs[xb + {2} * XP4 + {1}u * TMT + ty];\n", ind, g, kk);
  for (const auto& w : weight_names(s)) {
    for (uint32_t h = 0; h < s.reg_n / 4; ++h)
      o += row >= 0 ? fmt::format("{0}let b{1}{2} = ws{1}[{3}u][{2}u * TNT + tx];\n", ind, w, h, row)
                    : fmt::format("{0}let b{1}{2} = ws{1}[wb + {3} * WP4 + {2}u * TNT + tx];\n", ind, w, h, kk);
    for (uint32_t i = 0; i < s.reg_m; ++i)
      for (uint32_t j = 0; j < s.reg_n; ++j)
        o += fmt::format("{0}{1} = {1} + a{2}.{3} * b{4}{5}.{6};\n", ind, acc(w, i, j), i / 4, kComp[i % 4], w, j / 4,
                         kComp[j % 4]);
  }
  return o;
}

// The compute of a step; the paired form from the constant half `half`.
std::string inner(const KernelSpec& s, uint32_t half = 0) {
  if (paired(s)) {
    std::string o;
    for (uint32_t kk = 0; kk < s.tile; ++kk)
      o += "    {\n" + inner_row(s, "", "      ", int64_t{half} * s.tile + kk) + "    }\n";
    o.pop_back();
    return o;
  }
  if (s.variant != kPipelinedUnrolled) {
    std::string o = "    for (var kk = 0u; kk < TK; kk++) {\n" + inner_row(s, "kk", "      ") + "    }";
    return o;
  }
  std::string o;
  for (uint32_t kk = 0; kk < s.tile; ++kk)
    o += "    {\n" + inner_row(s, fmt::format("{}u", kk), "      ") + "    }\n";
  o.pop_back();
  return o;
}

std::string store(const KernelSpec& s, bool checked) {
  std::string o;
  for (uint32_t g = 0; g < s.reg_m / 4; ++g) o += fmt::format("    let tt{0} = m0 + 4u * ({0}u * TMT + ty);\n", g);
  for (uint32_t h = 0; h < s.reg_n / 4; ++h) o += fmt::format("    let rr{0} = n0 + 4u * ({0}u * TNT + tx);\n", h);
  for (uint32_t i = 0; i < s.reg_m; ++i)
    for (uint32_t j = 0; j < s.reg_n; ++j) {
      const std::string t = fmt::format("(tt{} + {}u)", i / 4, i % 4), r = fmt::format("(rr{} + {}u)", j / 4, j % 4);
      const std::string body = epilogue(s, fmt::format("{} * params.n + params.row0 + {}", t, r), i, j);
      if (checked)
        o += fmt::format("    if ({} < params.m && {} < params.rows) {{ {} }}\n", t, r, body);
      else
        o += "    " + body + "\n";
    }
  o.pop_back();
  return o;
}

// The step loop over this workgroup's slice [sb, se) of the NS steps: the
// first step is staged into half 0, then each step loads the next one's
// words, computes from one half and decodes into the other. The paired form
// writes the loop out two steps at a time, so every half is a constant.
std::string main_loop(const KernelSpec& s, uint32_t nx, uint32_t nw) {
  std::string o;
  if (s.splits > 1)
    o += fmt::format("  let sb = wid.z * SPS;\n  let se = min(NS, sb + SPS);\n"
                     "  let pbase = wid.z * {}u * params.m * params.n;  // this slice's partials\n",
                     weight_names(s).size());
  else
    o += "  let sb = 0u;\n  let se = NS;\n";
  const std::string ld = load(s, nx, nw);
  o += "  {\n    let k1 = min(sb, NS - 1u) * TK;\n";
  if (!paired(s)) o += "    let nb = 0u;\n";
  o += ld + "\n" + put(s, nx, nw, 0) + "\n  }\n  workgroupBarrier();\n";
  if (!paired(s)) {
    o += "  for (var s = sb; s < se; s++) {\n";
    o += "    let k1 = min(s + 1u, se - 1u) * TK;  // the next step (the last one reloads itself, unused)\n";
    o += "    let nb = (s - sb + 1u) & 1u;\n" + ld + "\n";
    o += "    let xb = ((s - sb) & 1u) * XB;\n    let wb = ((s - sb) & 1u) * WB;\n";
    o += inner(s) + "\n" + put(s, nx, nw) + "\n    workgroupBarrier();\n  }";
    return o;
  }
  auto step = [&](uint32_t half) {
    std::string b = fmt::format("    {{\n    let k1 = min(s + {}u, se - 1u) * TK;\n", half + 1);
    return b + ld + "\n" + inner(s, half) + "\n" + put(s, nx, nw, 1 - half) + "\n    workgroupBarrier();\n    }\n";
  };
  o += "  for (var s = sb; s < se; s += 2u) {\n" + step(0) + "    if (s + 1u < se) {\n" + step(1) + "    }\n  }";
  return o;
}

}  // namespace

std::string wgsl_pipelined(const KernelSpec& s) {
  Template t(wgsl_file("kernels/gemm/gemm_pipe.wgsl"), s.key());
  t.set("DECODE_HELPERS", std::string(wgsl_file("kernels/gemm/decode_helpers.wgsl")));
  const uint32_t tk4 = s.tile / 4;
  const uint32_t nx = (s.tile_m * tk4 + s.wg - 1) / s.wg, nw = (s.tile_n * tk4 + s.wg - 1) / s.wg;
  t.set_u("K", s.k);
  t.set_u("TM", s.tile_m).set_u("TN", s.tile_n).set_u("RM", s.reg_m).set_u("RN", s.reg_n).set_u("TK", s.tile);
  t.set_u("SPLITS", s.splits);
  std::string ws;
  for (const auto& w : weight_names(s))
    ws += paired(s) ? fmt::format("var<workgroup> ws{}: array<array<vec4<f32>, WP4>, 2u * TK>;  // 2 x [TK][TN / 4 + 1] decoded W\n", w)
                    : fmt::format("var<workgroup> ws{}: array<vec4<f32>, 2u * WB>;  // 2 x [TK][TN / 4] decoded W, k-major\n", w);
  t.set("XS_DECL", paired(s) ? "var<workgroup> xs: array<array<vec4<f32>, XP4>, 2u * TK>;  // 2 x [TK][TM / 4 + 1] staged x"
                             : "var<workgroup> xs: array<vec4<f32>, 2u * XB>;   // 2 x [TK][TM / 4] staged x, k-major");
  t.set("BINDINGS", bindings(s)).set("WS_DECL", ws).set("FORMAT", format_code(s));
  std::string accs;
  for (const auto& w : weight_names(s))
    for (uint32_t i = 0; i < s.reg_m; ++i)
      for (uint32_t j = 0; j < s.reg_n; ++j) accs += "  var " + acc(w, i, j) + " = 0.0;\n";
  accs.pop_back();
  t.set("SLOTS", slots(s, nx, nw)).set("ACC_DECL", accs);
  t.set("MAIN", main_loop(s, nx, nw));
  t.set("STORE_FAST", store(s, false)).set("STORE_EDGE", store(s, true));
  return t.render();
}

}  // namespace blockq::gemm::detail
