// parse_request: OpenAI fields into a GenerationRequest over the server's
// defaults (logit_bias in both of its forms), nulls as absent, and a
// RequestError naming the field for a wrong
// type or range, a missing field, or a feature blockq does not implement.
#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "serve/request.hpp"

namespace blockq::serve {
namespace {

using nlohmann::json;

model::SamplerConfig defaults() {
  model::SamplerConfig d;
  d.temperature = 0.8f;
  d.top_k = 40;
  d.top_p = 0.95f;
  d.min_p = 0.05f;
  return d;
}

// The param of the RequestError the body raises ("<none>" when it parses).
std::string error_param(Endpoint ep, const json& body, std::string* message = nullptr) {
  try {
    parse_request(ep, body, defaults());
  } catch (const RequestError& e) {
    if (message) *message = e.what();
    EXPECT_EQ(e.status(), 400);
    return e.param();
  }
  return "<none>";
}

TEST(Request, ChatFieldsOverrideTheDefaults) {
  const json body = json::parse(R"({
    "model": "m", "max_tokens": 7, "temperature": 0, "top_p": 0.5, "top_k": 3, "min_p": null,
    "frequency_penalty": 0.5, "presence_penalty": -1, "seed": 9, "stop": ["a", "bc"], "stream": true,
    "stream_options": {"include_usage": true}, "n": 1, "logprobs": false, "user": "ignored", "ignore_eos": true,
    "messages": [{"role": "developer", "content": "be brief"},
                 {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "text", "text": "there"}]}]})");
  const GenerationRequest r = parse_request(Endpoint::Chat, body, defaults());
  EXPECT_EQ(r.model, "m");
  ASSERT_EQ(r.messages.size(), 2u);
  EXPECT_EQ(r.messages[0].role, "system");
  EXPECT_EQ(r.messages[0].content, "be brief");
  EXPECT_EQ(r.messages[1].role, "user");
  EXPECT_EQ(r.messages[1].content, "hi\nthere");
  EXPECT_EQ(r.max_tokens, 7u);
  EXPECT_EQ(r.sampler.temperature, 0.0f);
  EXPECT_EQ(r.sampler.top_p, 0.5f);
  EXPECT_EQ(r.sampler.top_k, 3);
  EXPECT_EQ(r.sampler.min_p, 0.05f);  // null: the default
  EXPECT_EQ(r.sampler.frequency_penalty, 0.5f);
  EXPECT_EQ(r.sampler.presence_penalty, -1.0f);
  EXPECT_TRUE(r.seeded);
  EXPECT_EQ(r.sampler.seed, 9u);
  EXPECT_EQ(r.stop, (std::vector<std::string>{"a", "bc"}));
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.include_usage);
  EXPECT_TRUE(r.ignore_eos);
}

TEST(Request, CompletionDefaults) {
  const GenerationRequest r = parse_request(Endpoint::Completion, {{"prompt", {"once"}}}, defaults());
  EXPECT_EQ(r.prompt, "once");
  EXPECT_FALSE(r.max_tokens.has_value());
  EXPECT_EQ(r.sampler.temperature, 0.8f);
  EXPECT_EQ(r.sampler.top_k, 40);
  EXPECT_FALSE(r.seeded);
  EXPECT_FALSE(r.stream);
  const GenerationRequest s = parse_request(Endpoint::Completion, {{"prompt", "x"}, {"stop", "\n"}}, defaults());
  EXPECT_EQ(s.stop, std::vector<std::string>{"\n"});
  const GenerationRequest ids = parse_request(Endpoint::Completion, {{"prompt", {5, 6, 7}}}, defaults());
  EXPECT_EQ(ids.prompt_ids, (std::vector<int64_t>{5, 6, 7}));
  EXPECT_TRUE(ids.prompt.empty());
  const GenerationRequest nested =
      parse_request(Endpoint::Completion, json::parse(R"({"prompt": [[9, 0]]})"), defaults());
  EXPECT_EQ(nested.prompt_ids, (std::vector<int64_t>{9, 0}));
  const GenerationRequest m =
      parse_request(Endpoint::Chat, json::parse(R"({"messages": [{"role": "user", "content": "x"}],
        "max_completion_tokens": 5})"), defaults());
  EXPECT_EQ(m.max_tokens, 5u);
}

