// Parsing and checking of OpenAI-style generation requests.
#include "serve/request.hpp"

#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace blockq::serve {
namespace {

using nlohmann::json;

// The field, or nullptr when absent or null (OpenAI clients send nulls).
const json* field(const json& body, const char* name) {
  const auto it = body.find(name);
  return it == body.end() || it->is_null() ? nullptr : &*it;
}

[[noreturn]] void bad(const std::string& param, const std::string& msg) { throw RequestError(param, msg); }

double number(const json& v, const std::string& name, double lo, double hi) {
  if (!v.is_number()) bad(name, fmt::format("'{}' must be a number", name));
  const double d = v.get<double>();
  if (!(d >= lo && d <= hi)) bad(name, fmt::format("'{}' is {}; it must be in [{}, {}]", name, d, lo, hi));
  return d;
}

int64_t integer(const json& v, const std::string& name, int64_t lo, int64_t hi) {
  if (!v.is_number_integer()) bad(name, fmt::format("'{}' must be an integer", name));
  if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
    bad(name, fmt::format("'{}' is too large", name));
  const int64_t i = v.get<int64_t>();
  if (i < lo || i > hi) bad(name, fmt::format("'{}' is {}; it must be in [{}, {}]", name, i, lo, hi));
  return i;
}

bool boolean(const json& v, const std::string& name) {
  if (!v.is_boolean()) bad(name, fmt::format("'{}' must be true or false", name));
  return v.get<bool>();
}

std::string text(const json& v, const std::string& name) {
  if (!v.is_string()) bad(name, fmt::format("'{}' must be a string", name));
  return v.get<std::string>();
}

// A message's content: a string, or an array of {"type": "text", "text": ...}
// parts, joined by newlines.
std::string content(const json& v, const std::string& name) {
  if (v.is_string()) return v.get<std::string>();
  if (!v.is_array()) bad(name, fmt::format("'{}' must be a string or an array of text parts", name));
  std::string out;
  for (size_t j = 0; j < v.size(); ++j) {
    const std::string pn = fmt::format("{}[{}]", name, j);
    const json& part = v[j];
    if (!part.is_object()) bad(pn, fmt::format("'{}' must be an object", pn));
    const json* type = field(part, "type");
    if (!type || !type->is_string() || type->get<std::string>() != "text")
      bad(pn, fmt::format("'{}': only parts of type \"text\" are supported", pn));
    const json* t = field(part, "text");
    if (!t) bad(pn + ".text", fmt::format("'{}.text' is missing", pn));
    if (!out.empty()) out += '\n';
    out += text(*t, pn + ".text");
  }
  return out;
}

std::vector<model::ChatMessage> messages(const json& v) {
  if (!v.is_array() || v.empty()) bad("messages", "'messages' must be a non-empty array");
  std::vector<model::ChatMessage> out;
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string name = fmt::format("messages[{}]", i);
    const json& m = v[i];
    if (!m.is_object()) bad(name, fmt::format("'{}' must be an object", name));
    const json* role = field(m, "role");
    if (!role) bad(name + ".role", fmt::format("'{}.role' is missing", name));
    std::string r = text(*role, name + ".role");
    if (r == "developer") r = "system";  // OpenAI's newer name for the system role
    if (r != "system" && r != "user" && r != "assistant")
      bad(name + ".role", fmt::format("'{}.role' is \"{}\"; blockq takes system, developer, user and assistant",
                                      name, r));
    if (field(m, "tool_calls")) bad(name + ".tool_calls", "tool calls are not supported");
    const json* c = field(m, "content");
    if (!c) bad(name + ".content", fmt::format("'{}.content' is missing", name));
    out.push_back({std::move(r), content(*c, name + ".content")});
  }
  return out;
}

// OpenAI's forms: a string, token ids, or an array of strings or of arrays
// of token ids (one prompt each, up to kMaxPrompts).
void prompt(const json& v, GenerationRequest& r) {
  auto ids_of = [](const json& a, const std::string& name) {
    std::vector<int64_t> out;
    for (size_t i = 0; i < a.size(); ++i)
      out.push_back(integer(a[i], fmt::format("{}[{}]", name, i), 0, std::numeric_limits<int32_t>::max()));
    return out;
  };
  if (v.is_string()) {
    r.prompts.push_back({v.get<std::string>(), {}});
  } else if (v.is_array() && !v.empty() && v[0].is_number_integer()) {
    r.prompts.push_back({{}, ids_of(v, "prompt")});
  } else if (v.is_array() && !v.empty() && (v[0].is_string() || v[0].is_array())) {
    if (v.size() > kMaxPrompts)
      bad("prompt", fmt::format("'prompt' has {} prompts; at most {}", v.size(), kMaxPrompts));
    for (size_t k = 0; k < v.size(); ++k) {
      const std::string name = v.size() == 1 ? "prompt" : fmt::format("prompt[{}]", k);
      if (v[k].is_string())
        r.prompts.push_back({v[k].get<std::string>(), {}});
      else if (v[k].is_array() && !v[k].empty())
        r.prompts.push_back({{}, ids_of(v[k], name)});
      else
        bad(name, fmt::format("'{}' must be a string or token ids", name));
    }
  } else {
    bad("prompt", "'prompt' must be a string or token ids, or an array of them");
  }
  r.prompt = r.prompts[0].text;
  r.prompt_ids = r.prompts[0].ids;
}

