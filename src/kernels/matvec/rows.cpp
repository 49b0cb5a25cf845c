// The row gather from the matvec layout (see rows.hpp and rows.wgsl).
#include "kernels/matvec/rows.hpp"

#include <algorithm>

#include "kernels/matvec/generator.hpp"
#include "kernels/matvec/raw.hpp"
#include "util/embedded_wgsl.hpp"
#include "util/error.hpp"
#include "util/template.hpp"

namespace blockq::matvec {

KernelSpec plan_rows(const gpu::Context& ctx, const WeightKind& kind, uint32_t n, uint32_t k, uint32_t m) {
  BQ_CHECK(n > 0 && k > 0 && m > 0, "rows: empty shape n={} k={} m={}", n, k, m);
  KernelSpec s;
  s.op = Op::Rows;
  s.weight = kind;
  s.n = n;
  s.k = k;
  s.m = m;
  const auto& l = ctx.limits();
  s.wg = std::min<uint32_t>({256, l.maxComputeInvocationsPerWorkgroup, l.maxComputeWorkgroupSizeX});
  s.tpr = 1;
  s.max_groups = l.maxComputeWorkgroupsPerDimension;
  return s;
}

std::string rows_wgsl(const KernelSpec& s) {
  BQ_ASSERT(s.op == Op::Rows);
  const UnitInfo ui = unit_info(s.weight, s.k);
  Template t(wgsl_file("kernels/matvec/rows.wgsl"), s.key());
  t.set_u("K", s.k).set_u("KP", ui.kp).set_u("M", s.m).set_u("WG", s.wg).set_u("UNIT", ui.unit);
  t.set_u("GROUP", ui.group ? ui.group : 8);
  std::string b = "@group(0) @binding(2) var<storage, read> mainA: array<vec4<u32>>;\n";
  uint32_t slot = 3;
  if (ui.has_side) b += fmt::format("@group(0) @binding({}) var<storage, read> sideA: array<u32>;\n", slot++);
  b += fmt::format("@group(0) @binding({}) var<storage, read_write> y: array<f32>;  // [M * K]", slot);
  t.set("BINDINGS", b);
  t.set("HELPERS", decode_helpers(s.weight, false));
  t.set("FORMAT", format_snippet(s, "A"));
  std::string d;
  if (!ui.group) {
    d = "  let v = w;  // float formats: the values";
  } else {
    d = fmt::format("  let sc = scaleA(un, c / {}u);  // the chunk's scale group\n", ui.group / 8);
    if (ui.has_min)
      d += fmt::format("  let mn = minA(un, c / {}u);\n  let v = W8(w.a * sc + mn, w.b * sc + mn);", ui.group / 8);
    else
      d += "  let v = W8(w.a * sc, w.b * sc);";
  }
  t.set("DECODE", d);
  return t.render();
}

gpu::Grid rows_grid(const KernelSpec& s) {
  const UnitInfo ui = unit_info(s.weight, s.k);
  const uint64_t invocations = uint64_t{s.m} * (ui.kp / 8);
  return gpu::wrap_workgroups((invocations + s.wg - 1) / s.wg, s.max_groups);
}

PreparedRows prepare_rows(const gpu::Context& ctx, const KernelSpec& spec, const Weights& w, const gpu::Buffer& ids,
                          const gpu::Buffer& y) {
  const std::string label = spec.key();
  BQ_CHECK(spec.op == Op::Rows && w.kind == spec.weight && w.n == spec.n && w.k == spec.k,
           "rows {}: weight '{}' is {} {}x{}", label, w.label, w.kind.name(), w.n, w.k);
  BQ_CHECK(ids.size() >= uint64_t{spec.m} * 4, "rows {}: ids '{}' holds {} bytes, needs {}", label, ids.label(),
           ids.size(), uint64_t{spec.m} * 4);
  BQ_CHECK(y.size() >= uint64_t{spec.m} * spec.k * 4, "rows {}: y '{}' holds {} bytes, needs {}", label, y.label(),
           y.size(), uint64_t{spec.m} * spec.k * 4);
  PreparedRows p;
  p.spec = spec;
  p.kernel_ = &ctx.kernel(label, label, [&] { return rows_wgsl(spec); });
  p.grid_ = rows_grid(spec);
  const bool side = unit_info(spec.weight, spec.k).has_side;
  for (const auto& c : w.chunks) {
    std::vector<gpu::Binding> b = {{&c.params}, {&ids}, c.main.binding()};
    if (side) b.push_back(c.side.binding());
    b.push_back({&y});
    const bool uniform[5] = {true, false, false, false, false};
    p.groups_.push_back(ctx.bind(*p.kernel_, b, std::span<const bool>(uniform, b.size())));
  }
  return p;
}

void PreparedRows::record(gpu::Recorder& rec) const {
  for (const auto& g : groups_) rec.dispatch(*kernel_, g, grid_);
}

void PreparedRows::record_chunk(gpu::Recorder& rec, size_t c) const {
  BQ_ASSERT(c < groups_.size(), "rows {}: chunk {} of {}", spec.key(), c, groups_.size());
  rec.dispatch(*kernel_, groups_[c], grid_);
}

namespace {

template <class T>
std::vector<T> decode_rows(const HostWeight& w, std::span<const uint32_t> ids) {
  const UnitInfo ui = unit_info(w.kind, w.k);
  std::vector<T> y(ids.size() * w.k);
  for (size_t t = 0; t < ids.size(); ++t) {
    BQ_CHECK(ids[t] < w.n, "rows: id {} of token {} is past the {} rows", ids[t], t, w.n);
    const RawRows r = raw_rows(w, ids[t], 1);
    for (uint32_t e = 0; e < w.k; ++e) {
      const float code = r.code[e];
      if (!ui.group) {
        y[t * w.k + e] = T(code);
        continue;
      }
      const uint32_t g = e / ui.group;
      const T sc = T(r.scale[g]);
      const T mn = ui.has_min ? T(r.min[g]) : T(0);
      y[t * w.k + e] = ui.has_min ? sc * T(code) + mn : sc * T(code);
    }
  }
  return y;
}

}  // namespace

std::vector<float> rows_twin(const HostWeight& w, std::span<const uint32_t> ids) { return decode_rows<float>(w, ids); }
std::vector<double> rows_reference(const HostWeight& w, std::span<const uint32_t> ids) {
  return decode_rows<double>(w, ids);
}

}  // namespace blockq::matvec
