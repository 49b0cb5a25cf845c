// Upload of matvec weights (row chunks) and prepared dispatches.
#include "kernels/matvec/op.hpp"

#include <algorithm>

#include "util/error.hpp"

namespace blockq::matvec {

uint64_t Weights::bytes() const {
  uint64_t b = 0;
  for (const auto& c : chunks) b += c.main.size + c.side.size;
  return b;
}

Weights upload(const gpu::Context& ctx, const HostWeight& w, const std::string& label,
               const UploadOptions& opt) {
  validate(w);
  const UnitInfo ui = unit_info(w.kind, w.k);
  const RowBytes rb = row_bytes(w.kind, w.k);
  uint64_t limit = std::min<uint64_t>(ctx.limits().maxStorageBufferBindingSize, ctx.limits().maxBufferSize);
  if (opt.max_chunk_bytes) limit = std::min(limit, opt.max_chunk_bytes);
  const double widest = std::max(rb.main, rb.side);
  uint64_t rows = static_cast<uint64_t>(double(limit - 64) / widest);
  rows = rows / opt.row_granularity * opt.row_granularity;
  BQ_CHECK(rows > 0, "weight '{}': {} rows of {:.0f} bytes do not fit a {}-byte binding", label,
           opt.row_granularity, widest, limit);
  Weights out;
  out.kind = w.kind;
  out.n = w.n;
  out.k = w.k;
  out.label = label;
  (void)ui;
  gpu::Arena* arena = opt.arena;
  if (!arena) {
    out.own = std::make_unique<gpu::Arena>(ctx, label);
    arena = out.own.get();
  }
  for (uint32_t r0 = 0; r0 < w.n; r0 += static_cast<uint32_t>(rows)) {
    const uint32_t cr = static_cast<uint32_t>(std::min<uint64_t>(rows, w.n - r0));
    Packed p = pack_rows(w, r0, cr);
    Weights::Chunk c;
    c.row0 = r0;
    c.rows = cr;
    const std::string cl = out.chunks.empty() && cr == w.n ? label : fmt::format("{}[{}:{}]", label, r0, r0 + cr);
    c.main = arena->put<uint32_t>(p.main, cl + ".main");
    if (!p.side.empty()) c.side = arena->put<uint32_t>(p.side, cl + ".side");
    const uint32_t params[4] = {r0, cr, p.side_off, 0};
    c.params = ctx.create_buffer(sizeof(params), gpu::kUniform, cl + ".params");
    ctx.upload<uint32_t>(c.params, params);
    out.chunks.push_back(std::move(c));
  }
  if (out.own) out.own->flush();
  return out;
}

Prepared prepare(const gpu::Context& ctx, const KernelSpec& spec, const Args& args) {
  BQ_CHECK(args.a && args.x && args.y, "matvec {}: weight, x and y are required", spec.key());
  const Weights& a = *args.a;
  BQ_CHECK(a.kind == spec.weight && a.n == spec.n && a.k == spec.k,
           "matvec {}: weight '{}' is {} {}x{}", spec.key(), a.label, a.kind.name(), a.n, a.k);
  const bool silu = spec.hooks.epilogue == Epilogue::SiluGate;
  if (silu) {
    BQ_CHECK(args.b && args.b->kind == a.kind && args.b->n == a.n && args.b->k == a.k &&
                 args.b->chunks.size() == a.chunks.size(),
             "matvec {}: the up weight must match the gate weight '{}'", spec.key(), a.label);
  }
  BQ_CHECK(args.x->size() >= uint64_t{spec.m} * spec.k * 4, "matvec {}: x '{}' holds {} bytes, needs {}",
           spec.key(), args.x->label(), args.x->size(), uint64_t{spec.m} * spec.k * 4);
  BQ_CHECK(args.y->size() >= uint64_t{spec.m} * spec.n * 4, "matvec {}: y '{}' holds {} bytes, needs {}",
           spec.key(), args.y->label(), args.y->size(), uint64_t{spec.m} * spec.n * 4);
  if (const Hooks& h = spec.hooks; h.kv_n) {
    const uint64_t need = uint64_t{h.kv_ctx} * h.kv_n * (h.kv_f16 ? 2 : 4);
    for (const gpu::Buffer* c : {args.k_cache, args.v_cache})
      BQ_CHECK(c && *c && c->size() >= need, "matvec {}: a KV cache of {} bytes is needed, '{}' holds {}",
               spec.key(), need, c && *c ? c->label() : std::string("none"), c && *c ? c->size() : 0);
  }
  const std::string label = spec.key();
  Prepared p;
  p.spec = spec;
  p.kernel_ = &ctx.kernel(label, label, [&] { return wgsl(spec); });
  const auto roles = bindings(spec);
  const gpu::Buffer* out = args.y;
  const gpu::Buffer* xin = args.x;  // what binding X reads
  if (x_prequantized(spec)) {
    const KernelSpec qs = xquant::plan(spec);
    if (args.xq) {
      BQ_CHECK(args.xq->size() >= xquant::bytes(qs), "matvec {}: xq '{}' holds {} bytes, needs {}", label,
               args.xq->label(), args.xq->size(), xquant::bytes(qs));
      xin = args.xq;
    } else {
      p.xq_ = ctx.create_buffer(xquant::bytes(qs), gpu::kStorage, label + ".xq");
      xin = &p.xq_;
    }
    p.quant_ = xquant::prepare(ctx, qs, *args.x, *xin, args.norm_w);
  }
  if (spec.splits > 1) {
    out = &split_sum::partials_buffer(ctx, spec, spec.m, args.part, p.part_, "matvec " + label);
    p.sum_ = split_sum::prepare(ctx, split_sum::plan(ctx, spec.splits, spec.hooks), *out, *args.y, args.bias,
                                spec.m, spec.n);
  }
  for (size_t ci = 0; ci < a.chunks.size(); ++ci) {
    const auto& c = a.chunks[ci];
    if (spec.hooks.epilogue == Epilogue::Rope)
      BQ_CHECK(c.row0 % spec.hooks.head_dim == 0 && c.rows % spec.hooks.head_dim == 0,
               "matvec {}: chunk rows {}+{} of '{}' split a head", label, c.row0, c.rows, a.label);
    std::vector<gpu::Binding> b;
    std::vector<bool> uniform_flags;
    for (Role r : roles) {
      const gpu::Buffer* buf = nullptr;     // a whole buffer (activations, params)
      const gpu::Slice* slice = nullptr;    // weight data in an arena
      const gpu::Binding* range = nullptr;  // a buffer or an arena slice (norm weights, bias)
      switch (r) {
        case Role::Params: buf = &c.params; break;
        case Role::X: buf = xin; break;
        case Role::MainA: slice = &c.main; break;
        case Role::SideA: slice = &c.side; break;
        case Role::MainB: slice = &args.b->chunks[ci].main; break;
        case Role::SideB: slice = &args.b->chunks[ci].side; break;
        case Role::NormW: range = &args.norm_w; break;
        case Role::Bias: range = &args.bias; break;
        case Role::Pos: buf = args.pos; break;
        case Role::Y: buf = out; break;
        case Role::KCache: buf = args.k_cache; break;
        case Role::VCache: buf = args.v_cache; break;
      }
      if (range) {
        BQ_CHECK(*range, "matvec {}: a buffer for binding {} is missing", label, b.size());
        b.push_back(*range);
      } else if (slice) {
        BQ_CHECK(*slice, "matvec {}: weight data for binding {} is missing", label, b.size());
        b.push_back(slice->binding());
      } else {
        BQ_CHECK(buf && *buf, "matvec {}: a buffer for binding {} is missing", label, b.size());
        b.push_back({buf});
      }
      uniform_flags.push_back(r == Role::Params);
    }
    std::unique_ptr<bool[]> flags(new bool[uniform_flags.size()]);
    for (size_t i = 0; i < uniform_flags.size(); ++i) flags[i] = uniform_flags[i];
    p.groups_.push_back(ctx.bind(*p.kernel_, b, std::span<const bool>(flags.get(), uniform_flags.size())));
    p.grids_.push_back(grid(spec, c.rows));
  }
  return p;
}

void Prepared::record(gpu::Recorder& rec) const {
  if (quant_) quant_->record(rec);
  for (size_t i = 0; i < groups_.size(); ++i) rec.dispatch(*kernel_, groups_[i], grids_[i]);
  if (sum_) sum_->record(rec);
}

}  // namespace blockq::matvec
