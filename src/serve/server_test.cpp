// The server over HTTP on the tiny synthetic llama: /health and /v1/models;
// a greedy chat or completion gives the tokens of a plain host loop over the
// same prompt tokens (with penalties too), streamed or not, or sent as token
// ids (an id outside the vocabulary is an error); a stop string ends the
// text before it; the KV cache left by one request serves the next one's common prefix
// with the same tokens as a fresh cache; a seed repeats a sampled answer (GPU
// and host samplers); logprobs are the host loop's, streamed or not, chat or
// legacy; a cancelled generation leaves the engine usable; bad
// requests get OpenAI-shaped errors naming the field; the API key is
// enforced, but not on a CORS preflight.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "model/oracle.hpp"
#include "serve/server.hpp"
#include "support/gpu.hpp"
#include "util/error.hpp"

namespace blockq::serve {
namespace {

using nlohmann::json;
constexpr uint32_t kCtx = 64;

const gguf::GgufFile& file() {
  static const gguf::GgufFile f = [] {
    model::SynthOptions o;
    o.seed = 5;
    return gguf::GgufFile::open(model::testing::synth_file("serve-llama-q8_0", o));
  }();
  return f;
}

EngineOptions engine_options() {
  EngineOptions o;
  o.model_id = "tiny-test";
  o.model = {.n_ctx = kCtx, .batch = 4, .crossover = 8u};
  return o;
}

// A server on a free port, serving from its own thread.
struct Running {
  Engine engine;
  Server server;
  int port = 0;
  std::thread thread;
  explicit Running(ServerOptions so = {})
      : engine(testing_support::test_context(), file(), engine_options()), server(engine, [&] {
          so.log_requests = false;
          return so;
        }()) {
    port = server.bind("127.0.0.1", 0);
    thread = std::thread([this] { server.listen(); });
  }
  ~Running() {
    server.stop();
    thread.join();
  }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(600, 0);
    return c;
  }
  json post(const std::string& path, const json& body, int want_status = 200) const {
    httplib::Client c = client();
    const auto res = c.Post(path.c_str(), body.dump(), "application/json");
    EXPECT_TRUE(res) << "no response from " << path;
    if (!res) return {};
    EXPECT_EQ(res->status, want_status) << res->body;
    return json::parse(res->body);
  }
};

Running& shared() {
  static Running r;
  return r;
}

// Greedy tokens of a plain host loop from the prompt tokens (with `sc`'s
// penalties, the prompt among the recent tokens), up to the
// end-of-generation token or n.
// `lps`: each token's log probability and its 3 best alternatives.
std::vector<model::TokenId> host_ids(const std::vector<model::TokenId>& prompt, uint32_t n,
                                     const model::SamplerConfig& sc = {}, std::vector<TokenLogprob>* lps = nullptr) {
  model::GpuModel m(testing_support::test_context(), file(), engine_options().model);
  const model::Tokenizer tok(model::from_gguf(file()));
  model::Sampler s(sc);  // temperature 0: greedy
  s.accept(prompt);
  std::span<const float> logits = m.eval(prompt);
  std::vector<model::TokenId> out;
  while (out.size() < n) {
    out.push_back(s.sample(logits));
    if (lps) lps->push_back(token_logprob(logits, out.back(), 3));
    s.accept(out.back());
    if (tok.is_eog(out.back())) break;
    if (out.size() < n) logits = m.eval(out.back());
  }
  return out;
}

// host_ids as text (the end-of-generation token unsent), and how many were sampled.
std::pair<std::string, uint32_t> host_greedy(const std::vector<model::TokenId>& prompt, uint32_t n,
                                             const model::SamplerConfig& sc = {}) {
  const model::Tokenizer tok(model::from_gguf(file()));
  const std::vector<model::TokenId> ids = host_ids(prompt, n, sc);
  std::string text;
  for (const model::TokenId id : ids)
    if (!tok.is_eog(id)) text += tok.token_to_piece(id, false);
  return {text, uint32_t(ids.size())};
}

const json kChat = {{"messages", {{{"role", "system"}, {"content", "You are terse."}},
                                  {{"role", "user"}, {"content", "Tell me about the sea."}}}},
                    {"temperature", 0},
                    {"max_tokens", 10}};

TEST(Serve, HealthAndModels) {
  Running& r = shared();
  httplib::Client c = r.client();
  const auto h = c.Get("/health");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->status, 200);
  EXPECT_EQ(json::parse(h->body)["status"], "ok");
  const auto m = c.Get("/v1/models");
  ASSERT_TRUE(m);
  const json j = json::parse(m->body);
  EXPECT_EQ(j["object"], "list");
  ASSERT_EQ(j["data"].size(), 1u);
  EXPECT_EQ(j["data"][0]["id"], "tiny-test");
  EXPECT_EQ(j["data"][0]["meta"]["n_ctx"], kCtx);
}

