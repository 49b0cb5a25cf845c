// Log probabilities over HTTP on the tiny synthetic llama (logprobs, echo),
// and serve::token_logprob against a float64 log-sum-exp: the values are a
// host loop's over the same logits, streamed or not, chat or legacy, on the
// GPU sampler or the host's; a stop string drops its tokens'; an echoed
// prompt's are a token-at-a-time loop's.
#include <algorithm>
#include <cmath>
#include <random>

#include "serve/serve_test_support.hpp"
#include "util/error.hpp"

namespace blockq::serve {
namespace {

using namespace testing;

TEST(Logprob, IsTheLogSoftmaxWithTheBestInRankOrder) {
  std::mt19937 rng(3);
  std::normal_distribution<float> d(0.0f, 4.0f);
  std::vector<float> l(5000);
  for (float& x : l) x = d(rng);
  l[17] = l[4000] = 30.0f;  // a tie for the first place: the lower id first
  double sum = 0;
  for (const float x : l) sum += std::exp(double(x) - 30.0);
  const double lse = 30.0 + std::log(sum);
  const TokenLogprob t = token_logprob(l, 99, 5);
  EXPECT_EQ(t.id, 99);
  EXPECT_NEAR(t.logprob, double(l[99]) - lse, 1e-5);
  ASSERT_EQ(t.top.size(), 5u);
  EXPECT_EQ(t.top[0].id, 17);
  EXPECT_EQ(t.top[1].id, 4000);
  std::vector<float> sorted = l;
  std::sort(sorted.begin(), sorted.end(), std::greater<>());
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(l[size_t(t.top[i].id)], sorted[i]);
    EXPECT_NEAR(t.top[i].logprob, double(sorted[i]) - lse, 1e-5);
  }
  EXPECT_TRUE(token_logprob(l, 0, 0).top.empty());
  EXPECT_THROW(token_logprob(l, 5000, 1), blockq::Error);
}

// Chat logprobs, greedy: each token's is the host loop's (log softmax of the
// same logits), its first alternative is itself, the tokens spell the text;
// streamed, the same entries arrive with the pieces; legacy completions give
// the parallel arrays with text offsets; a stop string's tokens have none.
TEST(Serve, LogprobsAreTheHostLoops) {
  Running& r = shared();
  json body = kChat;
  body.update({{"logprobs", true}, {"top_logprobs", 3}});
  const Prepared p = r.engine.prepare(parse_request(Endpoint::Chat, body, {}));
  std::vector<TokenLogprob> want;
  const std::vector<model::TokenId> ids = host_ids(p.tokens, 10, {}, &want);
  const json j = r.post("/v1/chat/completions", body);
  const json& content = j["choices"][0]["logprobs"]["content"];
  const model::Tokenizer tok(model::from_gguf(file()));
  const size_t n_text = ids.size() - (tok.is_eog(ids.back()) ? 1 : 0);
  ASSERT_EQ(content.size(), n_text) << j.dump();
  std::string spelled;
  for (size_t i = 0; i < n_text; ++i) {
    const json& e = content[i];
    const std::string piece = tok.token_to_piece(ids[i], false);
    spelled += piece;
    EXPECT_NEAR(e["logprob"].get<double>(), want[i].logprob, 1e-5) << i;
    EXPECT_LE(e["logprob"].get<double>(), 0.0);
    EXPECT_EQ(e["bytes"].size(), piece.size());
    ASSERT_EQ(e["top_logprobs"].size(), 3u);
    EXPECT_EQ(e["top_logprobs"][0]["logprob"], e["logprob"]);  // greedy: the best
    for (size_t a = 0; a < 3; ++a)
      EXPECT_NEAR(e["top_logprobs"][a]["logprob"].get<double>(), want[i].top[a].logprob, 1e-5);
  }
  const json sent = json::parse(json(spelled).dump(-1, ' ', false, json::error_handler_t::replace));
  EXPECT_EQ(j["choices"][0]["message"]["content"], sent);
  EXPECT_TRUE(r.post("/v1/chat/completions", kChat)["choices"][0]["logprobs"].is_null());

  body["stream"] = true;
  httplib::Client c = r.client();
  const auto res = c.Post("/v1/chat/completions", body.dump(), "application/json");
  ASSERT_TRUE(res);
  json streamed = json::array();
  for (const json& ev : events(res->body)) {
    if (ev == "[DONE]" || ev["choices"].empty()) continue;
    const json& lp = ev["choices"][0]["logprobs"];
    if (!lp.is_null())
      for (const json& e : lp["content"]) streamed.push_back(e);
  }
  // The same tokens; the values within rounding (the prompt now comes from
  // the cache but for its last token, evaluated alone rather than in a batch).
  ASSERT_EQ(streamed.size(), content.size());
  for (size_t i = 0; i < content.size(); ++i) {
    EXPECT_EQ(streamed[i]["bytes"], content[i]["bytes"]) << i;
    EXPECT_NEAR(streamed[i]["logprob"].get<double>(), content[i]["logprob"].get<double>(), 1e-5) << i;
    EXPECT_EQ(streamed[i]["top_logprobs"].size(), content[i]["top_logprobs"].size()) << i;
  }

  // Legacy completions: the same prompt's tokens, as parallel arrays.
  json cb = {{"prompt", "The quick brown fox"}, {"temperature", 0}, {"max_tokens", 12}, {"logprobs", 2}};
  const std::vector<model::TokenId> prompt = r.engine.prepare(parse_request(Endpoint::Completion, cb, {})).tokens;
  const json cj = r.post("/v1/completions", cb);
  const json& lp = cj["choices"][0]["logprobs"];
  const std::string text = cj["choices"][0]["text"];
  ASSERT_EQ(lp["tokens"].size(), lp["token_logprobs"].size());
  ASSERT_EQ(lp["tokens"].size(), lp["text_offset"].size());
  ASSERT_EQ(lp["tokens"].size(), lp["top_logprobs"].size());
  ASSERT_GT(lp["tokens"].size(), 2u);
  const std::vector<model::TokenId> cids = host_ids(prompt, 12);
  size_t offset = 0;
  for (size_t i = 0; i < lp["tokens"].size(); ++i) {
    EXPECT_EQ(lp["text_offset"][i], offset);
    offset += tok.token_to_piece(cids[i], false).size();
    EXPECT_GE(lp["top_logprobs"][i].size(), 1u);  // 2 alternatives; pieces that print alike merge
    EXPECT_LE(lp["top_logprobs"][i].size(), 2u);
  }
  // A stop string in the middle (a later token's text, ASCII): no entry
  // starts at or after the cut.
  std::string stop;
  for (size_t i = 1; i < cids.size() && stop.empty(); ++i) {
    const std::string piece = tok.token_to_piece(cids[i], false);
    if (!piece.empty() && std::all_of(piece.begin(), piece.end(), [](char ch) { return ch > 0; })) stop = piece;
  }
  ASSERT_FALSE(stop.empty()) << "no ASCII token to stop at in '" << text << "'";
  cb["stop"] = {stop};
  const json sj = r.post("/v1/completions", cb);
  const std::string stopped = sj["choices"][0]["text"];
  EXPECT_LT(stopped.size(), offset);
  EXPECT_EQ(sj["choices"][0]["finish_reason"], "stop");
  size_t before = 0;  // the tokens that start before the cut
  while (before < lp["text_offset"].size() && size_t(lp["text_offset"][before]) < stopped.size()) ++before;
  EXPECT_EQ(sj["choices"][0]["logprobs"]["text_offset"].size(), before);
  for (const json& o : sj["choices"][0]["logprobs"]["text_offset"]) EXPECT_LT(size_t(o), stopped.size());
}

// Sampled with penalties, logprobs on the GPU sampler (each step's logits
// read back beside its token) against an engine that samples on the host:
// the same tokens, text and log probabilities, with and without echo.
TEST(Serve, LogprobsOnTheGpuSamplerAreTheHostSamplers) {
  Running& r = shared();
  EngineOptions ho = engine_options();
  ho.gpu_sampler = false;
  Engine host(testing_support::test_context(), file(), ho);
  for (const bool echo : {false, true}) {
    const json body = {{"prompt", "The quick brown fox"}, {"max_tokens", 12}, {"logprobs", 3},
                       {"temperature", 0.8}, {"top_k", 40}, {"seed", 7}, {"frequency_penalty", 0.5},
                       {"presence_penalty", 0.25}, {"ignore_eos", true}, {"echo", echo}};
    const GenerationRequest req = parse_request(Endpoint::Completion, body, {});
    const auto none = [](std::string_view, std::span<const TokenLogprob>) { return true; };
    const Outcome g = r.engine.generate(r.engine.prepare(req), none);
    const Outcome h = host.generate(host.prepare(req), none);
    EXPECT_TRUE(g.gpu_sampled) << "these settings should sample on the GPU";
    EXPECT_FALSE(h.gpu_sampled);
    EXPECT_EQ(g.text, h.text);
    ASSERT_EQ(g.logprobs.size(), h.logprobs.size());
    ASSERT_GT(g.logprobs.size(), 10u);
    for (size_t i = 0; i < g.logprobs.size(); ++i) {
      const TokenLogprob &a = g.logprobs[i], &b = h.logprobs[i];
      EXPECT_EQ(a.id, b.id) << i;
      EXPECT_EQ(a.none, b.none) << i;
      // Within rounding: the shared engine may hold the prompt in its cache
      // and evaluate it in other batches than the fresh one.
      EXPECT_NEAR(a.logprob, b.logprob, 1e-4) << i;
      ASSERT_EQ(a.top.size(), b.top.size()) << i;
      for (size_t k = 0; k < a.top.size(); ++k) EXPECT_EQ(a.top[k].id, b.top[k].id) << i;
    }
  }
}

// Echo with logprobs (as lm-eval's loglikelihood asks: token ids, max_tokens
// 0): the prompt's text, no logprob for its first token, then each token's
// log probability given the tokens before it, as a host loop evaluating the
// prompt a token at a time computes it; with max_tokens 3 the generated
// tokens follow, their offsets after the prompt's text.
TEST(Serve, EchoGivesThePromptsLogprobs) {
  Running& r = shared();
  const std::vector<model::TokenId> prompt = {5, 77, 300, 41, 9, 512};
  model::GpuModel m(testing_support::test_context(), file(), engine_options().model);
  const model::Tokenizer tok(model::from_gguf(file()));
  std::vector<double> want;
  std::string text;
  for (size_t i = 0; i < prompt.size(); ++i) {
    text += tok.token_to_piece(prompt[i], false);
    const std::span<const float> logits = m.eval(prompt[i]);
    if (i + 1 < prompt.size()) want.push_back(token_logprob(logits, prompt[i + 1], 0).logprob);
  }
  json body = {{"prompt", prompt}, {"echo", true}, {"max_tokens", 0}, {"logprobs", 1}, {"temperature", 0}};
  const json j = r.post("/v1/completions", body);
  const json sent = json::parse(json(text).dump(-1, ' ', false, json::error_handler_t::replace));
  EXPECT_EQ(j["choices"][0]["text"], sent);
  EXPECT_EQ(j["usage"]["completion_tokens"], 0);
  const json& lp = j["choices"][0]["logprobs"];
  ASSERT_EQ(lp["token_logprobs"].size(), prompt.size()) << j.dump();
  EXPECT_TRUE(lp["token_logprobs"][0].is_null());
  EXPECT_TRUE(lp["top_logprobs"][0].is_null());
  for (size_t i = 1; i < prompt.size(); ++i) {
    EXPECT_NEAR(lp["token_logprobs"][i].get<double>(), want[i - 1], 1e-5) << i;
    EXPECT_EQ(lp["top_logprobs"][i].size(), 1u);
  }
  // Then 3 generated tokens, after the prompt's text.
  body["max_tokens"] = 3;
  const json g = r.post("/v1/completions", body);
  const json& gl = g["choices"][0]["logprobs"];
  ASSERT_EQ(gl["tokens"].size(), prompt.size() + 3) << g.dump();
  EXPECT_EQ(gl["text_offset"][prompt.size()], text.size());
  EXPECT_EQ(g["usage"]["completion_tokens"], 3);
  const json plain = r.post("/v1/completions", {{"prompt", prompt}, {"max_tokens", 3}, {"temperature", 0}});
  const std::string gtext = g["choices"][0]["text"];
  EXPECT_EQ(gtext, sent.get<std::string>() + plain["choices"][0]["text"].get<std::string>());
  // Streamed: the prompt's text and entries first, the same in all.
  body["stream"] = true;
  httplib::Client c = r.client();
  const auto res = c.Post("/v1/completions", body.dump(), "application/json");
  ASSERT_TRUE(res);
  std::string streamed;
  json lps = json::array();
  for (const json& ev : events(res->body)) {
    if (ev == "[DONE]" || ev["choices"].empty()) continue;
    streamed += ev["choices"][0]["text"].get<std::string>();
    const json& l = ev["choices"][0]["logprobs"];
    if (!l.is_null())
      for (const json& x : l["token_logprobs"]) lps.push_back(x);
  }
  EXPECT_EQ(streamed, gtext);
  EXPECT_EQ(lps, gl["token_logprobs"]);
}

}  // namespace
}  // namespace blockq::serve
