// Generation and binding of the row kernels of the prompt pass
// (gpu_rmsnorm.wgsl, gpu_rope.wgsl; see gpu_rows.hpp).
#include "model/gpu_rows.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "util/embedded_wgsl.hpp"
#include "util/error.hpp"
#include "util/template.hpp"

namespace blockq::model {

namespace {

uint32_t pow2_wg(const gpu::Context& ctx, uint32_t want) {
  uint32_t wg = want;
  while (wg > ctx.limits().maxComputeInvocationsPerWorkgroup || wg > ctx.limits().maxComputeWorkgroupSizeX) wg /= 2;
  return wg;
}

}  // namespace

KernelSpec rmsnorm_spec(const gpu::Context& ctx, uint32_t n, uint32_t m, float eps) {
  BQ_CHECK(n > 0 && m > 0, "rmsnorm: empty problem n={} m={}", n, m);
  KernelSpec k;
  k.op = Op::RmsNorm;
  k.k = n;
  k.m = m;
  k.wg = pow2_wg(ctx, 64);
  k.max_groups = ctx.limits().maxComputeWorkgroupsPerDimension;
  k.hooks.prologue = Prologue::RmsNorm;
  k.hooks.eps = eps;
  BQ_CHECK(m <= k.max_groups, "rmsnorm: {} rows exceed {} workgroups per dimension", m, k.max_groups);
  return k;
}

GpuRmsNorm::GpuRmsNorm(const gpu::Context& ctx, uint32_t n, uint32_t m, float eps, const gpu::Buffer& x,
                       gpu::Binding w, const gpu::Buffer& y) {
  spec_ = rmsnorm_spec(ctx, n, m, eps);
  const uint64_t bytes = uint64_t{m} * n * 4;
  BQ_CHECK(x.size() >= bytes && y.size() >= bytes && w.bytes() >= uint64_t{n} * 4,
           "rmsnorm: x and y need {} bytes, w {} (got {}, {}, {})", bytes, n * 4, x.size(), y.size(), w.bytes());
  const std::string key = spec_.key();
  kernel_ = &ctx.kernel(key, key, [&] {
    return Template(wgsl_file("model/gpu_rmsnorm.wgsl"), key)
        .set_u("WG", spec_.wg)
        .set_u("N", n)
        .set("EPS", wgsl_float(eps))
        .render();
  });
  group_ = ctx.bind(*kernel_, {{&x}, w, {&y}});
}

void GpuRmsNorm::record(gpu::Recorder& rec) const { rec.dispatch(*kernel_, group_, {spec_.m, 1, 1}); }

KernelSpec rope_spec(const gpu::Context& ctx, const GpuRopeShape& s, bool bias, bool freq) {
  BQ_CHECK(s.m > 0 && s.heads > 0 && s.head_dim % 2 == 0 && s.head_dim > 0 && s.n_rot % 2 == 0 &&
               s.n_rot <= s.head_dim,
           "rope: m {} heads {} head_dim {} n_rot {}: need whole heads of an even size and an even n_rot <= head_dim",
           s.m, s.heads, s.head_dim, s.n_rot);
  KernelSpec k;
  k.op = Op::Rope;
  k.n = s.heads;
  k.k = s.head_dim;
  k.m = s.m;
  k.wg = pow2_wg(ctx, 64);
  k.max_groups = ctx.limits().maxComputeWorkgroupsPerDimension;
  k.hooks.epilogue = Epilogue::Rope;
  k.hooks.bias = bias;
  k.hooks.rope_mode = s.mode;
  k.hooks.head_dim = s.head_dim;
  k.hooks.n_rot = s.n_rot;
  k.hooks.rope_base = s.base;
  k.hooks.rope_scale = s.scale;
  BQ_CHECK(s.rope_heads <= s.heads, "rope: {} rotated heads of {}", s.rope_heads, s.heads);
  if (s.rope_heads && s.rope_heads < s.heads) k.hooks.rope_rows = s.rope_heads * s.head_dim;
  k.variant = 1 + (s.rope ? 2 : 0) + (freq ? 4 : 0);
  return k;
}

std::string rope_wgsl(const KernelSpec& s) {
  const bool bias = s.hooks.bias, freq = s.variant & 4;
  std::string decls =
      "@group(0) @binding(0) var<storage, read_write> y: array<f32>;  // [M, HEADS, HD]\n"
      "@group(0) @binding(1) var<storage, read> pos: array<u32>;      // [M]\n";
  uint32_t b = 2;
  if (bias) decls += fmt::format("@group(0) @binding({}) var<storage, read> bias: array<f32>;  // [HEADS * HD]\n", b++);
  if (freq) decls += fmt::format("@group(0) @binding({}) var<storage, read> ff: array<f32>;    // [NROT / 2]\n", b++);
  std::string funcs;
  funcs += bias ? "fn bias_at(i: u32) -> f32 { return bias[i]; }\n" : "fn bias_at(i: u32) -> f32 { return 0.0f; }\n";
  funcs += freq ? "fn ff_div(tp: f32, i: u32) -> f32 { return tp / ff[i]; }\n"
                : "fn ff_div(tp: f32, i: u32) -> f32 { return tp; }\n";
  return Template(wgsl_file("model/gpu_rope.wgsl"), s.key())
      .set("DECLS", decls)
      .set("FUNCS", funcs)
      .set_u("WG", s.wg)
      .set_u("M", s.m)
      .set_u("HEADS", s.n)
      .set_u("HD", s.k)
      .set_u("NROT", s.hooks.n_rot)
      .set_u("RHEADS", s.hooks.rope_rows ? s.hooks.rope_rows / s.k : s.n)
      .set("NEOX", s.hooks.rope_mode == blockq::RopeMode::Neox ? "true" : "false")
      .set("ROPE", s.variant & 2 ? "true" : "false")
      .set("BASE", wgsl_float(s.hooks.rope_base))
      .set("SCALE", wgsl_float(s.hooks.rope_scale))
      .render();
}

GpuRope::GpuRope(const gpu::Context& ctx, const GpuRopeShape& s, const GpuRopeArgs& a) {
  BQ_CHECK(a.y && a.pos, "rope: y and pos are required");
  spec_ = rope_spec(ctx, s, bool(a.bias), bool(a.freq));
  const uint64_t row = uint64_t{s.heads} * s.head_dim;
  BQ_CHECK(a.y->size() >= row * s.m * 4 && a.pos->size() >= uint64_t{s.m} * 4,
           "rope: y needs {} bytes and pos {} (got {}, {})", row * s.m * 4, s.m * 4, a.y->size(), a.pos->size());
  BQ_CHECK(!a.bias || a.bias.bytes() >= row * 4, "rope: the bias needs {} bytes", row * 4);
  BQ_CHECK(!a.freq || a.freq.bytes() >= uint64_t{s.n_rot / 2} * 4, "rope: the freq factors need {} bytes",
           s.n_rot / 2 * 4);
  const std::string key = spec_.key();
  kernel_ = &ctx.kernel(key, key, [&] { return rope_wgsl(spec_); });
  std::vector<gpu::Binding> bs = {{a.y}, {a.pos}};
  if (a.bias) bs.push_back(a.bias);
  if (a.freq) bs.push_back(a.freq);
  group_ = ctx.bind(*kernel_, bs);
  grid_ = gpu::wrap_workgroups((row / 2 * s.m + spec_.wg - 1) / spec_.wg, spec_.max_groups);
}

void GpuRope::record(gpu::Recorder& rec) const { rec.dispatch(*kernel_, group_, grid_); }

}  // namespace blockq::model