std::vector<std::string> stops(const json& v) {
  std::vector<std::string> out;
  if (v.is_string()) {
    out.push_back(v.get<std::string>());
  } else if (v.is_array()) {
    if (v.size() > kMaxStops) bad("stop", fmt::format("'stop' has {} strings; at most {}", v.size(), kMaxStops));
    for (size_t i = 0; i < v.size(); ++i) out.push_back(text(v[i], fmt::format("stop[{}]", i)));
  } else {
    bad("stop", "'stop' must be a string or an array of strings");
  }
  for (const std::string& s : out)
    if (s.empty()) bad("stop", "'stop' strings must not be empty");
  return out;
}

// logit_bias: OpenAI's object {"<token id>": bias} or llama.cpp's array
// [[id, bias], ...]; a bias is a number, or false (-inf: the token is
// banned). A repeated id's biases add up. The ids are checked against the
// vocabulary by Engine::prepare.
std::vector<std::pair<model::TokenId, float>> logit_bias(const json& v) {
  const std::string name = "logit_bias";
  auto value = [&](const json& b, const std::string& what) {
    if (b.is_boolean() && !b.get<bool>()) return -INFINITY;
    return float(number(b, what, -1e30, 1e30));
  };
  auto id_of = [&](const std::string& key) {
    int64_t id = -1;
    const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), id);
    if (ec != std::errc() || end != key.data() + key.size() || id < 0 || id > std::numeric_limits<int32_t>::max())
      bad(name, fmt::format("'logit_bias': key '{}' is not a token id", key));
    return model::TokenId(id);
  };
  std::vector<std::pair<model::TokenId, float>> e;
  if (v.is_object()) {
    for (const auto& [key, b] : v.items()) e.emplace_back(id_of(key), value(b, fmt::format("logit_bias[{}]", key)));
  } else if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i) {
      const json& pair = v[i];
      if (!pair.is_array() || pair.size() != 2)
        bad(name, fmt::format("'logit_bias[{}]' must be a pair [token id, bias]", i));
      const std::string what = fmt::format("logit_bias[{}]", i);
      e.emplace_back(model::TokenId(integer(pair[0], what + "[0]", 0, std::numeric_limits<int32_t>::max())),
                     value(pair[1], what + "[1]"));
    }
  } else {
    bad(name, "'logit_bias' must be an object of token ids and biases, or an array of [id, bias] pairs");
  }
  return model::merge_logit_bias(e);
}

// Fields whose meaning blockq does not implement: an error unless they ask
// for nothing (false, 0, 1 where that is the default, empty).
void refuse_unsupported(const json& body, Endpoint ep) {
  if (const json* b = field(body, "best_of"); b && integer(*b, "best_of", 1, 1024) != 1)
    bad("best_of", "'best_of': only 1 is supported");
  if (const json* e = field(body, "echo"); ep == Endpoint::Chat && e && boolean(*e, "echo"))
    bad("echo", "'echo' is a completions field");
  if (const json* s = field(body, "suffix"); s && !(s->is_string() && s->get<std::string>().empty()))
    bad("suffix", "'suffix' is not supported");
  for (const char* name : {"tools", "functions"})
    if (const json* v = field(body, name); v && !v->empty()) bad(name, fmt::format("'{}' is not supported", name));
  for (const char* name : {"tool_choice", "function_call"})
    if (const json* v = field(body, name); v && !(v->is_string() && v->get<std::string>() == "none"))
      bad(name, fmt::format("'{}' is not supported", name));
  if (const json* r = field(body, "response_format")) {
    const json* type = r->is_object() ? field(*r, "type") : nullptr;
    if (!type || !type->is_string() || type->get<std::string>() != "text")
      bad("response_format", "'response_format': only {\"type\": \"text\"} is supported");
  }
  (void)ep;
}

