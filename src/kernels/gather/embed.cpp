// Embedding lookup on the GPU from ggml tables: row chunks within the binding
// limits, WGSL generation (embed.wgsl + one decode per format), the EmbedGpu
// runner and its Program form.
#include <algorithm>

#include <fmt/format.h>

#include "kernels/gather/gather.hpp"
#include "util/embedded_wgsl.hpp"
#include "util/error.hpp"
#include "util/template.hpp"

namespace blockq::gather {
namespace {

const char* decode_file(Format f) {
  switch (f) {
    case Format::F32: return "kernels/gather/embed_f32.wgsl";
    case Format::F16: return "kernels/gather/embed_f16.wgsl";
    case Format::Q4_0: return "kernels/gather/embed_q4_0.wgsl";
    case Format::Q4_1: return "kernels/gather/embed_q4_1.wgsl";
    case Format::Q8_0: return "kernels/gather/embed_q8_0.wgsl";
    case Format::Q6_K: return "kernels/gather/embed_q6_k.wgsl";
    default: return nullptr;
  }
}

void check_ids(std::span<const int32_t> ids, uint64_t n_vocab) {
  for (size_t t = 0; t < ids.size(); ++t)
    BQ_CHECK(ids[t] >= 0 && uint64_t(ids[t]) < n_vocab,
             "embedding: token id {} at position {} is out of range [0, {})", ids[t], t, n_vocab);
}

}  // namespace

EmbedLayout embed_layout(const gpu::Context& ctx, const twin::EmbedSpec& spec, const Options& o) {
  BQ_CHECK(decode_file(spec.format), "embedding: format {} has no GPU decode (Q8_0, Q4_0, Q4_1, Q6_K, "
           "F16, F32)", traits(spec.format).name);
  BQ_CHECK(spec.n_vocab > 0 && spec.n_vocab < (uint64_t{1} << 31) && spec.n_embd > 0 &&
               spec.n_embd < (uint64_t{1} << 31),
           "embedding: table [{}, {}] is empty or too large", spec.n_vocab, spec.n_embd);
  EmbedLayout l;
  l.row_bytes = row_bytes(spec.format, spec.n_embd);
  const uint64_t lim = chunk_limit(ctx, o);
  BQ_CHECK(l.row_bytes <= lim, "embedding: a {} row of {} values ({} bytes) exceeds the {} bytes a "
           "storage binding may hold", traits(spec.format).name, spec.n_embd, l.row_bytes, lim);
  const uint64_t per_chunk = lim / l.row_bytes;
  for (uint64_t r = 0; r < spec.n_vocab; r += per_chunk) {
    EmbedChunk c;
    c.row_lo = r;
    c.row_hi = std::min(spec.n_vocab, r + per_chunk);
    c.byte_off = r * l.row_bytes;
    c.bytes = (c.row_hi - c.row_lo) * l.row_bytes;
    l.chunks.push_back(c);
  }
  KernelSpec& k = l.spec;
  k.op = Op::Embed;
  k.weight.format = spec.format;
  k.n = uint32_t(spec.n_vocab);
  k.k = uint32_t(spec.n_embd);
  k.wg = pick_workgroup_size(ctx, o);
  k.max_groups = ctx.limits().maxComputeWorkgroupsPerDimension;
  return l;
}

std::string embed_wgsl(const EmbedLayout& l) {
  const KernelSpec& k = l.spec;
  return Template(wgsl_file("kernels/gather/embed.wgsl"), k.key())
      .set_u("WG", k.wg)
      .set_u("N_EMBD", k.k)
      .set_u("N_VOCAB", k.n)
      .set_u("ROW_BYTES", l.row_bytes)
      .set("DECODE", std::string(wgsl_file(decode_file(k.weight.format))))
      .render();
}

uint64_t embed_bytes_moved(const EmbedLayout& l, uint64_t n_ids) {
  return n_ids * (l.row_bytes + 4 + uint64_t(l.spec.k) * 4);
}

struct EmbedGpu::Impl {
  gpu::Context* ctx = nullptr;
  const gpu::Kernel* kernel = nullptr;
  std::vector<gpu::Buffer> table, params;
  gpu::Buffer ids, out;
  std::vector<gpu::BindGroup> groups;
  std::vector<bool> needed;
  uint64_t max_ids = 0, n_out = 0;
};

EmbedGpu::EmbedGpu(gpu::Context& ctx, std::span<const uint8_t> table, const twin::EmbedSpec& spec,
                   uint64_t max_ids, const Options& o)
    : impl_(std::make_unique<Impl>()) {
  layout_ = embed_layout(ctx, spec, o);
  BQ_CHECK(table.size() >= layout_.row_bytes * spec.n_vocab, "embedding: {} table [{}, {}] needs {} bytes, has {}",
           traits(spec.format).name, spec.n_vocab, spec.n_embd, layout_.row_bytes * spec.n_vocab, table.size());
  Impl& m = *impl_;
  m.ctx = &ctx;
  m.max_ids = std::max<uint64_t>(max_ids, 1);
  const std::string key = layout_.spec.key();
  m.kernel = &ctx.kernel(key, key, [&] { return embed_wgsl(layout_); });
  const uint64_t out_bytes = m.max_ids * spec.n_embd * 4;
  BQ_CHECK(m.max_ids * spec.n_embd < (uint64_t{1} << 32) && out_bytes <= ctx.limits().maxStorageBufferBindingSize,
           "embedding: an output of {} x {} floats exceeds a storage binding", m.max_ids, spec.n_embd);
  m.ids = ctx.create_buffer(m.max_ids * 4, gpu::kStorage, "embed.ids");
  m.out = ctx.create_buffer(out_bytes, gpu::kStorage, "embed.out");
  for (size_t c = 0; c < layout_.chunks.size(); ++c) {
    const EmbedChunk& ch = layout_.chunks[c];
    m.table.push_back(ctx.create_buffer(ch.bytes, gpu::kStorage, fmt::format("embed.table.{}", c)));
    ctx.upload(m.table.back(), table.subspan(ch.byte_off, ch.bytes));
    m.params.push_back(ctx.create_buffer(16, gpu::kUniform, fmt::format("embed.params.{}", c)));
    const bool uni[4] = {true, false, false, false};
    m.groups.push_back(ctx.bind(*m.kernel, std::vector<gpu::Binding>{{&m.params[c]}, {&m.ids}, {&m.table[c]}, {&m.out}},
                                std::span<const bool>(uni, 4)));
  }
  m.needed.assign(layout_.chunks.size(), false);
}

EmbedGpu::~EmbedGpu() = default;

void EmbedGpu::set_ids(std::span<const int32_t> ids) {
  Impl& m = *impl_;
  check_ids(ids, layout_.spec.n);
  BQ_CHECK(ids.size() <= m.max_ids, "embedding: {} ids, the runner was sized for {}", ids.size(), m.max_ids);
  if (!ids.empty()) m.ctx->upload(m.ids, ids);
  m.n_out = ids.size() * uint64_t(layout_.spec.k);
  std::fill(m.needed.begin(), m.needed.end(), false);
  const uint64_t per_chunk = layout_.chunks[0].row_hi - layout_.chunks[0].row_lo;
  for (int32_t id : ids) m.needed[uint64_t(id) / per_chunk] = true;
  for (size_t c = 0; c < layout_.chunks.size(); ++c) {
    const uint32_t prm[4] = {uint32_t(m.n_out), uint32_t(layout_.chunks[c].row_lo),
                             uint32_t(layout_.chunks[c].row_hi), 0};
    m.ctx->upload(m.params[c], std::span<const uint32_t>(prm, 4));
  }
}

void EmbedGpu::record(gpu::Recorder& r) const {
  const Impl& m = *impl_;
  if (m.n_out == 0) return;
  const gpu::Grid grid = gpu::wrap_workgroups((m.n_out + layout_.spec.wg - 1) / layout_.spec.wg, layout_.spec.max_groups);
  for (size_t c = 0; c < m.groups.size(); ++c)
    if (m.needed[c]) r.dispatch(*m.kernel, m.groups[c], grid);
}

size_t EmbedGpu::dispatches() const {
  return size_t(std::count(impl_->needed.begin(), impl_->needed.end(), true));
}

void EmbedGpu::poison() const {
  std::vector<uint32_t> fill(impl_->out.size() / 4, kPoisonF32);
  impl_->ctx->upload(impl_->out, std::span<const uint32_t>(fill));
}

std::vector<float> EmbedGpu::read() const { return impl_->ctx->download<float>(impl_->out, 0, impl_->n_out); }

kernels::Program embed_program(const gpu::Context& ctx, std::span<const uint8_t> table,
                               const twin::EmbedSpec& spec, std::span<const int32_t> ids,
                               const Options& o) {
  const EmbedLayout l = embed_layout(ctx, spec, o);
  check_ids(ids, spec.n_vocab);
  kernels::Program prog;
  prog.kernels.push_back({l.spec.key(), embed_wgsl(l), l.spec.wg});
  auto add = [&](std::string name, uint64_t size, const void* init, size_t n, bool uniform = false,
                 uint32_t poison = 0) {
    const auto* b = static_cast<const uint8_t*>(init);
    prog.buffers.push_back({std::move(name), std::max<uint64_t>(4, (size + 3) & ~uint64_t{3}), uniform,
                            std::vector<uint8_t>(b, b + n), poison});
    return uint32_t(prog.buffers.size() - 1);
  };
  const uint64_t n_out = ids.size() * spec.n_embd;
  const uint32_t ib = add("ids", ids.size_bytes(), ids.data(), ids.size_bytes());
  const uint32_t ob = add("output", n_out * 4, nullptr, 0, false, kPoisonF32);
  const uint64_t per_chunk = l.chunks[0].row_hi - l.chunks[0].row_lo;
  std::vector<bool> needed(l.chunks.size(), false);
  for (int32_t id : ids) needed[uint64_t(id) / per_chunk] = true;
  for (size_t c = 0; c < l.chunks.size() && n_out; ++c) {
    if (!needed[c]) continue;
    const EmbedChunk& ch = l.chunks[c];
    const uint32_t prm[4] = {uint32_t(n_out), uint32_t(ch.row_lo), uint32_t(ch.row_hi), 0};
    kernels::ProgramDispatch d;
    d.bindings = {add(fmt::format("params.{}", c), 16, prm, 16, true), ib,
                  add(fmt::format("table.{}", c), ch.bytes, table.data() + ch.byte_off, ch.bytes), ob};
    d.grid = gpu::wrap_workgroups((n_out + l.spec.wg - 1) / l.spec.wg, l.spec.max_groups);
    prog.dispatches.push_back(std::move(d));
  }
  kernels::ProgramOutput po;
  po.name = "output";
  po.buffer = ob;
  po.dtype = "float32";
  po.shape = {int64_t(ids.size()), int64_t(spec.n_embd)};
  prog.outputs.push_back(std::move(po));
  return prog;
}

}  // namespace blockq::gather