TEST(Serve, GreedyChatIsTheHostLoopsText) {
  Running& r = shared();
  GenerationRequest req = parse_request(Endpoint::Chat, kChat, {});
  const Prepared p = r.engine.prepare(req);
  const auto [want, n] = host_greedy(p.tokens, 10);
  const json j = r.post("/v1/chat/completions", kChat);
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["model"], "tiny-test");
  EXPECT_EQ(j["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(j["choices"][0]["message"]["content"], json(want).get<std::string>());
  EXPECT_EQ(j["choices"][0]["finish_reason"], n == 10 ? "length" : "stop");
  EXPECT_EQ(j["usage"]["prompt_tokens"], p.tokens.size());
  EXPECT_EQ(j["usage"]["completion_tokens"], n);
  EXPECT_EQ(j["usage"]["total_tokens"], p.tokens.size() + n);
  EXPECT_EQ(j["timings"]["predicted_n"], n);
  EXPECT_GT(j["timings"]["prompt_ms"].get<double>(), 0.0);
}

// With penalties (sampled on the GPU, the prompt among the recent tokens):
// the host loop's text with them. The prompt ends where the plain greedy
// continuation repeats one of its tokens, so that the first token already
// depends on the prompt's share of the window.
TEST(Serve, PenaltiesGiveTheHostLoopsText) {
  Running& r = shared();
  std::vector<model::TokenId> prompt = {5, 77, 300, 41, 9};
  const std::vector<model::TokenId> plain = host_ids(prompt, 16);
  size_t i = 0;
  while (i < plain.size() && std::find(prompt.begin(), prompt.end(), plain[i]) == prompt.end())
    prompt.push_back(plain[i++]);
  ASSERT_LT(i, plain.size()) << "the plain greedy tokens repeat none of the prompt's or their own";
  json body = {{"prompt", prompt},
               {"temperature", 0},
               {"max_tokens", 12},
               {"repeat_penalty", 1.5},
               {"presence_penalty", 0.5},
               {"frequency_penalty", 0.25},
               {"repeat_last_n", 8}};
  const GenerationRequest req = parse_request(Endpoint::Completion, body, {});
  ASSERT_TRUE(model::gpu_sampling_unsupported(req.sampler).empty());
  const std::vector<model::TokenId> want_ids = host_ids(prompt, 12, req.sampler);
  ASSERT_NE(want_ids[0], plain[i]) << "the penalties left the repeated token first";
  const auto [want, n] = host_greedy(prompt, 12, req.sampler);
  const json j = r.post("/v1/completions", body);
  // Bytes that are not UTF-8 went out as U+FFFD.
  const json sent = json::parse(json(want).dump(-1, ' ', false, json::error_handler_t::replace));
  EXPECT_EQ(j["choices"][0]["text"], sent);
  EXPECT_EQ(j["usage"]["completion_tokens"], n);
}

// The events of a text/event-stream body, "[DONE]" as a string.
std::vector<json> events(const std::string& body) {
  std::vector<json> out;
  size_t pos = 0;
  while ((pos = body.find("data: ", pos)) != std::string::npos) {
    const size_t end = body.find("\n\n", pos);
    EXPECT_NE(end, std::string::npos) << "an event without its blank line";
    const std::string data = body.substr(pos + 6, end - pos - 6);
    out.push_back(data == "[DONE]" ? json("[DONE]") : json::parse(data));
    pos = end;
  }
  return out;
}

TEST(Serve, StreamingSendsTheSameText) {
  Running& r = shared();
  const json whole = r.post("/v1/chat/completions", kChat);
  json body = kChat;
  body["stream"] = true;
  body["stream_options"] = {{"include_usage", true}};
  httplib::Client c = r.client();
  const auto res = c.Post("/v1/chat/completions", body.dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/event-stream");
  const std::vector<json> ev = events(res->body);
  ASSERT_GE(ev.size(), 4u) << res->body;
  EXPECT_EQ(ev.back(), "[DONE]");
  EXPECT_EQ(ev[0]["object"], "chat.completion.chunk");
  EXPECT_EQ(ev[0]["choices"][0]["delta"]["role"], "assistant");
  std::string text;
  for (size_t i = 0; i + 3 < ev.size(); ++i) {
    EXPECT_TRUE(ev[i]["choices"][0]["finish_reason"].is_null());
    text += ev[i]["choices"][0]["delta"]["content"].get<std::string>();
  }
  const json& last = ev[ev.size() - 3];
  EXPECT_EQ(last["choices"][0]["finish_reason"], whole["choices"][0]["finish_reason"]);
  EXPECT_TRUE(last["choices"][0]["delta"].empty());
  EXPECT_EQ(text, whole["choices"][0]["message"]["content"]);
  const json& usage = ev[ev.size() - 2];
  EXPECT_TRUE(usage["choices"].empty());
  EXPECT_EQ(usage["usage"]["completion_tokens"], whole["usage"]["completion_tokens"]);
}

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

TEST(Serve, StopStringEndsTheText) {
  Running& r = shared();
  const json base = {{"prompt", "The quick brown fox"}, {"temperature", 0}, {"max_tokens", 12}};
  const std::string full = r.post("/v1/completions", base)["choices"][0]["text"];
  ASSERT_GE(full.size(), 6u) << "the tiny model said too little to cut: '" << full << "'";
  const std::string stop = full.substr(full.size() / 2, 2);
  const size_t at = full.find(stop);
  json body = base;
  body["stop"] = {"never-said-xyz", stop};
  const json j = r.post("/v1/completions", body);
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_EQ(j["choices"][0]["text"], full.substr(0, at)) << "full text '" << full << "', stop '" << stop << "'";
  EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
}

TEST(Serve, PromptAsTokenIds) {
  Running& r = shared();
  const json text = {{"prompt", "Over the hills"}, {"temperature", 0}, {"max_tokens", 6}};
  const Prepared p = r.engine.prepare(parse_request(Endpoint::Completion, text, {}));
  json ids = text;
  ids["prompt"] = p.tokens;
  const json a = r.post("/v1/completions", text);
  const json b = r.post("/v1/completions", ids);
  EXPECT_EQ(b["usage"]["prompt_tokens"], p.tokens.size());
  EXPECT_EQ(b["choices"][0]["text"], a["choices"][0]["text"]);
  ids["prompt"] = {1, r.engine.tokenizer().n_vocab()};
  const json e = r.post("/v1/completions", ids, 400);
  EXPECT_EQ(e["error"]["param"], "prompt[1]");
  EXPECT_NE(e["error"]["message"].get<std::string>().find("outside the vocabulary"), std::string::npos) << e.dump();
}

TEST(Serve, CachedPrefixGivesTheFreshTokens) {
  Running& r = shared();
  const json first = {{"prompt", "In a village by the river"}, {"temperature", 0}, {"max_tokens", 4}};
  json longer = first;
  longer["prompt"] = "In a village by the river there lived an old miller";
  r.post("/v1/completions", {{"prompt", "Something else entirely"}, {"max_tokens", 1}});
  const json fresh = r.post("/v1/completions", longer);
  const int fresh_cached = fresh["usage"]["prompt_tokens_details"]["cached_tokens"];
  EXPECT_LE(fresh_cached, 1);  // at most the BOS token is shared
  r.post("/v1/completions", first);
  const json cached = r.post("/v1/completions", longer);
  EXPECT_GT(cached["usage"]["prompt_tokens_details"]["cached_tokens"].get<int>(), fresh_cached + 3);
  EXPECT_EQ(cached["choices"][0]["text"], fresh["choices"][0]["text"]);
  // The same prompt again: the cache holds all of it but must evaluate its last token.
  const json again = r.post("/v1/completions", longer);
  EXPECT_EQ(again["choices"][0]["text"], fresh["choices"][0]["text"]);
}

TEST(Serve, SeedRepeatsSampledText) {
  Running& r = shared();
  // The GPU sampler, with and without penalties; the host's (top-k off).
  for (const json& extra : {json{{"top_k", 20}}, json{{"top_k", 20}, {"frequency_penalty", 0.5}},
                            json{{"top_k", 0}, {"frequency_penalty", 0.5}}}) {
    json body = {{"prompt", "Once"}, {"temperature", 1.0}, {"max_tokens", 12}, {"seed", 1234}};
    body.update(extra);
    const json a = r.post("/v1/completions", body);
    r.post("/v1/completions", {{"prompt", "Twice"}, {"max_tokens", 2}});
    const json b = r.post("/v1/completions", body);
    EXPECT_EQ(a["choices"][0]["text"], b["choices"][0]["text"]) << extra.dump();
    EXPECT_EQ(a["usage"]["completion_tokens"], b["usage"]["completion_tokens"]);
  }
}

TEST(Serve, CancelledGenerationLeavesTheEngineUsable) {
  Running& r = shared();
  const json body = {{"prompt", "A long story"}, {"temperature", 0}, {"max_tokens", 12}};
  const Prepared p = r.engine.prepare(parse_request(Endpoint::Completion, body, {}));
  const Outcome whole = r.engine.generate(p, [](std::string_view, auto) { return true; });
  int pieces = 0;
  const Outcome cut = r.engine.generate(p, [&](std::string_view, auto) { return ++pieces < 2; });
  EXPECT_EQ(cut.finish, Finish::Cancelled);
  EXPECT_LT(cut.completion_tokens, whole.completion_tokens);
  const Outcome again = r.engine.generate(p, [](std::string_view, auto) { return true; });
  EXPECT_EQ(again.text, whole.text);
  EXPECT_EQ(again.completion_tokens, whole.completion_tokens);
}

TEST(Serve, BadRequestsGetErrorsNamingTheField) {
  Running& r = shared();
  httplib::Client c = r.client();
  const auto bad_json = c.Post("/v1/chat/completions", "{\"messages\": [", "application/json");
  ASSERT_TRUE(bad_json);
  EXPECT_EQ(bad_json->status, 400);
  EXPECT_NE(json::parse(bad_json->body)["error"]["message"].get<std::string>().find("not valid JSON"),
            std::string::npos);
  const json n2 = r.post("/v1/chat/completions", {{"messages", kChat["messages"]}, {"n", 2}}, 400);
  EXPECT_EQ(n2["error"]["param"], "n");
  EXPECT_EQ(n2["error"]["type"], "invalid_request_error");
  EXPECT_EQ(r.post("/v1/completions", {{"prompt", "x"}, {"temperature", 9}}, 400)["error"]["param"], "temperature");
  std::string long_prompt;
  for (int i = 0; i < 80; ++i) long_prompt += " word";
  const json too_long = r.post("/v1/completions", {{"prompt", long_prompt}}, 400);
  EXPECT_EQ(too_long["error"]["param"], "prompt");
  EXPECT_NE(too_long["error"]["message"].get<std::string>().find("holds 64 positions"), std::string::npos)
      << too_long.dump();
  const auto missing = c.Get("/v1/nothing");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_NE(json::parse(missing->body)["error"]["message"].get<std::string>().find("/v1/nothing"),
            std::string::npos);
  // After the errors, a request still works.
  EXPECT_EQ(r.post("/v1/completions", {{"prompt", "x"}, {"max_tokens", 1}})["usage"]["completion_tokens"], 1);
}

TEST(Serve, ApiKeyIsRequiredWhenSet) {
  ServerOptions so;
  so.api_key = "sesame";
  Running r(so);
  httplib::Client c = r.client();
  const auto no_key = c.Get("/v1/models");
  ASSERT_TRUE(no_key);
  EXPECT_EQ(no_key->status, 401);
  EXPECT_EQ(json::parse(no_key->body)["error"]["type"], "authentication_error");
  const auto wrong = c.Get("/v1/models", {{"Authorization", "Bearer nope"}});
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);
  const auto right = c.Get("/v1/models", {{"Authorization", "Bearer sesame"}});
  ASSERT_TRUE(right);
  EXPECT_EQ(right->status, 200);
  const auto health = c.Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  // A browser's preflight needs no key, and answers allow any origin.
  const auto pre = c.Options("/v1/chat/completions");
  ASSERT_TRUE(pre);
  EXPECT_EQ(pre->status, 204);
  EXPECT_NE(pre->get_header_value("Access-Control-Allow-Headers").find("Authorization"), std::string::npos);
  EXPECT_EQ(right->get_header_value("Access-Control-Allow-Origin"), "*");
  EXPECT_EQ(no_key->get_header_value("Access-Control-Allow-Origin"), "*");
}

}  // namespace
}  // namespace blockq::serve
