// The gemm autotuner and its on-disk cache: times candidate tilings against
// the default one on a shape and keeps the fastest (never one slower than the
// default), cached in a JSON file keyed by adapter (name and limits profile)
// and spec class. The cache also holds the matvec/gemm crossover (matmul.hpp).
#pragma once
#include "quant/random_blocks.hpp"
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpu/context.hpp"
#include "kernels/gemm/generator.hpp"

namespace blockq::gemm {

// $BLOCKQ_CACHE_DIR/gemm_tune.json, else $HOME/.cache/blockq/gemm_tune.json.
std::string cache_path();
// "<adapter name>|<backend>|<limits profile>": the cache's top-level key.
std::string adapter_key(const gpu::Context& ctx);
// The cached value at [adapter_key][section][key], if any (a corrupt or
// missing file reads as empty).
std::optional<std::string> cache_get(const gpu::Context& ctx, const std::string& section, const std::string& key);
// Stores value (a JSON text) there, replacing the file atomically.
void cache_put(const gpu::Context& ctx, const std::string& section, const std::string& key,
               const std::string& json_value);

struct TuneOptions {
  uint32_t m = 0;           // tokens timed; 0: the class's representative (32, 128, 512, 2048)
  int samples = 5;          // timed passes per candidate (median)
  int reps = 2;             // dispatches per pass
  bool use_cache = true;    // read and write the cache
  bool force = false;       // re-tune even when cached
  bool verbose = false;     // one line per candidate on stderr
  size_t max_candidates = 0;  // 0: all; else the first ones besides the default (tests)
  // The int8 gemm (plan_int8, candidates_int8, its x quantize dispatch
  // timed with it) instead of the f32 gemm; its own cache keys (".i8").
  bool int8 = false;
};

struct TuneResult {
  Tiling tiling;                  // the choice (the default unless a candidate was faster)
  Tiling default_tiling;          // the plan's default for the class, fitted
  double ns_default = 0, ns_best = 0;  // median per call (0 when read from the cache)
  bool from_cache = false;
  std::string key;                // the spec class: "<kind>.n<n>.k<k>.c<class>.<epilogue>[.i8]"
};

// Tunes the gemm (or with opt.int8 the int8 gemm, which needs the adapter's
// packed dot4) for (kind, n, k, m class, hooks) on ctx.
TuneResult tune(const gpu::Context& ctx, const WeightKind& kind, uint32_t n, uint32_t k, uint32_t mclass,
                const Hooks& hooks = {}, const TuneOptions& opt = {});

// Random but valid raw blocks for timing (quant/random_blocks.hpp).
using blockq::random_blocks;

}  // namespace blockq::gemm