TEST(Request, ErrorsNameTheField) {
  const json user = json::parse(R"([{"role": "user", "content": "x"}])");
  auto chat = [&](json extra) {
    extra["messages"] = user;
    return error_param(Endpoint::Chat, extra);
  };
  std::string msg;
  EXPECT_EQ(error_param(Endpoint::Chat, json::array(), &msg), "");
  EXPECT_NE(msg.find("JSON object"), std::string::npos) << msg;
  EXPECT_EQ(error_param(Endpoint::Chat, json::object()), "messages");
  EXPECT_EQ(error_param(Endpoint::Chat, {{"messages", json::array()}}), "messages");
  EXPECT_EQ(error_param(Endpoint::Chat, {{"messages", {{{"content", "x"}}}}}), "messages[0].role");
  EXPECT_EQ(error_param(Endpoint::Chat, {{"messages", {{{"role", "tool"}, {"content", "x"}}}}}, &msg),
            "messages[0].role");
  EXPECT_NE(msg.find("\"tool\""), std::string::npos) << msg;
  EXPECT_EQ(error_param(Endpoint::Chat, {{"messages", {{{"role", "user"}}}}}), "messages[0].content");
  EXPECT_EQ(error_param(Endpoint::Chat, json::parse(R"({"messages": [{"role": "user", "content":
             [{"type": "image_url", "image_url": {"url": "x"}}]}]})")),
            "messages[0].content[0]");
  EXPECT_EQ(error_param(Endpoint::Completion, json::object()), "prompt");
  EXPECT_EQ(error_param(Endpoint::Completion, {{"prompt", 5}}), "prompt");
  EXPECT_EQ(error_param(Endpoint::Completion, {{"prompt", {true, false}}}), "prompt");
  EXPECT_EQ(error_param(Endpoint::Completion, {{"prompt", json::array()}}), "prompt");
  EXPECT_EQ(error_param(Endpoint::Completion, json::parse(R"({"prompt": [4, "x"]})")), "prompt[1]");
  EXPECT_EQ(error_param(Endpoint::Completion, json::parse(R"({"prompt": [4, -1]})")), "prompt[1]");
  EXPECT_EQ(chat({{"temperature", 3}}), "temperature");
  EXPECT_EQ(chat({{"temperature", "hot"}}), "temperature");
  EXPECT_EQ(chat({{"top_p", 1.5}}), "top_p");
  EXPECT_EQ(chat({{"top_k", 2.5}}), "top_k");
  EXPECT_EQ(chat({{"max_tokens", 0}}), "max_tokens");
  EXPECT_EQ(chat({{"max_tokens", -3}}), "max_tokens");
  EXPECT_EQ(chat({{"max_completion_tokens", "9"}}), "max_completion_tokens");
  EXPECT_EQ(chat({{"frequency_penalty", 2.5}}), "frequency_penalty");
  EXPECT_EQ(chat({{"repeat_penalty", 0}}), "repeat_penalty");
  EXPECT_EQ(chat({{"seed", 1.5}}), "seed");
  EXPECT_EQ(chat({{"stop", 3}}), "stop");
  EXPECT_EQ(chat({{"stop", {""}}}), "stop");
  EXPECT_EQ(chat({{"stop", json(std::vector<std::string>(17, "s"))}}), "stop");
  EXPECT_EQ(chat({{"stream", "yes"}}), "stream");
  EXPECT_EQ(chat({{"ignore_eos", 1}}), "ignore_eos");
  EXPECT_EQ(chat({{"stream_options", {{"include_usage", 1}}}}), "stream_options.include_usage");
}

