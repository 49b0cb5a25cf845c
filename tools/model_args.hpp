// Options of the commands that load a GPU model (`run`, `serve`, `bench
// run`): the model options from ModelLoadArgs, and the sampler settings
// `run` and `serve` share, with blockq run's defaults.
#pragma once
#include <optional>

#include "model/gpu_model.hpp"
#include "model/sampler.hpp"
#include "tools/commands.hpp"

namespace blockq::tools {

inline model::GpuModelOptions gpu_model_options(const ModelLoadArgs& a, uint32_t n_ctx) {
  model::GpuModelOptions o;
  o.n_ctx = n_ctx;
  o.progress = true;
  o.batch = a.batch;
  o.crossover = a.crossover >= 0 ? std::optional<uint32_t>(a.crossover) : std::nullopt;
  o.kv_type = model::kv_type_from_name(a.kv_type);
  o.int8_activations = a.int8_activations;
  o.encode_ahead = a.encode_ahead;
  o.submit_pieces = a.submit_pieces;
  return o;
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
    return c;
  }
};

// --temp, --top-k, --top-p, --min-p, --repeat-penalty, --frequency-penalty,
// --presence-penalty, --repeat-last-n; `prefix` opens each description
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
}

}  // namespace blockq::tools
