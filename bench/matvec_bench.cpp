// `blockq bench matvec`: microseconds per call (timestamp queries, median),
// GB/s of the bytes that must move (weights and scales in the kernel's
// layout, x and y once each) and the ratio to the streaming-read bandwidth
// measured in the same run. Weights rotate across copies so the L2 cache
// does not flatter the figures.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <random>
#include <utility>

#include "bench/bench.hpp"
#include "gpu/recorder.hpp"
#include "kernels/common/bandwidth.hpp"
#include "kernels/matvec/op.hpp"
#include "kernels/matvec/rows.hpp"
#include "quant/random_blocks.hpp"
#include "util/error.hpp"

namespace blockq::bench {

namespace {

OnnxBlockMatrix random_onnx(const WeightKind& kind, uint32_t n, uint32_t k, uint32_t seed) {
  OnnxBlockMatrix m;
  m.bits = kind.bits;
  m.block_size = kind.block_size;
  m.rows = n;
  m.cols = k;
  std::mt19937_64 rng(seed);
  m.data.resize(n * m.row_data_bytes());
  for (auto& b : m.data) b = static_cast<uint8_t>(rng());
  std::uniform_real_distribution<float> small(0.001f, 0.01f);
  m.scales.resize(n * m.blocks_per_row());
  for (auto& s : m.scales) s = small(rng);
  if (kind.zero_points) {
    m.zero_points.emplace(n * m.zp_row_bytes());
    for (auto& z : *m.zero_points) z = static_cast<uint8_t>(rng());
  }
  return m;
}

// Times calls_per_sample rounds of every prepared dispatch (one per rotated
// weight copy) and fills row's µs per call (median), GB/s of `bytes` and its
// ratio to the read bandwidth. warm_ms: the warm-up before timing.
template <class P>
void time_calls(const gpu::Context& ctx, const MatvecBenchOptions& o, const std::vector<P>& prepared, double bytes,
                const Bandwidth& bw, MatvecRow& row, double warm_ms) {
  auto body = [&](gpu::Recorder& r) {
    for (int rep = 0; rep < o.calls_per_sample; ++rep)
      for (const auto& p : prepared) p.record(r);
  };
  gpu::keep_busy(ctx, body, warm_ms);  // compiles everything, ramps the clocks up
  auto t = gpu::time_passes(ctx, o.samples, body);
  row.us = t.median() / (double(o.calls_per_sample) * prepared.size()) / 1e3;
  row.bytes = bytes;
  row.gbps = row.bytes / (row.us * 1e3);
  row.ratio = row.gbps / bw.gbps;
  row.gpu_timestamps = t.gpu_timestamps;
}

}  // namespace

Hooks matvec_hooks(const std::string& name, uint32_t n) {
  Hooks h;
  if (name == "store") return h;
  if (name == "acc") {
    h.epilogue = Epilogue::Acc;
    return h;
  }
  h.prologue = Prologue::RmsNorm;
  if (name == "rms") return h;
  if (name == "silu") {
    h.epilogue = Epilogue::SiluGate;
    return h;
  }
  if (name == "rope") {
    h.epilogue = Epilogue::Rope;
    h.head_dim = n % 128 == 0 ? 128 : 64;
    BQ_CHECK(n % h.head_dim == 0, "hooks 'rope': n = {} is not whole heads of 64 rows", n);
    h.n_rot = h.head_dim;
    h.rope_base = 500000.f;
    return h;
  }
  fail("unknown hooks '{}': use store, acc, rms, rope or silu", name);
}

std::vector<MatvecRow> bench_matvec(const gpu::Context& ctx, const MatvecBenchOptions& o,
                                    const Bandwidth& bw) {
  std::vector<MatvecRow> rows;
  for (const auto& kind : o.kinds)
    for (const auto& [n, k] : o.shapes) {
      // A result row of this case at batch m.
      auto row_of = [&, n = n, k = k](uint32_t m) {
        MatvecRow row;
        row.kind = kind.name();
        row.n = n;
        row.k = k;
        row.m = m;
        return row;
      };
      if (!kind.onnx && k % traits(kind.format).block_elems != 0) {
        MatvecRow row = row_of(0);
        row.error = fmt::format("k = {} is not a multiple of the {}-element block", k, traits(kind.format).block_elems);
        rows.push_back(row);
        continue;
      }
      // Host data for one copy; the copies differ only by where they live.
      std::vector<uint8_t> blocks;
      OnnxBlockMatrix om;
      matvec::HostWeight hw{kind, n, k};
      if (kind.onnx) {
        om = random_onnx(kind, n, k, 7);
        hw.onnx = &om;
      } else {
        blocks = random_blocks(kind.format, n, k, 7);
        hw.ggml = blocks;
      }
      std::vector<matvec::Weights> copies;
      uint64_t wbytes = 0;
      try {
        do {
          matvec::UploadOptions uo;
          uo.max_chunk_bytes = o.max_chunk_bytes;
          copies.push_back(matvec::upload(ctx, hw, fmt::format("bench.{}.{}", kind.name(), copies.size()), uo));
          wbytes = copies.back().bytes();
        } while (copies.size() < o.max_copies && wbytes * copies.size() < o.rotate_bytes);
      } catch (const Error& e) {  // e.g. k not a multiple of a K-quant's 256-element block
        MatvecRow row = row_of(0);
        row.error = e.what();
        rows.push_back(row);
        continue;
      }
      // The first timing after the upload (host work, the GPU idle) warms up
      // for longer (gpu::kSettleMs); the others for the usual gpu::kWarmMs.
      double warm_ms = gpu::kSettleMs;
      auto next_warm = [&] { return std::exchange(warm_ms, gpu::kWarmMs); };
      double read_us = 0;
      if (o.same_size_read)
        read_us = measure_read_bandwidth(ctx, wbytes, static_cast<uint32_t>(copies.size()), {}, next_warm()).us;
      for (uint32_t m : o.batches) {
        std::vector<float> x(size_t{m} * k);
        std::mt19937 rng(11);
        std::uniform_real_distribution<float> d(-1.f, 1.f);
        for (auto& v : x) v = d(rng);
        auto xb = ctx.storage<float>(x, "bench.x");
        auto yb = ctx.create_buffer(uint64_t{m} * n * 4, gpu::kStorage, "bench.y");
        // The hooks' inputs: RMSNorm weights [k], positions [m] (RoPE).
        std::vector<float> gw(k);
        for (auto& v : gw) v = 1.f + 0.5f * d(rng);
        auto norm_w = ctx.storage<float>(gw, "bench.norm_w");
        std::vector<uint32_t> posv(m);
        for (uint32_t t = 0; t < m; ++t) posv[t] = 40 + t;
        auto posb = ctx.storage<uint32_t>(posv, "bench.pos");
        for (const auto& hook_name : o.hooks)
          for (const auto& variant : o.variants) {
            MatvecRow row = row_of(m);
            row.hooks = hook_name;
            row.read_us = read_us;
            try {
              const Hooks hooks = matvec_hooks(hook_name, n);
              const bool two = hooks.epilogue == Epilogue::SiluGate;  // gate and up: two weights a call
              BQ_CHECK(!two || copies.size() >= 2, "hooks 'silu' need two weight copies");
              // Activations as the model takes them unless the sweep says (i8).
              matvec::Options opt = variant;
              if (!opt.int8) opt.int8 = matvec::int8_by_default(matvec::limits_of(ctx), kind, n, k);
              KernelSpec spec = matvec::plan(ctx, kind, n, k, m, hooks, opt);
              row.spec = spec.key();
              std::vector<matvec::Prepared> prepared;
              for (size_t i = 0; i < copies.size(); ++i) {
                matvec::Args a{.a = &copies[i], .x = &xb, .y = &yb};
                if (two) a.b = &copies[(i + 1) % copies.size()];
                if (hooks.prologue == Prologue::RmsNorm) a.norm_w = &norm_w;
                if (hooks.epilogue == Epilogue::Rope) a.pos = &posb;
                prepared.push_back(matvec::prepare(ctx, spec, a));
              }
              const double weight_bytes = double(wbytes) * (two ? 2 : 1);
              const double hook_bytes = hooks.prologue == Prologue::RmsNorm ? 4.0 * k : 0.0;
              const double y_bytes = 4.0 * m * n * (hooks.epilogue == Epilogue::Acc ? 2 : 1);  // Acc reads y too
              time_calls(ctx, o, prepared, weight_bytes + hook_bytes + 4.0 * m * k + y_bytes, bw, row, next_warm());
            } catch (const Error& e) {
              row.error = e.what();
            }
            rows.push_back(row);
            if (o.progress)
              fmt::print(stderr, "  {:<10} {:>6}x{:<6} m={} {:<5} {:>9.2f} us {:>8.1f} GB/s {:>5.1f}%  {}\n", row.kind,
                         n, k, m, row.hooks, row.us, row.gbps, 100 * row.ratio,
                         row.error.empty() ? row.spec : row.error);
          }
        if (o.rows) {
          // The row gather of m random rows into y [m, k], from the rotated copies.
          MatvecRow row = row_of(m);
          row.rows = true;
          try {
            std::vector<uint32_t> ids(m);
            for (auto& id : ids) id = static_cast<uint32_t>(rng() % n);
            auto idb = ctx.storage<uint32_t>(ids, "bench.ids");
            auto gy = ctx.create_buffer(uint64_t{m} * k * 4, gpu::kStorage, "bench.rows.y");
            const KernelSpec spec = matvec::plan_rows(ctx, kind, n, k, m);
            row.spec = spec.key();
            std::vector<matvec::PreparedRows> prepared;
            for (const auto& c : copies) prepared.push_back(matvec::prepare_rows(ctx, spec, c, idb, gy));
            time_calls(ctx, o, prepared, double(wbytes) / n * m + 4.0 * m * k + 4.0 * m, bw, row, next_warm());
          } catch (const Error& e) {
            row.error = e.what();
          }
          rows.push_back(row);
          if (o.progress)
            fmt::print(stderr, "  {:<10} {:>6}x{:<6} m={} {:>9.2f} us  rows  {}\n", row.kind, n, k, m, row.us,
                       row.error.empty() ? row.spec : row.error);
        }
      }
    }
  return rows;
}

}  // namespace blockq::bench
