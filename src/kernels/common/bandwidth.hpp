// The device's streaming-read bandwidth, measured with a plain WGSL kernel
// that reads one large buffer once per dispatch, timed by timestamp queries
// over many dispatches (median). Benchmarks report their GB/s against it.
#pragma once
#include <cstdint>

#include "gpu/context.hpp"
#include "gpu/recorder.hpp"

namespace blockq {

struct Bandwidth {
  double gbps = 0;       // 1e9 bytes per second
  uint64_t bytes = 0;    // bytes read per dispatch
  double us = 0;         // microseconds per dispatch (median pass / dispatches)
  int samples = 0;       // timed passes
  bool gpu_timestamps = false;
  uint32_t wg = 0, items = 0;  // the read's shape as run (after the adapter's limits)
  uint64_t groups = 0;         // workgroups per dispatch
};

// `bytes` is clamped to the binding and buffer limits. With copies > 1 the
// dispatches of a pass read `copies` buffers of `bytes` in turn (a ceiling
// for a kernel that reads that many bytes from rotated weight copies: the
// same bytes, dispatched the same way, so the L2 holds none of them).
// `wg` invocations per workgroup (0: min(256, the adapter's limit)) each read
// `items` coalesced vec4<u32>; the grid is as many workgroups as the bytes need.
struct ReadShape {
  uint32_t wg = 0;
  uint32_t items = 16;
};
// warm_ms: the warm-up before timing (gpu::keep_busy). Each call uploads its
// buffers first, so the default is the settle time after host work: with
// 150 ms, an H100 read 31.5 MiB at 1.1-1.3 instead of 2.4 TB/s in the second
// size of a `--read-sizes` sweep (docs/perf/2026-12-07-session49-h100.md).
Bandwidth measure_read_bandwidth(const gpu::Context& ctx, uint64_t bytes = 1ull << 30, uint32_t copies = 1,
                                 ReadShape shape = {}, double warm_ms = gpu::kSettleMs);

}  // namespace blockq
