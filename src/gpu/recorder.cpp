// Command recording and GPU timing (timestamp queries, wall-clock fallback).
#include "gpu/recorder.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include <fmt/format.h>

#include "util/error.hpp"

namespace blockq::gpu {

Grid wrap_workgroups(uint64_t count, uint32_t max_per_dim, uint32_t z) {
  BQ_ASSERT(max_per_dim > 0);
  if (count == 0) return {0, 0, z};
  const uint64_t x = std::min<uint64_t>(count, max_per_dim);
  const uint64_t y = (count + x - 1) / x;
  BQ_CHECK(y <= max_per_dim, "{} workgroups do not fit a {}x{} grid", count, max_per_dim, max_per_dim);
  return {static_cast<uint32_t>(x), static_cast<uint32_t>(y), z};
}

Recorder::Recorder(const Context& ctx, std::string label) : ctx_(ctx), label_(std::move(label)) {}

void Recorder::open_encoder() {
  if (!enc_) {
    WGPUCommandEncoderDescriptor d{};
    d.label = {label_.data(), label_.size()};
    enc_.reset(wgpuDeviceCreateCommandEncoder(ctx_.device(), &d));
  }
}

void Recorder::open_pass() {
  open_encoder();
  if (pass_) return;
  WGPUComputePassDescriptor pd{};
  pd.label = {label_.data(), label_.size()};
  if (has_pending_ts_) pd.timestampWrites = &pending_ts_;
  pass_.reset(wgpuCommandEncoderBeginComputePass(enc_.get(), &pd));
  has_pending_ts_ = false;
}

void Recorder::end_pass() {
  if (!pass_) return;
  wgpuComputePassEncoderEnd(pass_.get());
  pass_.reset();
}

void Recorder::dispatch(const Kernel& k, const BindGroup& g, Grid grid) {
  const uint32_t maxd = ctx_.limits().maxComputeWorkgroupsPerDimension;
  BQ_CHECK(grid.x <= maxd && grid.y <= maxd && grid.z <= maxd,
           "kernel '{}': grid {}x{}x{} is past maxComputeWorkgroupsPerDimension {}", k.label, grid.x,
           grid.y, grid.z, maxd);
  open_pass();
  wgpuComputePassEncoderSetPipeline(pass_.get(), k.pipeline.get());
  wgpuComputePassEncoderSetBindGroup(pass_.get(), 0, g.group.get(), 0, nullptr);
  if (grid.x && grid.y && grid.z)
    wgpuComputePassEncoderDispatchWorkgroups(pass_.get(), grid.x, grid.y, grid.z);
  ++dispatches_;
}

void Recorder::copy(const Buffer& src, uint64_t so, const Buffer& dst, uint64_t dof, uint64_t size) {
  end_pass();
  open_encoder();
  wgpuCommandEncoderCopyBufferToBuffer(enc_.get(), src.get(), so, dst.get(), dof, size);
}

void Recorder::clear(const Buffer& b, uint64_t offset, uint64_t size) {
  end_pass();
  open_encoder();
  wgpuCommandEncoderClearBuffer(enc_.get(), b.get(), offset, size);
}

void Recorder::timed_pass(WGPUQuerySet qs, uint32_t begin, uint32_t end) {
  end_pass();
  pending_ts_ = {};
  pending_ts_.querySet = qs;
  pending_ts_.beginningOfPassWriteIndex = begin;
  pending_ts_.endOfPassWriteIndex = end;
  has_pending_ts_ = true;
}

void Recorder::resolve(WGPUQuerySet qs, uint32_t first, uint32_t count, const Buffer& dst) {
  end_pass();
  open_encoder();
  wgpuCommandEncoderResolveQuerySet(enc_.get(), qs, first, count, dst.get(), 0);
}

Handle<WGPUCommandBuffer> Recorder::finish() {
  end_pass();
  if (!enc_) return {};
  WGPUCommandBufferDescriptor d{};
  Handle<WGPUCommandBuffer> cmd(wgpuCommandEncoderFinish(enc_.get(), &d));
  enc_.reset();
  return cmd;
}

void Recorder::submit() { gpu::submit(ctx_, finish(), label_); }

void submit(const Context& ctx, Handle<WGPUCommandBuffer> cmd, std::string_view label) {
  if (!cmd) return;
  WGPUCommandBuffer raw = cmd.get();
  wgpuQueueSubmit(ctx.queue(), 1, &raw);
  ctx.check(fmt::format("submit of {}", label));
}

double Timing::median() const {
  BQ_ASSERT(!ns.empty());
  auto v = ns;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

double Timing::min() const {
  BQ_ASSERT(!ns.empty());
  return *std::min_element(ns.begin(), ns.end());
}

void keep_busy(const Context& ctx, const std::function<void(Recorder&)>& body, double ms) {
  if (const char* e = std::getenv("BLOCKQ_WARM_MS"); e && *e) ms = std::atof(e);
  const auto t0 = std::chrono::steady_clock::now();
  do {
    Recorder rec(ctx, "warm-up");
    body(rec);
    rec.submit();
    ctx.finish();
  } while (std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() < ms);
}

Timing time_passes(const Context& ctx, int samples, const std::function<void(Recorder&)>& body) {
  BQ_ASSERT(samples > 0);
  Timing t;
  if (ctx.features().timestamp) {
    t.gpu_timestamps = true;
    WGPUQuerySetDescriptor qd{};
    qd.type = WGPUQueryType_Timestamp;
    qd.count = static_cast<uint32_t>(2 * samples);
    Handle<WGPUQuerySet> qs(wgpuDeviceCreateQuerySet(ctx.device(), &qd));
    Buffer resolved = ctx.create_buffer(8ull * qd.count,
                                        WGPUBufferUsage_QueryResolve | WGPUBufferUsage_CopySrc,
                                        "timestamps");
    Recorder rec(ctx, "timed");
    for (int s = 0; s < samples; ++s) {
      rec.timed_pass(qs.get(), 2 * s, 2 * s + 1);
      body(rec);
      rec.end_pass();
    }
    rec.resolve(qs.get(), 0, qd.count, resolved);
    rec.submit();
    auto stamps = ctx.download<uint64_t>(resolved);
    for (int s = 0; s < samples; ++s)
      t.ns.push_back(static_cast<double>(stamps[2 * s + 1]) - static_cast<double>(stamps[2 * s]));
    return t;
  }
  for (int s = 0; s < samples; ++s) {
    auto t0 = std::chrono::steady_clock::now();
    Recorder rec(ctx, "timed");
    body(rec);
    rec.submit();
    ctx.finish();
    t.ns.push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count());
  }
  return t;
}

}  // namespace blockq::gpu
