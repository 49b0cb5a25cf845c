// Test helpers for the model tests: a temporary directory, synthetic models
// written into it, and llama.cpp run as an oracle through
// third_party/llama-oracle/oracle.mjs (node + the pinned node-llama-cpp).
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "model/synth.hpp"
#include "model/tokenizer.hpp"

namespace blockq::model::testing {

namespace fs = std::filesystem;

// A directory under the system temp dir, removed at the end of the process.
inline const fs::path& temp_dir() {
  static const fs::path dir = [] {
    std::string tmpl = (fs::temp_directory_path() / "blockq-model-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    return fs::path(tmpl);
  }();
  static const struct Cleanup {
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } cleanup;
  return dir;
}

// Writes a synthetic model once per name and returns its path.
inline std::string synth_file(const std::string& name, const SynthOptions& opt) {
  const fs::path p = temp_dir() / (name + ".gguf");
  if (!fs::exists(p)) synth_model(opt, p.string());
  return p.string();
}

// The most likely token of a logits row.
inline TokenId argmax(std::span<const float> v) {
  return TokenId(std::max_element(v.begin(), v.end()) - v.begin());
}

// The repository root, from this file's path (tests/model/oracle.hpp), or
// BLOCKQ_SOURCE_DIR when set.
inline fs::path source_dir() {
  if (const char* env = std::getenv("BLOCKQ_SOURCE_DIR")) return env;
  return fs::path(__FILE__).parent_path().parent_path().parent_path();
}

inline std::string run_capture(const std::string& cmd, int& status) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) {
    status = -1;
    return out;
  }
  char buf[65536];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  status = pclose(p);
  return out;
}

// Empty when node and the oracle package are usable, else why not.
inline std::string oracle_unavailable() {
  const fs::path dir = source_dir() / "third_party" / "llama-oracle";
  if (!fs::exists(dir / "oracle.mjs")) return "missing " + (dir / "oracle.mjs").string();
  int st = 0;
  run_capture("node --version 2>/dev/null", st);
  if (st != 0) return "node is not installed (run scripts/setup.sh)";
  if (!fs::exists(dir / "node_modules" / "node-llama-cpp" / "package.json") ||
      !fs::exists(dir / "node_modules" / "@node-llama-cpp" / "linux-x64"))
    return "node-llama-cpp is not installed in " + dir.string() +
           " (run scripts/setup.sh, which runs npm ci there)";
  return {};
}

// Runs the oracle on a request (see oracle.mjs) and returns its JSON answer.
// Fails the test (not a skip) when node or the package is missing.
inline nlohmann::json run_oracle(const nlohmann::json& request, const std::string& tag) {
  const std::string why = oracle_unavailable();
  if (!why.empty()) {
    ADD_FAILURE() << "llama.cpp oracle unavailable: " << why;
    return {};
  }
  const fs::path req = temp_dir() / (tag + ".request.json");
  const fs::path err = temp_dir() / (tag + ".stderr.txt");
  std::ofstream(req) << request.dump();
  const fs::path script = source_dir() / "third_party" / "llama-oracle" / "oracle.mjs";
  int st = 0;
  const std::string out = run_capture(
      "node '" + script.string() + "' '" + req.string() + "' 2>'" + err.string() + "'", st);
  if (st != 0) {
    std::ifstream e(err);
    const std::string msg((std::istreambuf_iterator<char>(e)), std::istreambuf_iterator<char>());
    ADD_FAILURE() << "oracle failed (status " << st << "): " << msg;
    return {};
  }
  try {
    return nlohmann::json::parse(out);
  } catch (const std::exception& ex) {
    ADD_FAILURE() << "oracle printed no JSON: " << ex.what() << "\n" << out.substr(0, 500);
    return {};
  }
}

}  // namespace blockq::model::testing