TEST(Request, Logprobs) {
  const json user = json::parse(R"([{"role": "user", "content": "x"}])");
  auto chat = [&](json extra) {
    extra["messages"] = user;
    return parse_request(Endpoint::Chat, extra, {}).logprobs;
  };
  auto completion = [&](json extra) {
    extra["prompt"] = "x";
    return parse_request(Endpoint::Completion, extra, {}).logprobs;
  };
  EXPECT_FALSE(chat(json::object()));
  EXPECT_FALSE(chat({{"logprobs", false}}));
  EXPECT_EQ(chat({{"logprobs", true}}), 0u);
  EXPECT_EQ(chat({{"logprobs", true}, {"top_logprobs", 5}}), 5u);
  EXPECT_EQ(chat({{"logprobs", true}, {"top_logprobs", nullptr}}), 0u);
  EXPECT_FALSE(completion(json::object()));
  EXPECT_EQ(completion({{"logprobs", 0}}), 0u);
  EXPECT_EQ(completion({{"logprobs", 3}}), 3u);
  // Errors name the field.
  auto chat_err = [&](json extra) {
    extra["messages"] = user;
    return error_param(Endpoint::Chat, extra);
  };
  EXPECT_EQ(chat_err({{"top_logprobs", 3}}), "top_logprobs");  // without logprobs
  EXPECT_EQ(chat_err({{"logprobs", false}, {"top_logprobs", 1}}), "top_logprobs");
  EXPECT_EQ(chat_err({{"logprobs", true}, {"top_logprobs", 21}}), "top_logprobs");
  EXPECT_EQ(chat_err({{"logprobs", 2}}), "logprobs");
  EXPECT_EQ(error_param(Endpoint::Completion, {{"prompt", "x"}, {"logprobs", true}}), "logprobs");
  EXPECT_EQ(error_param(Endpoint::Completion, {{"prompt", "x"}, {"logprobs", 21}}), "logprobs");
  EXPECT_EQ(error_param(Endpoint::Completion, {{"prompt", "x"}, {"top_logprobs", 2}}), "top_logprobs");
  // Echo: completions only; max_tokens 0 only with it.
  const GenerationRequest e =
      parse_request(Endpoint::Completion, {{"prompt", "x"}, {"echo", true}, {"max_tokens", 0}, {"logprobs", 1}}, {});
  EXPECT_TRUE(e.echo);
  EXPECT_EQ(e.max_tokens, 0u);
  EXPECT_FALSE(parse_request(Endpoint::Completion, {{"prompt", "x"}}, {}).echo);
  EXPECT_EQ(error_param(Endpoint::Completion, {{"prompt", "x"}, {"max_tokens", 0}}), "max_tokens");
  EXPECT_EQ(error_param(Endpoint::Completion, {{"prompt", "x"}, {"echo", 1}}), "echo");
}

// logit_bias: OpenAI's object of id strings, llama.cpp's array of pairs,
// false for a ban (-inf), repeats added up, ids in ascending order; keys that
// are not ids, pairs that are not pairs, and values that are not numbers
// are errors naming the field.
TEST(Request, LogitBias) {
  auto bias = [](json v) {
    return parse_request(Endpoint::Completion, {{"prompt", "x"}, {"logit_bias", v}}, {}).sampler.logit_bias;
  };
  using Pairs = std::vector<std::pair<model::TokenId, float>>;
  EXPECT_EQ(bias({{"15", 2}, {"7", -100}, {"300", false}}), (Pairs{{7, -100.0f}, {15, 2.0f}, {300, -INFINITY}}));
  EXPECT_EQ(bias(json::parse("[[15, 1.5], [7, false], [15, 0.25]]")), (Pairs{{7, -INFINITY}, {15, 1.75f}}));
  EXPECT_TRUE(bias(json::object()).empty());
  EXPECT_TRUE(bias(json::array()).empty());
  auto err = [](json v) {
    return error_param(Endpoint::Completion, {{"prompt", "x"}, {"logit_bias", v}});
  };
  std::string msg;
  EXPECT_EQ(error_param(Endpoint::Completion, {{"prompt", "x"}, {"logit_bias", {{"hello", 2}}}}, &msg), "logit_bias");
  EXPECT_NE(msg.find("'hello' is not a token id"), std::string::npos) << msg;
  EXPECT_EQ(err({{"-3", 2}}), "logit_bias");
  EXPECT_EQ(err({{"15", "big"}}), "logit_bias[15]");
  EXPECT_EQ(err({{"15", true}}), "logit_bias[15]");  // only false bans
  EXPECT_EQ(err(json::parse("[[15]]")), "logit_bias");
  EXPECT_EQ(err(json::parse("[[-1, 2]]")), "logit_bias[0][0]");
  EXPECT_EQ(err(json::parse("[[1, null]]")), "logit_bias[0][1]");
  EXPECT_EQ(err(5), "logit_bias");
}

