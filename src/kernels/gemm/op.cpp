// Prepared gemm dispatches over matvec-layout weights (one per row chunk).
#include "kernels/gemm/op.hpp"

#include "kernels/gemm/parts.hpp"
#include "util/error.hpp"

namespace blockq::gemm {

Prepared prepare(const gpu::Context& ctx, const KernelSpec& spec, const Args& args) {
  BQ_CHECK(spec.op == Op::Gemm, "gemm: spec {} is not a gemm", spec.key());
  BQ_CHECK(args.a && args.x && args.y && args.m > 0, "gemm {}: weight, x, y and m > 0 are required", spec.key());
  const matvec::Weights& a = *args.a;
  BQ_CHECK(a.kind == spec.weight && a.n == spec.n && a.k == spec.k, "gemm {}: weight '{}' is {} {}x{}",
           spec.key(), a.label, a.kind.name(), a.n, a.k);
  const bool silu = spec.hooks.epilogue == Epilogue::SiluGate;
  if (silu)
    BQ_CHECK(args.b && args.b->kind == a.kind && args.b->n == a.n && args.b->k == a.k &&
                 args.b->chunks.size() == a.chunks.size(),
             "gemm {}: the up weight must match the gate weight '{}'", spec.key(), a.label);
  const uint64_t xb = uint64_t{args.m} * spec.k * 4, yb = uint64_t{args.m} * spec.n * 4;
  BQ_CHECK(args.x->size() >= xb, "gemm {}: x '{}' holds {} bytes, needs {}", spec.key(), args.x->label(),
           args.x->size(), xb);
  BQ_CHECK(args.y->size() >= yb, "gemm {}: y '{}' holds {} bytes, needs {}", spec.key(), args.y->label(),
           args.y->size(), yb);
  const std::string label = pipeline_key(spec);
  const bool side = detail::has_side(spec);
  Prepared p;
  p.spec = spec;
  p.m = args.m;
  p.kernel_ = &ctx.kernel(label, label, [&] { return wgsl(spec); });
  const gpu::Buffer* xin = args.x;  // binding 1: x, or (int8) x quantized
  if (spec.features.dot4) {
    BQ_CHECK(ctx.features().packed_dot4, "gemm {}: the instance has no packed 4x8 integer dot product", label);
    const uint64_t qb = int8_x_bytes(args.m, spec.k);
    if (!args.xq) p.own_xq_ = ctx.create_buffer(qb, gpu::kStorage, label + ".xq");
    xin = args.xq ? args.xq : &p.own_xq_;
    BQ_CHECK(xin->size() >= qb, "gemm {}: xq '{}' holds {} bytes, needs {}", label, xin->label(), xin->size(), qb);
    p.quant_ = matvec::xquant::prepare(ctx, quant_spec(spec, args.m), *args.x, *xin, {});
  }
  const gpu::Buffer* out = args.y;
  if (spec.splits > 1) {
    out = &split_sum::partials_buffer(ctx, spec, args.m, args.part, p.own_part_, "gemm " + label);
    p.sum_ = split_sum::prepare(ctx, split_sum::plan(ctx, spec.splits, spec.hooks), *out, *args.y, {}, args.m,
                                spec.n);
  }
  for (size_t ci = 0; ci < a.chunks.size(); ++ci) {
    const auto& c = a.chunks[ci];
    if (silu)
      BQ_CHECK(args.b->chunks[ci].row0 == c.row0 && args.b->chunks[ci].rows == c.rows,
               "gemm {}: chunks of '{}' and '{}' differ", label, a.label, args.b->label);
    // The gemm formats keep their side in one section, but Q5_0 and Q5_1,
    // whose snippets find the second one at params.rows * K / 32.
    const bool q5 = a.kind.format == Format::Q5_0 || a.kind.format == Format::Q5_1;
    BQ_ASSERT(matvec::side_offset(a.kind, a.k, c.rows) == (q5 ? c.rows * (a.k / 32) : 0),
              "gemm {}: '{}' has a side offset the kernel does not read", label, a.label);
    BQ_CHECK(c.main && (!side || c.side) && (!silu || (args.b->chunks[ci].main && (!side || args.b->chunks[ci].side))),
             "gemm {}: a main or side buffer of '{}' is missing", label, a.label);
    const uint32_t params[4] = {c.row0, c.rows, args.m, spec.n};
    p.params_.push_back(ctx.create_buffer(sizeof(params), gpu::kUniform, label + ".params"));
    ctx.upload<uint32_t>(p.params_.back(), params);
    std::vector<gpu::Binding> b = {{&p.params_.back()}, {xin}, c.main.binding()};
    if (side) b.push_back(c.side.binding());
    if (silu) {
      b.push_back(args.b->chunks[ci].main.binding());
      if (side) b.push_back(args.b->chunks[ci].side.binding());
    }
    b.push_back({out});
    std::vector<bool> uni(b.size(), false);
    uni[0] = true;
    std::unique_ptr<bool[]> flags(new bool[uni.size()]);
    for (size_t i = 0; i < uni.size(); ++i) flags[i] = uni[i];
    p.groups_.push_back(ctx.bind(*p.kernel_, b, std::span<const bool>(flags.get(), uni.size())));
    p.grids_.push_back(grid(spec, c.rows, args.m));
  }
  return p;
}

void Prepared::record(gpu::Recorder& rec) const {
  if (quant_) quant_->record(rec);
  for (size_t i = 0; i < groups_.size(); ++i) rec.dispatch(*kernel_, groups_[i], grids_[i]);
  if (sum_) sum_->record(rec);
}

}  // namespace blockq::gemm
