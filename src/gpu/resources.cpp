// Buffers (create, upload, download), kernels (WGSL compilation inside error
// scopes, the keyed cache) and bind groups, with limit checks that name the
// buffer, kernel and binding at fault.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "gpu/context.hpp"
#include "util/error.hpp"

namespace blockq::gpu {

namespace {
WGPUStringView sv(const std::string& s) { return {s.data(), s.size()}; }
uint64_t round4(uint64_t n) { return (n + 3) & ~uint64_t{3}; }
const char* profile_name(const Context& c) { return c.low_end() ? "low-end profile" : "adapter limits"; }
}  // namespace

Buffer Context::create_buffer(uint64_t size, WGPUBufferUsage usage, std::string label) const {
  const uint64_t padded = std::max<uint64_t>(4, round4(size));
  BQ_CHECK(padded <= limits_.maxBufferSize,
           "buffer '{}' of {} bytes exceeds maxBufferSize ({} bytes, {}) on {}", label, size,
           limits_.maxBufferSize, profile_name(*this), adapter_.name());
  WGPUBufferDescriptor d{};
  d.label = sv(label);
  d.usage = usage;
  d.size = padded;
  push_error_scopes();
  WGPUBuffer raw = wgpuDeviceCreateBuffer(device_.get(), &d);
  auto err = pop_error_scopes();
  Buffer b;
  b.h_.reset(raw);
  BQ_CHECK(!err && raw, "could not allocate buffer '{}' of {} bytes on {}: {}", label, padded,
           adapter_.name(), err.value_or("no buffer returned"));
  b.size_ = padded;
  b.usage_ = usage;
  b.label_ = std::move(label);
  return b;
}

void Context::upload(const Buffer& dst, std::span<const uint8_t> bytes, uint64_t offset) const {
  BQ_CHECK(offset % 4 == 0, "upload to '{}': offset {} is not a multiple of 4", dst.label(), offset);
  BQ_CHECK(offset + bytes.size() <= dst.size(), "upload of {} bytes at {} overruns buffer '{}' ({} bytes)",
           bytes.size(), offset, dst.label(), dst.size());
  const size_t whole = bytes.size() & ~size_t{3};
  if (whole) wgpuQueueWriteBuffer(queue_.get(), dst.get(), offset, bytes.data(), whole);
  if (whole != bytes.size()) {
    uint8_t tail[4] = {0, 0, 0, 0};
    std::memcpy(tail, bytes.data() + whole, bytes.size() - whole);
    wgpuQueueWriteBuffer(queue_.get(), dst.get(), offset + whole, tail, 4);
  }
  check("upload to " + dst.label());
}

WGPUFuture map_read(const Buffer& b, uint64_t size, MapStatus& status) {
  WGPUBufferMapCallbackInfo cb{};
  cb.mode = WGPUCallbackMode_WaitAnyOnly;
  cb.callback = [](WGPUMapAsyncStatus st, WGPUStringView msg, void* u1, void*) {
    auto* m = static_cast<MapStatus*>(u1);
    m->ok = st == WGPUMapAsyncStatus_Success;
    if (msg.data) m->message = msg.length == WGPU_STRLEN ? std::string(msg.data) : std::string(msg.data, msg.length);
  };
  cb.userdata1 = &status;
  return wgpuBufferMapAsync(b.get(), WGPUMapMode_Read, 0, (size + 3) & ~uint64_t{3}, cb);
}

std::vector<uint8_t> Context::download(const Buffer& src, uint64_t offset, uint64_t size) const {
  BQ_CHECK(offset % 4 == 0, "download from '{}': offset {} is not a multiple of 4", src.label(), offset);
  BQ_CHECK(offset + size <= src.size(), "download of {} bytes at {} overruns buffer '{}' ({} bytes)",
           size, offset, src.label(), src.size());
  std::vector<uint8_t> out(size);
  const uint64_t chunk = std::min<uint64_t>(limits_.maxBufferSize, uint64_t{64} << 20);
  Buffer staging = create_buffer(std::min(round4(size), chunk), kReadback, src.label() + " (readback)");
  for (uint64_t done = 0; done < size;) {
    const uint64_t n = std::min(size - done, chunk);
    const uint64_t n4 = round4(n);
    WGPUCommandEncoderDescriptor ed{};
    Handle<WGPUCommandEncoder> enc(wgpuDeviceCreateCommandEncoder(device_.get(), &ed));
    wgpuCommandEncoderCopyBufferToBuffer(enc.get(), src.get(), offset + done, staging.get(), 0, n4);
    WGPUCommandBufferDescriptor cd{};
    Handle<WGPUCommandBuffer> cmd(wgpuCommandEncoderFinish(enc.get(), &cd));
    WGPUCommandBuffer raw = cmd.get();
    wgpuQueueSubmit(queue_.get(), 1, &raw);
    MapStatus map;
    wait(map_read(staging, n4, map), "readback of " + src.label());
    check("readback of " + src.label());
    BQ_CHECK(map.ok, "could not map the readback of '{}': {}", src.label(), map.message);
    const void* p = wgpuBufferGetConstMappedRange(staging.get(), 0, n4);
    BQ_CHECK(p, "no mapped range for the readback of '{}'", src.label());
    std::memcpy(out.data() + done, p, n);
    wgpuBufferUnmap(staging.get());
    done += n;
  }
  return out;
}

Kernel Context::compile(const std::string& label, const std::string& wgsl) const {
  Kernel k;
  k.label = label;
  push_error_scopes();
  WGPUShaderSourceWGSL src{};
  src.chain.sType = WGPUSType_ShaderSourceWGSL;
  src.code = sv(wgsl);
  WGPUShaderModuleDescriptor md{};
  md.nextInChain = &src.chain;
  md.label = sv(label);
  Handle<WGPUShaderModule> module(wgpuDeviceCreateShaderModule(device_.get(), &md));
  WGPUComputePipelineDescriptor pd{};
  pd.label = sv(label);
  pd.compute.module = module.get();
  static const std::string entry = "main";
  pd.compute.entryPoint = sv(entry);
  k.pipeline.reset(wgpuDeviceCreateComputePipeline(device_.get(), &pd));
  auto err = pop_error_scopes();
  BQ_CHECK(!err, "kernel '{}': WGSL compilation or pipeline creation failed:\n{}", label, *err);
  BQ_CHECK(k.pipeline, "kernel '{}': no pipeline returned", label);
  k.layout.reset(wgpuComputePipelineGetBindGroupLayout(k.pipeline.get(), 0));
  check("kernel " + label);
  if (!shader_dump_dir_.empty()) dump_shader(label, wgsl);
  return k;
}

void Context::dump_shader(const std::string& label, const std::string& wgsl) const {
  std::vector<std::string> logs;
  {
    std::lock_guard lock(errors_->m);
    logs.swap(errors_->logs);
  }
  std::string name = label;  // a file name: the label with odd characters as '_'
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
  const std::filesystem::path base = std::filesystem::path(shader_dump_dir_) / name;
  auto write = [&](const std::string& ext, std::string_view text) {
    const std::string path = base.string() + ext;
    std::ofstream f(path, std::ios::binary);
    f.write(text.data(), static_cast<std::streamsize>(text.size()));
    BQ_CHECK(f.good(), "kernel '{}': cannot write the shader dump '{}'", label, path);
  };
  write(".wgsl", wgsl);
  static constexpr std::string_view kSpirv = "/* Dumped generated SPIRV disassembly */";
  std::string other;
  for (const std::string& l : logs) {
    const size_t p = l.find(kSpirv);
    if (p != std::string::npos) {
      size_t b = p + kSpirv.size();
      while (b < l.size() && (l[b] == '\n' || l[b] == '\r')) ++b;
      write(".spvasm", std::string_view(l).substr(b));
    } else if (l.find("// Dumped WGSL:") == std::string::npos) {  // the source, written above
      other.append(l).push_back('\n');
    }
  }
  if (!other.empty()) write(".log", other);
}

const Kernel& Context::kernel(const std::string& key, const std::string& label,
                              const std::function<std::string()>& make_wgsl) const {
  auto it = kernels_.find(key);
  if (it != kernels_.end()) return *it->second;
  auto k = std::make_unique<Kernel>(compile(label, make_wgsl()));
  return *kernels_.emplace(key, std::move(k)).first->second;
}

BindGroup Context::bind(const Kernel& k, std::span<const Binding> bindings,
                        std::span<const bool> is_uniform) const {
  std::vector<WGPUBindGroupEntry> entries(bindings.size());
  for (size_t i = 0; i < bindings.size(); ++i) {
    const Binding& b = bindings[i];
    BQ_ASSERT(b.buffer && *b.buffer, "kernel '{}': binding {} has no buffer", k.label, i);
    const uint64_t size = b.size == WGPU_WHOLE_SIZE ? b.buffer->size() - b.offset : b.size;
    const bool uniform = i < is_uniform.size() && is_uniform[i];
    const uint64_t limit = uniform ? limits_.maxUniformBufferBindingSize : limits_.maxStorageBufferBindingSize;
    const uint32_t align = uniform ? limits_.minUniformBufferOffsetAlignment : limits_.minStorageBufferOffsetAlignment;
    BQ_CHECK(b.offset + size <= b.buffer->size(),
             "kernel '{}': binding {} ({}) range {}+{} overruns the buffer ({} bytes)", k.label, i,
             b.buffer->label(), b.offset, size, b.buffer->size());
    BQ_CHECK(size <= limit,
             "kernel '{}': binding {} ({}) is {} bytes, over max{}BufferBindingSize ({} bytes, {})",
             k.label, i, b.buffer->label(), size, uniform ? "Uniform" : "Storage", limit,
             profile_name(*this));
    BQ_CHECK(b.offset % align == 0, "kernel '{}': binding {} ({}) offset {} is not a multiple of {}",
             k.label, i, b.buffer->label(), b.offset, align);
    entries[i].binding = static_cast<uint32_t>(i);
    entries[i].buffer = b.buffer->get();
    entries[i].offset = b.offset;
    entries[i].size = size;
  }
  WGPUBindGroupDescriptor d{};
  d.label = sv(k.label);
  d.layout = k.layout.get();
  d.entryCount = entries.size();
  d.entries = entries.data();
  BindGroup g;
  g.group.reset(wgpuDeviceCreateBindGroup(device_.get(), &d));
  return g;
}

}  // namespace blockq::gpu