// Completion prompts in OpenAI's forms: one string or id list, or a list of
// them (mixed), each kept in order, the first also as prompt/prompt_ids.
TEST(Request, PromptLists) {
  auto parse = [](json p) { return parse_request(Endpoint::Completion, {{"prompt", p}}, {}); };
  const GenerationRequest one = parse("Once");
  ASSERT_EQ(one.prompts.size(), 1u);
  EXPECT_EQ(one.prompt, "Once");
  const GenerationRequest ids = parse({5, 6, 7});
  ASSERT_EQ(ids.prompts.size(), 1u);
  EXPECT_EQ(ids.prompt_ids, (std::vector<int64_t>{5, 6, 7}));
  const GenerationRequest mixed = parse(json::parse(R"(["Once", [1, 2], "Twice"])"));
  ASSERT_EQ(mixed.prompts.size(), 3u);
  EXPECT_EQ(mixed.prompt, "Once");
  EXPECT_EQ(mixed.prompts[1].ids, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(mixed.prompts[2].text, "Twice");
  EXPECT_EQ(parse(json::parse("[[4, 5]]")).prompt_ids, (std::vector<int64_t>{4, 5}));
  auto err = [](json p) { return error_param(Endpoint::Completion, {{"prompt", p}}); };
  EXPECT_EQ(err(json::array()), "prompt");
  EXPECT_EQ(err(json::parse(R"(["a", []])")), "prompt[1]");
  EXPECT_EQ(err(json::parse(R"(["a", [1, -2]])")), "prompt[1][1]");
  EXPECT_EQ(err(json::parse(R"(["a", 3])")), "prompt[1]");
  EXPECT_EQ(err(json(std::vector<std::string>(kMaxPrompts + 1, "x"))), "prompt");
}

TEST(Request, UnsupportedFeaturesAreRefusedNotIgnored) {
  const json user = json::parse(R"([{"role": "user", "content": "x"}])");
  auto chat = [&](json extra) {
    extra["messages"] = user;
    return error_param(Endpoint::Chat, extra);
  };
  EXPECT_EQ(chat({{"n", 17}}), "n");  // n itself is taken (1..16)
  EXPECT_EQ(chat({{"n", 0}}), "n");
  EXPECT_EQ(chat({{"tools", {{{"type", "function"}}}}}), "tools");
  EXPECT_EQ(chat({{"tool_choice", "auto"}}), "tool_choice");
  EXPECT_EQ(chat({{"response_format", {{"type", "json_object"}}}}), "response_format");
  EXPECT_EQ(chat({{"echo", true}}), "echo");  // a completions field
  EXPECT_EQ(error_param(Endpoint::Completion, {{"prompt", "x"}, {"best_of", 3}}), "best_of");
  EXPECT_EQ(error_param(Endpoint::Completion, {{"prompt", "x"}, {"suffix", "y"}}), "suffix");
  // What asks for nothing passes.
  EXPECT_EQ(chat({{"n", 1}, {"logprobs", false}, {"logit_bias", json::object()}, {"tools", json::array()},
                  {"tool_choice", "none"}, {"response_format", {{"type", "text"}}}}),
            "<none>");
  EXPECT_EQ(error_param(Endpoint::Completion, {{"prompt", "x"}, {"logprobs", 0}, {"echo", false}, {"suffix", ""}}),
            "<none>");
}

}  // namespace
}  // namespace blockq::serve
