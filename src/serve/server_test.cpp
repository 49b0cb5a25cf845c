// The server over HTTP on the tiny synthetic llama: /health and /v1/models;
// GET /v1/models/{id}; /tokenize and /detokenize give the tokenizer's;
// a greedy chat or completion gives the tokens of a plain host loop over the
// same prompt tokens (with penalties or a logit bias too), streamed or not,
// or sent as token ids (an id outside the vocabulary is an error); n choices
// are the seeds one after another, a list of prompts the prompts in turn; a
// stop string ends the
// text before it; the KV cache left by one request serves the next one's
// common prefix with the same tokens as a fresh cache; a seed repeats a
// sampled answer (GPU and host samplers); a cancelled generation leaves the
// engine usable; bad requests get OpenAI-shaped errors naming the field; the
// API key is enforced, but not on a CORS preflight. (logprobs_test.cpp:
// log probabilities.)
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "serve/serve_test_support.hpp"

namespace blockq::serve {
namespace {

using namespace testing;

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
  const auto one = c.Get("/v1/models/tiny-test");
  ASSERT_TRUE(one);
  EXPECT_EQ(one->status, 200);
  EXPECT_EQ(json::parse(one->body), j["data"][0]);
  const auto none = c.Get("/v1/models/gpt-4");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 404);
  EXPECT_EQ(json::parse(none->body)["error"]["code"], "model_not_found");
}

