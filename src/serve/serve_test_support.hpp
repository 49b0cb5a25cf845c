// What the serve tests share: the tiny synthetic llama they serve, a server
// on a free port (one per test binary, shared by the tests), host loops to
// compare with, and the events of a streamed body.
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "model/oracle.hpp"
#include "serve/server.hpp"
#include "support/gpu.hpp"

namespace blockq::serve::testing {

using nlohmann::json;
inline constexpr uint32_t kCtx = 64;

inline const gguf::GgufFile& file() {
  static const gguf::GgufFile f = [] {
    model::SynthOptions o;
    o.seed = 5;
    return gguf::GgufFile::open(model::testing::synth_file("serve-llama-q8_0", o));
  }();
  return f;
}

inline EngineOptions engine_options() {
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

inline Running& shared() {
  static Running r;
  return r;
}

// Greedy tokens of a plain host loop from the prompt tokens (with `sc`'s
// penalties, the prompt among the recent tokens), up to the
// end-of-generation token or n.
// `lps`: each token's log probability and its 3 best alternatives.
inline std::vector<model::TokenId> host_ids(const std::vector<model::TokenId>& prompt, uint32_t n,
                                            const model::SamplerConfig& sc = {},
                                            std::vector<TokenLogprob>* lps = nullptr) {
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
inline std::pair<std::string, uint32_t> host_greedy(const std::vector<model::TokenId>& prompt, uint32_t n,
                                                    const model::SamplerConfig& sc = {}) {
  const model::Tokenizer tok(model::from_gguf(file()));
  const std::vector<model::TokenId> ids = host_ids(prompt, n, sc);
  std::string text;
  for (const model::TokenId id : ids)
    if (!tok.is_eog(id)) text += tok.token_to_piece(id, false);
  return {text, uint32_t(ids.size())};
}

// The events of a text/event-stream body, "[DONE]" as a string.
inline std::vector<json> events(const std::string& body) {
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

// A short greedy chat.
inline const json kChat = {{"messages", {{{"role", "system"}, {"content", "You are terse."}},
                                         {{"role", "user"}, {"content", "Tell me about the sea."}}}},
                           {"temperature", 0},
                           {"max_tokens", 10}};

}  // namespace blockq::serve::testing
