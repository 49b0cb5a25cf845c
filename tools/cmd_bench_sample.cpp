// `blockq bench sample`: the GPU sampler (kernels/sample) on random logits of
// given vocabulary sizes, per top-k, penalty window and plan (largest chunk,
// workgroup): µs per call of the whole sampler and of each dispatch
// (timestamp queries, median), a table or --json. It reads a few hundred KB, so its time is the
// dispatches' latency, not bandwidth.
#include <random>
#include <vector>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "gpu/recorder.hpp"
#include "kernels/sample/sample.hpp"
#include "tools/commands.hpp"
#include "tools/context.hpp"
#include "util/error.hpp"

namespace blockq::tools {
namespace {

std::vector<uint32_t> numbers(const std::string &s) {
  std::vector<uint32_t> v;
  for (const auto &x : split_list(s))
    v.push_back(uint32_t(std::stoul(x)));
  return v;
}

void add_bench_sample(CLI::App &app, GlobalOptions &g) {
  auto *cmd = bench_group(app).add_subcommand(
      "sample", "The GPU sampler: top-k rounds and the pick, by vocabulary");
  struct Opts {
    std::string vocab = "128256,49152";
    std::string top_k = "1,40";
    std::string chunks = "1024";
    std::string wgs = "512";
    std::string per = "4";
    std::string windows = "0,64";
    int samples = 31;
    bool json = false;
  };
  static Opts o;
  cmd->add_option("--vocab", o.vocab, "Comma-separated vocabulary sizes")
      ->capture_default_str();
  cmd->add_option("--top-k", o.top_k, "Comma-separated top-k (1: greedy)")
      ->capture_default_str();
  cmd->add_option("--chunks", o.chunks,
                  "Comma-separated largest chunks to plan")
      ->capture_default_str();
  cmd->add_option("--wgs", o.wgs, "Comma-separated largest workgroups to plan")
      ->capture_default_str();
  cmd->add_option("--greedy-per", o.per,
                  "Comma-separated elements per invocation of greedy rounds")
      ->capture_default_str();
  cmd->add_option("--windows", o.windows,
                  "Comma-separated penalty windows (0: no penalties; at most 1024)")
      ->capture_default_str();
  cmd->add_option("--samples", o.samples, "Timed passes per case (median)")
      ->capture_default_str();
  cmd->add_flag("--json", o.json, "Print JSON");
  cmd->callback([&g] {
    auto ctx = make_context(g);
    nlohmann::json rows = nlohmann::json::array();
    if (!o.json)
      fmt::print("device {}\n\n{:>7} {:>5} {:>6} {:>6} {:>4} {:>7} {:>9}  {}\n",
                 ctx.adapter().name(), "vocab", "top-k", "window", "chunk", "wg",
                 "rounds", "us/call",
                 "us per dispatch (penalties: window; rounds: workgroups; pick: candidates)");
    for (const uint32_t n : numbers(o.vocab)) {
      std::mt19937 rng(n);
      std::normal_distribution<float> dist(0.0f, 3.0f);
      std::vector<float> v(n);
      for (float &x : v)
        x = dist(rng);
      const gpu::Buffer logits = ctx.storage<float>(v, "logits");
      for (const uint32_t win : numbers(o.windows))
      for (const uint32_t k : numbers(o.top_k))
        for (const uint32_t c : numbers(o.chunks))
          for (const uint32_t w : numbers(o.wgs))
            for (const uint32_t per : numbers(o.per)) {
              if (k != 1 && per != numbers(o.per)[0])
                continue; // only greedy rounds read it
              sample::GpuSampler s;
              try {
                s = sample::GpuSampler(ctx, n, k, logits, {c, w, per, w, win});
              } catch (const Error &e) {
                if (!o.json)
                  fmt::print("{:>7} {:>5} {:>6} {:>6} {:>4}  not run: {}\n", n, k,
                             win, c, w, e.what());
                continue;
              }
              const sample::Plan &p = s.plan();
              s.set(ctx, {k > 1 ? 0.8f : 0.0f, 0.95f, 0.05f, 0.5f});
              if (win) { // a window of ids spread over the vocabulary
                std::vector<uint32_t> ids(win);
                for (uint32_t &id : ids)
                  id = uint32_t(rng() % n);
                s.set_recent(ctx, ids);
                s.set_penalties(ctx, {1.1f, 0.1f, 0.1f});
              }
              auto time = [&](int only) {
                auto body = [&](gpu::Recorder &r) { s.record(r, only); };
                gpu::keep_busy(ctx, body);
                return gpu::time_passes(ctx, o.samples, body).median() * 1e-3;
              };
              const double whole = time(-1);
              std::vector<double> each;
              std::string parts;
              const double pen = win ? time(int(p.rounds.size()) + 1) : 0.0;
              if (win)
                parts = fmt::format("{:.2f} ({}), ", pen, win);
              for (int d = 0; d <= int(p.rounds.size()); ++d) {
                each.push_back(time(d));
                const bool pick = d == int(p.rounds.size());
                parts += fmt::format("{}{:.2f} ({} {})", d ? ", " : "",
                                     each.back(), pick ? p.pick.n : p.groups(d),
                                     pick ? "cand." : "wg");
              }
              const uint32_t chunk =
                  p.rounds.empty() ? p.pick.tile : p.rounds[0].tile;
              const uint32_t wg = p.rounds.empty() ? p.pick.wg : p.rounds[0].wg;
              if (o.json)
                rows.push_back({{"vocab", n},
                                {"top_k", k},
                                {"window", win},
                                {"chunk", chunk},
                                {"wg", wg},
                                {"rounds", p.rounds.size()},
                                {"us", whole},
                                {"us_each", each},
                                {"us_penalties", pen}});
              else
                fmt::print("{:>7} {:>5} {:>6} {:>6} {:>4} {:>7} {:>9.2f}  {}\n", n, k,
                           win, chunk, wg, p.rounds.size(), whole, parts);
            }
    }
    if (o.json)
      fmt::print(
          "{}\n",
          nlohmann::json{{"device", ctx.adapter().name()}, {"rows", rows}}.dump(
              1));
  });
}

} // namespace
BQ_REGISTER_COMMAND(add_bench_sample);
} // namespace blockq::tools
