// gpu::Context: one WebGPU device on a chosen adapter, with its limits,
// features and toggles, error capture (uncaptured errors and device loss
// become blockq::Error), waiting on futures with a deadline, buffers,
// compiled kernels (cached by key) and bind groups.
#pragma once
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpu/dawn_abi.hpp"
#include "gpu/handle.hpp"

namespace blockq::gpu {

enum class LimitsProfile {
  Adapter,  // the adapter's own limits and every optional feature it offers
  LowEnd,   // WebGPU's default limits and no optional features
};

struct ContextOptions {
  std::string adapter;                  // substring of the adapter's name; "" = best
  std::optional<LimitsProfile> limits;  // unset: BLOCKQ_LIMITS, else Adapter
  bool disable_robustness = false;      // Dawn device toggles that change speed
  bool disable_workgroup_init = false;
  std::vector<std::string> toggles;     // more Dawn device toggles to enable (context.cpp lists those allowed)
  // Where each compiled kernel's WGSL (LABEL.wgsl) and the backend shader
  // Dawn made of it (Dawn's dump_shaders toggle: LABEL.spvasm on Vulkan, else
  // LABEL.log) are written; "" = nowhere.
  std::string shader_dump_dir;
  double timeout_s = 300;  // a wait longer than this throws (no hangs)

  // BLOCKQ_ADAPTER and BLOCKQ_LIMITS filled in where the fields are unset.
  ContextOptions resolved() const;
};

LimitsProfile parse_limits_profile(std::string_view name);

struct AdapterDesc {
  std::string vendor, architecture, device, description;
  WGPUBackendType backend = WGPUBackendType_Undefined;
  WGPUAdapterType type = WGPUAdapterType_Unknown;
  uint32_t vendor_id = 0, device_id = 0;
  uint32_t subgroup_min = 0, subgroup_max = 0;  // 0 when subgroups are off
  std::string name() const;                     // description, else device
};

struct Features {
  bool subgroups = false;
  bool timestamp = false;
  bool shader_f16 = false;
  bool subgroup_matrix = false;
  // WGSL's packed_4x8_integer_dot_product language feature (dot4I8Packed,
  // pack4xI8), an instance fact rather than a device feature.
  bool packed_dot4 = false;
  std::vector<std::string> names;  // WebGPU's names, as the device reports
};

// A GPU buffer and the facts needed to bind and check it.
class Buffer {
 public:
  Buffer() = default;
  WGPUBuffer get() const { return h_.get(); }
  uint64_t size() const { return size_; }
  WGPUBufferUsage usage() const { return usage_; }
  const std::string& label() const { return label_; }
  explicit operator bool() const { return static_cast<bool>(h_); }

 private:
  friend class Context;
  Handle<WGPUBuffer> h_;
  uint64_t size_ = 0;
  WGPUBufferUsage usage_ = 0;
  std::string label_;
};

constexpr WGPUBufferUsage kStorage =
    WGPUBufferUsage_Storage | WGPUBufferUsage_CopyDst | WGPUBufferUsage_CopySrc;
constexpr WGPUBufferUsage kUniform = WGPUBufferUsage_Uniform | WGPUBufferUsage_CopyDst;
constexpr WGPUBufferUsage kReadback = WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst;

// A compiled compute pipeline (entry point `main`) and its bind group layout.
struct Kernel {
  std::string label;
  Handle<WGPUComputePipeline> pipeline;
  Handle<WGPUBindGroupLayout> layout;
};

// One buffer range bound at the binding of the same index (a whole buffer
// converts implicitly; an arena slice gives its range).
struct Binding {
  const Buffer* buffer = nullptr;
  uint64_t offset = 0;
  uint64_t size = WGPU_WHOLE_SIZE;  // to the end of the buffer
  Binding() = default;
  Binding(const Buffer* b, uint64_t off = 0, uint64_t sz = WGPU_WHOLE_SIZE) : buffer(b), offset(off), size(sz) {}
  explicit operator bool() const { return buffer && *buffer; }
  // Bytes of the range (0 without a buffer).
  uint64_t bytes() const { return !buffer ? 0 : size == WGPU_WHOLE_SIZE ? buffer->size() - offset : size; }
};

struct BindGroup {
  Handle<WGPUBindGroup> group;
};

// What a buffer map's callback said; map_read's target, at a stable address
// until its future completes.
struct MapStatus {
  bool ok = false;
  std::string message;
};
// Asks for a read map of bytes [0, size) of `b` (size rounded up to 4): wait
// on the future (Context::wait), then read status and the mapped range.
WGPUFuture map_read(const Buffer& b, uint64_t size, MapStatus& status);

class Context {
 public:
  static Context create(const ContextOptions& options = {});

  const AdapterDesc& adapter() const { return adapter_; }
  const WGPULimits& limits() const { return limits_; }  // what the device grants
  const WGPULimits& adapter_limits() const { return adapter_limits_; }
  const Features& features() const { return features_; }
  const std::vector<std::string>& toggles() const { return toggles_; }
  LimitsProfile profile() const { return profile_; }
  bool low_end() const { return profile_ == LimitsProfile::LowEnd; }
  // Whether wait() blocks in wgpuInstanceWaitAny with a timeout (the
  // instance's timedWaitAnyEnable) or polls it with growing naps.
  bool timed_waits() const { return timed_wait_; }

