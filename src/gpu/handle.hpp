// Handle<T>: an owning RAII wrapper over a Dawn C handle. It releases itself;
// moves come from std::unique_ptr, so none are written by hand.
#pragma once
#include <memory>
#include <type_traits>

#include "gpu/dawn_abi.hpp"

namespace blockq::gpu {

template <typename T>
struct Release;

#define BQ_GPU_RELEASE(T, fn)                \
  template <>                                \
  struct Release<T> {                        \
    void operator()(T h) const { fn(h); }    \
  }
BQ_GPU_RELEASE(WGPUInstance, wgpuInstanceRelease);
BQ_GPU_RELEASE(WGPUAdapter, wgpuAdapterRelease);
BQ_GPU_RELEASE(WGPUDevice, wgpuDeviceRelease);
BQ_GPU_RELEASE(WGPUQueue, wgpuQueueRelease);
BQ_GPU_RELEASE(WGPUBuffer, wgpuBufferRelease);
BQ_GPU_RELEASE(WGPUShaderModule, wgpuShaderModuleRelease);
BQ_GPU_RELEASE(WGPUComputePipeline, wgpuComputePipelineRelease);
BQ_GPU_RELEASE(WGPUBindGroupLayout, wgpuBindGroupLayoutRelease);
BQ_GPU_RELEASE(WGPUBindGroup, wgpuBindGroupRelease);
BQ_GPU_RELEASE(WGPUCommandEncoder, wgpuCommandEncoderRelease);
BQ_GPU_RELEASE(WGPUComputePassEncoder, wgpuComputePassEncoderRelease);
BQ_GPU_RELEASE(WGPUCommandBuffer, wgpuCommandBufferRelease);
BQ_GPU_RELEASE(WGPUQuerySet, wgpuQuerySetRelease);
#undef BQ_GPU_RELEASE

template <typename T>
class Handle {
  using Object = std::remove_pointer_t<T>;
  struct Deleter {
    void operator()(T h) const { Release<T>{}(h); }
  };

 public:
  Handle() = default;
  explicit Handle(T raw) : p_(raw) {}
  T get() const { return p_.get(); }
  explicit operator bool() const { return p_ != nullptr; }
  void reset(T raw = nullptr) { p_.reset(raw); }

 private:
  std::unique_ptr<Object, Deleter> p_;
};

}  // namespace blockq::gpu
