// Where the CLI's default synthetic models live, and their synthesis on first use.
#include "model/default_model.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "model/synth.hpp"
#include "util/error.hpp"

namespace blockq::model {
namespace fs = std::filesystem;

namespace {

bool usable(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  return fs::is_directory(dir, ec) && access(dir.c_str(), W_OK) == 0;
}

}  // namespace

std::string default_model_dir() {
  if (const char* env = std::getenv("BLOCKQ_MODEL_DIR"); env && *env) {
    BQ_CHECK(usable(env), "BLOCKQ_MODEL_DIR={}: not a writable folder", env);
    return env;
  }
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && exe.has_parent_path()) {
    const fs::path dir = exe.parent_path().parent_path() / "models";
    if (usable(dir)) return dir.string();
  }
  fs::path cache;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    cache = fs::path(x) / "blockq";
  else if (const char* h = std::getenv("HOME"); h && *h)
    cache = fs::path(h) / ".cache" / "blockq";
  if (!cache.empty() && usable(cache)) return cache.string();
  return (fs::temp_directory_path() / "blockq-models").string();
}

std::string ensure_synth_model(const std::string& preset, Format type, Arch arch, bool verbose) {
  const fs::path dir = default_model_dir();
  const fs::path p = dir / fmt::format("synth-{}-{}-{}.gguf", arch == Arch::Llama ? "llama" : "qwen2", preset,
                                       traits(type).name);
  if (fs::exists(p)) return p.string();
  BQ_CHECK(usable(dir), "cannot create the model folder {}", dir.string());
  if (verbose) std::fprintf(stderr, "synthesizing %s (first use) ...\n", p.string().c_str());
  SynthOptions o;
  o.arch = arch;
  o.preset = preset;
  o.type = type;
  const fs::path tmp = p.string() + fmt::format(".tmp{}", getpid());
  synth_model(o, tmp.string());
  fs::rename(tmp, p);
  return p.string();
}

}  // namespace blockq::model
