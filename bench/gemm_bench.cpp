// `blockq bench gemm`: for each format, n x k shape and m, the gemm's time
// per call (timestamp queries, median) with the default tiling and with the
// autotuner's (cached) tiling, as TFLOP/s (2 m n k flops) and as a share of
// the device's f32 FMA rate measured in the same run. Options and rows are
// JSON objects (tools/cmd_bench_gemm.cpp builds the options, prints the rows).
// With "sweep" it times every candidate tiling of the tuner instead (no
// tuning, no cache), one row per case with a "candidates" list.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <cmath>
#include <random>
#include <utility>

#include "gpu/recorder.hpp"
#include "kernels/common/fma.hpp"
#include "kernels/gemm/matmul.hpp"
#include "util/error.hpp"

namespace blockq::bench {

namespace {

// matmul() on one weight (one matvec::upload, read by both kernels) at m = 8
// tokens (x [8, k]), forced once to matvec and once to the gemm: which kernel
// each call chose, which one the measured crossover picks at m = 8, and the
// max relative difference of the two outputs (y [8, n]).
nlohmann::json check_matmul(const gpu::Context& ctx, const WeightKind& kind, uint32_t n, uint32_t k, uint32_t xo) {
  const uint32_t m = 8;
  auto blocks = gemm::random_blocks(kind.format, n, k, 21);
  matvec::Weights w = matvec::upload(ctx, matvec::HostWeight{kind, n, k, blocks}, "check.w");
  std::vector<float> x(size_t{m} * k);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  for (auto& v : x) v = d(rng);
  auto xb = ctx.storage<float>(x, "check.x");
  auto y1 = ctx.create_buffer(uint64_t{m} * n * 4, gpu::kStorage, "check.y1");
  auto y2 = ctx.create_buffer(uint64_t{m} * n * 4, gpu::kStorage, "check.y2");
  gemm::MatmulArgs a{&w, nullptr, &xb, &y1, m};
  a.crossover = m;  // m <= crossover: matvec
  a.tuned = false;
  auto p1 = gemm::matmul(ctx, a);
  a.y = &y2;
  a.crossover = m - 1;  // m > crossover: gemm
  auto p2 = gemm::matmul(ctx, a);
  gpu::Recorder rec(ctx);
  p1.record(rec);
  p2.record(rec);
  rec.submit();
  auto v1 = ctx.download<float>(y1), v2 = ctx.download<float>(y2);
  double diff = 0, scale = 1e-30;
  for (size_t i = 0; i < v1.size(); ++i) {
    diff = std::max(diff, double(std::fabs(v1[i] - v2[i])));
    scale = std::max(scale, double(std::fabs(v1[i])));
  }
  if (std::isnan(diff)) diff = INFINITY;
  return {{"m", m}, {"forced_matvec_used_gemm", p1.uses_gemm()}, {"forced_gemm_used_gemm", p2.uses_gemm()},
          {"auto_choice", m > xo ? "gemm" : "matvec"}, {"max_rel_diff", diff / scale}};
}

// Times the default tiling and every candidate of m's class on one case:
// [{"tiling", "label", "default", "us", "tflops", "of_fma"} or {.., "error"}],
// the default first; then, for the int8 gemm's formats where the instance has packed
// dot4, the int8 gemm's default (plan_int8 without a tiling, split-k
// included) and its other tilings (labels "int8 ...", its quantize dispatch
// included). f32 / int8: which of the two lists run.
template <typename Time>
nlohmann::json sweep(const gpu::Context& ctx, const WeightKind& kind, uint32_t n, uint32_t k, uint32_t m, double flops,
                     double peak, Time& time, bool progress, bool f32, bool int8) {
  const auto lim = gemm::limits_of(ctx);
  nlohmann::json out = nlohmann::json::array();
  auto one = [&](const std::string& prefix, bool is_default, auto make_spec) {
    nlohmann::json c{{"tiling", prefix}, {"default", is_default}};
    try {
      const KernelSpec s = make_spec();
      c["tiling"] = prefix + gemm::label(gemm::tiling_of(s));
      for (const auto& o : out)  // a candidate the fitting turned into one already timed
        if (o["tiling"] == c["tiling"]) return;
      const double ns = time(s);
      c["us"] = ns / 1e3;
      c["tflops"] = flops / ns / 1e3;
      c["of_fma"] = flops / ns / 1e3 / peak;
    } catch (const Error& e) {
      c["error"] = e.what();
    }
    if (progress) fmt::print(stderr, "    {}\n", c.dump());
    out.push_back(c);
  };
  if (f32) {
    const auto def = *gemm::default_for(lim, n, k, m, {});
    one("", true, [&] { return gemm::plan(ctx, kind, n, k, m, {}, def); });
    for (const auto& t : gemm::candidates(lim, kind, {}, gemm::m_class(m)))
      one("", false, [&] { return gemm::plan(ctx, kind, n, k, m, {}, t); });
  }
  if (!int8 || !gemm::int8_reads(kind.format) || !ctx.features().packed_dot4) return out;
  one("int8 ", true, [&] { return gemm::plan_int8(lim, kind, n, k, m); });
  for (const gemm::Tiling& t : gemm::candidates_int8(lim, {}, kind.format))
    one("int8 ", false, [&] { return gemm::plan_int8(lim, kind, n, k, m, {}, t); });
  return out;
}

}  // namespace

// opts: {"formats": [..], "shapes": [[n, k], ..], "ms": [..], "samples": int,
// "retune": bool, "tune": bool (false: the defaults only), "fma_groups": int, "fma_iters": int, "crossover": bool,
// "crossover_shape": [n, k], "progress": bool, "sweep": bool, "sweep_kinds":
// "f32,int8" (the sweep's lists: either or both)}.
// Returns {"device", "fma_tflops", "dot4_tops", "timestamps", "rows": [..], "crossover": {..},
// "crossover_int8": {..}, "matmul_check": {..}} (the last three with
// "crossover"; crossover_int8: with int8 x in both kernels, where the adapter
// has packed dot4 and the format an int8 path).
nlohmann::json bench_gemm(const gpu::Context& ctx, const nlohmann::json& opts) {
  nlohmann::json out;
  out["device"] = ctx.adapter().name();
  const auto peak = measure_fma_peak(ctx, opts.at("fma_groups").get<uint32_t>(), opts.at("fma_iters").get<uint32_t>());
  out["fma_tflops"] = peak.tflops;
  out["timestamps"] = peak.gpu_timestamps;
  // Packed int8 dot products, for reference: native or polyfilled on this adapter.
  out["dot4_tops"] =
      measure_dot4_peak(ctx, opts.at("fma_groups").get<uint32_t>(), opts.at("fma_iters").get<uint32_t>()).tflops;
  out["rows"] = nlohmann::json::array();
  const bool progress = opts.value("progress", false);
  if (progress)
    fmt::print(stderr, "device {} | f32 FMA {:.2f} TFLOP/s ({})\n", ctx.adapter().name(), peak.tflops,
               peak.gpu_timestamps ? "timestamp queries" : "wall clock");
  const int samples = opts.at("samples").get<int>();
  uint32_t max_m = 1;
  for (const auto& m : opts.at("ms")) max_m = std::max(max_m, m.get<uint32_t>());
  for (const auto& fname : opts.at("formats")) {
    const auto f = format_from_name(fname.get<std::string>());
    BQ_CHECK(f && gemm::supported(*f), "bench gemm: format '{}' is not supported", fname.get<std::string>());
    WeightKind kind;
    kind.format = *f;
    for (const auto& shape : opts.at("shapes")) {
      const uint32_t n = shape.at(0).get<uint32_t>(), k = shape.at(1).get<uint32_t>();
      auto blocks = gemm::random_blocks(*f, n, k, 7);
      matvec::Weights w =
          matvec::upload(ctx, matvec::HostWeight{kind, n, k, blocks}, fmt::format("bench.{}", kind.name()));
      std::vector<float> x(size_t{max_m} * k);
      std::mt19937 rng(11);
      std::uniform_real_distribution<float> d(-1.f, 1.f);
      for (auto& v : x) v = d(rng);
      auto xb = ctx.storage<float>(x, "bench.x");
      auto yb = ctx.create_buffer(uint64_t{max_m} * n * 4, gpu::kStorage, "bench.y");
      // The first timing after the upload warms up for longer (gpu::kSettleMs).
      double warm_ms = gpu::kSettleMs;
      for (const auto& mj : opts.at("ms")) {
        const uint32_t m = mj.get<uint32_t>();
        nlohmann::json row{{"format", kind.name()}, {"n", n}, {"k", k}, {"m", m}};
        try {
          auto time = [&](const KernelSpec& s) {
            gemm::Prepared p = gemm::prepare(ctx, s, {&w, nullptr, &xb, &yb, m});
            auto body = [&](gpu::Recorder& r) { p.record(r); };
            gpu::keep_busy(ctx, body, std::exchange(warm_ms, gpu::kWarmMs));  // compiles, ramps the clocks up
            return gpu::time_passes(ctx, samples, body).median();
          };
          const double flops = 2.0 * m * n * k;
          const KernelSpec def = gemm::plan(ctx, kind, n, k, m);
          if (opts.value("sweep", false)) {
            const std::string kinds = opts.value("sweep_kinds", std::string("f32,int8"));
            row["candidates"] = sweep(ctx, kind, n, k, m, flops, peak.tflops, time, progress,
                                      kinds.find("f32") != std::string::npos, kinds.find("int8") != std::string::npos);
            if (progress) fmt::print(stderr, "  {} {}x{} m={}: {} candidates\n", kind.name(), n, k, m, row["candidates"].size());
            out["rows"].push_back(row);
            continue;
          }
          gemm::TuneOptions to;
          to.m = m;
          to.force = opts.value("retune", false);
          to.samples = std::max(3, samples / 2);
          to.verbose = progress;
          // Without tuning (a fresh adapter's tuner times every candidate
          // of every case), the tuned columns repeat the default.
          const bool tune = opts.value("tune", true);
          const gemm::TuneResult tr =
              tune ? gemm::tune(ctx, kind, n, k, gemm::m_class(m), {}, to) : gemm::TuneResult{};
          const KernelSpec tuned = tune ? gemm::plan(ctx, kind, n, k, m, {}, tr.tiling) : def;
          const double nd = time(def);
          // Never report a tuned choice slower than the default: the tuner
          // keeps the default unless a candidate beat it; this run re-times both.
          const double nt = tuned == def ? nd : time(tuned);
          row["default_spec"] = def.key();
          row["tuned_spec"] = tuned.key();
          row["tuned_tiling"] = gemm::label(tune ? tr.tiling : gemm::tiling_of(def));
          row["tuned_from_cache"] = tr.from_cache;
          row["default_us"] = nd / 1e3;
          row["tuned_us"] = nt / 1e3;
          row["default_tflops"] = flops / nd / 1e3;
          row["tuned_tflops"] = flops / nt / 1e3;
          row["default_of_fma"] = flops / nd / 1e3 / peak.tflops;
          row["tuned_of_fma"] = flops / nt / 1e3 / peak.tflops;
          if (gemm::int8_reads(*f) && ctx.features().packed_dot4) {
            // The int8 gemm's default, its x quantize dispatch included.
            const KernelSpec i8 = gemm::plan_int8(gemm::limits_of(ctx), kind, n, k, m);
            const double ni = time(i8);
            row["int8_tiling"] = gemm::label(gemm::tiling_of(i8));
            row["int8_us"] = ni / 1e3;
            row["int8_tflops"] = flops / ni / 1e3;
            row["int8_of_fma"] = flops / ni / 1e3 / peak.tflops;
          }
        } catch (const Error& e) {
          row["error"] = e.what();
        }
        if (progress) fmt::print(stderr, "  {}\n", row.dump());
        out["rows"].push_back(row);
      }
    }
  }
  if (opts.value("crossover", false)) {
    gemm::CrossoverOptions co;
    co.n = opts.at("crossover_shape").at(0).get<uint32_t>();
    co.k = opts.at("crossover_shape").at(1).get<uint32_t>();
    co.force = opts.value("retune", false);
    co.verbose = progress;
    for (const auto& fname : opts.at("formats")) {
      WeightKind kind;
      kind.format = *format_from_name(fname.get<std::string>());
      try {
        const uint32_t xo = gemm::crossover(ctx, kind, co);
        out["crossover"][kind.name()] = xo;
        out["matmul_check"][kind.name()] = check_matmul(ctx, kind, co.n, co.k, xo);
        if (ctx.features().packed_dot4 && (matvec::int8_supported(kind) || gemm::int8_reads(kind.format))) {
          gemm::CrossoverOptions c8 = co;  // int8 x on both sides, as the model runs them
          c8.mv_int8 = c8.gemm_int8 = true;
          out["crossover_int8"][kind.name()] = gemm::crossover(ctx, kind, c8);
        }
      } catch (const Error& e) {
        out["crossover"][kind.name()] = std::string("error: ") + e.what();
      }
    }
  }
  return out;
}

}  // namespace blockq::bench
