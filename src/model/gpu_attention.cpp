// Generation and binding of the single-query attention kernel
// (gpu_attention.wgsl).
#include "model/gpu_attention.hpp"

#include <algorithm>
#include <cmath>

#include "quant/format.hpp"
#include "util/embedded_wgsl.hpp"
#include "util/error.hpp"
#include "util/template.hpp"

namespace blockq::model {

uint64_t kv_cache_bytes(Format kv, uint64_t n) { return n * (kv == Format::F16 ? 2 : 4); }

namespace {

void check_kv(Format kv, uint32_t row) {
  BQ_CHECK(kv == Format::F32 || kv == Format::F16, "KV cache: type {} is not supported (f32 or f16)",
           traits(kv).name);
  BQ_CHECK(row % 2 == 0, "KV cache: rows of {} values must be even", row);
}

}  // namespace

KernelSpec attention_spec(const gpu::Context& ctx, const GpuAttentionShape& s) {
  BQ_CHECK(s.n_head > 0 && s.n_kv_head > 0 && s.n_head % s.n_kv_head == 0 && s.head_dim > 0 && s.n_ctx > 0,
           "attention: n_head {} must be a multiple of n_kv_head {}, head_dim {} and n_ctx {} non-zero",
           s.n_head, s.n_kv_head, s.head_dim, s.n_ctx);
  KernelSpec k;
  k.op = Op::Attention;
  k.n = s.n_head;
  k.k = s.head_dim;
  k.m = s.m;
  k.tile = s.n_ctx;
  k.variant = s.n_kv_head;
  k.offsets.q = s.q_off;
  k.offsets.row = s.q_stride;
  BQ_CHECK(s.q_stride == 0 || s.q_stride >= s.n_head * s.head_dim,
           "attention: q rows of stride {} cannot hold {} heads of {}", s.q_stride, s.n_head, s.head_dim);
  check_kv(s.kv, s.head_dim);
  k.weight.format = s.kv;
  uint32_t wg = 64;
  while (wg > ctx.limits().maxComputeInvocationsPerWorkgroup || wg > ctx.limits().maxComputeWorkgroupSizeX) wg /= 2;
  k.wg = wg;
  k.max_groups = ctx.limits().maxComputeWorkgroupsPerDimension;
  BQ_CHECK(s.n_head <= k.max_groups && s.m >= 1 && s.m <= k.max_groups, "attention: {} heads exceed {} workgroups per dimension", s.n_head,
           k.max_groups);
  const uint64_t base = uint64_t{wg + s.head_dim} * 4;
  BQ_CHECK(base <= ctx.limits().maxComputeWorkgroupStorageSize,
           "attention: head_dim {} does not fit workgroup memory", s.head_dim);
  // tile_n: positions of p kept in workgroup memory (all n_ctx of them when
  // they fit, else 0: p goes through the scores buffer).
  k.tile_n = base + uint64_t{s.n_ctx} * 4 <= ctx.limits().maxComputeWorkgroupStorageSize ? s.n_ctx : 0;
  return k;
}

std::string attention_wgsl(const KernelSpec& spec) {
  return Template(wgsl_file("model/gpu_attention.wgsl"), spec.key())
      .set_u("WG", spec.wg)
      .set_u("N_HEAD", spec.n)
      .set_u("HD", spec.k)
      .set_u("N_KV", spec.variant)
      .set_u("GQA", spec.n / spec.variant)
      .set_u("CTX", spec.tile)
      .set_u("Q_OFF", spec.offsets.q)
      .set_u("Q_ROW", spec.offsets.row ? spec.offsets.row : spec.n * spec.k)
      .set("SCALE", wgsl_float(1.0f / std::sqrt(float(spec.k))))
      .set("KV_T", spec.weight.format == Format::F16 ? "u32" : "f32")
      .set("P_DECL", spec.tile_n
                         ? "@group(0) @binding(4) var<storage, read_write> out: array<f32>;   // [M, N_HEAD, HD]\n"
                           "var<workgroup> ps: array<f32, CTX>;  // scores, then p"
                         : "@group(0) @binding(4) var<storage, read_write> sc: array<f32>;    // [M, N_HEAD, CTX] scores, then p\n"
                           "@group(0) @binding(5) var<storage, read_write> out: array<f32>;   // [M, N_HEAD, HD]")
      .set("PJ", spec.tile_n ? "ps[j]" : "sc[row + j]")
      .set("KV_FUNCS", spec.weight.format == Format::F16
                           ? "fn k_pair(i: u32) -> vec2f { return unpack2x16float(kc[i / 2u]); }\n"
                             "fn v_at(i: u32) -> f32 { return unpack2x16float(vc[i / 2u])[i & 1u]; }"
                           : "fn k_pair(i: u32) -> vec2f { return vec2f(kc[i], kc[i + 1u]); }\n"
                             "fn v_at(i: u32) -> f32 { return vc[i]; }")
      .render();
}

GpuAttention::GpuAttention(const gpu::Context& ctx, const GpuAttentionShape& s, const GpuAttentionArgs& a) {
  BQ_CHECK(a.q && a.k && a.v && a.pos && a.scores && a.out, "attention: a buffer is missing");
  spec_ = attention_spec(ctx, s);
  const uint64_t q_bytes = uint64_t{s.m} * s.n_head * s.head_dim * 4;
  const uint64_t q_in = (s.q_off + uint64_t{s.m - 1} * s.q_row() + s.n_head * s.head_dim) * 4;
  const uint64_t kv_bytes = kv_cache_bytes(s.kv, uint64_t{s.n_ctx} * s.n_kv_head * s.head_dim);
  BQ_CHECK(a.q->size() >= q_in && a.out->size() >= q_bytes, "attention: q needs {} bytes and out {}", q_in, q_bytes);
  BQ_CHECK(a.k->size() >= kv_bytes && a.v->size() >= kv_bytes, "attention: the k/v cache needs {} bytes",
           kv_bytes);
  BQ_CHECK(a.scores->size() >= uint64_t{s.m} * s.n_head * s.n_ctx * 4, "attention: scores need {} bytes",
           uint64_t{s.m} * s.n_head * s.n_ctx * 4);
  const std::string key = spec_.key();
  kernel_ = &ctx.kernel(key, key, [&] { return attention_wgsl(spec_); });
  if (spec_.tile_n)
    group_ = ctx.bind(*kernel_, {{a.q}, {a.k}, {a.v}, {a.pos}, {a.out}});
  else
    group_ = ctx.bind(*kernel_, {{a.q}, {a.k}, {a.v}, {a.pos}, {a.scores}, {a.out}});
}

void GpuAttention::record(gpu::Recorder& rec) const { rec.dispatch(*kernel_, group_, {spec_.n, spec_.m, 1}); }

GpuKvStore::GpuKvStore(const gpu::Context& ctx, uint32_t row, uint32_t n_ctx, uint32_t m, const gpu::Buffer& k,
                       const gpu::Buffer& v, const gpu::Buffer& pos, const gpu::Buffer& k_cache,
                       const gpu::Buffer& v_cache, Format kv, KvRows rows) {
  check_kv(kv, row);
  const uint64_t cache = kv_cache_bytes(kv, uint64_t{row} * n_ctx);
  const uint32_t stride = rows.stride ? rows.stride : row;
  BQ_CHECK(stride >= row && rows.k_off % 2 == 0 && rows.v_off % 2 == 0 && stride % 2 == 0,
           "kv store: rows of {} floats at offsets {} and {}, {} apart: need even offsets and a stride >= the row",
           row, rows.k_off, rows.v_off, stride);
  const uint64_t span = uint64_t{m - 1} * stride + row;  // floats from a row's offset to the last token's end
  BQ_CHECK(k.size() >= (rows.k_off + span) * 4 && v.size() >= (rows.v_off + span) * 4 && k_cache.size() >= cache &&
               v_cache.size() >= cache,
           "kv store: {} rows of {} floats ({} apart, offsets {} and {}), caches of {} bytes", m, row, stride,
           rows.k_off, rows.v_off, cache);
  spec_.op = Op::Copy;
  spec_.k = row;
  spec_.m = m;
  spec_.tile = n_ctx;
  spec_.weight.format = kv;
  spec_.offsets.k = rows.k_off;
  spec_.offsets.v = rows.v_off;
  spec_.offsets.row = rows.stride;
  spec_.wg = std::min<uint32_t>(64, ctx.limits().maxComputeInvocationsPerWorkgroup);
  spec_.max_groups = ctx.limits().maxComputeWorkgroupsPerDimension;
  const std::string key = spec_.key();
  const bool f16 = kv == Format::F16;
  kernel_ = &ctx.kernel(key, key, [&] {
    return Template(wgsl_file("model/gpu_kv_store.wgsl"), key)
        .set_u("WG", spec_.wg)
        .set_u("ROW", row)
        .set_u("M", m)
        .set_u("CTX", n_ctx)
        .set_u("PACK", f16 ? 2 : 1)
        .set_u("K_OFF", rows.k_off)
        .set_u("V_OFF", rows.v_off)
        .set_u("STRIDE", stride)
        .set("KV_T", f16 ? "u32" : "f32")
        .set("STORE_K", f16 ? "pack2x16float(vec2f(k[ke], k[ke + 1u]))" : "k[ke]")
        .set("STORE_V", f16 ? "pack2x16float(vec2f(v[ve], v[ve + 1u]))" : "v[ve]")
        .render();
  });
  group_ = ctx.bind(*kernel_, {{&k}, {&v}, {&pos}, {&k_cache}, {&v_cache}});
  grid_ = gpu::wrap_workgroups((uint64_t{row} * m / (f16 ? 2 : 1) + spec_.wg - 1) / spec_.wg, spec_.max_groups);
}

void GpuKvStore::record(gpu::Recorder& rec) const { rec.dispatch(*kernel_, group_, grid_); }

}  // namespace blockq::model
