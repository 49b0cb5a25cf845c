// The device's limits and features as matvec::plan() reads them, and plan()
// for a context.
#include "kernels/matvec/generator.hpp"

namespace blockq::matvec {

Limits limits_of(const gpu::Context& ctx) {
  Limits l;
  l.invocations = ctx.limits().maxComputeInvocationsPerWorkgroup;
  l.shared = ctx.limits().maxComputeWorkgroupStorageSize;
  l.max_groups = ctx.limits().maxComputeWorkgroupsPerDimension;
  l.dot4 = ctx.features().packed_dot4;
  l.binding = ctx.limits().maxStorageBufferBindingSize;
  l.storage_buffers = ctx.limits().maxStorageBuffersPerShaderStage;
  if (ctx.features().subgroups) {
    l.subgroup_min = ctx.adapter().subgroup_min;
    l.subgroup_max = ctx.adapter().subgroup_max;
  }
  return l;
}

KernelSpec plan(const gpu::Context& ctx, const WeightKind& kind, uint32_t n, uint32_t k, uint32_t m,
                const Hooks& hooks, const Options& opt) {
  return plan(limits_of(ctx), kind, n, k, m, hooks, opt);
}

}  // namespace blockq::matvec
