// `blockq serve [-m MODEL.gguf] [--host --port --ctx --api-key --alias
// --temp --top-k --top-p --min-p --repeat-penalty --sampler]`: an
// OpenAI-compatible HTTP server (src/serve) over one GGUF model on the GPU;
// without -m, the tiny synthetic model. Requests run one at a time.
#include <cstdio>
#include <filesystem>

#include "model/default_model.hpp"
#include "serve/server.hpp"
#include "tools/commands.hpp"
#include "tools/context.hpp"
#include "tools/model_args.hpp"

namespace blockq::tools {
namespace {

struct ServeArgs {
  std::string model;
  std::string alias;
  std::string host = "127.0.0.1";
  int port = 8080;
  uint32_t n_ctx = 0;
  std::string api_key;
  std::string sampler = "auto";
  SamplerArgs sampling;
  ModelLoadArgs load;
};

void serve_main(const ServeArgs& a, const GlobalOptions& g) {
  const std::string path = a.model.empty() ? model::ensure_synth_model("tiny", Format::Q8_0) : a.model;
  gpu::Context ctx = make_context(g);
  serve::EngineOptions eo;
  eo.model_id = !a.alias.empty() ? a.alias : std::filesystem::path(path).stem().string();
  eo.model = gpu_model_options(a.load, a.n_ctx);
  eo.gpu_sampler = a.sampler == "auto";
  serve::Engine engine(ctx, gguf::GgufFile::open(path), eo);

  serve::ServerOptions so;
  so.defaults = a.sampling.config();
  check_logit_bias(so.defaults, engine.n_vocab());
  so.api_key = a.api_key;
  serve::Server server(engine, so);
  const int port = server.bind(a.host, a.port);
  std::fprintf(stderr, "serving %s (%s chat template, %u positions) on http://%s:%d/v1 with %s\n",
               engine.model_id().c_str(), std::string(model::chat_template_name(engine.chat_format().kind)).c_str(),
               engine.n_ctx(), a.host.c_str(), port, ctx.adapter().name().c_str());
  server.listen();
}

void add_serve(CLI::App& app, GlobalOptions& g) {
  static ServeArgs a;
  auto* cmd = app.add_subcommand("serve", "OpenAI-compatible HTTP server (/v1/chat/completions, /v1/completions, "
                                          "/v1/models; /tokenize, /detokenize) over a GGUF model on the GPU");
  cmd->add_option("-m,--model", a.model, "GGUF file (llama or qwen2); default: the tiny synthetic model");
  cmd->add_option("--alias", a.alias, "Model name in /v1/models (default: the file's name)");
  cmd->add_option("--host", a.host, "Address to listen on")->capture_default_str();
  cmd->add_option("--port", a.port, "Port (0: any free port, printed)")->capture_default_str();
  cmd->add_option("--ctx", a.n_ctx, "KV cache positions (0: min(context length, 4096))");
  cmd->add_option("--api-key", a.api_key, "Require \"Authorization: Bearer KEY\" on every request but /health");
  add_sampler_options(cmd, a.sampling, "Default ");
  cmd->add_option("--sampler", a.sampler, "auto (the GPU where a request's settings allow it) or host")
      ->check(CLI::IsMember({"auto", "host"}))
      ->capture_default_str();
  add_model_load_options(cmd, a.load);
  cmd->callback([&g] { serve_main(a, g); });
}

BQ_REGISTER_COMMAND(add_serve);

}  // namespace
}  // namespace blockq::tools
