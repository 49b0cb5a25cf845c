// The CLI's GPU context: --adapter, --limits and the toggles, else the
// environment (BLOCKQ_ADAPTER, BLOCKQ_LIMITS).
#include "tools/context.hpp"

namespace blockq::tools {

gpu::Context make_context(const GlobalOptions& g) {
  gpu::ContextOptions o;
  o.adapter = g.adapter;
  if (!g.limits.empty()) o.limits = gpu::parse_limits_profile(g.limits);
  o.disable_robustness = g.disable_robustness;
  o.disable_workgroup_init = g.disable_workgroup_init;
  o.toggles = g.toggles;
  o.shader_dump_dir = g.dump_shaders;
  return gpu::Context::create(o);
}

}  // namespace blockq::tools
