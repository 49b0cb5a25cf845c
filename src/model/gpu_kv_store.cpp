// The KV cache's sizes and the store kernel (gpu_kv_store.wgsl).
#include "model/gpu_kv_store.hpp"

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