// Chat: "logprobs" true or false, "top_logprobs" 0..kMaxTopLogprobs with it.
// Completion: "logprobs" an integer 0..kMaxTopLogprobs (the alternatives).
std::optional<uint32_t> logprobs(const json& body, Endpoint ep) {
  const json* l = field(body, "logprobs");
  const json* t = field(body, "top_logprobs");
  const int64_t most = kMaxTopLogprobs;
  if (ep == Endpoint::Completion) {
    if (t) bad("top_logprobs", "'top_logprobs' is a chat field; completions take 'logprobs' as a count");
    if (!l) return std::nullopt;
    return uint32_t(integer(*l, "logprobs", 0, most));
  }
  const bool on = l && boolean(*l, "logprobs");
  if (t && !on) bad("top_logprobs", "'top_logprobs' needs 'logprobs': true");
  if (!on) return std::nullopt;
  return t ? uint32_t(integer(*t, "top_logprobs", 0, most)) : 0u;
}

}  // namespace

GenerationRequest parse_request(Endpoint endpoint, const json& body, const model::SamplerConfig& defaults) {
  if (!body.is_object()) bad("", "the request body must be a JSON object");
  refuse_unsupported(body, endpoint);
  GenerationRequest r;
  r.endpoint = endpoint;
  r.sampler = defaults;
  if (const json* m = field(body, "model")) r.model = text(*m, "model");
  if (endpoint == Endpoint::Chat) {
    const json* m = field(body, "messages");
    if (!m) bad("messages", "'messages' is missing");
    r.messages = messages(*m);
  } else {
    const json* p = field(body, "prompt");
    if (!p) bad("prompt", "'prompt' is missing");
    prompt(*p, r);
  }
  constexpr int64_t kMaxInt = std::numeric_limits<int32_t>::max();
  if (endpoint == Endpoint::Completion)
    if (const json* v = field(body, "echo")) r.echo = boolean(*v, "echo");
  // max_completion_tokens is the newer name (chat); either may come. 0 only
  // with echo (the prompt's logprobs alone).
  for (const char* name : {"max_tokens", "max_completion_tokens"})
    if (const json* v = field(body, name)) {
      r.max_tokens = uint32_t(integer(*v, name, 0, kMaxInt));
      if (*r.max_tokens == 0 && !r.echo) bad(name, fmt::format("'{}' must be at least 1 (0 only with 'echo')", name));
    }
  model::SamplerConfig& s = r.sampler;
  if (const json* v = field(body, "temperature")) s.temperature = float(number(*v, "temperature", 0.0, 2.0));
  if (const json* v = field(body, "top_p")) s.top_p = float(number(*v, "top_p", 0.0, 1.0));
  if (const json* v = field(body, "top_k")) s.top_k = int(integer(*v, "top_k", -1, kMaxInt));
  if (const json* v = field(body, "min_p")) s.min_p = float(number(*v, "min_p", 0.0, 1.0));
  if (const json* v = field(body, "frequency_penalty"))
    s.frequency_penalty = float(number(*v, "frequency_penalty", -2.0, 2.0));
  if (const json* v = field(body, "presence_penalty"))
    s.presence_penalty = float(number(*v, "presence_penalty", -2.0, 2.0));
  if (const json* v = field(body, "repeat_penalty")) {
    s.repeat_penalty = float(number(*v, "repeat_penalty", 0.0, 100.0));
    if (!(s.repeat_penalty > 0.0f)) bad("repeat_penalty", "'repeat_penalty' must be positive");
  }
  if (const json* v = field(body, "repeat_last_n")) s.repeat_last_n = int(integer(*v, "repeat_last_n", 0, kMaxInt));
  if (const json* v = field(body, "logit_bias")) s.logit_bias = logit_bias(*v);
  if (const json* v = field(body, "n")) r.n = uint32_t(integer(*v, "n", 1, kMaxChoices));
  if (const json* v = field(body, "seed")) {
    s.seed = uint64_t(integer(*v, "seed", std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()));
    r.seeded = true;
  }
  if (const json* v = field(body, "stop")) r.stop = stops(*v);
  if (const json* v = field(body, "stream")) r.stream = boolean(*v, "stream");
  if (const json* v = field(body, "ignore_eos")) r.ignore_eos = boolean(*v, "ignore_eos");
  r.logprobs = logprobs(body, endpoint);
  if (const json* v = field(body, "stream_options")) {
    if (!v->is_object()) bad("stream_options", "'stream_options' must be an object");
    if (const json* u = field(*v, "include_usage")) r.include_usage = boolean(*u, "stream_options.include_usage");
  }
  return r;
}

}  // namespace blockq::serve
