// Planning, WGSL and binding of the matvec's x quantize kernel (xquant.hpp).
#include "kernels/matvec/xquant.hpp"

#include "kernels/matvec/generator.hpp"
#include "kernels/matvec/layout.hpp"
#include "util/embedded_wgsl.hpp"
#include "util/error.hpp"
#include "util/template.hpp"

namespace blockq::matvec::xquant {

KernelSpec plan(const KernelSpec& mv) {
  BQ_ASSERT(x_prequantized(mv), "xquant: {} reads staged x", mv.key());
  KernelSpec s;
  s.op = Op::QuantX;
  s.k = mv.k;
  s.n = unit_info(mv.weight, mv.k).kp;
  BQ_ASSERT(s.n % 32 == 0, "xquant: {} elements a padded row", s.n);
  s.m = mv.m;
  s.tokens = mv.tokens;
  s.wg = mv.wg;
  s.max_groups = mv.max_groups;
  s.hooks.prologue = mv.hooks.prologue;
  if (s.hooks.prologue == Prologue::RmsNorm) {
    s.hooks.eps = mv.hooks.eps;
  } else if (mv.features.subgroups) {
    // Quads of subgroup lanes (xquant_quad.wgsl), 128 invocations a workgroup
    // (or the matvec's, which holds whole subgroups): H200, k = 14336 and
    // 4096, 2.25-2.45 us a dispatch against 2.6-2.75 for the plain kernel in
    // the matvec's 32 invocations (docs/perf/2026-12-02-session14-h200.md).
    s.features.subgroups = true;
    s.wg = std::max(128u, mv.wg);
  }
  return s;
}

namespace {
uint64_t rows(const KernelSpec& s) { return (uint64_t{s.m} + s.tokens - 1) / s.tokens * s.tokens; }
}  // namespace

uint64_t bytes(const KernelSpec& s) { return rows(s) * (s.n / 16 + s.n / 32) * 16; }

gpu::Grid grid(const KernelSpec& s) {
  const uint32_t lanes = s.n / 32 * (s.features.subgroups ? 4 : 1);  // a quad of lanes a block, or one
  gpu::Grid g;
  g.x = (lanes + s.wg - 1) / s.wg;
  g.y = 1;
  g.z = static_cast<uint32_t>(rows(s));
  BQ_CHECK(g.x <= s.max_groups && g.z <= s.max_groups, "xquant {}: a grid of {} x {} workgroups past the limit {}",
           s.key(), g.x, g.z, s.max_groups);
  return g;
}

std::string wgsl(const KernelSpec& s) {
  const bool quad = s.features.subgroups;
  const bool rms = s.hooks.prologue == Prologue::RmsNorm;
  BQ_ASSERT(!quad || !rms, "xquant {}: quads without the prologue", s.key());
  Template t(wgsl_file("kernels/matvec/xquant.wgsl"), s.key());
  t.set_u("K", s.k).set_u("KP", s.n).set_u("M", s.m).set_u("MT", rows(s)).set_u("WG", s.wg);
  t.set_f("EPS", s.hooks.eps);
  t.set("ENABLE", quad ? "enable subgroups;" : "");
  t.set("SG_ARGS", quad ? ",\n        @builtin(subgroup_invocation_id) sg_id: u32, @builtin(subgroup_size) sg_size: u32" : "");
  const std::string hf = "kernels/matvec/fmt/i8/helpers.wgsl";
  std::string helpers = Template(wgsl_file(hf), hf).set("TINY", wgsl_float(kInt8Tiny)).render();
  std::string decls;
  if (quad) {
    helpers += "\n" + std::string(wgsl_file("kernels/matvec/fmt/i8/quad.wgsl"));
  } else if (rms) {
    helpers += "\n" + std::string(wgsl_file("kernels/matvec/rms_scale.wgsl"));
    decls = "@group(0) @binding(2) var<storage, read> nw4: array<vec4<f32>>;  // [K / 4]\n"
            "var<workgroup> red: array<f32, WG>;";
  }
  const std::string of = "kernels/matvec/xquant_one.wgsl";
  helpers += "\n" + Template(wgsl_file(of), of)
                        .set("HOOK", rms ? "      v[q] = (v[q] * ns) * nw4[e / 4u];" : "")
                        .set("INV127", wgsl_float(kInv127))
                        .render();
  t.set("HELPERS", helpers).set("DECLS", decls);
  const std::string bf = quad ? "kernels/matvec/xquant_quad.wgsl" : "kernels/matvec/xquant_block.wgsl";
  Template body(wgsl_file(bf), bf);
  if (quad) {
    body.set("INV127", wgsl_float(kInv127));
  } else {
    body.set("PROLOGUE", rms ? "  let ns = rms_scale(t, li);  // the RMSNorm scale of token t" : "");
    body.set("NS", rms ? "ns" : "1.0");
  }
  t.set("BODY", body.render());
  t.set("BODY_KIND", quad ? "xquant_quad.wgsl: quads of subgroup lanes" : "xquant_block.wgsl: one invocation a block");
  return t.render();
}

Prepared prepare(const gpu::Context& ctx, const KernelSpec& spec, const gpu::Buffer& x, const gpu::Buffer& xq,
                 gpu::Binding norm_w) {
  BQ_CHECK(spec.op == Op::QuantX, "xquant: spec {} is not an x quantization", spec.key());
  BQ_CHECK(x.size() >= uint64_t{spec.m} * spec.k * 4, "xquant {}: x '{}' holds {} bytes, needs {}", spec.key(),
           x.label(), x.size(), uint64_t{spec.m} * spec.k * 4);
  BQ_CHECK(xq.size() >= bytes(spec), "xquant {}: xq '{}' holds {} bytes, needs {}", spec.key(), xq.label(), xq.size(),
           bytes(spec));
  const bool rms = spec.hooks.prologue == Prologue::RmsNorm;
  BQ_CHECK(!rms || (norm_w && norm_w.bytes() >= uint64_t{spec.k} * 4), "xquant {}: the norm weight [{}] is missing",
           spec.key(), spec.k);
  Prepared p;
  const std::string label = spec.key();
  p.kernel_ = &ctx.kernel(label, label, [&] { return wgsl(spec); });
  std::vector<gpu::Binding> b = {{&x}, {&xq}};
  if (rms) b.push_back(norm_w);
  p.group_ = ctx.bind(*p.kernel_, b);
  p.grid_ = grid(spec);
  return p;
}

void Prepared::record(gpu::Recorder& rec) const { rec.dispatch(*kernel_, group_, grid_); }

}  // namespace blockq::matvec::xquant
