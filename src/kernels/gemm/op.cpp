// Upload of raw gemm weights (row chunks) and prepared dispatches.
#include "kernels/gemm/op.hpp"

#include <algorithm>
#include <cstring>

#include "util/error.hpp"

namespace blockq::gemm {

uint64_t Weights::bytes() const {
  uint64_t b = 0;
  for (const auto& c : chunks) b += c.raw.size();
  return b;
}

Weights upload(const gpu::Context& ctx, const HostWeight& w, const std::string& label, const UploadOptions& opt) {
  BQ_CHECK(!w.kind.onnx && supported(w.kind.format), "gemm weight '{}': format {} is not supported", label,
           w.kind.name());
  const uint32_t be = std::max<uint32_t>(32, traits(w.kind.format).block_elems);
  BQ_CHECK(w.n > 0 && w.k > 0 && w.k % be == 0, "gemm weight '{}': k = {} must be a multiple of {}", label, w.k,
           be);
  const uint64_t rb = row_bytes(w.kind.format, w.k);
  BQ_CHECK(w.ggml.size() == rb * w.n, "gemm weight '{}': {} bytes of {} blocks, {} rows x {} need {}", label,
           w.ggml.size(), w.kind.name(), w.n, w.k, rb * w.n);
  uint64_t limit = std::min<uint64_t>(ctx.limits().maxStorageBufferBindingSize, ctx.limits().maxBufferSize);
  if (opt.max_chunk_bytes) limit = std::min(limit, opt.max_chunk_bytes);
  // Byte offsets in the kernel are u32.
  limit = std::min<uint64_t>(limit, 0xffffffffull);
  const uint64_t rows = limit > 8 ? (limit - 8) / rb : 0;
  BQ_CHECK(rows > 0, "gemm weight '{}': a row of {} bytes does not fit a {}-byte binding", label, rb, limit);
  Weights out;
  out.kind = w.kind;
  out.n = w.n;
  out.k = w.k;
  out.label = label;
  std::vector<uint8_t> buf;
  for (uint32_t r0 = 0; r0 < w.n; r0 += static_cast<uint32_t>(rows)) {
    const uint32_t cr = static_cast<uint32_t>(std::min<uint64_t>(rows, w.n - r0));
    Weights::Chunk c;
    c.row0 = r0;
    c.rows = cr;
    const uint64_t bytes = rb * cr;
    buf.assign((bytes + 4 + 3) / 4 * 4, 0);  // 4 bytes of padding: unaligned word reads at the end
    std::memcpy(buf.data(), w.ggml.data() + rb * r0, bytes);
    const std::string cl = cr == w.n ? label : fmt::format("{}[{}:{}]", label, r0, r0 + cr);
    c.raw = ctx.storage<uint8_t>(buf, cl);
    out.chunks.push_back(std::move(c));
  }
  return out;
}

Prepared prepare(const gpu::Context& ctx, const KernelSpec& spec, const Args& args) {
  BQ_CHECK(spec.op == Op::Gemm, "gemm: spec {} is not a gemm", spec.key());
  BQ_CHECK(args.a && args.x && args.y && args.m > 0, "gemm {}: weight, x, y and m > 0 are required", spec.key());
  const Weights& a = *args.a;
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
  Prepared p;
  p.spec = spec;
  p.m = args.m;
  p.kernel_ = &ctx.kernel(label, label, [&] { return wgsl(spec); });
  for (size_t ci = 0; ci < a.chunks.size(); ++ci) {
    const auto& c = a.chunks[ci];
    if (silu)
      BQ_CHECK(args.b->chunks[ci].row0 == c.row0 && args.b->chunks[ci].rows == c.rows,
               "gemm {}: chunks of '{}' and '{}' differ", label, a.label, args.b->label);
    const uint32_t params[4] = {c.row0, c.rows, args.m, spec.n};
    p.params_.push_back(ctx.create_buffer(sizeof(params), gpu::kUniform, label + ".params"));
    ctx.upload<uint32_t>(p.params_.back(), params);
    std::vector<gpu::Binding> b = {{&p.params_.back()}, {args.x}, {&c.raw}};
    if (silu) b.push_back({&args.b->chunks[ci].raw});
    b.push_back({args.y});
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
  for (size_t i = 0; i < groups_.size(); ++i) rec.dispatch(*kernel_, groups_[i], grids_[i]);
}

}  // namespace blockq::gemm
