// `blockq bench run [--preset tiny|smollm2-360m|llama-3.2-1b] [--type q8_0]
// [--arch llama|qwen2] [-p N] [-n N]`: end-to-end speed of the GPU forward
// pass on a synthetic model (made on first use): prompt and generation
// tokens/s, time to first token, GPU memory, and a per-token time breakdown
// by kernel family (each family's dispatches of one token timed alone).
// Tokens are picked greedily, by the GPU sampler unless --host-sampler.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <numeric>
#include <cstdio>

#include <fmt/format.h>

#include "model/default_model.hpp"
#include "model/gpu_model.hpp"
#include "model/sampler.hpp"
#include "tools/commands.hpp"
#include "tools/context.hpp"
#include "tools/model_args.hpp"
#include "util/error.hpp"

namespace blockq::tools {
namespace {

struct BenchRunArgs {
  std::string preset = "tiny";
  std::string type = "q8_0";
  std::string arch = "llama";
  std::string model;
  int n_prompt = 32;
  int n_gen = 32;
  int samples = 5;
  ModelLoadArgs load;
  bool no_fuse_qkv = false;
  bool no_fuse_kv_store = false;
  bool host_sampler = false;
  bool check_sampler = false;
  std::string prompt_sweep;  // "8,27,116": prompt lengths to time alone
};

double secs(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

// The GPU sampler's tokens against the host sampler's from the same prompt
// and seed: greedy, blockq run's default sampling, and both with penalties
// over the last 64 tokens (the prompt's included).
void check_sampler(model::GpuModel& m, const std::vector<model::TokenId>& prompt, uint32_t n) {
  model::SamplerConfig def;
  def.temperature = 0.8f;
  def.top_k = 40;
  def.top_p = 0.95f;
  def.min_p = 0.05f;
  def.seed = 3;
  model::SamplerConfig pen_greedy, pen_def = def;
  for (model::SamplerConfig* c : {&pen_greedy, &pen_def}) {
    c->repeat_penalty = 1.3f;
    c->frequency_penalty = 0.2f;
    c->presence_penalty = 0.2f;
    c->repeat_last_n = 64;
  }
  for (const model::SamplerConfig& sc : {model::SamplerConfig{}, def, pen_greedy, pen_def}) {
    m.reset();
    m.eval(std::span<const model::TokenId>(prompt));
    m.begin_generation(sc, n, prompt);
    std::vector<model::TokenId> gpu(n), host(n);
    for (auto& t : gpu) t = m.next_token();
    m.end_generation();
    m.reset();
    model::Sampler s(sc);
    s.accept(prompt);
    std::span<const float> logits = m.eval(std::span<const model::TokenId>(prompt));
    for (uint32_t i = 0; i < n; ++i) {
      host[i] = s.sample(logits);
      s.accept(host[i]);
      if (i + 1 < n) logits = m.eval(host[i]);
    }
    const auto diff = std::mismatch(gpu.begin(), gpu.end(), host.begin());
    std::vector<model::TokenId> distinct = gpu;
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    fmt::print("sampler    {}: {} tokens ({} distinct) on the GPU, {}\n",
               std::string(sc.temperature > 0 ? "temperature 0.8, top-k 40, top-p 0.95, min-p 0.05" : "greedy") +
                   (model::penalties_on(sc) ? ", penalties 1.3/0.2/0.2 over 64" : ""),
               n,
               distinct.size(),
               diff.first == gpu.end() ? std::string("the same as the host sampler's")
                                       : fmt::format("first differing from the host sampler's at token {} ({} against {})",
                                                     diff.first - gpu.begin(), *diff.first, *diff.second));
  }
}

// Each prompt pass of B rows (B tokens from position 0) timed on the GPU
// whole and by kernel family (each family's dispatches of the pass alone,
// timestamp queries, median of `samples`): where a prompt's GPU time goes,
// against the sweep's wall clock.
void pass_families(const gpu::Context& ctx, model::GpuModel& m, int samples) {
  if (m.batch() <= 1) return;
  const int n_fam = int(model::KernelFamily::Sample);  // the sampler and the logits copy are left out
  fmt::print("\nprompt passes by kernel family from position 0 (ms, median of {}):\n  {:>5} {:>9}", samples, "rows",
             "whole");
  for (int f = 0; f < n_fam; ++f) fmt::print(" {:>11}", model::family_name(model::KernelFamily(f)));
  fmt::print("\n");
  const uint32_t n_vocab = m.config().n_vocab;
  bool gpu_ts = true;
  for (const uint32_t rows : m.prompt_passes()) {
    std::vector<model::TokenId> p(rows);
    for (uint32_t i = 0; i < rows; ++i) p[i] = model::TokenId((uint64_t(i) * 7919 + 13) % n_vocab);
    m.reset();
    m.set_inputs(std::span<const model::TokenId>(p));
    auto time = [&](std::optional<model::KernelFamily> only) {
      const gpu::Timing t = gpu::time_passes(ctx, samples, [&](gpu::Recorder& r) { m.record(r, only, false); });
      gpu_ts = gpu_ts && t.gpu_timestamps;
      return t.median() * 1e-6;
    };
    gpu::keep_busy(ctx, [&](gpu::Recorder& r) { m.record(r, std::nullopt, false); });
    fmt::print("  {:>5} {:>9.3f}", rows, time(std::nullopt));
    for (int f = 0; f < n_fam; ++f) fmt::print(" {:>11.3f}", time(model::KernelFamily(f)));
    fmt::print("\n");
  }
  if (!gpu_ts) fmt::print("  (wall clock per submit, an upper bound: the adapter has no timestamp queries)\n");
  m.reset();
}

// Each prompt length of `lens` evaluated from position 0, `samples` times
// after one warm-up (its passes' kernels compiled), wall clock from the
// first submit to the mapped logits: what a request's prompt costs. Prints
// the rows its steps computed (padding included) and the median and the
// fastest time. The GPU runs tokens for gpu::kSettleMs before the first
// length and gpu::kWarmMs before each, so that its clocks are up (the
// first length after loading otherwise took up to 3x longer on the H200).
void prompt_sweep(const gpu::Context& ctx, model::GpuModel& m, const std::vector<int>& lens, int samples) {
  fmt::print("\nprompt sweep (passes of {} rows; median and fastest of {}, from position 0):\n",
             m.batch() > 1 ? passes_text(m) : "1", samples);
  fmt::print("  {:>7} {:>16} {:>10} {:>10} {:>12}\n", "tokens", "rows computed", "ms", "fastest", "tokens/s");
  const uint32_t n_vocab = m.config().n_vocab;
  m.set_inputs(model::TokenId(13));
  gpu::keep_busy(ctx, [&](gpu::Recorder& r) { m.record(r, std::nullopt, false); }, gpu::kSettleMs);
  for (const int n : lens) {
    m.reset();
    m.set_inputs(model::TokenId(13));
    gpu::keep_busy(ctx, [&](gpu::Recorder& r) { m.record(r, std::nullopt, false); });
    std::vector<model::TokenId> p(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) p[size_t(i)] = model::TokenId((uint64_t(i) * 7919 + 13) % n_vocab);
    std::vector<double> ms;
    std::string rows;
    for (int s = -1; s < samples; ++s) {
      m.reset();
      rows.clear();
      const auto t0 = std::chrono::steady_clock::now();
      for (size_t i = 0; i < p.size();) {  // as eval(): steps of at most batch() tokens
        const size_t k = std::min<size_t>(m.batch(), p.size() - i);
        m.eval_step(std::span<const model::TokenId>(p).subspan(i, k));
        if (!rows.empty()) rows += '+';
        rows += std::to_string(m.last_step().rows);
        i += k;
      }
      if (s >= 0) ms.push_back(1e3 * secs(std::chrono::steady_clock::now() - t0));
    }
    std::sort(ms.begin(), ms.end());
    const double med = ms[ms.size() / 2];
    fmt::print("  {:>7} {:>16} {:>10.2f} {:>10.2f} {:>12.1f}\n", n, rows, med, ms.front(), 1e3 * n / med);
  }
  m.reset();
  pass_families(ctx, m, samples);
}

void bench_run(const BenchRunArgs& a, const GlobalOptions& g) {
  using clock = std::chrono::steady_clock;
  std::string path = a.model;
  if (path.empty()) {
    const auto f = format_from_name(a.type);
    BQ_CHECK(f, "--type {}: not a format blockq writes", a.type);
    BQ_CHECK(a.arch == "llama" || a.arch == "qwen2", "--arch {}: use llama or qwen2", a.arch);
    path = model::ensure_synth_model(a.preset, *f, a.arch == "llama" ? model::Arch::Llama : model::Arch::Qwen2);
  }
  BQ_CHECK(a.n_prompt >= 1 && a.n_gen >= 1 && a.samples >= 1, "-p, -n and --samples must be >= 1");
  std::vector<int> sweep;
  for (const auto& s : split_list(a.prompt_sweep)) {
    int v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    BQ_CHECK(ec == std::errc{} && end == s.data() + s.size() && v >= 1 && v <= 8192,
             "--prompt-sweep: '{}' is not a prompt length of 1 to 8192 tokens", s);
    sweep.push_back(v);
  }
  gpu::Context ctx = make_context(g);
  const auto t_load = clock::now();
  const int most = std::max(a.n_prompt, sweep.empty() ? 0 : *std::max_element(sweep.begin(), sweep.end()));
  model::GpuModelOptions mo = gpu_model_options(a.load, uint32_t(std::max(256, most + a.n_gen + 1)));
  mo.fuse_qkv = !a.no_fuse_qkv;
  mo.fuse_kv_store = !a.no_fuse_kv_store;
  model::GpuModel m(ctx, gguf::GgufFile::open(path), mo);
  const double load_s = secs(clock::now() - t_load);
  const auto& c = m.config();
  if (!sweep.empty()) prompt_sweep(ctx, m, sweep, a.samples);

  // Prompt: fixed pseudo-random ids, in batches of `batch` tokens.
  std::vector<model::TokenId> prompt(a.n_prompt);
  for (int i = 0; i < a.n_prompt; ++i) prompt[i] = model::TokenId((uint64_t(i) * 7919 + 13) % c.n_vocab);
  m.eval(std::span<const model::TokenId>(prompt).first(std::min<size_t>(prompt.size(), m.batch())));  // warm-up
  // Clocks up: a GPU left idle through loading stays at a low clock through
  // a short run. H100, llama-3.2-1b q4_0, 32 tokens right after loading:
  // 409.6 tokens/s with every kernel 2.8-3.1x slower, 1359.4 after a
  // prompt sweep (docs/perf/2026-12-06-session43-h100.md). Not on a CPU
  // adapter, which has no clocks to raise.
  if (ctx.adapter().type != WGPUAdapterType_CPU) {
    m.set_inputs(prompt.front());
    gpu::keep_busy(ctx, [&](gpu::Recorder& r) { m.record(r, std::nullopt, false); }, gpu::kSettleMs);
  }
  m.reset();
  if (!a.host_sampler) m.prepare_generation({});
  const auto t0 = clock::now();
  std::span<const float> logits = m.eval(std::span<const model::TokenId>(prompt));
  const auto t_prompt = clock::now();
  // Greedy: the first highest logit, picked on the GPU (generation queued a
  // step ahead, GpuModel::begin_generation) or by the host sampler.
  model::Sampler greedy;
  model::TokenId next = 0;
  std::vector<model::StepTimes> steps;  // host time of each generated token
  std::vector<double> pick_us;          // the host's greedy pick over the logits
  clock::time_point t_first, t_end;
  if (a.host_sampler) {
    next = greedy.sample(logits);
    t_first = clock::now();
    for (int i = 0; i < a.n_gen; ++i) {
      logits = m.eval(next);
      steps.push_back(m.last_step());
      const auto t_pick = clock::now();
      next = greedy.sample(logits);
      pick_us.push_back(std::chrono::duration<double, std::micro>(clock::now() - t_pick).count());
    }
    t_end = clock::now();
  } else {
    m.begin_generation({}, uint32_t(a.n_gen + 1));
    next = m.next_token();
    t_first = clock::now();
    for (int i = 0; i < a.n_gen; ++i) {
      next = m.next_token();
      steps.push_back(m.last_step());
      pick_us.push_back(0);
    }
    m.end_generation();
    t_end = clock::now();
  }
  const double pp = secs(t_prompt - t0), gen = secs(t_end - t_first);

  const auto& mem = m.memory();
  fmt::print("model      {} ({} {}, n_embd {}, {} layers, vocab {}), loaded in {:.2f} s\n", path, c.arch_name,
             a.model.empty() ? a.preset + " " + a.type : std::string("file"), c.n_embd, c.n_layer, c.n_vocab,
             load_s);
  fmt::print("adapter    {}{}\n", ctx.adapter().name(), ctx.low_end() ? " (low-end limits)" : "");
  fmt::print("memory     {:.1f} MiB on the GPU (weights {:.1f} in {} buffer{}, KV cache "
             "{:.1f} in {} for {} positions, activations {:.1f})\n",
             double(mem.total()) / (1 << 20), double(mem.weights) / (1 << 20), mem.weight_buffers, mem.weight_buffers == 1 ? "" : "s",
             double(mem.kv_cache) / (1 << 20), model::kv_type_name(m.kv_type()), m.n_ctx(),
             double(mem.activations) / (1 << 20));
  fmt::print("prompt     {} tokens, {:.1f} tokens/s ({})\n", a.n_prompt, a.n_prompt / pp,
             m.batch() > 1 ? fmt::format("batches of {}, {} of {} projections on the gemm; passes of {} rows", m.batch(),
                                         m.prompt_gemm_count(), m.prompt_projection_count(), passes_text(m))
                           : "token by token");
  fmt::print("generation {} tokens, {:.1f} tokens/s (greedy, sampled on the {})\n", a.n_gen, a.n_gen / gen,
             a.host_sampler ? "host" : "GPU, a step queued ahead");
  fmt::print("first tok  {:.1f} ms (prompt of {} tokens + sampling)\n", 1e3 * secs(t_first - t0), a.n_prompt);
  {  // where a generated token's wall time goes on the host, medians over the tokens
    auto med = [](std::vector<double> v) {
      std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
      return v[v.size() / 2];
    };
    auto of = [&](double model::StepTimes::*f) {
      std::vector<double> v;
      for (const auto& s : steps) v.push_back(s.*f);
      return med(v);
    };
    std::vector<double> totals;
    for (const auto& s : steps) totals.push_back(s.total());
    const auto ahead = std::count_if(steps.begin(), steps.end(), [](const auto& s) { return s.encoded_ahead; });
    fmt::print("host       per generated token, median us: inputs {:.1f}, encode {:.1f}, submit {:.1f}, "
               "encode ahead {:.1f}, wait {:.1f}, logits read {:.1f}, greedy pick {:.1f}; eval {:.1f} (mean {:.1f}) "
               "({} of {} tokens encoded ahead)\n",
               of(&model::StepTimes::inputs), of(&model::StepTimes::encode), of(&model::StepTimes::submit),
               of(&model::StepTimes::ahead), of(&model::StepTimes::wait), of(&model::StepTimes::read), med(pick_us),
               med(totals), std::accumulate(totals.begin(), totals.end(), 0.0) / double(totals.size()), ahead,
               steps.size());
  }
  fmt::print("dispatches {} per token in {} submit{} (Q, K, V fused in {} of {} layers, K and V stored by that "
             "matvec in {})\n",
             m.dispatches_per_token(), m.submits_per_step(), m.submits_per_step() == 1 ? "" : "s", m.fused_qkv_layers(),
             c.n_layer, m.kv_store_fused_layers());

  // Breakdown at the current position: each family's dispatches of one token.
  m.set_inputs(next);
  const int n_fam = int(model::KernelFamily::Readback);  // the logits copy is left out
  std::vector<double> ms(n_fam);
  bool gpu_ts = false;
  gpu::keep_busy(ctx, [&](gpu::Recorder& r) { m.record(r, std::nullopt, false); });  // clocks up
  const gpu::Timing whole =
      gpu::time_passes(ctx, a.samples, [&](gpu::Recorder& r) { m.record(r, std::nullopt, false); });
  double sum = 0;
  for (int f = 0; f < n_fam; ++f) {
    const auto fam = model::KernelFamily(f);
    if (fam == model::KernelFamily::Sample && a.host_sampler) continue;  // no GPU sampler was made
    const gpu::Timing t = gpu::time_passes(ctx, a.samples, [&](gpu::Recorder& r) { m.record(r, fam, false); });
    ms[f] = t.median() * 1e-6;
    gpu_ts = t.gpu_timestamps;
    sum += ms[f];
  }
  fmt::print("\nper-token time by kernel family at position {} ({}, median of {}):\n", m.n_past(),
             gpu_ts ? "GPU timestamps" : "wall clock per submit, an upper bound", a.samples);
  for (int f = 0; f < n_fam; ++f)
    fmt::print("  {:<12} {:9.3f} ms  {:5.1f}%\n", model::family_name(model::KernelFamily(f)), ms[f],
               100 * ms[f] / sum);
  fmt::print("  {:<12} {:9.3f} ms  (whole token, one pass; families sum to {:.3f} ms)\n", "total",
             whole.median() * 1e-6, sum);
  if (a.check_sampler) check_sampler(m, prompt, uint32_t(a.n_gen));
}

void add_bench_run(CLI::App& app, GlobalOptions& g) {
  static BenchRunArgs a;
  auto* cmd = bench_group(app).add_subcommand("run", "End-to-end GPU forward pass speed on a synthetic model");
  cmd->add_option("--preset", a.preset, "tiny, smollm2-360m, llama-3.2-1b, llama-3-8b")->capture_default_str();
  cmd->add_option("--type", a.type, "Weight format of the synthetic model")->capture_default_str();
  cmd->add_option("--arch", a.arch, "llama or qwen2")->capture_default_str();
  cmd->add_option("-m,--model", a.model, "A GGUF file instead of a synthetic model");
  cmd->add_option("-p,--n-prompt", a.n_prompt, "Prompt tokens")->capture_default_str();
  cmd->add_option("-n,--n-gen", a.n_gen, "Generated tokens")->capture_default_str();
  add_model_load_options(cmd, a.load);
  cmd->add_flag("--no-fuse-qkv", a.no_fuse_qkv, "Q, K and V as three projections per layer (for comparison)");
  cmd->add_flag("--no-fuse-kv-store", a.no_fuse_kv_store,
                "K and V stored into the cache by a kernel of their own, not by the QKV matvec (for comparison)");
  cmd->add_flag("--host-sampler", a.host_sampler,
                "Pick each token on the host after its logits are read back, not on the GPU (for comparison)");
  cmd->add_flag("--check-sampler", a.check_sampler,
                "Then generate -n tokens greedy and with blockq run's default sampling on the GPU and on the host, "
                "and compare them");
  cmd->add_option("--samples", a.samples, "Timing samples per kernel family and per prompt of --prompt-sweep")
      ->capture_default_str();
  cmd->add_option("--prompt-sweep", a.prompt_sweep,
                  "Comma-separated prompt lengths, each evaluated from position 0 --samples times (wall clock to "
                  "the logits), before the run");
  cmd->callback([&g] { bench_run(a, g); });
}

BQ_REGISTER_COMMAND(add_bench_run);

}  // namespace
}  // namespace blockq::tools
