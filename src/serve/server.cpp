// Server: HTTP routes, OpenAI's response and event shapes, errors as JSON.
#include "serve/server.hpp"

#include <cstdio>
#include <span>
#include <ctime>
#include <random>

#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "util/error.hpp"

namespace blockq::serve {
namespace {

using nlohmann::json;

// Generated text may hold bytes that are not UTF-8 (a byte token alone):
// they become U+FFFD rather than a failed response.
std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

json error_json(const std::string& message, const std::string& type, const std::string& param = "") {
  return {{"error",
           {{"message", message}, {"type", type}, {"param", param.empty() ? json(nullptr) : json(param)},
            {"code", nullptr}}}};
}

void send_error(httplib::Response& res, int status, const std::string& message, const std::string& type,
                const std::string& param = "") {
  res.status = status;
  res.set_content(dump(error_json(message, type, param)), "application/json");
}

std::string new_id(Endpoint ep) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  return fmt::format("{}-{:016x}", ep == Endpoint::Chat ? "chatcmpl" : "cmpl", rng());
}

const char* finish_name(Finish f) { return f == Finish::Length ? "length" : "stop"; }

// llama.cpp's "timings" (not OpenAI's): host milliseconds and tokens a second.
json timings_json(const Outcome& o) {
  return {{"prompt_n", o.prompt_tokens - o.cached_tokens},
          {"prompt_ms", o.prompt_ms},
          {"predicted_n", o.completion_tokens},
          {"predicted_ms", o.generation_ms},
          {"predicted_per_second", o.tokens_per_second()}};
}

json usage_json(const Outcome& o) {
  return {{"prompt_tokens", o.prompt_tokens},
          {"completion_tokens", o.completion_tokens},
          {"total_tokens", o.prompt_tokens + o.completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", o.cached_tokens}}}};
}

// A token's text as OpenAI sends it (bytes that are not UTF-8 as U+FFFD when
// dumped) and its bytes.
json bytes_json(const std::string& piece) {
  json b = json::array();
  for (const char c : piece) b.push_back(int(static_cast<unsigned char>(c)));
  return b;
}

// The "logprobs" of a choice or chunk: chat's {"content": [...]} or the
// legacy completion's parallel arrays; null when the request asked for none.
json logprobs_json(Endpoint ep, bool wanted, std::span<const TokenLogprob> lps) {
  if (!wanted) return nullptr;
  if (ep == Endpoint::Chat) {
    json content = json::array();
    for (const TokenLogprob& t : lps) {
      json top = json::array();
      for (const TokenLogprob::Alt& a : t.top)
        top.push_back({{"token", a.piece}, {"logprob", a.logprob}, {"bytes", bytes_json(a.piece)}});
      content.push_back(
          {{"token", t.piece}, {"logprob", t.logprob}, {"bytes", bytes_json(t.piece)}, {"top_logprobs", top}});
    }
    return {{"content", content}, {"refusal", nullptr}};
  }
  json tokens = json::array(), token_lps = json::array(), tops = json::array(), offsets = json::array();
  for (const TokenLogprob& t : lps) {
    tokens.push_back(t.piece);
    json top = json::object();
    for (const TokenLogprob::Alt& a : t.top)
      if (!top.contains(a.piece)) top[a.piece] = a.logprob;  // pieces may repeat: the likelier stays
    token_lps.push_back(t.none ? json(nullptr) : json(t.logprob));  // an echoed prompt's first token
    tops.push_back(t.none ? json(nullptr) : top);
    offsets.push_back(t.offset);
  }
  return {{"tokens", tokens}, {"token_logprobs", token_lps}, {"top_logprobs", tops}, {"text_offset", offsets}};
}

// The outcomes of a request's choices (n a prompt, prompt after prompt) as
// one for usage and timings: each prompt's tokens and evaluation once (its
// first choice's), every choice's generated tokens and time.
Outcome total(std::span<const Outcome> os, uint32_t n) {
  Outcome t = os.empty() ? Outcome{} : os.front();
  for (size_t i = 1; i < os.size(); ++i) {
    if (i % n == 0) {
      t.prompt_tokens += os[i].prompt_tokens;
      t.cached_tokens += os[i].cached_tokens;
      t.prompt_ms += os[i].prompt_ms;
    }
    t.completion_tokens += os[i].completion_tokens;
    t.generation_ms += os[i].generation_ms;
  }
  return t;
}

// What every response and event of one request shares.
struct Head {
  Endpoint ep;
  std::string id;
  int64_t created;
  std::string model;
  bool logprobs = false;  // the request asked for them

  json object(const char* chat_kind) const {
    return {{"id", id},
            {"object", ep == Endpoint::Chat ? chat_kind : "text_completion"},
            {"created", created},
            {"model", model}};
  }
  // The choices, one per outcome (n a prompt); usage and timings of them all.
  json response(std::span<const Outcome> os, uint32_t n) const {
    json choices = json::array();
    for (size_t i = 0; i < os.size(); ++i) {
      const Outcome& o = os[i];
      json choice = {{"index", i},
                     {"finish_reason", finish_name(o.finish)},
                     {"logprobs", logprobs_json(ep, logprobs, o.logprobs)}};
      if (ep == Endpoint::Chat)
        choice["message"] = {{"role", "assistant"}, {"content", o.text}};
      else
        choice["text"] = o.text;
      choices.push_back(std::move(choice));
    }
    json j = object("chat.completion");
    j["choices"] = std::move(choices);
    j["usage"] = usage_json(total(os, n));
    j["timings"] = timings_json(total(os, n));
    return j;
  }
  // A streamed event of choice `index`: a piece of text and its tokens' log
  // probabilities, or the end (finish set, no text).
  json chunk(const std::string& text, const char* finish = nullptr, bool first = false,
             std::span<const TokenLogprob> lps = {}, size_t index = 0) const {
    json choice = {{"index", index},
                   {"finish_reason", finish ? json(finish) : json(nullptr)},
                   {"logprobs", logprobs_json(ep, logprobs && !finish && !first, lps)}};
    if (ep == Endpoint::Chat) {
      json delta = json::object();
      if (first) delta["role"] = "assistant";
      if (first || !finish) delta["content"] = text;
      choice["delta"] = delta;
    } else {
      choice["text"] = text;
    }
    json j = object("chat.completion.chunk");
    j["choices"] = json::array({choice});
    return j;
  }
  json usage_chunk(const Outcome& o) const {
    json j = object("chat.completion.chunk");
    j["choices"] = json::array();
    j["usage"] = usage_json(o);
    j["timings"] = timings_json(o);
    return j;
  }
};

// The body of a POST as a JSON object (RequestError otherwise).
json parse_body(const std::string& body) {
  json j;
  try {
    j = json::parse(body);
  } catch (const json::parse_error& e) {
    throw RequestError("", fmt::format("the request body is not valid JSON: {}", e.what()));
  }
  if (!j.is_object()) throw RequestError("", "the request body must be a JSON object");
  return j;
}

std::string string_field(const json& body, const char* name) {
  const auto it = body.find(name);
  if (it == body.end() || !it->is_string()) throw RequestError(name, fmt::format("'{}' must be a string", name));
  return it->get<std::string>();
}

bool bool_field(const json& body, const char* name, bool fallback) {
  const auto it = body.find(name);
  if (it == body.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) throw RequestError(name, fmt::format("'{}' must be true or false", name));
  return it->get<bool>();
}

const char* path_of(Endpoint ep) { return ep == Endpoint::Chat ? "/v1/chat/completions" : "/v1/completions"; }

}  // namespace

Server::Server(Engine& engine, ServerOptions opt)
    : engine_(engine), opt_(std::move(opt)), http_(std::make_unique<httplib::Server>()) {
  http_->set_payload_max_length(opt_.max_body_bytes);
  routes();
}

Server::~Server() { stop(); }

int Server::bind(const std::string& host, int port) {
  if (port == 0) {
    const int p = http_->bind_to_any_port(host);
    BQ_CHECK(p > 0, "serve: cannot bind {} to a free port", host);
    return p;
  }
  BQ_CHECK(port > 0 && port < 65536, "serve: port {} is not in 1..65535", port);
  BQ_CHECK(http_->bind_to_port(host, port), "serve: cannot bind {}:{} (in use, or not an address of this machine)",
           host, port);
  return port;
}

void Server::listen() { BQ_CHECK(http_->listen_after_bind(), "serve: the server stopped with an error"); }

void Server::stop() {
  if (http_ && http_->is_running()) http_->stop();
}

void Server::routes() {
  httplib::Server& h = *http_;
  const int64_t started = int64_t(std::time(nullptr));

  // Browsers may call from any page (a web client of the exported kernels,
  // say): every answer allows any origin, and a preflight gets the methods
  // and headers the routes use, without the API key.
  h.set_default_headers({{"Access-Control-Allow-Origin", "*"}});
  h.Options(".*", [](const httplib::Request&, httplib::Response& res) {
    res.status = 204;
    res.set_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
    res.set_header("Access-Control-Allow-Headers", "Authorization, Content-Type");
  });
  h.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (opt_.api_key.empty() || req.path == "/health" || req.method == "OPTIONS")
      return httplib::Server::HandlerResponse::Unhandled;
    if (req.get_header_value("Authorization") == "Bearer " + opt_.api_key)
      return httplib::Server::HandlerResponse::Unhandled;
    send_error(res, 401, "a valid API key is required (Authorization: Bearer KEY)", "authentication_error");
    return httplib::Server::HandlerResponse::Handled;
  });
  // Statuses httplib sets itself (404, 413, ...) get a JSON body too.
  h.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    const std::string msg = res.status == 404 ? fmt::format("no route for {} {}", req.method, req.path)
                            : res.status == 413 ? std::string("the request body is too large")
                            : res.status == 400 ? std::string("the HTTP request is malformed (a POST needs a JSON "
                                                              "body and its Content-Length)")
                                                : fmt::format("HTTP status {}", res.status);
    send_error(res, res.status, msg, res.status >= 500 ? "server_error" : "invalid_request_error");
  });
  h.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string msg = "unknown error";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      msg = e.what();
    } catch (...) {
    }
    send_error(res, 500, msg, "server_error");
  });

  h.Get("/health", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(dump({{"status", "ok"}}), "application/json");
  });
  const json model = {{"id", engine_.model_id()},
                      {"object", "model"},
                      {"created", started},
                      {"owned_by", "blockq"},
                      {"meta", {{"n_ctx", engine_.n_ctx()}, {"n_vocab", engine_.tokenizer().n_vocab()}}}};
  h.Get("/v1/models", [model](const httplib::Request&, httplib::Response& res) {
    res.set_content(dump({{"object", "list"}, {"data", json::array({model})}}), "application/json");
  });
  h.Get("/v1/models/(.+)", [model](const httplib::Request& req, httplib::Response& res) {
    const std::string id = req.matches[1];
    if (id != model["id"]) {
      res.status = 404;
      json e = error_json(fmt::format("the model '{}' does not exist (this server has '{}')", id,
                                      model["id"].get<std::string>()),
                          "invalid_request_error", "model");
      e["error"]["code"] = "model_not_found";
      res.set_content(dump(e), "application/json");
      return;
    }
    res.set_content(dump(model), "application/json");
  });

  // llama.cpp's token counting routes: {"content", "add_special", "with_pieces"}
  // -> {"tokens"} (special tokens' text parsed as them), and {"tokens"} ->
  // {"content"} (llama_detokenize, special tokens as their text).
  h.Post("/tokenize", [this](const httplib::Request& req, httplib::Response& res) {
    try {
      const json body = parse_body(req.body);
      const std::string text = string_field(body, "content");
      const bool special = bool_field(body, "add_special", false);
      const bool pieces = bool_field(body, "with_pieces", false);
      const model::Tokenizer& tok = engine_.tokenizer();
      json tokens = json::array();
      for (const model::TokenId id : tok.tokenize(text, special, true)) {
        if (pieces)
          tokens.push_back({{"id", id}, {"piece", tok.token_to_piece(id, true)}});
        else
          tokens.push_back(id);
      }
      res.set_content(dump({{"tokens", tokens}}), "application/json");
    } catch (const RequestError& e) {
      send_error(res, e.status(), e.what(), "invalid_request_error", e.param());
    }
  });
  h.Post("/detokenize", [this](const httplib::Request& req, httplib::Response& res) {
    try {
      const json body = parse_body(req.body);
      const auto it = body.find("tokens");
      if (it == body.end() || !it->is_array()) throw RequestError("tokens", "'tokens' must be an array of token ids");
      const model::Tokenizer& tok = engine_.tokenizer();
      std::vector<model::TokenId> ids;
      for (size_t i = 0; i < it->size(); ++i) {
        const json& v = (*it)[i];
        const std::string name = fmt::format("tokens[{}]", i);
        if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= int64_t(tok.n_vocab()))
          throw RequestError(name, fmt::format("'{}' must be a token id in [0, {})", name, tok.n_vocab()));
        ids.push_back(model::TokenId(v.get<int64_t>()));
      }
      res.set_content(dump({{"content", tok.detokenize(ids, false, true)}}), "application/json");
    } catch (const RequestError& e) {
      send_error(res, e.status(), e.what(), "invalid_request_error", e.param());
    }
  });

  for (const Endpoint ep : {Endpoint::Chat, Endpoint::Completion}) {
    h.Post(path_of(ep), [this, ep](const httplib::Request& req, httplib::Response& res) {
      // One Prepared per prompt (a completion may send several).
      auto ps = std::make_shared<std::vector<Prepared>>();
      try {
        json body;
        try {
          body = json::parse(req.body);
        } catch (const json::parse_error& e) {
          throw RequestError("", fmt::format("the request body is not valid JSON: {}", e.what()));
        }  // parse_request names a body that is not an object
        const GenerationRequest r = parse_request(ep, body, opt_.defaults);
        if (r.prompts.size() <= 1) ps->push_back(engine_.prepare(r));
        for (size_t k = 0; k < r.prompts.size() && r.prompts.size() > 1; ++k) {
          GenerationRequest rk = r;
          rk.prompt = r.prompts[k].text;
          rk.prompt_ids = r.prompts[k].ids;
          try {
            ps->push_back(engine_.prepare(rk));
          } catch (const RequestError& e) {
            throw RequestError(fmt::format("prompt[{}]", k), fmt::format("prompt {}: {}", k, e.what()));
          }
        }
      } catch (const RequestError& e) {
        send_error(res, e.status(), e.what(), "invalid_request_error", e.param());
        return;
      } catch (const Error& e) {  // the tokenizer
        send_error(res, 400, e.what(), "invalid_request_error");
        return;
      }
      auto head = std::make_shared<Head>(Head{ep, new_id(ep), int64_t(std::time(nullptr)), engine_.model_id(),
                                              ps->front().request.logprobs.has_value()});
      const uint32_t n = ps->front().request.n;
      auto log = [this, ep](const Outcome& o) {
        if (!opt_.log_requests) return;
        std::fprintf(stderr,
                     "%s: prompt %u tokens (%u cached) in %.1f ms; %u generated in %.1f ms (%.1f tokens/s, %s "
                     "sampler), %s\n",
                     path_of(ep), o.prompt_tokens, o.cached_tokens, o.prompt_ms, o.completion_tokens,
                     o.generation_ms, o.tokens_per_second(), o.gpu_sampled ? "GPU" : "host",
                     o.finish == Finish::Cancelled ? "cancelled" : finish_name(o.finish));
      };
      // Choice i: choice i % n of prompt i / n, drawing with seed + i % n.
      const uint32_t choices = uint32_t(ps->size()) * n;
      auto choice = [ps, n](uint32_t i) {
        Prepared c = (*ps)[i / n];
        c.request.sampler.seed += i % n;
        return c;
      };
      if (!ps->front().request.stream) {
        std::vector<Outcome> os;
        for (uint32_t i = 0; i < choices; ++i) {
          const auto quiet = [](std::string_view, std::span<const TokenLogprob>) { return true; };
          os.push_back(engine_.generate(choice(i), quiet));
          log(os.back());
        }
        res.set_content(dump(head->response(os, n)), "application/json");
        return;
      }
      res.set_header("Cache-Control", "no-cache");
      res.set_chunked_content_provider(
          "text/event-stream", [this, ps, head, log, choice, choices, n](size_t, httplib::DataSink& sink) {
            auto send = [&sink](const json& j) {
              const std::string s = "data: " + dump(j) + "\n\n";
              return sink.write(s.data(), s.size());
            };
            try {
              // The choices one after another, each opened (chat), its
              // pieces, its end; then the usage of all and [DONE].
              bool ok = true;
              std::vector<Outcome> os;
              for (uint32_t i = 0; i < choices && ok; ++i) {
                ok = head->ep != Endpoint::Chat || send(head->chunk("", nullptr, true, {}, i));
                if (!ok) break;
                os.push_back(engine_.generate(choice(i), [&](std::string_view t, std::span<const TokenLogprob> lps) {
                  return send(head->chunk(std::string(t), nullptr, false, lps, i));
                }));
                log(os.back());
                const Finish f = os.back().finish;
                ok = f != Finish::Cancelled && send(head->chunk("", finish_name(f), false, {}, i));
              }
              if (ok) {
                if (ps->front().request.include_usage) send(head->usage_chunk(total(os, n)));
                const std::string done = "data: [DONE]\n\n";
                sink.write(done.data(), done.size());
              }
            } catch (const std::exception& e) {
              send(error_json(e.what(), "server_error"));
            }
            sink.done();
            return true;
          });
    });
  }
}

}  // namespace blockq::serve
