// `blockq bench gemm`: options and table of the gemm benchmark
// (bench/gemm_bench.cpp), registered under the `bench` group (tools/commands.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "gpu/context.hpp"
#include "tools/context.hpp"
#include "util/error.hpp"

namespace blockq::bench {
nlohmann::json bench_gemm(const gpu::Context& ctx, const nlohmann::json& opts);  // bench/gemm_bench.cpp
}

namespace blockq::tools {

namespace {

nlohmann::json shape(const std::string& s) {
  auto x = s.find('x');
  BQ_CHECK(x != std::string::npos, "shape '{}' is not NxK", s);
  return {std::stoul(s.substr(0, x)), std::stoul(s.substr(x + 1))};
}

// One line per candidate of each case (fastest marked *, the default marked
// d), after the f32 FMA rate of the same run as the ceiling.
void print_sweep(const nlohmann::json& res) {
  const double peak = res["fma_tflops"].get<double>();
  fmt::print("{:<6} {:>13} {:>5} | {:<30} | {:>10} {:>8} {:>7}\n", "format", "n x k", "m", "tiling", "us", "TFLOP/s",
             "of FMA");
  fmt::print("{:<6} {:>13} {:>5} | {:<30} | {:>10} {:>8.3f} {:>6.1f}%\n", "-", "-", "-", "f32 FMA ceiling", "-", peak,
             100.0);
  for (const auto& r : res["rows"]) {
    const std::string head = fmt::format("{:<6} {:>6}x{:<6} {:>5}", r["format"].get<std::string>(),
                                         r["n"].get<uint32_t>(), r["k"].get<uint32_t>(), r["m"].get<uint32_t>());
    if (r.contains("error") || !r.contains("candidates")) {
      fmt::print("{}  error: {}\n", head, r.value("error", std::string("no candidates")));
      continue;
    }
    double best = 0;
    for (const auto& c : r["candidates"])
      if (c.contains("tflops")) best = std::max(best, c["tflops"].get<double>());
    for (const auto& c : r["candidates"]) {
      const std::string mark = std::string(c.contains("tflops") && c["tflops"].get<double>() == best ? "*" : " ") +
                               (c["default"].get<bool>() ? "d" : " ");
      const std::string name = mark + " " + c["tiling"].get<std::string>();
      if (c.contains("error")) {
        fmt::print("{} | {:<30} | error: {}\n", head, name, c["error"].get<std::string>());
        continue;
      }
      fmt::print("{} | {:<30} | {:>10.1f} {:>8.3f} {:>6.1f}%\n", head, name, c["us"].get<double>(),
                 c["tflops"].get<double>(), 100 * c["of_fma"].get<double>());
    }
  }
}

}  // namespace

void add_bench_gemm(CLI::App& bench, GlobalOptions& g) {
  auto* cmd = bench.add_subcommand("gemm", "Quantized matrix-matrix kernels (prompts) against the f32 FMA rate");
  struct Opts {
    std::string formats = "q8_0,q4_K";
    std::string shapes = "4096x14336,14336x4096";
    std::string ms = "64,512,2048";
    std::string crossover_shape = "4096x4096";
    std::string sweep_kinds = "f32,int8";
    int samples = 10;
    bool json = false, quick = false, retune = false, no_tune = false, crossover = false, sweep = false;
  };
  static Opts o;
  cmd->add_option("--formats", o.formats,
                  "Comma-separated formats (q8_0, q4_0, q4_1, q5_0, q5_1, q2_K, q3_K, q4_K, q5_K, q6_K, iq4_nl, "
                  "iq4_xs, f16, bf16)");
  cmd->add_option("--shapes", o.shapes, "Comma-separated NxK (N output rows, K inputs)");
  cmd->add_option("--m", o.ms, "Comma-separated token counts");
  cmd->add_option("--samples", o.samples, "Timed passes per case (median)");
  cmd->add_flag("--retune", o.retune, "Ignore the tuning cache and re-time the candidates");
  cmd->add_flag("--no-tune", o.no_tune,
                "Time the defaults only (f32 and int8), without the tuner, which times every candidate of each case "
                "on an adapter it has not cached");
  cmd->add_flag("--crossover", o.crossover, "Also measure the matvec/gemm crossover per format");
  cmd->add_option("--crossover-shape", o.crossover_shape, "NxK the crossover is measured on");
  cmd->add_flag("--sweep", o.sweep,
                "Time every candidate tiling of the tuner per case (no tuning) and print them with the FMA rate");
  cmd->add_option("--sweep-kinds", o.sweep_kinds, "The sweep's gemms: f32, int8 or f32,int8")
      ->check(CLI::IsMember({"f32", "int8", "f32,int8", "int8,f32"}));
  cmd->add_flag("--quick", o.quick, "Small shapes for a CPU adapter (SwiftShader)");
  cmd->add_flag("--json", o.json, "Print JSON");
  cmd->callback([&g] {
    auto ctx = make_context(g);
    nlohmann::json opts;
    if (o.quick) {
      o.shapes = "256x512,512x256";
      o.ms = "16,64";
      o.crossover_shape = "256x256";
      o.samples = std::min(o.samples, 3);
    }
    for (const auto& f : split_list(o.formats)) opts["formats"].push_back(f);
    for (const auto& s : split_list(o.shapes)) opts["shapes"].push_back(shape(s));
    for (const auto& m : split_list(o.ms)) opts["ms"].push_back(std::stoul(m));
    opts["samples"] = o.samples;
    opts["retune"] = o.retune;
    opts["tune"] = !o.no_tune;
    opts["crossover"] = o.crossover;
    opts["crossover_shape"] = shape(o.crossover_shape);
    opts["fma_groups"] = o.quick ? 32 : 8192;
    opts["fma_iters"] = o.quick ? 64 : 1024;
    opts["progress"] = !o.json;
    opts["sweep"] = o.sweep;
    opts["sweep_kinds"] = o.sweep_kinds;
    auto res = bench::bench_gemm(ctx, opts);
    if (o.json) {
      fmt::print("{}\n", res.dump(1));
      return;
    }
    fmt::print("\ndevice {} | f32 FMA {:.3f} TFLOP/s | packed int8 dot {:.3f} Tops ({})\n",
               res["device"].get<std::string>(), res["fma_tflops"].get<double>(), res["dot4_tops"].get<double>(),
               res["timestamps"].get<bool>() ? "timestamp queries" : "wall clock");
    if (o.sweep) {
      print_sweep(res);
      return;
    }
    fmt::print("{:<6} {:>13} {:>5} | {:>10} {:>8} {:>6} | {:>10} {:>8} {:>6} {:>6} | {}\n", "format", "n x k", "m",
               "default us", "TFLOP/s", "of FMA", "tuned us", "TFLOP/s", "of FMA", "gain", "tuned tiling");
    for (const auto& r : res["rows"]) {
      if (r.contains("error")) {
        fmt::print("{:<6} {:>6}x{:<6} {:>5}  error: {}\n", r["format"].get<std::string>(), r["n"].get<uint32_t>(),
                   r["k"].get<uint32_t>(), r["m"].get<uint32_t>(), r["error"].get<std::string>());
        continue;
      }
      const std::string spec = r["tuned_tiling"].get<std::string>();
      fmt::print("{:<6} {:>6}x{:<6} {:>5} | {:>10.1f} {:>8.4f} {:>5.1f}% | {:>10.1f} {:>8.4f} {:>5.1f}% {:>5.2f}x | {}{}\n",
                 r["format"].get<std::string>(), r["n"].get<uint32_t>(), r["k"].get<uint32_t>(), r["m"].get<uint32_t>(),
                 r["default_us"].get<double>(), r["default_tflops"].get<double>(), 100 * r["default_of_fma"].get<double>(),
                 r["tuned_us"].get<double>(), r["tuned_tflops"].get<double>(), 100 * r["tuned_of_fma"].get<double>(),
                 r["default_us"].get<double>() / r["tuned_us"].get<double>(), spec,
                 r["tuned_from_cache"].get<bool>() ? " (cached)" : "");
      if (r.contains("int8_us"))
        fmt::print("{:<6} {:>6}x{:<6} {:>5} | int8 gemm (x quantized, dot4I8Packed) {:>10.1f} us {:>8.4f} TFLOP/s "
                   "{:>5.1f}% of FMA, {:.2f}x the tuned f32 gemm | {}\n",
                   r["format"].get<std::string>(), r["n"].get<uint32_t>(), r["k"].get<uint32_t>(),
                   r["m"].get<uint32_t>(), r["int8_us"].get<double>(), r["int8_tflops"].get<double>(),
                   100 * r["int8_of_fma"].get<double>(), r["tuned_us"].get<double>() / r["int8_us"].get<double>(),
                   r["int8_tiling"].get<std::string>());
    }
    if (res.contains("crossover"))
      for (auto& [kname, v] : res["crossover"].items())
        fmt::print("crossover {}: matvec for m <= {}, gemm above{}; matmul check {}\n", kname, v.dump(),
                   res.contains("crossover_int8") && res["crossover_int8"].contains(kname)
                       ? fmt::format(" (with int8 x: m <= {})", res["crossover_int8"][kname].dump())
                       : "",
                   res.contains("matmul_check") && res["matmul_check"].contains(kname) ? res["matmul_check"][kname].dump() : "-");
  });
}

namespace {

void register_bench_gemm(CLI::App& app, GlobalOptions& g) { add_bench_gemm(bench_group(app), g); }

}  // namespace

BQ_REGISTER_COMMAND(register_bench_gemm);

}  // namespace blockq::tools
