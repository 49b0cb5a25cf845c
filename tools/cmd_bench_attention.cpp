// `blockq bench attention`: the attention kernels for one token or a prompt
// pass ending at given positions (bench/attention_bench.cpp), with the
// streaming-read bandwidth of the same run as the ceiling; a table or --json.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "bench/bench.hpp"
#include "tools/commands.hpp"
#include "tools/context.hpp"
#include "util/error.hpp"

namespace blockq::tools {
namespace {

bench::AttentionHeads parse_heads(const std::string& s) {  // "32/8x128"
  const auto slash = s.find('/'), x = s.find('x');
  BQ_CHECK(slash != std::string::npos && x != std::string::npos && slash < x, "heads '{}' is not NHEAD/NKVxHEAD_DIM",
           s);
  return {uint32_t(std::stoul(s.substr(0, slash))), uint32_t(std::stoul(s.substr(slash + 1, x - slash - 1))),
          uint32_t(std::stoul(s.substr(x + 1)))};
}

std::vector<attention::Tier> parse_tiers(const std::string& s) {  // "128:256,2048:128:1:32:8" or "none"
  std::vector<attention::Tier> tiers;
  if (s == "none") return tiers;
  for (const auto& t : split_list(s)) {
    std::vector<uint32_t> v;
    size_t at = 0;
    while (at <= t.size()) {
      const size_t colon = std::min(t.find(':', at), t.size());
      const std::string field = t.substr(at, colon - at);
      BQ_CHECK(!field.empty() && field.size() <= 9 && field.find_first_not_of("0123456789") == std::string::npos,
               "tier '{}' is not POSITIONS:WG[:HEADS[:K_QUADS[:V_LOADS]]] (unsigned numbers)", t);
      v.push_back(uint32_t(std::stoul(field)));
      at = colon + 1;
    }
    BQ_CHECK(v.size() >= 2 && v.size() <= 5, "tier '{}' is not POSITIONS:WG[:HEADS[:K_QUADS[:V_LOADS]]]", t);
    attention::Tier tier{.positions = v[0], .max_wg = v[1]};
    if (v.size() > 2) tier.max_heads = v[2];
    if (v.size() > 3) tier.k_quads = v[3];
    if (v.size() > 4) tier.v_loads = v[4];
    tiers.push_back(tier);
  }
  return tiers;
}

void add_bench_attention(CLI::App& app, GlobalOptions& g) {
  auto* cmd = bench_group(app).add_subcommand("attention", "Attention over a KV cache for one token or a prompt pass, by position");
  struct Opts {
    std::string heads = "32/8x128,15/5x64";  // llama-3-8b, smollm2-360m
    std::string positions = "40,256,1024,4095";
    std::string tokens = "1";
    std::string kv = "f16";
    uint32_t n_ctx = 0;
    attention::Options opt;  // the model's defaults
    std::string tiers;
    int samples = 15;
    uint64_t bw_bytes = 1ull << 30;
    bool json = false;
  };
  static Opts o;
  cmd->add_option("--heads", o.heads, "Comma-separated NHEAD/NKVxHEAD_DIM (query heads / kv heads x head dim)");
  cmd->add_option("--positions", o.positions,
                  "Comma-separated positions of the token, or of a pass's last token (it sees position + 1)");
  cmd->add_option("--tokens", o.tokens,
                  "Comma-separated tokens a call: a prompt pass of T tokens ending at each position (default 1)");
  cmd->add_option("--kv-type", o.kv, "KV cache element type: f16 or f32");
  cmd->add_option("--ctx", o.n_ctx, "Cache positions (0: the largest position + 1)");
  auto& a = o.opt;
  cmd->add_option("--max-wg", a.max_wg, "Largest workgroup to plan");
  cmd->add_option("--chunk", a.chunk, "Positions per workgroup (0: the planned workgroup size)");
  cmd->add_option("--max-heads", a.max_heads, "The most query heads a workgroup takes");
  cmd->add_option("--k-quads", a.k_quads, "The most quads of a k row loaded before their sums");
  cmd->add_option("--v-loads", a.v_loads, "Positions of a V group loaded before their sums");
  cmd->add_option("--tiers", o.tiers,
                  "Plans for few positions, ascending: POSITIONS:WG[:HEADS[:K_QUADS[:V_LOADS]]],... or 'none' "
                  "(default: the model's)");
  auto& r = a.rows;
  cmd->add_option("--rows-min", r.min_rows, "Tokens from which the prompt kernel runs (0: never)");
  cmd->add_option("--rows-min-far", r.min_rows_far,
                  "Tokens from which it runs in steps beyond --rows-far-positions positions (0: never)");
  cmd->add_option("--rows-far-positions", r.far_positions, "Positions beyond which --rows-min-far applies");
  cmd->add_option("--rows-wg", r.max_wg, "The prompt kernel's largest workgroup");
  cmd->add_option("--rows-rows", r.rows, "The prompt kernel's most query rows (tokens x heads) a workgroup");
  cmd->add_option("--rows-keys", r.keys, "The prompt kernel's keys a tile (a power of two)");
  cmd->add_option("--rows-min-groups", r.min_groups, "The prompt kernel cuts chunks until its grid has this many workgroups");
  cmd->add_option("--rows-min-chunk", r.min_chunk, "The fewest positions a chunk of the prompt kernel keeps");
  cmd->add_option("--samples", o.samples, "Timed passes per case (median)");
  cmd->add_option("--bandwidth-bytes", o.bw_bytes, "Bytes the streaming-read ceiling reads");
  cmd->add_flag("--json", o.json, "Print JSON");
  cmd->callback([&g] {
    auto ctx = make_context(g);
    bench::AttentionBenchOptions bo;
    for (const auto& h : split_list(o.heads)) bo.heads.push_back(parse_heads(h));
    bo.positions.clear();
    for (const auto& p : split_list(o.positions)) bo.positions.push_back(uint32_t(std::stoul(p)));
    bo.tokens.clear();
    for (const auto& t : split_list(o.tokens)) bo.tokens.push_back(uint32_t(std::stoul(t)));
    BQ_CHECK(!bo.heads.empty() && !bo.positions.empty() && !bo.tokens.empty(),
             "bench attention: no heads, positions or tokens");
    BQ_CHECK(o.kv == "f16" || o.kv == "f32", "--kv-type '{}': f16 or f32", o.kv);
    bo.kv = o.kv == "f16" ? Format::F16 : Format::F32;
    bo.n_ctx = o.n_ctx;
    bo.options = o.opt;
    if (!o.tiers.empty()) bo.options.tiers = parse_tiers(o.tiers);
    bo.samples = o.samples;
    const auto bw = measure_read_bandwidth(ctx, o.bw_bytes);
    const auto rows = bench::bench_attention(ctx, bo, bw);
    if (o.json) {
      nlohmann::json j;
      j["device"] = ctx.adapter().name();
      j["bandwidth_gbps"] = bw.gbps;
      j["timestamps"] = bw.gpu_timestamps;
      for (const auto& r : rows)
        j["rows"].push_back({{"n_head", r.heads.n_head}, {"n_kv", r.heads.n_kv}, {"head_dim", r.heads.head_dim},
                             {"position", r.position}, {"tokens", r.tokens}, {"gflops", r.gflops}, {"chunks", r.chunks}, {"us", r.us}, {"bytes", r.bytes},
                             {"gbps", r.gbps}, {"ratio", r.ratio}, {"spec", r.spec}, {"copies", r.copies}});
      fmt::print("{}\n", j.dump(1));
      return;
    }
    fmt::print("device {} | streaming read {:.1f} GB/s ({} MiB, {} samples, {}) | kv {}\n", ctx.adapter().name(),
               bw.gbps, bw.bytes >> 20, bw.samples, bw.gpu_timestamps ? "timestamp queries" : "wall clock", o.kv);
    fmt::print("\n{:<12} {:>6} {:>8} {:>7} {:>10} {:>10} {:>9} {:>7} {:>9}  {}\n", "heads", "tokens", "position",
               "chunks", "us/call", "MB read", "GB/s", "of bw", "GFLOP/s", "kernel (copies rotated)");
    for (const auto& r : rows)
      fmt::print("{:<12} {:>6} {:>8} {:>7} {:>10.2f} {:>10.3f} {:>9.1f} {:>6.1f}% {:>9.1f}  {} ({})\n",
                 fmt::format("{}/{}x{}", r.heads.n_head, r.heads.n_kv, r.heads.head_dim), r.tokens, r.position,
                 r.chunks, r.us, r.bytes / 1e6, r.gbps, 100 * r.ratio, r.gflops, r.spec, r.copies);
  });
}

}  // namespace
BQ_REGISTER_COMMAND(add_bench_attention);
}  // namespace blockq::tools
