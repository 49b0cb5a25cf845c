// `blockq run -m MODEL.gguf -p PROMPT -n N [--temp --top-k --top-p --min-p
// --repeat-penalty --seed --sampler auto|gpu|host --chat]`: runs a
// llama/qwen2 GGUF on the GPU, streaming tokens as they come, then prompt and
// generation tokens/s and the time to first token. Without -m, the tiny
// synthetic model (made on first use). The sampler runs on the GPU where it
// can (GpuModel::begin_generation), else on the host.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include <fmt/format.h>

#include "model/chat_template.hpp"
#include "model/default_model.hpp"
#include "model/gpu_model.hpp"
#include "model/sampler.hpp"
#include "model/tokenizer.hpp"
#include "tools/commands.hpp"
#include "tools/context.hpp"
#include "tools/model_args.hpp"
#include "util/error.hpp"

namespace blockq::tools {
namespace {

struct RunArgs {
  std::string model;
  std::string prompt = "Once upon a time";
  int n = 64;
  SamplerArgs sampling;
  uint64_t seed = 42;
  std::string sampler = "auto";
  bool chat = false;
  bool ignore_eos = false;
  uint32_t n_ctx = 0;
  ModelLoadArgs load;
};

double secs(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

void run(const RunArgs& a, const GlobalOptions& g) {
  using clock = std::chrono::steady_clock;
  const std::string path = a.model.empty() ? model::ensure_synth_model("tiny", Format::Q8_0) : a.model;
  gguf::GgufFile file = gguf::GgufFile::open(path);
  const model::Tokenizer tok(model::from_gguf(file));
  gpu::Context ctx = make_context(g);
  const auto t_load = clock::now();
  model::GpuModel m(ctx, file, gpu_model_options(a.load, a.n_ctx));
  const auto& c = m.config();
  const auto& mem = m.memory();
  std::fprintf(stderr,
               "%s: %s, n_embd %u, %u layers, %u/%u heads, vocab %u on %s; loaded in %.2f s, GPU memory "
               "%.1f MiB (weights %.1f in %u buffer%s, KV cache %.1f in %s for %u positions, "
               "activations %.1f)\n",
               path.c_str(), c.arch_name.c_str(), c.n_embd, c.n_layer, c.n_head, c.n_head_kv, c.n_vocab,
               ctx.adapter().name().c_str(), secs(clock::now() - t_load), double(mem.total()) / (1 << 20),
               double(mem.weights) / (1 << 20), mem.weight_buffers, mem.weight_buffers == 1 ? "" : "s",
               double(mem.kv_cache) / (1 << 20), model::kv_type_name(m.kv_type()), m.n_ctx(),
               double(mem.activations) / (1 << 20));

  std::vector<model::TokenId> prompt;
  if (a.chat) {
    const std::string eos_text = tok.eos() >= 0 ? tok.text(tok.eos()) : "</s>";
    const auto fmt_ = model::detect_chat_template(file.get_string_or("tokenizer.chat_template", ""), eos_text);
    const std::vector<model::ChatMessage> msgs = {{"user", a.prompt}};
    prompt = tok.tokenize(model::apply_chat_template(fmt_, msgs, true), true, true);
  } else {
    prompt = tok.tokenize(a.prompt, true, false);
  }
  BQ_CHECK(!prompt.empty(), "the prompt gives no tokens");
  BQ_CHECK(prompt.size() + size_t(std::max(a.n, 0)) <= m.n_ctx(),
           "{} prompt tokens + {} to generate exceed the context of {} positions (--ctx)", prompt.size(), a.n,
           m.n_ctx());

  model::SamplerConfig sc = a.sampling.config();
  check_logit_bias(sc, c.n_vocab);
  sc.seed = a.seed;
  model::Sampler sampler(sc);
  sampler.accept(prompt);
  const std::string why = model::gpu_sampling_unsupported(sc);
  BQ_CHECK(a.sampler != "gpu" || why.empty(), "--sampler gpu: {}", why);
  const bool on_gpu = a.sampler == "gpu" || (a.sampler == "auto" && why.empty());
  if (on_gpu) m.prepare_generation(sc);  // its kernels compiled before the clock starts

  if (!a.chat) {
    std::fputs(a.prompt.c_str(), stdout);
    std::fflush(stdout);
  }
  const auto t0 = clock::now();
  std::span<const float> logits = m.eval(std::span<const model::TokenId>(prompt));
  const auto t_prompt = clock::now();
  if (on_gpu && a.n > 0) m.begin_generation(sc, uint32_t(a.n), prompt);
  int generated = 0;
  clock::time_point t_first = t_prompt;
  for (int i = 0; i < a.n; ++i) {
    const model::TokenId id = on_gpu ? m.next_token() : sampler.sample(logits);
    if (i == 0) t_first = clock::now();
    sampler.accept(id);
    ++generated;
    if (!a.ignore_eos && tok.is_eog(id)) break;
    const std::string piece = tok.token_to_piece(id, false);
    std::fwrite(piece.data(), 1, piece.size(), stdout);
    std::fflush(stdout);
    if (!on_gpu && i + 1 < a.n) logits = m.eval(id);
  }
  m.end_generation();  // waits for the step queued after the last token, counted in the rate
  const auto t_end = clock::now();
  std::fputs("\n", stdout);
  const double pp = secs(t_prompt - t0), gen = secs(t_end - t_first);
  std::fprintf(stderr,
               "prompt: %zu tokens in %.3f s (%.1f tokens/s, %s); generation: %d tokens in %.3f s "
               "(%.1f tokens/s, sampled on the %s); time to first token %.1f ms\n",
               prompt.size(), pp, double(prompt.size()) / pp,
               m.batch() > 1 ? fmt::format("batches of {}, passes of {} rows", m.batch(), passes_text(m)).c_str()
                             : "token by token",
               generated, gen,
               generated > 1 ? double(generated - 1) / gen : 0.0, on_gpu ? "GPU" : "host", 1e3 * secs(t_first - t0));
}

void add_run(CLI::App& app, GlobalOptions& g) {
  static RunArgs a;
  auto* cmd = app.add_subcommand("run", "Generate text with a GGUF model on the GPU (default: a tiny synthetic model)");
  cmd->add_option("-m,--model", a.model, "GGUF file (llama or qwen2); default: the tiny synthetic model");
  cmd->add_option("-p,--prompt", a.prompt, "Prompt text")->capture_default_str();
  cmd->add_option("-n,--n-predict", a.n, "Tokens to generate")->capture_default_str();
  add_sampler_options(cmd, a.sampling, "Sampling ");
  cmd->add_option("--seed", a.seed, "Sampling seed")->capture_default_str();
  cmd->add_option("--sampler", a.sampler,
                  "Where tokens are sampled: gpu (greedy, or top-k 1..256 without penalties), host, or auto "
                  "(the GPU where it can)")
      ->check(CLI::IsMember({"auto", "gpu", "host"}))
      ->capture_default_str();
  cmd->add_option("--ctx", a.n_ctx, "KV cache positions (0: min(context length, 4096))");
  add_model_load_options(cmd, a.load);
  cmd->add_flag("--chat", a.chat, "Wrap the prompt in the model's chat template as a user message");
  cmd->add_flag("--ignore-eos", a.ignore_eos, "Keep generating past end-of-generation tokens");
  cmd->callback([&g] { run(a, g); });
}

BQ_REGISTER_COMMAND(add_run);

}  // namespace
}  // namespace blockq::tools
