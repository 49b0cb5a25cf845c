// Options of the commands that load a GPU model (`run`, `serve`, `bench
// run`): the model options from ModelLoadArgs, and the sampler settings
// `run` and `serve` share, with blockq run's defaults.
#pragma once
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/gpu_model.hpp"
#include "model/sampler.hpp"
#include "tools/commands.hpp"
#include "util/error.hpp"

namespace blockq::tools {

inline model::GpuModelOptions gpu_model_options(const ModelLoadArgs& a, uint32_t n_ctx) {
  model::GpuModelOptions o;
  o.n_ctx = n_ctx;
  o.progress = true;
  o.batch = a.batch;
  o.min_batch = a.min_batch;
  o.crossover = a.crossover >= 0 ? std::optional<uint32_t>(a.crossover) : std::nullopt;
  o.crossover_per_weight = a.crossover_per_weight;
  o.kv_type = model::kv_type_from_name(a.kv_type);
  o.int8_activations = a.int8_activations;
  if (a.int8_min_elements) o.int8_min_elements = a.int8_min_elements;
  o.encode_ahead = a.encode_ahead;
  o.submit_pieces = a.submit_pieces;
  o.gemm_int8 = a.int8_gemm;
  o.gemm_tuned = a.gemm_tuned;
  return o;
}

// "128/64/32/16": the rows of m's prompt passes.
inline std::string passes_text(const model::GpuModel& m) {
  std::string out;
  for (const uint32_t r : m.prompt_passes()) {
    if (!out.empty()) out += '/';
    out += std::to_string(r);
  }
  return out;
}

// llama.cpp's --logit-bias form: ID+BIAS or ID-BIAS (15043+1, 2-inf to ban
// token 2), or nothing when `s` is not of that form.
inline std::optional<std::pair<model::TokenId, float>> parse_logit_bias(const std::string& s) {
  const size_t at = s.find_first_of("+-");
  if (at == 0 || at == std::string::npos || s.find_first_not_of("0123456789") != at) return std::nullopt;
  const std::string id = s.substr(0, at), bias = s.substr(at);
  errno = 0;
  char* end = nullptr;
  const long v = std::strtol(id.c_str(), &end, 10);
  if (errno || *end || v > 0x7fffffffL) return std::nullopt;
  const float b = std::strtof(bias.c_str(), &end);
  if (*end || std::isnan(b) || bias.size() < 2) return std::nullopt;
  return std::pair<model::TokenId, float>{model::TokenId(v), b};
}

// Throws blockq::Error for a --logit-bias id outside the vocabulary.
inline void check_logit_bias(const model::SamplerConfig& c, uint32_t n_vocab) {
  for (const auto& [id, b] : c.logit_bias)
    BQ_CHECK(id >= 0 && uint32_t(id) < n_vocab, "--logit-bias: token id {} is outside the vocabulary [0, {})", id,
             n_vocab);
}

struct SamplerArgs {
  float temp = 0.8f;
  int top_k = 40;
  float top_p = 0.95f;
  float min_p = 0.05f;
  float repeat_penalty = 1.0f;
  float frequency_penalty = 0.0f;
  float presence_penalty = 0.0f;
  int repeat_last_n = 64;
  std::vector<std::string> logit_bias;  // ID+BIAS / ID-BIAS, checked by the option
  model::SamplerConfig config() const {
    model::SamplerConfig c;
    c.temperature = temp;
    c.top_k = top_k;
    c.top_p = top_p;
    c.min_p = min_p;
    c.repeat_penalty = repeat_penalty;
    c.frequency_penalty = frequency_penalty;
    c.presence_penalty = presence_penalty;
    c.repeat_last_n = repeat_last_n;
    std::vector<std::pair<model::TokenId, float>> b;
    for (const std::string& s : logit_bias) b.push_back(*parse_logit_bias(s));
    c.logit_bias = model::merge_logit_bias(b);
    return c;
  }
};

// --temp, --top-k, --top-p, --min-p, --repeat-penalty, --frequency-penalty,
// --presence-penalty, --repeat-last-n, --logit-bias; `prefix` opens each description
// ("Default " for serve, whose requests may set their own).
inline void add_sampler_options(CLI::App* cmd, SamplerArgs& a, const std::string& prefix = "") {
  cmd->add_option("--temp", a.temp, prefix + "temperature (<= 0: greedy)")->capture_default_str();
  cmd->add_option("--top-k", a.top_k, prefix + "top-k (<= 0: off)")->capture_default_str();
  cmd->add_option("--top-p", a.top_p, prefix + "top-p (>= 1: off)")->capture_default_str();
  cmd->add_option("--min-p", a.min_p, prefix + "min-p (<= 0: off)")->capture_default_str();
  cmd->add_option("--repeat-penalty", a.repeat_penalty, prefix + "repetition penalty (1: off)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--frequency-penalty", a.frequency_penalty,
                  prefix + "frequency penalty, subtracted per occurrence of a token in the window (0: off)")
      ->capture_default_str();
  cmd->add_option("--presence-penalty", a.presence_penalty,
                  prefix + "presence penalty, subtracted once from a token in the window (0: off)")
      ->capture_default_str();
  cmd->add_option("--repeat-last-n", a.repeat_last_n,
                  prefix + "penalty window: the recent tokens the penalties look at (0: off)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--logit-bias", a.logit_bias,
                  prefix + "logit bias ID+BIAS or ID-BIAS, added before the penalties (repeatable; ID-inf bans "
                           "the token)")
      ->check(CLI::Validator(
          [](std::string& s) -> std::string {
            return parse_logit_bias(s) ? "" : "'" + s + "' is not ID+BIAS or ID-BIAS (e.g. 15043+1, 2-inf)";
          },
          "ID(+|-)BIAS"));
}

}  // namespace blockq::tools
