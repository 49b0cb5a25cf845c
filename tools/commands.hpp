// Shared plumbing of the blockq CLI: global options (adapter, limits profile,
// toggles) and self-registration of subcommands, one per tools/cmd_*.cpp.
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace blockq::tools {

struct GlobalOptions {
  std::string adapter;             // --adapter NAME (else BLOCKQ_ADAPTER)
  std::string limits;              // --limits low-end (else BLOCKQ_LIMITS)
  bool disable_robustness = false;      // Dawn toggle, off by default
  std::vector<std::string> toggles;     // more Dawn device toggles (--toggle NAME)
  bool disable_workgroup_init = false;  // Dawn toggle, off by default
  std::string dump_shaders;             // --dump-shaders DIR: each kernel's WGSL and backend shader
};

using AddCommand = void (*)(CLI::App& app, GlobalOptions& global);

std::vector<AddCommand>& command_table();
void add_global_options(CLI::App& app, GlobalOptions& global);
// The `bench` command group, created on first use, so that benchmark
// commands from several files can attach to it in any order.
CLI::App& bench_group(CLI::App& app);

// How the GPU model is loaded, shared by `run` and `bench run`.
struct ModelLoadArgs {
  uint32_t batch = 0;          // prompt tokens per command buffer (0: auto)
  uint32_t min_batch = 8;      // the smallest prompt pass (batch, batch / 2, ... >= this)
  int crossover = -1;          // matvec/gemm switch for prompts (-1: measured)
  bool crossover_per_weight = false;  // measured on each weight's shape, not 4096x4096
  std::string kv_type = "f16";
  bool int8_activations = true;  // false: --f32-activations
  uint64_t int8_min_elements = 0;  // --int8-min-elements (0: the format's default)
  bool encode_ahead = true;      // false: --no-encode-ahead
  uint32_t submit_pieces = 0;    // --submit-pieces (0: 1, 2, 4, ... layers)
  bool int8_gemm = true;         // --int8-gemm / --f32-gemm
  bool gemm_tuned = false;       // --gemm-tuned
};
void add_model_load_options(CLI::App* cmd, ModelLoadArgs& a);

// "a,b,,c" -> {"a", "b", "c"} (option lists).
std::vector<std::string> split_list(const std::string& s);

void set_exit_code(int code);
int exit_code();

struct Registrar {
  explicit Registrar(AddCommand add) { command_table().push_back(add); }
};

}  // namespace blockq::tools

#define BQ_REGISTER_COMMAND(fn) \
  static ::blockq::tools::Registrar bq_registrar_##fn { &fn }
