// Global options and the subcommand table of the blockq CLI.
#include "tools/commands.hpp"

namespace blockq::tools {

namespace {
int g_exit_code = 0;
}

std::vector<AddCommand>& command_table() {
  static std::vector<AddCommand> table;
  return table;
}

void add_global_options(CLI::App& app, GlobalOptions& g) {
  app.add_option("--adapter", g.adapter,
                 "Use the adapter whose name contains NAME (env BLOCKQ_ADAPTER)");
  app.add_option("--limits", g.limits, "Limits profile: 'adapter' or 'low-end' (env BLOCKQ_LIMITS)");
  app.add_flag("--disable-robustness", g.disable_robustness, "Dawn toggle disable_robustness");
  app.add_flag("--disable-workgroup-init", g.disable_workgroup_init,
               "Dawn toggle disable_workgroup_init");
  app.add_option("--dump-shaders", g.dump_shaders,
                 "Write each compiled kernel's WGSL and the shader Dawn's backend made of it (SPIR-V "
                 "disassembly on Vulkan) to DIR, named by the kernel's label");
  app.add_option("--toggle", g.toggles, "Enable the Dawn device toggle NAME (repeatable; an unknown name lists the accepted ones)");
}

CLI::App& bench_group(CLI::App& app) {
  for (auto* s : app.get_subcommands({}))
    if (s->get_name() == "bench") return *s;
  auto* b = app.add_subcommand("bench", "Benchmarks (tables, --json)");
  b->require_subcommand(1);
  return *b;
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  size_t p = 0;
  while (p <= s.size()) {
    size_t q = s.find(',', p);
    if (q == std::string::npos) q = s.size();
    if (q > p) out.push_back(s.substr(p, q - p));
    p = q + 1;
  }
  return out;
}

void set_exit_code(int code) { g_exit_code = code; }
int exit_code() { return g_exit_code; }

void add_model_load_options(CLI::App* cmd, ModelLoadArgs& a) {
  cmd->add_option("--batch", a.batch,
                  "Prompt tokens per command buffer (1..512; 1: token by token; 0: auto, 512 on a GPU (at most the "
                  "context), 1 on a CPU adapter)")
      ->capture_default_str();
  cmd->add_option("--min-batch", a.min_batch,
                  "The smallest prompt pass: passes of batch, batch/2, ... rows down to this are prepared, and each "
                  "prompt step runs in the smallest that holds its tokens (>= the batch: one pass)")
      ->check(CLI::Range(1u, 512u))
      ->capture_default_str();
  cmd->add_option("--crossover", a.crossover,
                  "Prompt matmuls use the gemm above this m, matvec at or below (-1: measured once per adapter, cached)")
      ->capture_default_str();
  cmd->add_flag("--crossover-per-weight", a.crossover_per_weight,
                "Without --crossover: measure the crossover on each weight's own shape (once per adapter, cached), "
                "not on 4096x4096 for all");
  cmd->add_option("--kv-type", a.kv_type, "KV cache element type: f16 (packed two per u32) or f32")->capture_default_str();
  cmd->add_flag("--int8-activations,!--f32-activations", a.int8_activations,
                "Token matvecs of integer-format weights with >= 2^22 (Q4_x, Q5_x, Q2_K to Q6_K, Q8_0) or 2^24 "
                "elements quantize x to int8 per block of 32 and sum with dot4I8Packed (the default, where the "
                "adapter has packed dot4); --f32-activations: f32 x everywhere");
  cmd->add_option("--int8-min-elements", a.int8_min_elements,
                  "With int8 activations: the smallest weight (elements) whose token matvecs take them (0: the "
                  "format's default, 2^22 or 2^24)");
  cmd->add_flag("--int8-gemm,!--f32-gemm", a.int8_gemm,
                "Prompt gemms of Q8_0, Q4_x, Q5_x and K-quant weights of any size quantize x to int8 per block of 32 "
                "and sum with dot4I8Packed (the default, where the adapter has packed dot4 and int8 activations are "
                "on); --f32-gemm: the f32 gemm");
  cmd->add_flag("--gemm-tuned", a.gemm_tuned,
                "Prompt gemms take the tiling the autotuner finds fastest on this adapter for each weight's shape "
                "(timed once at load, then cached with the adapter's name), not the default");
  cmd->add_flag("!--no-encode-ahead", a.encode_ahead,
                "Encode each token's command buffer after its id is known, not while the GPU runs the token before "
                "(for comparison)");
  cmd->add_option("--submit-pieces", a.submit_pieces,
                  "Submit a step's dispatches in this many pieces of about as many layers (1: one submit; 0: pieces of "
                  "1, 2, 4, ... layers): the GPU starts on the first while the next is submitted")
      ->check(CLI::Range(0u, 4096u))
      ->capture_default_str();
}

}  // namespace blockq::tools
