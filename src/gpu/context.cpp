// Context creation: the instance (allow_unsafe_apis), adapter choice (a real
// GPU first, SwiftShader as the fallback, or one forced by name), the device
// with the profile's limits and features, error capture and waiting.
#include "gpu/context.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include <fmt/ranges.h>

#include "util/error.hpp"

namespace blockq::gpu {

namespace {

std::string sv(WGPUStringView s) {
  if (!s.data) return {};
  if (s.length == WGPU_STRLEN) return std::string(s.data);
  return std::string(s.data, s.length);
}

WGPUStringView sv(const std::string& s) { return {s.data(), s.size()}; }

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// Where Debian's chromium-common puts SwiftShader's Vulkan ICD.
constexpr const char* kSwiftShaderIcds[] = {"/usr/lib/chromium/vk_swiftshader_icd.json"};

// Lets the Vulkan loader see SwiftShader next to any real driver, unless the
// user chose the drivers explicitly. Must run before the first instance.
void add_swiftshader_icd() {
  if (std::getenv("VK_ICD_FILENAMES") || std::getenv("VK_DRIVER_FILES") ||
      std::getenv("VK_ADD_DRIVER_FILES"))
    return;
  const char* forced = std::getenv("BLOCKQ_SWIFTSHADER_ICD");
  if (forced) {
    setenv("VK_ADD_DRIVER_FILES", forced, 0);
    return;
  }
  for (const char* p : kSwiftShaderIcds)
    if (std::filesystem::exists(p)) {
      setenv("VK_ADD_DRIVER_FILES", p, 0);
      return;
    }
}

struct AdapterResult {
  bool done = false;
  WGPUAdapter adapter = nullptr;
  std::string message;
};

struct DeviceResult {
  bool done = false;
  WGPUDevice device = nullptr;
  std::string message;
};

AdapterDesc describe(WGPUAdapter a) {
  WGPUAdapterInfo info{};
  AdapterDesc d;
  if (wgpuAdapterGetInfo(a, &info) != WGPUStatus_Success) return d;
  d.vendor = sv(info.vendor);
  d.architecture = sv(info.architecture);
  d.device = sv(info.device);
  d.description = sv(info.description);
  d.backend = info.backendType;
  d.type = info.adapterType;
  d.vendor_id = info.vendorID;
  d.device_id = info.deviceID;
  d.subgroup_min = info.subgroupMinSize;
  d.subgroup_max = info.subgroupMaxSize;
  wgpuAdapterInfoFreeMembers(info);
  return d;
}

std::vector<uint32_t> supported(WGPUAdapter a) {
  WGPUSupportedFeatures f{};
  wgpuAdapterGetFeatures(a, &f);
  std::vector<uint32_t> out(f.features, f.features + f.featureCount);
  wgpuSupportedFeaturesFreeMembers(f);
  return out;
}

}  // namespace

std::string AdapterDesc::name() const { return description.empty() ? device : description; }

LimitsProfile parse_limits_profile(std::string_view name) {
  if (name.empty() || name == "adapter" || name == "default") return LimitsProfile::Adapter;
  if (name == "low-end" || name == "lowend" || name == "low") return LimitsProfile::LowEnd;
  fail("unknown limits profile '{}': use 'adapter' or 'low-end'", name);
}

ContextOptions ContextOptions::resolved() const {
  ContextOptions o = *this;
  if (o.adapter.empty())
    if (const char* e = std::getenv("BLOCKQ_ADAPTER")) o.adapter = e;
  if (!o.limits) {
    const char* e = std::getenv("BLOCKQ_LIMITS");
    o.limits = parse_limits_profile(e ? e : "");
  }
  return o;
}

void Context::wait(WGPUFuture future, std::string_view what) const {
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + std::chrono::duration<double>(timeout_s_);
  auto nap = std::chrono::microseconds(0);
  while (true) {
    WGPUFutureWaitInfo info{future, 0};
    WGPUWaitStatus st = wgpuInstanceWaitAny(instance_.get(), 1, &info, timed_wait_ ? 10'000'000 : 0);
    if (st == WGPUWaitStatus_Success && info.completed) return;
    BQ_CHECK(st == WGPUWaitStatus_Success || st == WGPUWaitStatus_TimedOut,
             "waiting for {}: wgpuInstanceWaitAny failed with status {}", what,
             static_cast<uint32_t>(st));
    {
      std::lock_guard lock(errors_->m);
      BQ_CHECK(!errors_->lost, "device lost while waiting for {}: {}", what, errors_->lost_message);
    }
    BQ_CHECK(clock::now() < deadline, "timed out after {} s waiting for {} on {}", timeout_s_, what,
             adapter_.name());
    if (!timed_wait_) {
      std::this_thread::sleep_for(nap);
      nap = std::min(nap * 2 + std::chrono::microseconds(20), std::chrono::microseconds(1000));
    }
  }
}

void Context::check(std::string_view where) const {
  std::lock_guard lock(errors_->m);
  if (errors_->lost) fail("device lost ({}): {}", where, errors_->lost_message);
  if (!errors_->uncaptured.empty()) {
    std::string msg = errors_->uncaptured.front();
    errors_->uncaptured.clear();
    fail("WebGPU error ({}): {}", where, msg);
  }
}

void Context::finish() const {
  struct Done {
    WGPUQueueWorkDoneStatus status{};
    std::string message;
  } done;
  WGPUQueueWorkDoneCallbackInfo cb{};
  cb.mode = WGPUCallbackMode_WaitAnyOnly;
  cb.callback = [](WGPUQueueWorkDoneStatus status, WGPUStringView msg, void* u1, void*) {
    auto* d = static_cast<Done*>(u1);
    d->status = status;
    d->message = sv(msg);
  };
  cb.userdata1 = &done;
  wait(wgpuQueueOnSubmittedWorkDone(queue_.get(), cb), "submitted work");
  check("queue work");
  BQ_CHECK(done.status == WGPUQueueWorkDoneStatus_Success, "queue work did not complete on {} (status {}): {}",
           adapter_.name(), static_cast<uint32_t>(done.status), done.message);
}

void Context::push_error_scopes() const {
  wgpuDevicePushErrorScope(device_.get(), WGPUErrorFilter_Validation);
  wgpuDevicePushErrorScope(device_.get(), WGPUErrorFilter_OutOfMemory);
  wgpuDevicePushErrorScope(device_.get(), WGPUErrorFilter_Internal);
}

std::optional<std::string> Context::pop_error_scopes() const {
  std::optional<std::string> first;
  for (int i = 0; i < 3; ++i) {
    struct Out {
      WGPUErrorType type = WGPUErrorType_NoError;
      std::string message;
    } out;
    WGPUPopErrorScopeCallbackInfo cb{};
    cb.mode = WGPUCallbackMode_WaitAnyOnly;
    cb.callback = [](WGPUPopErrorScopeStatus, WGPUErrorType type, WGPUStringView msg, void* u1,
                     void*) {
      auto* o = static_cast<Out*>(u1);
      o->type = type;
      o->message = sv(msg);
    };
    cb.userdata1 = &out;
    wait(wgpuDevicePopErrorScope(device_.get(), cb), "error scope");
    if (out.type != WGPUErrorType_NoError && !first) first = out.message;
  }
  return first;
}

Context Context::create(const ContextOptions& requested) {
  const ContextOptions opt = requested.resolved();
  Context ctx;
  ctx.errors_ = std::make_unique<ErrorState>();
  ctx.profile_ = *opt.limits;
  ctx.timeout_s_ = opt.timeout_s;

  add_swiftshader_icd();
  const char* instance_toggles[] = {"allow_unsafe_apis"};
  WGPUDawnTogglesDescriptor itog{};
  itog.chain.sType = WGPUSType_DawnTogglesDescriptor;
  itog.enabledToggleCount = 1;
  itog.enabledToggles = instance_toggles;
  WGPUInstanceDescriptor idesc{};
  idesc.nextInChain = &itog.chain;
  WGPUInstanceCapabilities caps{};
  if (wgpuGetInstanceCapabilities(&caps) == WGPUStatus_Success && caps.timedWaitAnyEnable) {
    idesc.capabilities.timedWaitAnyEnable = 1;
    idesc.capabilities.timedWaitAnyMaxCount = 1;
    ctx.timed_wait_ = true;
  }
  ctx.instance_.reset(wgpuCreateInstance(&idesc));
  BQ_CHECK(ctx.instance_, "could not create a WebGPU instance (Dawn)");

  // Dawn's C API has no adapter enumeration: ask with each preference and
  // collect the distinct adapters that answer.
  struct Candidate {
    Handle<WGPUAdapter> handle;
    AdapterDesc desc;
  };
  std::vector<Candidate> found;
  const std::pair<WGPUPowerPreference, bool> asks[] = {{WGPUPowerPreference_HighPerformance, false},
                                                      {WGPUPowerPreference_LowPower, false},
                                                      {WGPUPowerPreference_Undefined, true}};
  for (auto [power, fallback] : asks) {
    WGPURequestAdapterOptions ro{};
    ro.featureLevel = WGPUFeatureLevel_Core;
    ro.powerPreference = power;
    ro.forceFallbackAdapter = fallback;
    ro.backendType = WGPUBackendType_Vulkan;
    AdapterResult res;
    WGPURequestAdapterCallbackInfo cb{};
    cb.mode = WGPUCallbackMode_WaitAnyOnly;
    cb.callback = [](WGPURequestAdapterStatus status, WGPUAdapter a, WGPUStringView msg, void* u1,
                     void*) {
      auto* r = static_cast<AdapterResult*>(u1);
      r->done = true;
      r->adapter = status == WGPURequestAdapterStatus_Success ? a : nullptr;
      r->message = sv(msg);
    };
    cb.userdata1 = &res;
    ctx.wait(wgpuInstanceRequestAdapter(ctx.instance_.get(), &ro, cb), "an adapter");
    if (!res.adapter) continue;
    Candidate c{Handle<WGPUAdapter>(res.adapter), describe(res.adapter)};
    bool dup = std::any_of(found.begin(), found.end(), [&](const Candidate& f) {
      return f.desc.vendor_id == c.desc.vendor_id && f.desc.device_id == c.desc.device_id &&
             f.desc.description == c.desc.description && f.desc.type == c.desc.type;
    });
    if (!dup) found.push_back(std::move(c));
  }
  std::string names;
  for (auto& c : found) names += (names.empty() ? "" : ", ") + c.desc.name();
  BQ_CHECK(!found.empty(),
           "no WebGPU adapter found (Vulkan). Install a Vulkan driver, or SwiftShader "
           "(scripts/setup.sh installs Debian's chromium-common), or point VK_ICD_FILENAMES "
           "at an ICD json");
  Candidate* pick = nullptr;
  if (!opt.adapter.empty()) {
    std::string want = lower(opt.adapter);
    for (auto& c : found) {
      std::string hay = lower(c.desc.vendor + " " + c.desc.architecture + " " + c.desc.device +
                              " " + c.desc.description);
      if (hay.find(want) != std::string::npos) {
        pick = &c;
        break;
      }
    }
    BQ_CHECK(pick, "no adapter matches '{}'; available: {}", opt.adapter, names);
  } else {
    for (auto& c : found)
      if (c.desc.type != WGPUAdapterType_CPU) {
        pick = &c;
        break;
      }
    if (!pick) pick = &found.front();
  }
  ctx.adapter_handle_ = std::move(pick->handle);
  ctx.adapter_ = pick->desc;
  WGPUAdapter adapter = ctx.adapter_handle_.get();
  BQ_CHECK(wgpuAdapterGetLimits(adapter, &ctx.adapter_limits_) == WGPUStatus_Success,
           "could not read the limits of adapter {}", ctx.adapter_.name());
  ctx.adapter_limits_.nextInChain = nullptr;

  // Features: every optional one a kernel can use, unless the profile is low-end.
  std::vector<WGPUFeatureName> want;
  if (ctx.profile_ == LimitsProfile::Adapter) {
    auto have = supported(adapter);
    for (WGPUFeatureName f : {WGPUFeatureName_Subgroups, WGPUFeatureName_TimestampQuery,
                              WGPUFeatureName_ShaderF16, WGPUFeatureName_ChromiumExperimentalSubgroupMatrix})
      if (std::find(have.begin(), have.end(), static_cast<uint32_t>(f)) != have.end())
        want.push_back(f);
  }
  // Limits: the adapter's own, or (low-end) WebGPU's defaults.
  WGPULimits required = ctx.profile_ == LimitsProfile::Adapter ? ctx.adapter_limits_ : default_limits();

  std::vector<const char*> enabled, disabled = {"timestamp_quantization"};
  if (opt.disable_robustness) enabled.push_back("disable_robustness");
  if (opt.disable_workgroup_init) enabled.push_back("disable_workgroup_init");
  // Dawn ignores a toggle name it does not know, so --toggle takes only
  // names this pinned Dawn has. Never skip_validation: inputs may be untrusted.
  static const char* const kExtra[] = {"disable_robustness", "disable_workgroup_init",
                                       "enable_integer_range_analysis_in_robustness", "dump_shaders",
                                       "disable_symbol_renaming", "use_user_defined_labels_in_backend"};
  std::vector<std::string> toggles = opt.toggles;
  if (!opt.shader_dump_dir.empty() && std::find(toggles.begin(), toggles.end(), "dump_shaders") == toggles.end())
    toggles.push_back("dump_shaders");
  for (const std::string& t : toggles) {
    const auto* known = std::find(std::begin(kExtra), std::end(kExtra), t);
    BQ_CHECK(known != std::end(kExtra), "unknown or unsupported Dawn toggle '{}'; blockq accepts: {}", t,
             fmt::join(kExtra, ", "));
    enabled.push_back(*known);
  }
  WGPUDawnTogglesDescriptor dtog{};
  dtog.chain.sType = WGPUSType_DawnTogglesDescriptor;
  dtog.enabledToggleCount = enabled.size();
  dtog.enabledToggles = enabled.data();
  dtog.disabledToggleCount = disabled.size();
  dtog.disabledToggles = disabled.data();
  for (auto* t : {"allow_unsafe_apis"}) ctx.toggles_.push_back(t);
  for (auto* t : enabled) ctx.toggles_.push_back(t);
  for (auto* t : disabled) ctx.toggles_.push_back(std::string("-") + t);

  WGPUDeviceDescriptor dd{};
  dd.nextInChain = &dtog.chain;
  std::string label = "blockq";
  dd.label = sv(label);
  dd.requiredFeatureCount = want.size();
  dd.requiredFeatures = want.data();
  dd.requiredLimits = &required;
  dd.deviceLostCallbackInfo.mode = WGPUCallbackMode_AllowSpontaneous;
  dd.deviceLostCallbackInfo.callback = [](const WGPUDevice*, WGPUDeviceLostReason reason,
                                          WGPUStringView msg, void* u1, void*) {
    if (reason == WGPUDeviceLostReason_CallbackCancelled) return;
    auto* st = static_cast<ErrorState*>(u1);
    std::lock_guard lock(st->m);
    st->lost = true;
    st->lost_message = fmt::format("{}{}", reason == WGPUDeviceLostReason_Destroyed ? "destroyed: " : "", sv(msg));
  };
  dd.deviceLostCallbackInfo.userdata1 = ctx.errors_.get();
  dd.uncapturedErrorCallbackInfo.callback = [](const WGPUDevice*, WGPUErrorType type,
                                               WGPUStringView msg, void* u1, void*) {
    auto* st = static_cast<ErrorState*>(u1);
    std::lock_guard lock(st->m);
    const char* kind = type == WGPUErrorType_OutOfMemory ? "out of memory"
                       : type == WGPUErrorType_Validation ? "validation"
                                                          : "internal";
    st->uncaptured.push_back(fmt::format("{} error: {}", kind, sv(msg)));
  };
  dd.uncapturedErrorCallbackInfo.userdata1 = ctx.errors_.get();

  DeviceResult dres;
  WGPURequestDeviceCallbackInfo dcb{};
  dcb.mode = WGPUCallbackMode_WaitAnyOnly;
  dcb.callback = [](WGPURequestDeviceStatus status, WGPUDevice d, WGPUStringView msg, void* u1,
                    void*) {
    auto* r = static_cast<DeviceResult*>(u1);
    r->done = true;
    r->device = status == WGPURequestDeviceStatus_Success ? d : nullptr;
    r->message = sv(msg);
  };
  dcb.userdata1 = &dres;
  ctx.wait(wgpuAdapterRequestDevice(adapter, &dd, dcb), "a device");
  BQ_CHECK(dres.device, "could not create a device on {}: {}", ctx.adapter_.name(), dres.message);
  ctx.device_.reset(dres.device);
  ctx.queue_.reset(wgpuDeviceGetQueue(dres.device));
  if (!opt.shader_dump_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(opt.shader_dump_dir, ec);
    BQ_CHECK(!ec, "cannot create the shader dump folder '{}': {}", opt.shader_dump_dir, ec.message());
    ctx.shader_dump_dir_ = opt.shader_dump_dir;
    WGPULoggingCallbackInfo lcb{};
    lcb.callback = [](WGPULoggingType, WGPUStringView msg, void* u1, void*) {
      auto* st = static_cast<ErrorState*>(u1);
      std::lock_guard lock(st->m);
      st->logs.emplace_back(sv(msg));
    };
    lcb.userdata1 = ctx.errors_.get();
    wgpuDeviceSetLoggingCallback(dres.device, lcb);
  }

  BQ_CHECK(wgpuDeviceGetLimits(dres.device, &ctx.limits_) == WGPUStatus_Success,
           "could not read the device limits on {}", ctx.adapter_.name());
  ctx.limits_.nextInChain = nullptr;
  WGPUSupportedFeatures df{};
  wgpuDeviceGetFeatures(dres.device, &df);
  for (size_t i = 0; i < df.featureCount; ++i) {
    uint32_t f = df.features[i];
    ctx.features_.names.push_back(feature_name(f));
    ctx.features_.subgroups |= f == WGPUFeatureName_Subgroups;
    ctx.features_.timestamp |= f == WGPUFeatureName_TimestampQuery;
    ctx.features_.shader_f16 |= f == WGPUFeatureName_ShaderF16;
    ctx.features_.subgroup_matrix |= f == WGPUFeatureName_ChromiumExperimentalSubgroupMatrix;
  }
  wgpuSupportedFeaturesFreeMembers(df);
  ctx.features_.packed_dot4 = wgpuInstanceHasWGSLLanguageFeature(
      ctx.instance_.get(), WGPUWGSLLanguageFeatureName_Packed4x8IntegerDotProduct);
  if (ctx.features_.packed_dot4) ctx.features_.names.push_back("wgsl:packed_4x8_integer_dot_product");
  if (!ctx.features_.subgroups) ctx.adapter_.subgroup_min = ctx.adapter_.subgroup_max = 0;
  ctx.check("device creation");
  return ctx;
}

}  // namespace blockq::gpu
