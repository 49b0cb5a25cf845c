// The device's streaming-read bandwidth, measured with a plain WGSL kernel
// that reads one large buffer once per dispatch, timed by timestamp queries
// over many dispatches (median). Benchmarks report their GB/s against it.
#pragma once
#include <cstdint>

#include "gpu/context.hpp"

namespace blockq {

struct Bandwidth {
  double gbps = 0;       // 1e9 bytes per second
  uint64_t bytes = 0;    // bytes read per dispatch
  int samples = 0;       // timed passes
  bool gpu_timestamps = false;
};

// `bytes` is clamped to the binding and buffer limits.
Bandwidth measure_read_bandwidth(const gpu::Context& ctx, uint64_t bytes = 1ull << 30);

}  // namespace blockq
