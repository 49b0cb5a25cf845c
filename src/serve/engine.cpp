// Engine: prompt preparation, KV cache reuse and the sampling loop.
#include "serve/engine.hpp"

#include <algorithm>
#include <chrono>
#include <random>

#include <fmt/format.h>

#include "model/sampler.hpp"
#include "serve/text_stream.hpp"
#include "util/error.hpp"

namespace blockq::serve {
namespace {

model::ChatFormat chat_format_of(const gguf::GgufFile& file, const model::Tokenizer& tok) {
  const std::string eos_text = tok.eos() >= 0 ? tok.text(tok.eos()) : "</s>";
  return model::detect_chat_template(file.get_string_or("tokenizer.chat_template", ""), eos_text);
}

}  // namespace

Engine::Engine(const gpu::Context& ctx, gguf::GgufFile file, EngineOptions opt)
    : opt_(std::move(opt)),
      tok_(model::from_gguf(file)),
      chat_(chat_format_of(file, tok_)),
      model_(ctx, std::move(file), opt_.model) {}

Prepared Engine::prepare(GenerationRequest r) const {
  Prepared p;
  if (r.endpoint == Endpoint::Chat) {
    p.tokens = tok_.tokenize(model::apply_chat_template(chat_, r.messages, true), true, true);
  } else if (!r.prompt_ids.empty()) {
    const size_t n_vocab = std::min<size_t>(tok_.n_vocab(), model_.config().n_vocab);
    for (size_t i = 0; i < r.prompt_ids.size(); ++i) {
      const int64_t id = r.prompt_ids[i];
      if (id < 0 || uint64_t(id) >= n_vocab) {
        const std::string name = fmt::format("prompt[{}]", i);
        throw RequestError(name, fmt::format("'{}': token id {} is outside the vocabulary [0, {})", name, id, n_vocab));
      }
      p.tokens.push_back(model::TokenId(id));
    }
  } else {
    p.tokens = tok_.tokenize(r.prompt, true, false);
    if (p.tokens.empty()) throw RequestError("prompt", "'prompt' gives no tokens");
  }
  if (p.tokens.empty()) throw RequestError("messages", "the messages give no tokens");
  const uint32_t ctx = n_ctx();
  if (p.tokens.size() >= ctx)
    throw RequestError(r.endpoint == Endpoint::Chat ? "messages" : "prompt",
                       fmt::format("the prompt has {} tokens; the context holds {} positions, and at least one "
                                   "must be left to generate",
                                   p.tokens.size(), ctx));
  const uint32_t room = ctx - uint32_t(p.tokens.size());
  const uint32_t want = r.max_tokens ? *r.max_tokens
                        : r.endpoint == Endpoint::Completion ? kCompletionDefaultMaxTokens
                                                             : room;
  p.max_tokens = std::min(want, room);
  if (!r.seeded) r.sampler.seed = std::random_device{}() | (uint64_t(std::random_device{}()) << 32);
  p.request = std::move(r);
  return p;
}

Outcome Engine::generate(const Prepared& p, const std::function<bool(std::string_view)>& on_text) {
  std::lock_guard lock(mu_);
  try {
    return generate_locked(p, on_text);
  } catch (...) {
    // Whatever the cache holds now is unknown: start over next time.
    cached_.clear();
    try {
      model_.reset();
    } catch (...) {
    }
    throw;
  }
}

Outcome Engine::generate_locked(const Prepared& p, const std::function<bool(std::string_view)>& on_text) {
  Outcome o;
  o.prompt_tokens = uint32_t(p.tokens.size());
  // Keep the cache's longest common prefix with the prompt, short of the
  // prompt's last token (evaluated for its logits).
  size_t keep = 0;
  if (model_.n_past() == cached_.size()) {
    const size_t most = std::min(cached_.size(), p.tokens.size() - 1);
    while (keep < most && cached_[keep] == p.tokens[keep]) ++keep;
  }
  model_.truncate(uint32_t(keep));
  cached_.resize(keep);
  o.cached_tokens = uint32_t(cached_.size());
  const std::span<const model::TokenId> rest = std::span(p.tokens).subspan(cached_.size());
  cached_.clear();  // until the evaluation succeeds
  using clock = std::chrono::steady_clock;
  const auto ms = [](clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); };
  const auto t0 = clock::now();
  std::span<const float> logits = model_.eval(rest);
  cached_ = p.tokens;
  const auto t_prompt = clock::now();
  auto t_first = t_prompt;

  const model::SamplerConfig& sc = p.request.sampler;
  model::Sampler host(sc);
  host.accept(p.tokens);
  o.gpu_sampled = opt_.gpu_sampler && model::gpu_sampling_unsupported(sc).empty();
  if (o.gpu_sampled) model_.begin_generation(sc, p.max_tokens, p.tokens);
  TextStream ts(p.request.stop);
  std::vector<model::TokenId> taken;
  o.finish = Finish::Length;
  for (uint32_t i = 0; i < p.max_tokens; ++i) {
    const model::TokenId id = o.gpu_sampled ? model_.next_token() : host.sample(logits);
    host.accept(id);
    taken.push_back(id);
    if (i == 0) t_first = clock::now();
    if (!p.request.ignore_eos && tok_.is_eog(id)) {
      o.finish = Finish::Stop;
      break;
    }
    const std::string out = ts.push(tok_.token_to_piece(id, false));
    if (!out.empty() && !on_text(out)) {
      o.finish = Finish::Cancelled;
      break;
    }
    if (ts.stopped()) {
      o.finish = Finish::Stop;
      break;
    }
    if (!o.gpu_sampled && i + 1 < p.max_tokens) logits = model_.eval(id);
  }
  if (o.gpu_sampled) model_.end_generation();
  o.prompt_ms = ms(t_prompt - t0);
  o.generation_ms = ms(clock::now() - t_first);
  // The cache holds every taken token but the last (both samplers).
  if (!taken.empty()) cached_.insert(cached_.end(), taken.begin(), taken.end() - 1);
  if (model_.n_past() != cached_.size()) {  // not expected; never reuse a cache we cannot name
    model_.reset();
    cached_.clear();
  }
  if (o.finish != Finish::Cancelled) {
    const std::string rest_text = ts.finish();
    if (!rest_text.empty() && !on_text(rest_text)) o.finish = Finish::Cancelled;
  }
  o.text = ts.sent();
  o.completion_tokens = uint32_t(taken.size());
  return o;
}

}  // namespace blockq::serve
