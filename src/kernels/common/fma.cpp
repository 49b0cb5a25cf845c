// f32 FMA throughput measurement (see fma.hpp).
#include "kernels/common/fma.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "gpu/recorder.hpp"
#include "util/embedded_wgsl.hpp"
#include "util/template.hpp"

namespace blockq {

FmaPeak measure_fma_peak(const gpu::Context& ctx, uint32_t groups, uint32_t iters) {
  const auto& L = ctx.limits();
  const uint32_t wg = std::min<uint32_t>(256, L.maxComputeInvocationsPerWorkgroup);
  auto grid = gpu::wrap_workgroups(groups, L.maxComputeWorkgroupsPerDimension);
  auto sink = ctx.create_buffer(uint64_t{grid.x} * grid.y * wg * 4, gpu::kStorage, "fma.sink");
  const std::string label = fmt::format("fma_peak.wg{}.it{}", wg, iters);
  const auto& k = ctx.kernel(label, label, [&] {
    return Template(wgsl_file("kernels/common/fma_peak.wgsl"), label).set_u("WG", wg).set_u("ITERS", iters).render();
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
  p.flops = 64.0 * iters * double(grid.x) * grid.y * wg;
  p.samples = samples;
  p.gpu_timestamps = t.gpu_timestamps;
  p.tflops = p.flops * per_pass / t.median() / 1e3;
  return p;
}

}  // namespace blockq
