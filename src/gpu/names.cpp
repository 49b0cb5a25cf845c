// WebGPU's names for limits, features, backends and adapter types, and the
// default limits that the low-end profile requests.
#include <fmt/format.h>

#include "gpu/context.hpp"

namespace blockq::gpu {

#define BQ_LIMITS(X)                                                                            \
  X(maxTextureDimension1D, 8192) X(maxTextureDimension2D, 8192) X(maxTextureDimension3D, 2048)  \
  X(maxTextureArrayLayers, 256) X(maxBindGroups, 4) X(maxBindGroupsPlusVertexBuffers, 24)       \
  X(maxBindingsPerBindGroup, 1000) X(maxDynamicUniformBuffersPerPipelineLayout, 8)              \
  X(maxDynamicStorageBuffersPerPipelineLayout, 4) X(maxSampledTexturesPerShaderStage, 16)        \
  X(maxSamplersPerShaderStage, 16) X(maxStorageBuffersPerShaderStage, 8)                        \
  X(maxStorageTexturesPerShaderStage, 4) X(maxUniformBuffersPerShaderStage, 12)                 \
  X(maxUniformBufferBindingSize, 65536) X(maxStorageBufferBindingSize, 134217728)               \
  X(minUniformBufferOffsetAlignment, 256) X(minStorageBufferOffsetAlignment, 256)               \
  X(maxVertexBuffers, 8) X(maxBufferSize, 268435456) X(maxVertexAttributes, 16)                 \
  X(maxVertexBufferArrayStride, 2048) X(maxInterStageShaderVariables, 16)                       \
  X(maxColorAttachments, 8) X(maxColorAttachmentBytesPerSample, 32)                             \
  X(maxComputeWorkgroupStorageSize, 16384) X(maxComputeInvocationsPerWorkgroup, 256)            \
  X(maxComputeWorkgroupSizeX, 256) X(maxComputeWorkgroupSizeY, 256)                             \
  X(maxComputeWorkgroupSizeZ, 64) X(maxComputeWorkgroupsPerDimension, 65535)                    \
  X(maxImmediateSize, 0) X(maxStorageBuffersInVertexStage, 8)                                   \
  X(maxStorageTexturesInVertexStage, 4) X(maxStorageBuffersInFragmentStage, 8)                  \
  X(maxStorageTexturesInFragmentStage, 4)

WGPULimits default_limits() {
  WGPULimits l{};
#define X(name, def) l.name = def;
  BQ_LIMITS(X)
#undef X
  return l;
}

std::vector<LimitEntry> limit_entries(const WGPULimits& l) {
  std::vector<LimitEntry> out;
#define X(name, def) out.push_back({#name, static_cast<uint64_t>(l.name)});
  BQ_LIMITS(X)
#undef X
  return out;
}

std::string_view backend_name(WGPUBackendType b) {
  switch (b) {
    case WGPUBackendType_Null: return "null";
    case WGPUBackendType_WebGPU: return "webgpu";
    case WGPUBackendType_D3D11: return "d3d11";
    case WGPUBackendType_D3D12: return "d3d12";
    case WGPUBackendType_Metal: return "metal";
    case WGPUBackendType_Vulkan: return "vulkan";
    case WGPUBackendType_OpenGL: return "opengl";
    case WGPUBackendType_OpenGLES: return "opengles";
    default: return "undefined";
  }
}

std::string_view adapter_type_name(WGPUAdapterType t) {
  switch (t) {
    case WGPUAdapterType_DiscreteGPU: return "discrete-gpu";
    case WGPUAdapterType_IntegratedGPU: return "integrated-gpu";
    case WGPUAdapterType_CPU: return "cpu";
    default: return "unknown";
  }
}

std::string feature_name(uint32_t f) {
  static const std::pair<uint32_t, const char*> names[] = {
      {0x1, "depth-clip-control"}, {0x2, "depth32float-stencil8"}, {0x3, "timestamp-query"},
      {0x4, "texture-compression-bc"}, {0x5, "texture-compression-bc-sliced-3d"},
      {0x6, "texture-compression-etc2"}, {0x7, "texture-compression-astc"},
      {0x8, "texture-compression-astc-sliced-3d"}, {0x9, "indirect-first-instance"},
      {0xA, "shader-f16"}, {0xB, "rg11b10ufloat-renderable"}, {0xC, "bgra8unorm-storage"},
      {0xD, "float32-filterable"}, {0xE, "float32-blendable"}, {0xF, "clip-distances"},
      {0x10, "dual-source-blending"}, {0x11, "subgroups"}, {0x12, "core-features-and-limits"},
      {0x50000, "dawn-internal-usages"}, {0x50001, "dawn-multi-planar-formats"},
      {0x50002, "dawn-native"}, {0x50003, "chromium-experimental-timestamp-query-inside-passes"},
      {0x50004, "implicit-device-synchronization"}, {0x50005, "chromium-experimental-immediate-data"},
      {0x50006, "transient-attachments"}, {0x50007, "msaa-render-to-single-sampled"},
      {0x50008, "subgroups-f16"}, {0x5000D, "unorm16-texture-formats"},
      {0x5000E, "snorm16-texture-formats"}, {0x50011, "host-mapped-pointer"},
      {0x50015, "buffer-map-extended-usages"}, {0x50016, "adapter-properties-memory-heaps"},
      {0x50018, "adapter-properties-vk"}, {0x50019, "r8-unorm-storage"},
      {0x5001A, "dawn-format-capabilities"}, {0x5001B, "dawn-drm-format-capabilities"},
      {0x5001C, "norm16-texture-formats"}, {0x50030, "static-samplers"},
      {0x50031, "ycbcr-vulkan-samplers"}, {0x50032, "shader-module-compilation-options"},
      {0x50033, "dawn-load-resolve-texture"}, {0x50034, "dawn-partial-load-resolve-texture"},
      {0x50035, "multi-draw-indirect"}, {0x50036, "dawn-texel-copy-buffer-row-alignment"},
      {0x50037, "flexible-texture-views"}, {0x50038, "chromium-experimental-subgroup-matrix"},
      {0x50039, "shared-fence-egl-sync"}, {0x5003A, "dawn-device-allocator-control"},
  };
  for (auto [v, n] : names)
    if (v == f) return n;
  return fmt::format("feature-0x{:x}", f);
}

}  // namespace blockq::gpu
