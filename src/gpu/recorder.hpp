// Command recording: dispatches (with the workgroup count wrapped past the
// per-dimension limit), buffer copies and clears, optional timestamp writes
// around compute passes, then one submit. Plus GPU timing for benchmarks.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/context.hpp"

namespace blockq::gpu {

// Workgroup counts of one dispatch.
struct Grid {
  uint32_t x = 1, y = 1, z = 1;
};

// `count` workgroups laid out as x * y <= max_per_dim^2 (x = min(count,
// max_per_dim)); kernels recover the linear id as wid.x + wid.y * nwg.x and
// return when it is >= count. Throws if count cannot fit.
Grid wrap_workgroups(uint64_t count, uint32_t max_per_dim, uint32_t z = 1);

class Recorder {
 public:
  explicit Recorder(const Context& ctx, std::string label = "blockq");

  void dispatch(const Kernel& k, const BindGroup& g, Grid grid);
  void copy(const Buffer& src, uint64_t src_offset, const Buffer& dst, uint64_t dst_offset,
            uint64_t size);
  void clear(const Buffer& b, uint64_t offset = 0, uint64_t size = WGPU_WHOLE_SIZE);
  // Ends the current pass; the next dispatch opens a pass whose start and end
  // are written to queries (begin, end) of `qs`.
  void timed_pass(WGPUQuerySet qs, uint32_t begin, uint32_t end);
  void end_pass();
  void resolve(WGPUQuerySet qs, uint32_t first, uint32_t count, const Buffer& dst);
  // Finishes and submits; the recorder can be reused afterwards.
  void submit();
  // Ends the pass and finishes the command buffer without submitting it
  // (empty when nothing was recorded); the recorder can be reused afterwards.
  Handle<WGPUCommandBuffer> finish();
  uint32_t dispatches() const { return dispatches_; }

 private:
  void open_encoder();
  void open_pass();
  const Context& ctx_;
  std::string label_;
  Handle<WGPUCommandEncoder> enc_;
  Handle<WGPUComputePassEncoder> pass_;
  WGPUPassTimestampWrites pending_ts_{};
  bool has_pending_ts_ = false;
  uint32_t dispatches_ = 0;
};

// Submits a finished command buffer (nothing when empty); `label` names it
// in an error.
void submit(const Context& ctx, Handle<WGPUCommandBuffer> cmd, std::string_view label);

// Times `body` with timestamp queries when the device has them: `samples`
// passes, each recording `body` once, all in one submit; returns nanoseconds
// per pass. Without timestamps, each sample is submitted alone and timed by
// the wall clock around submit-and-wait (an upper bound).
struct Timing {
  std::vector<double> ns;  // one entry per sample
  bool gpu_timestamps = false;
  double median() const;
  double min() const;
};
Timing time_passes(const Context& ctx, int samples, const std::function<void(Recorder&)>& body);

// Submits `body` again and again, waiting for each, until `ms` milliseconds of
// wall time have passed (at least once). A GPU that sat idle (while the host
// uploaded weights or compiled pipelines) runs at a low clock and ramps up
// only under sustained load (on the H200, repeat timings of one kernel right
// after host work differed by up to 3x). Benchmarks call this before time_passes. ms <= 0 runs
// body once. BLOCKQ_WARM_MS overrides ms.
// kWarmMs: before each timing. kSettleMs: before the first timing after a
// long host-side phase, such as repacking and uploading a case's weight
// copies, after which 150 ms of work did not always restore the H200's
// clocks (q8_0 14336x4096 right after its upload, alternating processes:
// 45.1 us and a plain read of 41.4 with 150 ms, 19.0-19.1 and 16.4 with
// 1000; docs/perf/2026-12-03-session22-h200.md).
inline constexpr double kWarmMs = 150;
inline constexpr double kSettleMs = 1000;
void keep_busy(const Context& ctx, const std::function<void(Recorder&)>& body, double ms = kWarmMs);

}  // namespace blockq::gpu
