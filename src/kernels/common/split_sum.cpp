// Planning, WGSL and binding of the split-k sum kernel (split_sum.hpp).
#include "kernels/common/split_sum.hpp"

#include <algorithm>

#include "util/embedded_wgsl.hpp"
#include "util/error.hpp"
#include "util/template.hpp"

namespace blockq::split_sum {

uint32_t partial_sets(const Hooks& hooks) { return hooks.epilogue == Epilogue::SiluGate ? 2 : 1; }

uint64_t partial_bytes(uint32_t splits, const Hooks& hooks, uint32_t m, uint32_t n) {
  return uint64_t{splits} * partial_sets(hooks) * m * n * 4;
}

KernelSpec plan(const gpu::Context& ctx, uint32_t splits, const Hooks& hooks) {
  BQ_CHECK(splits >= 2, "split_sum: {} slices (split-k needs at least 2)", splits);
  BQ_CHECK(hooks.epilogue != Epilogue::Rope, "split_sum: the rope epilogue is not supported with split-k");
  KernelSpec s;
  s.op = Op::SplitSum;
  s.n = 0;  // run-time
  s.k = 0;
  s.m = 0;
  s.splits = splits;
  s.wg = std::min<uint32_t>(256, ctx.limits().maxComputeInvocationsPerWorkgroup);
  s.max_groups = ctx.limits().maxComputeWorkgroupsPerDimension;
  s.hooks.epilogue = hooks.epilogue;
  s.hooks.bias = hooks.bias;
  return s;
}

const gpu::Buffer& partials_buffer(const gpu::Context& ctx, const KernelSpec& producer, uint32_t m,
                                   const gpu::Buffer* part, gpu::Buffer& own, const std::string& label) {
  const uint64_t pb = partial_bytes(producer.splits, producer.hooks, m, producer.n);
  const uint64_t limit = ctx.limits().maxStorageBufferBindingSize;
  BQ_CHECK(pb <= limit, "{}: {} split-k partials of {} tokens need {} bytes, past the binding limit {}", label,
           producer.splits, m, pb, limit);
  if (part) {
    BQ_CHECK(part->size() >= pb, "{}: partials '{}' hold {} bytes, need {}", label, part->label(), part->size(), pb);
    return *part;
  }
  own = ctx.create_buffer(pb, gpu::kStorage, label + ".partials");
  return own;
}

std::string wgsl(const KernelSpec& s) {
  Template t(wgsl_file("kernels/common/split_sum.wgsl"), s.key());
  t.set_u("S", s.splits).set_u("WG", s.wg);
  std::string b;
  uint32_t slot = 2;
  if (s.hooks.bias) b += fmt::format("@group(0) @binding({}) var<storage, read> bias: array<f32>;  // [N]\n", slot++);
  b += fmt::format("@group(0) @binding({}) var<storage, read_write> y: array<f32>;  // [M * N]", slot);
  t.set("BINDINGS", b);
  // Slice s of set w for output i is p[(s * W + w) * M * N + i].
  const uint32_t w = partial_sets(s.hooks);
  std::string e = fmt::format("  var v = slices(i, {}u * mn);\n", w);
  if (s.hooks.bias) e += "  v = v + bias[r];\n";
  switch (s.hooks.epilogue) {
    case Epilogue::Acc: e += "  y[i] = y[i] + v;"; break;
    case Epilogue::SiluGate: e += "  let up = slices(mn + i, 2u * mn);\n  y[i] = (v / (1.0 + exp(-v))) * up;"; break;
    default: e += "  y[i] = v;"; break;
  }
  t.set("EPILOGUE", e);
  return t.render();
}

Prepared prepare(const gpu::Context& ctx, const KernelSpec& spec, const gpu::Buffer& part, const gpu::Buffer& y,
                 gpu::Binding bias, uint32_t m, uint32_t n) {
  BQ_CHECK(spec.op == Op::SplitSum, "split_sum: spec {} is not a split sum", spec.key());
  const uint64_t need = partial_bytes(spec.splits, spec.hooks, m, n);
  BQ_CHECK(part.size() >= need, "split_sum {}: partials '{}' hold {} bytes, need {}", spec.key(), part.label(),
           part.size(), need);
  BQ_CHECK(y.size() >= uint64_t{m} * n * 4, "split_sum {}: y '{}' holds {} bytes, needs {}", spec.key(), y.label(),
           y.size(), uint64_t{m} * n * 4);
  BQ_CHECK(!spec.hooks.bias || (bias && bias.bytes() >= uint64_t{n} * 4), "split_sum {}: the bias [{}] is missing",
           spec.key(), n);
  Prepared p;
  const std::string label = spec.key();
  p.kernel_ = &ctx.kernel(label, label, [&] { return wgsl(spec); });
  const uint32_t params[4] = {m, n, 0, 0};
  p.params_ = ctx.create_buffer(sizeof(params), gpu::kUniform, label + ".params");
  ctx.upload<uint32_t>(p.params_, params);
  std::vector<gpu::Binding> b = {{&p.params_}, {&part}};
  if (spec.hooks.bias) b.push_back(bias);
  b.push_back({&y});
  const bool uni[4] = {true, false, false, false};
  p.group_ = ctx.bind(*p.kernel_, b, std::span<const bool>(uni, b.size()));
  p.grid_ = gpu::wrap_workgroups((uint64_t{m} * n + spec.wg - 1) / spec.wg, spec.max_groups);
  return p;
}

void Prepared::record(gpu::Recorder& rec) const { rec.dispatch(*kernel_, group_, grid_); }

}  // namespace blockq::split_sum
