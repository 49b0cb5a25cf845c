// f32 FMA throughput measurement (see fma.hpp).
#include "kernels/common/fma.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "gpu/recorder.hpp"
#include "util/embedded_wgsl.hpp"
#include "util/template.hpp"

namespace blockq {

namespace {

// Times `groups` workgroups of the throughput kernel `file` (WG and ITERS
// placeholders); ops_per_round counts the operations one invocation does per round.
FmaPeak measure_peak(const gpu::Context& ctx, const char* file, const char* name, double ops_per_round,
                     uint32_t groups, uint32_t iters) {
  const auto& L = ctx.limits();
  const uint32_t wg = std::min<uint32_t>(256, L.maxComputeInvocationsPerWorkgroup);
  auto grid = gpu::wrap_workgroups(groups, L.maxComputeWorkgroupsPerDimension);
  auto sink = ctx.create_buffer(uint64_t{grid.x} * grid.y * wg * 4, gpu::kStorage, fmt::format("{}.sink", name));
  const std::string label = fmt::format("{}.wg{}.it{}", name, wg, iters);
  const auto& k = ctx.kernel(label, label, [&] {
    return Template(wgsl_file(file), label).set_u("WG", wg).set_u("ITERS", iters).render();
  });
  auto bg = ctx.bind(k, {{&sink}});
  const bool gpu_ts = ctx.features().timestamp;
  const int per_pass = gpu_ts ? 10 : 1;
  const int samples = gpu_ts ? 15 : 3;
  auto body = [&](gpu::Recorder& r) {
    for (int i = 0; i < per_pass; ++i) r.dispatch(k, bg, grid);
  };
  gpu::keep_busy(ctx, body);  // warm-up: clocks at their sustained rate
  auto t = gpu::time_passes(ctx, samples, body);
  FmaPeak p;
  p.flops = ops_per_round * iters * double(grid.x) * grid.y * wg;
  p.samples = samples;
  p.gpu_timestamps = t.gpu_timestamps;
  p.tflops = p.flops * per_pass / t.median() / 1e3;
  return p;
}

}  // namespace

FmaPeak measure_fma_peak(const gpu::Context& ctx, uint32_t groups, uint32_t iters) {
  return measure_peak(ctx, "kernels/common/fma_peak.wgsl", "fma_peak", 64.0, groups, iters);
}

FmaPeak measure_dot4_peak(const gpu::Context& ctx, uint32_t groups, uint32_t iters) {
  // 8 chains of one dot4I8Packed (4 multiply-adds = 8 ops) a round.
  return measure_peak(ctx, "kernels/common/dot4_peak.wgsl", "dot4_peak", 64.0, groups, iters);
}

}  // namespace blockq
