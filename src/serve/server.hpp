// The OpenAI-compatible HTTP server over one Engine:
//   GET  /health               {"status": "ok"}
//   GET  /v1/models            the one model
//   POST /v1/chat/completions  chat.completion, or chat.completion.chunk events when "stream"
//   POST /v1/completions       text_completion (streamed likewise)
// Errors are OpenAI's shape, {"error": {"message", "type", "param", "code"}}:
// 400 for a bad request (naming the field), 401 without the API key when one
// is set, 404 for an unknown path, 413 for a body over the limit, 500 for a
// failure of the model or the device. Every answer allows any origin (CORS),
// and an OPTIONS preflight is answered without the API key.
#pragma once
#include <memory>
#include <string>

#include "serve/engine.hpp"

namespace httplib {
class Server;
}

namespace blockq::serve {

struct ServerOptions {
  model::SamplerConfig defaults;        // sampler settings a request leaves out
  std::string api_key;                  // when set, required as "Authorization: Bearer KEY"
  size_t max_body_bytes = 16u << 20;
  bool log_requests = true;             // a line on stderr per generation
};

class Server {
 public:
  Server(Engine& engine, ServerOptions opt);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds host:port (port 0: any free port); returns the port. Throws blockq::Error.
  int bind(const std::string& host, int port);
  // Serves until stop() (from another thread). Throws blockq::Error when it cannot.
  void listen();
  void stop();

 private:
  void routes();

  Engine& engine_;
  ServerOptions opt_;
  std::unique_ptr<httplib::Server> http_;
};

}  // namespace blockq::serve
