// com.microsoft.GatherBlockQuantized on the GPU: chunk layout, WGSL generation
// (gbq.wgsl), host index checks, the GbqGpu runner and its Program form.
#include <algorithm>
#include <bit>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kernels/gather/gather.hpp"
#include "util/embedded_wgsl.hpp"
#include "util/error.hpp"
#include "util/template.hpp"

namespace blockq::gather {

uint64_t chunk_limit(const gpu::Context& ctx, const Options& o) {
  const auto& L = ctx.limits();
  // <= 1 GiB keeps every logical element index of a chunk (<= 4 per byte) in u32.
  uint64_t lim = std::min<uint64_t>({L.maxStorageBufferBindingSize, L.maxBufferSize, uint64_t{1} << 30});
  if (o.max_binding_bytes) lim = std::min(lim, o.max_binding_bytes);
  return lim & ~uint64_t{3};
}

uint32_t pick_workgroup_size(const gpu::Context& ctx, const Options& o) {
  const auto& L = ctx.limits();
  const uint32_t cap = std::min(L.maxComputeInvocationsPerWorkgroup, L.maxComputeWorkgroupSizeX);
  if (o.workgroup_size) {
    BQ_CHECK(o.workgroup_size <= cap, "gather: workgroup size {} exceeds the device's limit {}",
             o.workgroup_size, cap);
    return o.workgroup_size;
  }
  return std::min<uint32_t>(256, cap);
}

namespace {

uint64_t threads_for(uint64_t n_out, OutType out) { return out == OutType::F16 ? (n_out + 1) / 2 : n_out; }

std::string shape_str(const twin::Shape& s) { return fmt::format("[{}]", fmt::join(s, ", ")); }

}  // namespace

GbqLayout gbq_layout(const gpu::Context& ctx, const twin::GbqInputs& w, const twin::GbqSpec& spec,
                     OutType out, IndexType idx, const Options& o) {
  twin::GbqInputs geo = w;
  geo.indices = std::span<const int32_t>();
  geo.indices_shape = {0};
  GbqLayout l;
  l.plan = twin::gbq_plan(geo, spec);
  l.has_zp = !w.zero_points.empty();
  const auto& p = l.plan;
  const uint64_t rps = uint64_t(p.inner / p.cols);  // data rows per slice
  const uint64_t row_data = uint64_t(w.data_shape.back());
  const uint64_t slice_data = rps * row_data, slice_scales = rps * uint64_t(p.n_blocks),
                 slice_zp = l.has_zp ? rps * uint64_t(p.zp_row_bytes) : 0;
  const uint64_t slices = uint64_t(p.outer * p.axis_dim);
  BQ_CHECK(p.axis_dim < (int64_t{1} << 31) && slices < (uint64_t{1} << 32),
           "GatherBlockQuantized: data shape {} has too many slices for u32 indexing", shape_str(w.data_shape));
  const uint64_t lim = chunk_limit(ctx, o);
  const uint64_t per_slice = std::max({slice_data, slice_scales * 4, slice_zp});
  BQ_CHECK(per_slice <= lim,
           "GatherBlockQuantized: one gathered slice of data shape {} needs {} bytes in a binding, over "
           "the {} bytes a storage binding may hold on this device",
           shape_str(w.data_shape), per_slice, lim);
  const uint64_t per_chunk = std::max<uint64_t>(1, lim / std::max<uint64_t>(per_slice, 1));
  for (uint64_t s = 0; s < slices; s += per_chunk) {
    GbqChunk c;
    c.slice_lo = s;
    c.slice_hi = std::min(slices, s + per_chunk);
    const uint64_t n = c.slice_hi - c.slice_lo;
    c.data_off = s * slice_data, c.data_bytes = n * slice_data;
    c.scales_off = s * slice_scales, c.scales_count = n * slice_scales;
    c.zp_off = s * slice_zp, c.zp_bytes = n * slice_zp;
    l.chunks.push_back(c);
  }
  KernelSpec& k = l.spec;
  k.op = Op::Gather;
  k.weight = {Format::F32, true, uint8_t(spec.bits), spec.block_size, l.has_zp};
  k.n = uint32_t(p.axis_dim);
  k.k = uint32_t(p.inner);
  k.tile = uint32_t(p.cols);
  k.wg = pick_workgroup_size(ctx, o);
  k.max_groups = ctx.limits().maxComputeWorkgroupsPerDimension;
  k.variant = (idx == IndexType::I64 ? 1u : 0u) | (out == OutType::F16 ? 2u : 0u);
  BQ_CHECK(uint64_t(p.inner) < (uint64_t{1} << 32) && uint64_t(p.cols) < (uint64_t{1} << 32),
           "GatherBlockQuantized: data shape {} is too large", shape_str(w.data_shape));
  return l;
}

std::string gbq_wgsl(const GbqLayout& l, const twin::GbqSpec& spec) {
  const KernelSpec& k = l.spec;
  const bool f16 = k.variant & 2u;
  Template t(wgsl_file("kernels/gather/gbq.wgsl"), k.key());
  t.set("ZP_DECL", l.has_zp ? "@group(0) @binding(4) var<storage, read> zero_points: array<u32>;  "
                              "// [chunk rows][ZP_ROW_BYTES] bytes, BITS per value, low bits first"
                            : "");
  t.set("ZP_CODE",
        l.has_zp ? "let zb = row * ZP_ROW_BYTES + blk / PER_BYTE;\n"
                   "  return (zero_points[zb >> 2u] >> ((zb & 3u) * 8u + (blk % PER_BYTE) * BITS)) & MASK;"
                 : "return DEFAULT_ZP;");
  t.set_u("OUT_BINDING", l.has_zp ? 5 : 4);
  t.set("OUT_T", f16 ? "u32" : "f32");
  t.set_u("WG", k.wg);
  t.set_u("INNER", uint64_t(l.plan.inner));
  t.set_u("COLS", uint64_t(l.plan.cols));
  t.set_u("AXIS_DIM", uint64_t(l.plan.axis_dim));
  t.set_u("N_BLOCKS", uint64_t(l.plan.n_blocks));
  t.set_u("ZP_ROW_BYTES", uint64_t(l.plan.zp_row_bytes));
  t.set_u("BITS", spec.bits);
  t.set_u("BLOCK_SHIFT", uint64_t(std::countr_zero(spec.block_size)));
  t.set("IDX64", (k.variant & 1u) ? "true" : "false");
  if (!f16) {
    t.set("STORE",
          "if (g >= params.n_out) {\n    return;\n  }\n"
          "  var hit = false;\n  let v = value(g, &hit);\n  if (hit) {\n    out[g] = v;\n  }");
  } else {
    // Word g holds elements 2g (low half) and 2g + 1; a half whose slice lies in
    // another chunk keeps what that chunk's dispatch wrote (dispatches are
    // ordered); a half past the end is written as 0.
    t.set("STORE",
          "let o0 = 2u * g;\n  if (o0 >= params.n_out) {\n    return;\n  }\n"
          "  var h0 = false;\n  var h1 = true;\n  let v0 = value(o0, &h0);\n  var v1 = 0.0;\n"
          "  if (o0 + 1u < params.n_out) {\n    v1 = value(o0 + 1u, &h1);\n  }\n"
          "  if (!h0 && !h1) {\n    return;\n  }\n"
          "  var old = vec2f(0.0, 0.0);\n  if (!(h0 && h1)) {\n    old = unpack2x16float(out[g]);\n  }\n"
          "  out[g] = pack2x16float(vec2f(select(old.x, v0, h0), select(old.y, v1, h1)));");
  }
  return t.render();
}

std::vector<int64_t> gbq_check_indices(const twin::IndexSpan& idx, const twin::Shape& shape,
                                       const twin::GbqPlan& p) {
  int64_t n = 1;
  for (int64_t d : shape) {
    BQ_CHECK(d >= 0, "GatherBlockQuantized: indices shape {} has a negative dim", shape_str(shape));
    n *= d;
  }
  const size_t count = std::visit([](auto s) { return s.size(); }, idx);
  BQ_CHECK(size_t(n) == count, "GatherBlockQuantized: indices has {} values, shape {}", count, shape_str(shape));
  std::vector<int64_t> out(count);
  for (size_t i = 0; i < count; ++i) {
    const int64_t v = std::visit([i](auto s) { return int64_t(s[i]); }, idx);
    if (v < -p.axis_dim || v >= p.axis_dim) {
      std::vector<int64_t> c(shape.size());
      int64_t rest = int64_t(i);
      for (size_t d = shape.size(); d-- > 0;) c[d] = rest % shape[d], rest /= shape[d];
      fail("GatherBlockQuantized: index {} at indices[{}] (flat position {}) is out of range [{}, {}) "
           "for gather axis {} of size {}",
           v, fmt::join(c, ", "), i, -p.axis_dim, p.axis_dim, p.gather_axis, p.axis_dim);
    }
    out[i] = v < 0 ? v + p.axis_dim : v;
  }
  return out;
}

uint64_t gbq_bytes_moved(const GbqLayout& l, const twin::GbqSpec& spec, uint64_t n_indices,
                         IndexType idx, OutType out) {
  const auto& p = l.plan;
  const uint64_t slices = uint64_t(p.outer) * n_indices, rps = uint64_t(p.inner / p.cols);
  const uint64_t data = slices * uint64_t(p.inner) * spec.bits / 8;
  const uint64_t scales = slices * rps * uint64_t(p.n_blocks) * 4;
  const uint64_t zp = l.has_zp ? slices * rps * uint64_t(p.zp_row_bytes) : 0;
  const uint64_t ix = n_indices * (idx == IndexType::I64 ? 8 : 4);
  const uint64_t o = slices * uint64_t(p.inner) * (out == OutType::F16 ? 2 : 4);
  return data + scales + zp + ix + o;
}

// ---- GbqGpu

struct GbqGpu::Impl {
  gpu::Context* ctx = nullptr;
  OutType out_type = OutType::F32;
  IndexType idx_type = IndexType::I32;
  uint64_t max_indices = 0;
  const gpu::Kernel* kernel = nullptr;
  std::vector<gpu::Buffer> data, scales, zp, params;
  gpu::Buffer indices, out;
  std::vector<gpu::BindGroup> groups;
  std::vector<bool> needed;
  uint64_t n_out = 0;
};

GbqGpu::GbqGpu(gpu::Context& ctx, const twin::GbqInputs& w, const twin::GbqSpec& spec, OutType out,
               IndexType idx, uint64_t max_indices, const Options& o)
    : impl_(std::make_unique<Impl>()) {
  layout_ = gbq_layout(ctx, w, spec, out, idx, o);
  Impl& m = *impl_;
  m.ctx = &ctx;
  m.out_type = out;
  m.idx_type = idx;
  m.max_indices = std::max<uint64_t>(max_indices, 1);
  const std::string key = layout_.spec.key();
  m.kernel = &ctx.kernel(key, key, [&] { return gbq_wgsl(layout_, spec); });
  const auto& p = layout_.plan;
  const uint64_t out_elems = uint64_t(p.outer) * m.max_indices * uint64_t(p.inner);
  const uint64_t out_bytes = (out == OutType::F16 ? (out_elems + 1) / 2 : out_elems) * 4;
  BQ_CHECK(out_elems < (uint64_t{1} << 32) && out_bytes <= ctx.limits().maxStorageBufferBindingSize,
           "GatherBlockQuantized: an output of {} values for {} indices exceeds a storage binding "
           "({} bytes)", out_elems, m.max_indices, ctx.limits().maxStorageBufferBindingSize);
  m.indices = ctx.create_buffer(m.max_indices * (idx == IndexType::I64 ? 8 : 4), gpu::kStorage, "gbq.indices");
  m.out = ctx.create_buffer(out_bytes, gpu::kStorage, "gbq.out");
  for (size_t c = 0; c < layout_.chunks.size(); ++c) {
    const GbqChunk& ch = layout_.chunks[c];
    m.data.push_back(ctx.create_buffer(ch.data_bytes, gpu::kStorage, fmt::format("gbq.data.{}", c)));
    ctx.upload(m.data.back(), w.data.subspan(ch.data_off, ch.data_bytes));
    m.scales.push_back(ctx.create_buffer(ch.scales_count * 4, gpu::kStorage, fmt::format("gbq.scales.{}", c)));
    ctx.upload(m.scales.back(), w.scales.subspan(ch.scales_off, ch.scales_count));
    if (layout_.has_zp) {
      m.zp.push_back(ctx.create_buffer(ch.zp_bytes, gpu::kStorage, fmt::format("gbq.zp.{}", c)));
      ctx.upload(m.zp.back(), w.zero_points.subspan(ch.zp_off, ch.zp_bytes));
    }
    m.params.push_back(ctx.create_buffer(16, gpu::kUniform, fmt::format("gbq.params.{}", c)));
    std::vector<gpu::Binding> b = {{&m.params[c]}, {&m.indices}, {&m.data[c]}, {&m.scales[c]}};
    if (layout_.has_zp) b.push_back({&m.zp[c]});
    b.push_back({&m.out});
    const bool uni[6] = {true, false, false, false, false, false};
    m.groups.push_back(ctx.bind(*m.kernel, b, std::span<const bool>(uni, b.size())));
  }
  m.needed.assign(layout_.chunks.size(), false);
}

GbqGpu::~GbqGpu() = default;

void GbqGpu::set_indices(const twin::IndexSpan& idx, const twin::Shape& shape) {
  Impl& m = *impl_;
  const auto& p = layout_.plan;
  const std::vector<int64_t> norm = gbq_check_indices(idx, shape, p);
  BQ_CHECK(norm.size() <= m.max_indices, "GatherBlockQuantized: {} indices, the runner was sized for {}",
           norm.size(), m.max_indices);
  const bool is64 = std::holds_alternative<std::span<const int64_t>>(idx);
  BQ_CHECK(is64 == (m.idx_type == IndexType::I64), "GatherBlockQuantized: indices are int{}, the kernel "
           "was generated for int{}", is64 ? 64 : 32, is64 ? 32 : 64);
  std::visit([&](auto s) { if (!s.empty()) m.ctx->upload(m.indices, s); }, idx);
  m.n_out = uint64_t(p.outer) * norm.size() * uint64_t(p.inner);
  out_shape_.assign(p.out_shape.begin(), p.out_shape.begin() + p.gather_axis);
  out_shape_.insert(out_shape_.end(), shape.begin(), shape.end());
  // out_shape of the weight plan has a 0 where the indices go (indices_shape {0}).
  out_shape_.insert(out_shape_.end(), p.out_shape.begin() + p.gather_axis + 1, p.out_shape.end());
  // Which chunks hold a requested slice (m * axis_dim + index, every m).
  std::fill(m.needed.begin(), m.needed.end(), false);
  const uint64_t per_chunk = layout_.chunks[0].slice_hi - layout_.chunks[0].slice_lo;
  for (int64_t om = 0; om < p.outer; ++om)
    for (int64_t v : norm) m.needed[uint64_t(om * p.axis_dim + v) / per_chunk] = true;
  for (size_t c = 0; c < layout_.chunks.size(); ++c) {
    const uint32_t prm[4] = {uint32_t(m.n_out), uint32_t(norm.size()), uint32_t(layout_.chunks[c].slice_lo),
                             uint32_t(layout_.chunks[c].slice_hi)};
    m.ctx->upload(m.params[c], std::span<const uint32_t>(prm, 4));
  }
}

void GbqGpu::record(gpu::Recorder& r) const {
  const Impl& m = *impl_;
  if (m.n_out == 0) return;
  const uint64_t groups = (threads_for(m.n_out, m.out_type) + layout_.spec.wg - 1) / layout_.spec.wg;
  const gpu::Grid grid = gpu::wrap_workgroups(groups, layout_.spec.max_groups);
  for (size_t c = 0; c < m.groups.size(); ++c)
    if (m.needed[c]) r.dispatch(*m.kernel, m.groups[c], grid);
}

size_t GbqGpu::dispatches() const {
  return size_t(std::count(impl_->needed.begin(), impl_->needed.end(), true));
}

void GbqGpu::poison() const {
  std::vector<uint32_t> fill(impl_->out.size() / 4, impl_->out_type == OutType::F16 ? kPoisonF16x2 : kPoisonF32);
  impl_->ctx->upload(impl_->out, std::span<const uint32_t>(fill));
}

std::vector<float> GbqGpu::read_f32() const {
  BQ_ASSERT(impl_->out_type == OutType::F32);
  return impl_->ctx->download<float>(impl_->out, 0, impl_->n_out);
}

std::vector<uint16_t> GbqGpu::read_f16() const {
  BQ_ASSERT(impl_->out_type == OutType::F16);
  return impl_->ctx->download<uint16_t>(impl_->out, 0, impl_->n_out);
}

const gpu::Buffer& GbqGpu::out() const { return impl_->out; }

// ---- Program form

kernels::Program gbq_program(const gpu::Context& ctx, const twin::GbqInputs& in,
                             const twin::GbqSpec& spec, OutType out, const Options& o) {
  const bool is64 = std::holds_alternative<std::span<const int64_t>>(in.indices);
  const GbqLayout l = gbq_layout(ctx, in, spec, out, is64 ? IndexType::I64 : IndexType::I32, o);
  const twin::GbqPlan p = twin::gbq_plan(in, spec);
  const std::vector<int64_t> norm = gbq_check_indices(in.indices, in.indices_shape, p);
  kernels::Program prog;
  prog.kernels.push_back({l.spec.key(), gbq_wgsl(l, spec), l.spec.wg});
  auto bytes_of = [](const void* d, size_t n) {
    const auto* b = static_cast<const uint8_t*>(d);
    return std::vector<uint8_t>(b, b + n);
  };
  auto add = [&](std::string name, uint64_t size, std::vector<uint8_t> init, bool uniform = false,
                 uint32_t poison = 0) {
    prog.buffers.push_back({std::move(name), std::max<uint64_t>(4, (size + 3) & ~uint64_t{3}), uniform,
                            std::move(init), poison});
    return uint32_t(prog.buffers.size() - 1);
  };
  const size_t nidx = norm.size();
  const uint32_t ib = std::visit(
      [&](auto s) { return add("indices", s.size_bytes(), bytes_of(s.data(), s.size_bytes())); }, in.indices);
  const uint64_t n_out = p.out_elems;
  const uint32_t ob = add("output", threads_for(n_out, out) * 4, {}, false,
                          out == OutType::F16 ? kPoisonF16x2 : kPoisonF32);
  const uint64_t per_chunk = l.chunks[0].slice_hi - l.chunks[0].slice_lo;
  std::vector<bool> needed(l.chunks.size(), false);
  for (int64_t om = 0; om < p.outer; ++om)
    for (int64_t v : norm) needed[uint64_t(om * p.axis_dim + v) / per_chunk] = true;
  const uint64_t groups = (threads_for(n_out, out) + l.spec.wg - 1) / l.spec.wg;
  for (size_t c = 0; c < l.chunks.size() && n_out; ++c) {
    if (!needed[c]) continue;
    const GbqChunk& ch = l.chunks[c];
    const uint32_t prm[4] = {uint32_t(n_out), uint32_t(nidx), uint32_t(ch.slice_lo), uint32_t(ch.slice_hi)};
    kernels::ProgramDispatch d;
    d.kernel = 0;
    d.bindings.push_back(add(fmt::format("params.{}", c), 16, bytes_of(prm, 16), true));
    d.bindings.push_back(ib);
    d.bindings.push_back(add(fmt::format("data.{}", c), ch.data_bytes, bytes_of(in.data.data() + ch.data_off, ch.data_bytes)));
    d.bindings.push_back(add(fmt::format("scales.{}", c), ch.scales_count * 4,
                             bytes_of(in.scales.data() + ch.scales_off, ch.scales_count * 4)));
    if (l.has_zp)
      d.bindings.push_back(add(fmt::format("zero_points.{}", c), ch.zp_bytes,
                               bytes_of(in.zero_points.data() + ch.zp_off, ch.zp_bytes)));
    d.bindings.push_back(ob);
    d.grid = gpu::wrap_workgroups(groups, l.spec.max_groups);
    prog.dispatches.push_back(std::move(d));
  }
  kernels::ProgramOutput po;
  po.name = "output";
  po.buffer = ob;
  po.dtype = out == OutType::F16 ? "float16" : "float32";
  po.shape = p.out_shape;
  prog.outputs.push_back(std::move(po));
  return prog;
}

}  // namespace blockq::gather
