// `blockq synth --arch llama|qwen2 --preset NAME --type q4_0 -o FILE [--seed N]
// [--tokenizer bpe|spm] [--rope-freqs]`: writes a GGUF model with random weights, real shapes
// and a working tokenizer (see src/model/synth.hpp).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/synth.hpp"
#include "tools/commands.hpp"
#include "util/error.hpp"

namespace blockq::tools {
namespace {

struct SynthArgs {
  std::string arch = "llama";
  std::string preset = "tiny";
  std::string type = "q8_0";
  std::string out;
  uint64_t seed = 1;
  std::string tokenizer = "bpe";
  unsigned threads = 0;
  bool rope_freqs = false;
};

void run_synth(const SynthArgs& a) {
  model::SynthOptions o;
  if (a.arch == "llama")
    o.arch = model::Arch::Llama;
  else if (a.arch == "qwen2")
    o.arch = model::Arch::Qwen2;
  else
    fail("--arch {}: use llama or qwen2", a.arch);
  o.preset = a.preset;
  const auto f = format_from_name(a.type);
  BQ_CHECK(f, "--type {}: not a format blockq writes (f32, f16, bf16, q4_0, q4_1, q5_0, q5_1, "
           "q8_0, q2_K, q3_K, q4_K, q5_K, q6_K, iq4_nl, iq4_xs)", a.type);
  o.type = *f;
  o.seed = a.seed;
  o.threads = a.threads;
  o.rope_freqs = a.rope_freqs;
  if (a.tokenizer == "spm")
    o.tokenizer = model::TokenizerStyle::Spm;
  else if (a.tokenizer != "bpe")
    fail("--tokenizer {}: use bpe or spm", a.tokenizer);
  const model::SynthReport r = model::synth_model(o, a.out);
  const auto& c = r.config;
  fmt::print("{}: {} {} ({} params, {:.1f} MiB), n_embd {} n_layer {} n_head {}/{} n_ff {} "
             "vocab {}{}\n",
             a.out, c.arch_name, a.preset, r.n_params, double(r.file_bytes) / (1 << 20), c.n_embd,
             c.n_layer, c.n_head, c.n_head_kv, c.n_ff, c.n_vocab,
             c.tied_embeddings ? " (tied embeddings)" : "");
  if (c.rope_freqs) fmt::print("rope_freqs.weight: Llama 3.1 rope scaling (factor 8, low 1, high 4, original context 8192)\n");
  if (!r.fallbacks.empty()) {
    std::vector<std::string> names;
    for (const auto& [n, fmt_used] : r.fallbacks)
      names.push_back(fmt::format("{} -> {}", n, traits(fmt_used).name));
    fmt::print("{} tensor(s) have rows that do not fit {} blocks and use llama.cpp's fallback: "
               "{}\n",
               r.fallbacks.size(), traits(o.type).name,
               names.size() > 6 ? fmt::format("{}, ... ({} more)",
                                              fmt::join(names.begin(), names.begin() + 6, ", "),
                                              names.size() - 6)
                                : fmt::format("{}", fmt::join(names, ", ")));
  }
}

void add_synth(CLI::App& app, GlobalOptions&) {
  static SynthArgs args;
  auto* cmd = app.add_subcommand("synth", "Write a GGUF model with random weights and a working tokenizer");
  cmd->add_option("--arch", args.arch, "llama or qwen2")->capture_default_str();
  cmd->add_option("--preset", args.preset, "tiny, smollm2-360m, llama-3.2-1b, llama-3-8b")
      ->capture_default_str();
  cmd->add_option("--type", args.type, "format of the 2-D weights (q8_0, q4_0, q4_K, ...)")
      ->capture_default_str();
  cmd->add_option("-o,--output", args.out, "GGUF file to write")->required();
  cmd->add_option("--seed", args.seed, "random seed")->capture_default_str();
  cmd->add_option("--tokenizer", args.tokenizer, "bpe (the preset's) or spm (llama only)")
      ->capture_default_str();
  cmd->add_option("--threads", args.threads, "worker threads (0: all cores)");
  cmd->add_flag("--rope-freqs", args.rope_freqs,
                "add rope_freqs.weight with Llama 3.1's rope scaling factors (llama only)");
  cmd->callback([] { run_synth(args); });
}

BQ_REGISTER_COMMAND(add_synth);

}  // namespace
}  // namespace blockq::tools