  WGPUInstance instance() const { return instance_.get(); }
  WGPUDevice device() const { return device_.get(); }
  WGPUQueue queue() const { return queue_.get(); }

  // Throws blockq::Error if the device was lost or raised an uncaptured
  // error since the last check; `where` names the operation.
  void check(std::string_view where) const;
  // Blocks until the future completes; throws on loss or past the deadline.
  void wait(WGPUFuture future, std::string_view what) const;
  // Blocks until all submitted work is done.
  void finish() const;

  // Buffers. Sizes are rounded up to 4 bytes. Throws past maxBufferSize and
  // on a failed allocation, naming the label.
  Buffer create_buffer(uint64_t size, WGPUBufferUsage usage, std::string label) const;
  void upload(const Buffer& dst, std::span<const uint8_t> bytes, uint64_t offset = 0) const;
  template <typename T>
  void upload(const Buffer& dst, std::span<const T> v, uint64_t offset = 0) const {
    upload(dst, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(v.data()), v.size_bytes()),
           offset);
  }
  std::vector<uint8_t> download(const Buffer& src, uint64_t offset, uint64_t size) const;
  template <typename T>
  std::vector<T> download(const Buffer& src, uint64_t offset = 0, uint64_t count = ~0ull) const {
    if (count == ~0ull) count = (src.size() - offset) / sizeof(T);
    auto bytes = download(src, offset, count * sizeof(T));
    std::vector<T> out(count);
    std::memcpy(out.data(), bytes.data(), count * sizeof(T));
    return out;
  }
  // A storage buffer holding `v`, ready to bind.
  template <typename T>
  Buffer storage(std::span<const T> v, std::string label) const {
    Buffer b = create_buffer(v.size_bytes(), kStorage, std::move(label));
    upload(b, v);
    return b;
  }

  // Compiles WGSL into a kernel; a compilation or pipeline error throws
  // blockq::Error with the label and the compiler's messages.
  Kernel compile(const std::string& label, const std::string& wgsl) const;
  // The cached kernel for `key`, compiled from make_wgsl() on first use.
  const Kernel& kernel(const std::string& key, const std::string& label,
                       const std::function<std::string()>& make_wgsl) const;
  size_t cached_kernels() const { return kernels_.size(); }

  // Bind group 0 of `k`, binding i = bindings[i]. Checks each range against
  // the binding-size limit and alignment, naming the kernel and binding.
  BindGroup bind(const Kernel& k, std::span<const Binding> bindings,
                 std::span<const bool> is_uniform = {}) const;
  BindGroup bind(const Kernel& k, std::initializer_list<Binding> bindings) const {
    return bind(k, std::span<const Binding>(bindings.begin(), bindings.size()));
  }

  // Error scopes (validation, out-of-memory, internal) around an operation:
  // returns the first error message, if any.
  void push_error_scopes() const;
  std::optional<std::string> pop_error_scopes() const;

  // What Dawn's callbacks report; their target, at a stable address.
  struct ErrorState {
    std::mutex m;
    std::vector<std::string> uncaptured;
    bool lost = false;
    std::string lost_message;
    std::vector<std::string> logs;  // Dawn's log messages since the last compile (with shader_dump_dir)
  };

 private:
  Context() = default;
  // Writes LABEL.wgsl and the backend shader Dawn logged for it (see
  // ContextOptions::shader_dump_dir).
  void dump_shader(const std::string& label, const std::string& wgsl) const;
  // Members are destroyed in reverse order: the device goes before the error
  // state its callbacks point to, the instance last but one.
  std::unique_ptr<ErrorState> errors_;
  Handle<WGPUInstance> instance_;
  Handle<WGPUAdapter> adapter_handle_;
  Handle<WGPUDevice> device_;
  Handle<WGPUQueue> queue_;
  AdapterDesc adapter_;
  WGPULimits limits_{};
  WGPULimits adapter_limits_{};
  Features features_;
  std::vector<std::string> toggles_;
  LimitsProfile profile_ = LimitsProfile::Adapter;
  double timeout_s_ = 300;
  bool timed_wait_ = false;
  std::string shader_dump_dir_;
  mutable std::unordered_map<std::string, std::unique_ptr<Kernel>> kernels_;  // the pipeline cache
};

// WebGPU's default limits (the low-end profile), for tests and info.
WGPULimits default_limits();

// Names and values of every limit, in ABI order, for `blockq info`.
struct LimitEntry {
  std::string_view name;
  uint64_t value;
};
std::vector<LimitEntry> limit_entries(const WGPULimits& l);
std::string_view backend_name(WGPUBackendType b);
std::string_view adapter_type_name(WGPUAdapterType t);
std::string feature_name(uint32_t f);

}  // namespace blockq::gpu
