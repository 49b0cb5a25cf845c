// The attention benchmark behind `blockq bench attention`: µs per call of the
// attention (kernels/attention) for one token or a pass of tokens ending at
// given positions, and its rate (4 head_dim flops a query head and position),
// caches rotated over copies so the L2 holds none of them, and the bytes it
// must read (k and v of the visible positions, q, out) against the streaming
// read.
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "bench/bench.hpp"
#include "kernels/attention/attention.hpp"
#include "quant/half.hpp"
#include "util/error.hpp"

namespace blockq::bench {

std::vector<AttentionRow> bench_attention(const gpu::Context& ctx, const AttentionBenchOptions& o,
                                          const Bandwidth& bw) {
  std::vector<AttentionRow> rows;
  const uint32_t most = *std::max_element(o.positions.begin(), o.positions.end());
  const uint32_t n_ctx = std::max(o.n_ctx, most + 1);
  for (const uint32_t m : o.tokens)
    for (const AttentionHeads& hs : o.heads) {
      BQ_CHECK(m >= 1 && m <= most + 1, "bench attention: {} tokens cannot end at position {}", m, most);
      const attention::Shape shape{hs.n_head, hs.n_kv, hs.head_dim, n_ctx, m, o.kv};
      const uint64_t elems = uint64_t{n_ctx} * hs.n_kv * hs.head_dim;
      const uint64_t cache = elems * (o.kv == Format::F16 ? 2 : 4);
      const size_t copies = std::clamp<size_t>(o.rotate_bytes / (2 * cache), 1, o.max_copies);
      // Random caches (the values do not change the time; every copy the same).
      std::vector<uint16_t> h(elems);
      std::vector<float> f(elems);
      uint32_t s = 12345;
      for (uint64_t i = 0; i < elems; ++i) {
        s = s * 1664525u + 1013904223u;
        f[i] = float(int32_t(s >> 8) % 2001 - 1000) / 1000.f;
        h[i] = f32_to_f16(f[i]);
      }
      std::vector<float> qv(uint64_t{m} * hs.n_head * hs.head_dim, 0.25f);
      const gpu::Buffer q = ctx.storage<float>(qv, "bench.q");
      const gpu::Buffer out = ctx.create_buffer(qv.size() * 4, gpu::kStorage, "bench.out");
      const gpu::Buffer pos = ctx.create_buffer(uint64_t{m} * 4, gpu::kStorage, "bench.pos");
      std::vector<gpu::Buffer> kc, vc;
      std::vector<attention::Attention> att;
      for (size_t c = 0; c < copies; ++c) {
        auto up = [&](const char* name) {
          return o.kv == Format::F16 ? ctx.storage<uint16_t>(h, fmt::format("bench.{}{}", name, c))
                                     : ctx.storage<float>(f, fmt::format("bench.{}{}", name, c));
        };
        kc.push_back(up("k"));
        vc.push_back(up("v"));
      }
      const gpu::Buffer part =
          ctx.create_buffer(attention::scratch_bytes(ctx, shape, o.options), gpu::kStorage, "bench.partials");
      for (size_t c = 0; c < copies; ++c)
        att.emplace_back(ctx, shape, attention::Args{&q, &kc[c], &vc[c], &pos, &out, &part}, o.options);
      for (uint32_t p : o.positions) {
        if (p + 1 < m) continue;  // the pass would start before position 0
        const KernelSpec& spec = att[0].spec(p + 1);
        std::vector<uint32_t> ps(m);
        double pairs = 0;
        for (uint32_t t = 0; t < m; ++t) ps[t] = p + 1 - m + t, pairs += ps[t] + 1.0;
        ctx.upload<uint32_t>(pos, ps);
        const uint32_t visible = p + 1;
        auto body = [&](gpu::Recorder& r) {
          for (int rep = 0; rep < o.calls_per_sample; ++rep)
            for (const auto& a : att) a.record(r, visible);
        };
        gpu::keep_busy(ctx, body, rows.empty() ? gpu::kSettleMs : gpu::kWarmMs);
        const auto t = gpu::time_passes(ctx, o.samples, body);
        AttentionRow row;
        row.heads = hs;
        row.position = p;
        row.tokens = m;
        row.chunks = attention::dispatched_chunks(spec, visible);
        row.spec = spec.key();
        row.us = t.median() / (1e3 * o.calls_per_sample * copies);
        row.bytes = 2.0 * visible * hs.n_kv * hs.head_dim * (o.kv == Format::F16 ? 2 : 4) + 2.0 * qv.size() * 4;
        row.gbps = row.bytes / (row.us * 1e3);
        row.ratio = bw.gbps > 0 ? row.gbps / bw.gbps : 0;
        row.gflops = 4.0 * hs.head_dim * hs.n_head * pairs / (row.us * 1e3);
        row.copies = uint32_t(copies);
        rows.push_back(row);
      }
    }
  return rows;
}

}  // namespace blockq::bench
