// Engine: prompt preparation, KV cache reuse and the sampling loop.
#include "serve/engine.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
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

TokenLogprob token_logprob(std::span<const float> logits, model::TokenId id, uint32_t top) {
  BQ_CHECK(id >= 0 && size_t(id) < logits.size(), "token {} outside the logits [0, {})", id, logits.size());
  float mx = -INFINITY;
  for (const float l : logits)
    if (l > mx) mx = l;
  // exp in f32 (within an ulp or two), summed in double: 0.47 ms for 128256
  // logits where exp in double took 1.08 (a generation step of a 1B model
  // on the H200 takes 0.7).
  double sum = 0;
  for (const float l : logits) sum += double(std::exp(l - mx));
  const double lse = double(mx) + std::log(sum);
  TokenLogprob t;
  t.id = id;
  t.logprob = float(double(logits[size_t(id)]) - lse);
  // The `top` best by a heap of them, the worst on top.
  const size_t k = std::min<size_t>(top, logits.size());
  auto before = [&](model::TokenId a, model::TokenId b) {  // rank order: a ranks before b
    const float la = logits[size_t(a)], lb = logits[size_t(b)];
    if (std::isnan(la) != std::isnan(lb)) return std::isnan(lb);
    return la > lb || (!(la < lb) && a < b);
  };
  std::vector<model::TokenId> best;
  for (size_t i = 0; i < logits.size() && k > 0; ++i) {
    const auto c = model::TokenId(i);
    if (best.size() < k) {
      best.push_back(c);
      std::push_heap(best.begin(), best.end(), before);
    } else if (before(c, best.front())) {
      std::pop_heap(best.begin(), best.end(), before);
      best.back() = c;
      std::push_heap(best.begin(), best.end(), before);
    }
  }
  std::sort(best.begin(), best.end(), before);
  for (const model::TokenId b : best) t.top.push_back({b, {}, float(double(logits[size_t(b)]) - lse)});
  return t;
}

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
  for (const auto& [id, b] : r.sampler.logit_bias)
    if (id < 0 || uint32_t(id) >= model_.config().n_vocab)
      throw RequestError("logit_bias", fmt::format("'logit_bias': token id {} is outside the vocabulary [0, {})", id,
                                                   model_.config().n_vocab));
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

Outcome Engine::generate(const Prepared& p, const OnText& on_text) {
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

Outcome Engine::generate_locked(const Prepared& p, const OnText& on_text) {
  Outcome o;
  o.prompt_tokens = uint32_t(p.tokens.size());
  const std::optional<uint32_t> want_lp = p.request.logprobs;
  // Echoed with logprobs: every prompt token's logits are needed, so the
  // prompt is evaluated from the start (GpuModel::eval_all: in batches whose
  // lm_head runs over every row).
  const bool prompt_lps = p.request.echo && want_lp;
  // Keep the cache's longest common prefix with the prompt, short of the
  // prompt's last token (evaluated for its logits).
  size_t keep = 0;
  if (!prompt_lps && model_.n_past() == cached_.size()) {
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
  // With echo: the prompt's text (its tokens' pieces) goes out first, with
  // the prompt tokens' logprobs (none for the first).
  std::vector<TokenLogprob>& lps = o.logprobs;
  std::string echoed;
  if (p.request.echo)
    for (const model::TokenId id : p.tokens) {
      const std::string piece = tok_.token_to_piece(id, false);
      if (want_lp) lps.push_back({.id = id, .piece = piece, .none = lps.empty(), .offset = echoed.size()});
      echoed += piece;
    }
  std::span<const float> logits;
  if (prompt_lps) {  // every position's logits; token i + 1's log probability from row i
    logits = model_.eval_all(rest, [&](size_t i, std::span<const float> row) {
      if (i + 1 == rest.size()) return;
      TokenLogprob& e = lps[i + 1];
      const TokenLogprob lp = token_logprob(row, rest[i + 1], *want_lp);
      e.logprob = lp.logprob;
      for (const TokenLogprob::Alt& a : lp.top) e.top.push_back({a.id, tok_.token_to_piece(a.id, false), a.logprob});
    });
  } else {
    logits = model_.eval(rest);
  }
  cached_ = p.tokens;
  const auto t_prompt = clock::now();
  auto t_first = t_prompt;

  const model::SamplerConfig& sc = p.request.sampler;
  model::Sampler host(sc);
  host.accept(p.tokens);
  // On the GPU where it can; with logprobs, each step's logits come back too.
  o.gpu_sampled = opt_.gpu_sampler && model::gpu_sampling_unsupported(sc).empty() && p.max_tokens > 0;
  if (o.gpu_sampled) model_.begin_generation(sc, p.max_tokens, p.tokens, want_lp.has_value());
  TextStream ts(p.request.stop);
  std::vector<model::TokenId> taken;
  // With logprobs: one per token pushed to the text (after the echoed
  // prompt's); those before `given` went out. Each goes with the piece that
  // sends its first byte (`all`: the rest, at the end without a stop string).
  const size_t base = echoed.size();
  size_t given = 0, raw = base;
  auto deliver = [&](const std::string& out, bool all) {
    size_t e = given;
    while (e < lps.size() && (all || lps[e].offset < base + ts.sent().size())) ++e;
    const std::span<const TokenLogprob> part(lps.data() + given, e - given);
    given = e;
    return (out.empty() && part.empty()) || on_text(out, part);
  };
  o.finish = Finish::Length;
  if (p.request.echo && !deliver(echoed, true)) o.finish = Finish::Cancelled;
  for (uint32_t i = 0; i < p.max_tokens && o.finish != Finish::Cancelled; ++i) {
    const model::TokenId id = o.gpu_sampled ? model_.next_token() : host.sample(logits);
    if (o.gpu_sampled && want_lp) logits = model_.token_logits();  // what the token was drawn from
    host.accept(id);
    taken.push_back(id);
    if (i == 0) t_first = clock::now();
    if (!p.request.ignore_eos && tok_.is_eog(id)) {
      o.finish = Finish::Stop;
      break;
    }
    const std::string piece = tok_.token_to_piece(id, false);
    if (want_lp) {
      TokenLogprob lp = token_logprob(logits, id, *want_lp);
      lp.piece = piece;
      lp.offset = raw;
      for (TokenLogprob::Alt& a : lp.top) a.piece = tok_.token_to_piece(a.id, false);
      lps.push_back(std::move(lp));
    }
    raw += piece.size();
    if (!deliver(ts.push(piece), false)) {
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
    const bool stopped = ts.stopped();  // by a stop string: its tokens are not sent
    if (!deliver(ts.finish(), !stopped)) o.finish = Finish::Cancelled;
  }
  lps.resize(given);
  o.text = echoed + ts.sent();
  o.completion_tokens = uint32_t(taken.size());
  return o;
}

}  // namespace blockq::serve