// /tokenize and /detokenize (llama.cpp's): the tokenizer's ids and text.
TEST(Serve, TokenizeAndDetokenize) {
  Running& r = shared();
  const model::Tokenizer& tok = r.engine.tokenizer();
  const std::string text = "Tell me about the sea.";
  const json t = r.post("/tokenize", {{"content", text}});
  const std::vector<model::TokenId> want = tok.tokenize(text, false, true);
  ASSERT_FALSE(want.empty());
  EXPECT_EQ(t["tokens"], json(want));
  const json ts = r.post("/tokenize", {{"content", text}, {"add_special", true}, {"with_pieces", true}});
  const std::vector<model::TokenId> with_bos = tok.tokenize(text, true, true);
  ASSERT_EQ(ts["tokens"].size(), with_bos.size());
  EXPECT_EQ(ts["tokens"][0]["id"], with_bos[0]);
  EXPECT_EQ(ts["tokens"].back()["piece"], json(tok.token_to_piece(with_bos.back(), true)));
  const json d = r.post("/detokenize", {{"tokens", want}});
  EXPECT_EQ(d["content"], json(tok.detokenize(want, false, true)));
  EXPECT_EQ(r.post("/tokenize", {{"content", 5}}, 400)["error"]["param"], "content");
  EXPECT_EQ(r.post("/detokenize", {{"tokens", {1, -2}}}, 400)["error"]["param"], "tokens[1]");
  EXPECT_EQ(r.post("/detokenize", {{"tokens", "x"}}, 400)["error"]["param"], "tokens");
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

// logit_bias (sampled on the GPU): the plain greedy tokens banned, in
// OpenAI's form and llama.cpp's; the host loop's text with the same bias.
// An id outside the vocabulary is a 400 naming the field.
TEST(Serve, LogitBiasGivesTheHostLoopsText) {
  Running& r = shared();
  const std::vector<model::TokenId> prompt = {5, 77, 300, 41, 9};
  const std::vector<model::TokenId> plain = host_ids(prompt, 6);
  json object = json::object(), pairs = json::array();
  for (size_t i = 0; i < 3; ++i) {
    object[std::to_string(plain[i])] = -100;
    pairs.push_back({plain[i], false});
  }
  for (const json& lb : {object, pairs}) {
    const json body = {{"prompt", prompt}, {"temperature", 0}, {"max_tokens", 6}, {"logit_bias", lb}};
    const GenerationRequest req = parse_request(Endpoint::Completion, body, {});
    const std::vector<model::TokenId> want_ids = host_ids(prompt, 6, req.sampler);
    for (const model::TokenId t : want_ids)
      for (size_t i = 0; i < 3; ++i) ASSERT_NE(t, plain[i]) << "the host loop drew a banned token";
    const auto [want, n] = host_greedy(prompt, 6, req.sampler);
    const json j = r.post("/v1/completions", body);
    const json sent = json::parse(json(want).dump(-1, ' ', false, json::error_handler_t::replace));
    EXPECT_EQ(j["choices"][0]["text"], sent) << lb.dump();
    EXPECT_EQ(j["usage"]["completion_tokens"], n);
  }
  const json e = r.post("/v1/completions", {{"prompt", "x"}, {"logit_bias", {{"99999999", 1}}}}, 400);
  EXPECT_EQ(e["error"]["param"], "logit_bias") << e.dump();
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

// n choices: choice i is what a request of one choice with seed + i
// answers, chat and completions, streamed or not (each streamed choice
// opened, its pieces and its end under its index); usage counts the prompt
// once and every choice's tokens.
TEST(Serve, ChoicesAreTheSeedsOneAfterAnother) {
  Running& r = shared();
  for (const Endpoint ep : {Endpoint::Completion, Endpoint::Chat}) {
    const bool chat = ep == Endpoint::Chat;
    const std::string path = chat ? "/v1/chat/completions" : "/v1/completions";
    json body = chat ? kChat : json{{"prompt", "Once"}};
    body.update({{"temperature", 1.0}, {"top_k", 20}, {"max_tokens", 8}, {"seed", 77}, {"n", 3}});
    const json all = r.post(path, body);
    ASSERT_EQ(all["choices"].size(), 3u) << all.dump();
    int tokens = 0;
    std::set<std::string> distinct;
    std::vector<std::string> want;
    for (int i = 0; i < 3; ++i) {
      json one = body;
      one["n"] = 1;
      one["seed"] = 77 + i;
      const json o = r.post(path, one);
      const json text = chat ? o["choices"][0]["message"]["content"] : o["choices"][0]["text"];
      const json& c = all["choices"][i];
      EXPECT_EQ(c["index"], i);
      EXPECT_EQ(chat ? c["message"]["content"] : c["text"], text) << "choice " << i;
      EXPECT_EQ(c["finish_reason"], o["choices"][0]["finish_reason"]);
      tokens += o["usage"]["completion_tokens"].get<int>();
      distinct.insert(text.get<std::string>());
      want.push_back(text.get<std::string>());
    }
    EXPECT_GT(distinct.size(), 1u) << "three seeds gave one text";
    EXPECT_EQ(all["usage"]["completion_tokens"], tokens);
    json single = body;
    single["n"] = 1;
    EXPECT_EQ(all["usage"]["prompt_tokens"], r.post(path, single)["usage"]["prompt_tokens"]);
    body["stream"] = true;
    body["stream_options"] = {{"include_usage", true}};
    httplib::Client c = r.client();
    const auto res = c.Post(path.c_str(), body.dump(), "application/json");
    ASSERT_TRUE(res);
    std::vector<std::string> got(3);
    std::vector<int> ends(3, 0);
    int usage = -1;
    for (const json& ev : events(res->body)) {
      if (ev == "[DONE]") continue;
      if (ev["choices"].empty()) {
        usage = ev["usage"]["completion_tokens"];
        continue;
      }
      const json& ch = ev["choices"][0];
      const size_t i = ch["index"];
      ASSERT_LT(i, 3u);
      if (!ch["finish_reason"].is_null()) ++ends[i];
      const json& t = chat ? ch["delta"].value("content", json("")) : ch["text"];
      got[i] += t.get<std::string>();
    }
    EXPECT_EQ(got, want);
    EXPECT_EQ(ends, std::vector<int>(3, 1));
    EXPECT_EQ(usage, tokens);
  }
}

// A list of prompts: n choices each, prompt after prompt; choice k n + j is
// prompt k's answer with seed + j; usage counts each prompt once. Token-id
// prompts with echo and logprobs (lm-eval's batched loglikelihood) give
// each prompt's own values. A bad prompt is a 400 naming it.
TEST(Serve, PromptListsGiveChoicesPromptAfterPrompt) {
  Running& r = shared();
  const json prompts = json::parse(R"(["Once", "In a village by the river"])");
  json body = {{"prompt", prompts}, {"temperature", 1.0}, {"top_k", 20}, {"max_tokens", 6}, {"seed", 5}, {"n", 2}};
  const json all = r.post("/v1/completions", body);
  ASSERT_EQ(all["choices"].size(), 4u) << all.dump();
  int prompt_tokens = 0, tokens = 0;
  for (int k = 0; k < 2; ++k)
    for (int j = 0; j < 2; ++j) {
      json one = body;
      one["prompt"] = prompts[k];
      one["n"] = 1;
      one["seed"] = 5 + j;
      const json o = r.post("/v1/completions", one);
      EXPECT_EQ(all["choices"][2 * k + j]["index"], 2 * k + j);
      EXPECT_EQ(all["choices"][2 * k + j]["text"], o["choices"][0]["text"]) << k << " " << j;
      if (j == 0) prompt_tokens += o["usage"]["prompt_tokens"].get<int>();
      tokens += o["usage"]["completion_tokens"].get<int>();
    }
  EXPECT_EQ(all["usage"]["prompt_tokens"], prompt_tokens);
  EXPECT_EQ(all["usage"]["completion_tokens"], tokens);
  const json ids = json::parse("[[5, 77, 300, 41], [9, 512, 3]]");
  const json lb = r.post("/v1/completions", {{"prompt", ids}, {"echo", true}, {"max_tokens", 0}, {"logprobs", 1}});
  ASSERT_EQ(lb["choices"].size(), 2u) << lb.dump();
  for (int k = 0; k < 2; ++k) {
    const json o = r.post("/v1/completions", {{"prompt", ids[k]}, {"echo", true}, {"max_tokens", 0}, {"logprobs", 1}});
    EXPECT_EQ(lb["choices"][k]["logprobs"]["token_logprobs"], o["choices"][0]["logprobs"]["token_logprobs"]) << k;
  }
  const json e = r.post("/v1/completions", {{"prompt", json::parse("[[1, 2], [3, 99999999]]")}}, 400);
  EXPECT_EQ(e["error"]["param"], "prompt[1]") << e.dump();
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
  const json n17 = r.post("/v1/chat/completions", {{"messages", kChat["messages"]}, {"n", 17}}, 400);
  EXPECT_EQ(n17["error"]["param"], "n");
  EXPECT_EQ(n17["error"]["type"], "invalid_request_error");
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
