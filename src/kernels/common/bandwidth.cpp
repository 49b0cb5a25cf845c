// Streaming-read bandwidth measurement (see bandwidth.hpp).
#include "kernels/common/bandwidth.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "gpu/recorder.hpp"
#include "util/embedded_wgsl.hpp"
#include "util/template.hpp"

namespace blockq {

Bandwidth measure_read_bandwidth(const gpu::Context& ctx, uint64_t bytes, uint32_t copies, ReadShape shape,
                                 double warm_ms) {
  copies = std::max<uint32_t>(copies, 1);
  const auto& L = ctx.limits();
  bytes = std::min<uint64_t>({bytes, L.maxStorageBufferBindingSize, L.maxBufferSize});
  bytes &= ~uint64_t{255};
  const uint32_t wg = std::min<uint32_t>(shape.wg ? shape.wg : 256, L.maxComputeInvocationsPerWorkgroup);
  const uint32_t items = std::max<uint32_t>(shape.items, 1);
  const uint64_t words4 = bytes / 16;
  const uint64_t groups = (words4 + uint64_t{wg} * items - 1) / (uint64_t{wg} * items);
  auto grid = gpu::wrap_workgroups(groups, L.maxComputeWorkgroupsPerDimension);

  // Random-looking contents (not zeros), written by the device's copy path.
  std::vector<uint32_t> chunk(1 << 20);
  uint32_t s = 0x12345678u;
  for (auto& w : chunk) w = (s = s * 1664525u + 1013904223u);
  std::vector<gpu::Buffer> srcs;
  for (uint32_t c = 0; c < copies; ++c) {
    srcs.push_back(ctx.create_buffer(bytes, gpu::kStorage, fmt::format("bandwidth.src{}", c)));
    for (uint64_t off = 0; off < bytes; off += chunk.size() * 4)
      ctx.upload(srcs.back(), std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(chunk.data()),
                                                       std::min<uint64_t>(chunk.size() * 4, bytes - off)),
                 off);
  }
  auto sink = ctx.create_buffer(groups * 4, gpu::kStorage, "bandwidth.sink");
  const std::string label = fmt::format("stream_read.b{}.wg{}.i{}", bytes, wg, items);
  const auto& k = ctx.kernel(label, label, [&] {
    return Template(wgsl_file("kernels/common/stream_read.wgsl"), label)
        .set_u("WORDS4", words4).set_u("WG", wg).set_u("ITEMS", items).set_u("GROUPS", groups)
        .render();
  });
  std::vector<gpu::BindGroup> bgs;
  for (const auto& src : srcs) bgs.push_back(ctx.bind(k, {{&src}, {&sink}}));
  const bool gpu_ts = ctx.features().timestamp;
  const int per_pass = (gpu_ts ? 20 : 2) * ((copies + 3) / 4);
  const int samples = gpu_ts ? 20 : 3;
  auto body = [&](gpu::Recorder& r) {
    for (int i = 0; i < per_pass; ++i) r.dispatch(k, bgs[i % copies], grid);
  };
  gpu::keep_busy(ctx, body, warm_ms);  // warm-up: clocks at their sustained rate
  auto t = gpu::time_passes(ctx, samples, body);
  Bandwidth b;
  b.bytes = bytes;
  b.samples = samples;
  b.gpu_timestamps = t.gpu_timestamps;
  b.gbps = static_cast<double>(bytes) * per_pass / t.median();
  b.us = t.median() / per_pass / 1e3;
  b.wg = wg;
  b.items = items;
  b.groups = groups;
  return b;
}

}  // namespace blockq
