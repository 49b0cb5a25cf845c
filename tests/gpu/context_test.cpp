// Runtime tests: a WGSL kernel end to end, compile errors, limits, the
// low-end profile, wrapped dispatch, bind-size checks, the kernel cache and
// timing. They run on whatever adapter the machine has (SwiftShader in CI).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <fmt/format.h>

#include "gpu/recorder.hpp"
#include "support/gpu.hpp"
#include "util/error.hpp"

using namespace blockq;
using blockq::testing_support::test_context;

namespace {

const char* kAffine = R"(
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
const N: u32 = {{N}}u;
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
  let i = (wid.x + wid.y * nwg.x) * 64u + li;
  if (i >= N) { return; }
  y[i] = x[i] * 2.0 + 1.0;
}
)";

std::string affine(uint64_t n) {
  std::string s = kAffine;
  s.replace(s.find("{{N}}"), 5, std::to_string(n));
  return s;
}

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-4.f, 4.f);
  std::vector<float> v(n);
  for (auto& f : v) f = d(rng);
  return v;
}

void run_affine(uint64_t n, uint32_t seed) {
  auto& ctx = test_context();
  auto x = random_floats(n, seed);
  auto xb = ctx.storage<float>(x, "x");
  auto yb = ctx.create_buffer(n * 4, gpu::kStorage, "y");
  std::vector<float> poison(n, std::nanf(""));
  ctx.upload<float>(yb, poison);
  const auto& k = ctx.kernel("test.affine." + std::to_string(n), "test.affine", [&] { return affine(n); });
  auto g = ctx.bind(k, {{&xb}, {&yb}});
  gpu::Recorder rec(ctx);
  rec.dispatch(k, g, gpu::wrap_workgroups((n + 63) / 64, ctx.limits().maxComputeWorkgroupsPerDimension));
  rec.submit();
  auto y = ctx.download<float>(yb, 0, n);
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i)
    if (!(y[i] == x[i] * 2.f + 1.f)) ++bad;
  EXPECT_EQ(bad, 0u) << "of " << n << " elements";
}

}  // namespace

TEST(Runtime, KernelRunsEndToEnd) {
  auto& ctx = test_context();
  EXPECT_FALSE(ctx.adapter().name().empty());
  EXPECT_EQ(ctx.adapter().backend, WGPUBackendType_Vulkan);
  run_affine(1000, 1);
}

TEST(Runtime, DispatchPast65535WorkgroupsCoversEveryElement) {
  const uint64_t n = 70000ull * 64 + 17;  // 70001 workgroups of 64
  auto grid = gpu::wrap_workgroups((n + 63) / 64, test_context().limits().maxComputeWorkgroupsPerDimension);
  EXPECT_GT(grid.y, 1u);
  run_affine(n, 2);
}

TEST(Runtime, WrapWorkgroupsMath) {
  auto g = gpu::wrap_workgroups(65536, 65535);
  EXPECT_EQ(g.x, 65535u);
  EXPECT_EQ(g.y, 2u);
  EXPECT_GE(uint64_t{g.x} * g.y, 65536u);
  EXPECT_THROW(gpu::wrap_workgroups(uint64_t{65535} * 65535 + 1, 65535), Error);
}

TEST(Runtime, SyntaxErrorThrowsWithMessageAndLabel) {
  auto& ctx = test_context();
  try {
    ctx.compile("test.broken", "@compute @workgroup_size(1) fn main() { let x = ; }");
    FAIL() << "no exception";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("test.broken"), std::string::npos) << m;
    EXPECT_NE(m.find("error"), std::string::npos) << m;
    EXPECT_NE(m.find("let x = ;"), std::string::npos) << m;  // the offending line is quoted
  }
  run_affine(100, 3);  // the device is still usable
}

TEST(Runtime, OverLimitBufferThrowsClearly) {
  auto& ctx = test_context();
  try {
    ctx.create_buffer(ctx.limits().maxBufferSize + 4, gpu::kStorage, "too-big");
    FAIL() << "no exception";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("too-big"), std::string::npos) << m;
    EXPECT_NE(m.find("maxBufferSize"), std::string::npos) << m;
  }
}

TEST(Runtime, OverLimitBindingThrowsClearly) {
  // Under the low-end profile a binding (128 MiB) is smaller than a buffer
  // (256 MiB), so an over-limit binding can be built on any adapter.
  gpu::ContextOptions o;
  o.limits = gpu::LimitsProfile::LowEnd;
  auto ctx = gpu::Context::create(o);
  const uint64_t limit = ctx.limits().maxStorageBufferBindingSize;
  ASSERT_LT(limit + 256, ctx.limits().maxBufferSize);
  auto big = ctx.create_buffer(limit + 256, gpu::kStorage, "big");
  auto small = ctx.create_buffer(1024, gpu::kStorage, "small");
  const auto& k = ctx.kernel("test.affine.16", "test.affine", [] { return affine(16); });
  try {
    ctx.bind(k, {{&big}, {&small}});
    FAIL() << "no exception";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("maxStorageBufferBindingSize"), std::string::npos) << m;
    EXPECT_NE(m.find("binding 0"), std::string::npos) << m;
    EXPECT_NE(m.find("test.affine"), std::string::npos) << m;
  }
  // The same buffer bound in two halves within the limit is fine.
  EXPECT_NO_THROW(ctx.bind(k, {{&big, 0, limit}, {&small}}));
}

TEST(Runtime, LowEndProfileCapsTheLimits) {
  gpu::ContextOptions o;
  o.limits = gpu::LimitsProfile::LowEnd;
  auto ctx = gpu::Context::create(o);
  EXPECT_TRUE(ctx.low_end());
  EXPECT_EQ(ctx.limits().maxStorageBufferBindingSize, 128ull << 20);
  EXPECT_EQ(ctx.limits().maxComputeWorkgroupStorageSize, 16384u);
  EXPECT_EQ(ctx.limits().maxComputeInvocationsPerWorkgroup, 256u);
  EXPECT_EQ(ctx.limits().maxBufferSize, 256ull << 20);
  EXPECT_FALSE(ctx.features().subgroups);
  EXPECT_FALSE(ctx.features().timestamp);
  EXPECT_FALSE(ctx.features().shader_f16);
  EXPECT_EQ(ctx.adapter().subgroup_min, 0u);
  EXPECT_THROW(ctx.create_buffer((256ull << 20) + 4, gpu::kStorage, "over"), Error);
}

TEST(Runtime, AdapterProfileUsesTheAdaptersLimits) {
  gpu::ContextOptions o;
  o.limits = gpu::LimitsProfile::Adapter;
  auto ctx = gpu::Context::create(o);
  EXPECT_EQ(ctx.limits().maxStorageBufferBindingSize, ctx.adapter_limits().maxStorageBufferBindingSize);
  EXPECT_EQ(ctx.limits().maxComputeInvocationsPerWorkgroup,
            ctx.adapter_limits().maxComputeInvocationsPerWorkgroup);
  if (ctx.features().subgroups) {
    EXPECT_GE(ctx.adapter().subgroup_min, 1u);
    EXPECT_GE(ctx.adapter().subgroup_max, ctx.adapter().subgroup_min);
  }
}

TEST(Runtime, UnknownAdapterNameListsTheAvailableOnes) {
  gpu::ContextOptions o;
  o.adapter = "no-such-adapter-xyz";
  try {
    gpu::Context::create(o);
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("available"), std::string::npos) << e.what();
  }
}

TEST(Runtime, ToggleOptionTakesOnlyKnownNames) {
  // Dawn would ignore an unknown name silently; the context refuses it.
  gpu::ContextOptions o;
  o.toggles = {"no_such_toggle"};
  try {
    gpu::Context::create(o);
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'no_such_toggle'"), std::string::npos) << e.what();
  }
  o.toggles = {"enable_integer_range_analysis_in_robustness"};
  auto ctx = gpu::Context::create(o);
  const auto& t = ctx.toggles();
  EXPECT_NE(std::find(t.begin(), t.end(), "enable_integer_range_analysis_in_robustness"), t.end());
}

TEST(Runtime, ShaderDumpWritesTheWgslAndTheBackendShader) {
  // --dump-shaders DIR: each compiled kernel's WGSL and, through Dawn's
  // dump_shaders toggle and logging callback, the shader the backend made.
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / fmt::format("blockq-dump-{}", std::random_device{}());
  {
    gpu::ContextOptions o;
    o.shader_dump_dir = dir.string();
    auto ctx = gpu::Context::create(o);
    const auto& t = ctx.toggles();
    EXPECT_NE(std::find(t.begin(), t.end(), "dump_shaders"), t.end());
    const std::string src = affine(100);
    const gpu::Kernel k = ctx.compile("test/dump:affine", src);
    std::ifstream w(dir / "test_dump_affine.wgsl");
    std::stringstream ws;
    ws << w.rdbuf();
    EXPECT_EQ(ws.str(), src);
    if (ctx.adapter().backend == WGPUBackendType_Vulkan) {
      std::ifstream f(dir / "test_dump_affine.spvasm");
      ASSERT_TRUE(f.good()) << "no SPIR-V dump in " << dir;
      std::stringstream ss;
      ss << f.rdbuf();
      EXPECT_NE(ss.str().find("OpCapability Shader"), std::string::npos) << ss.str().substr(0, 300);
      EXPECT_NE(ss.str().find("OpEntryPoint GLCompute"), std::string::npos) << ss.str().substr(0, 300);
    } else {
      EXPECT_TRUE(fs::exists(dir / "test_dump_affine.spvasm") || fs::exists(dir / "test_dump_affine.log"));
    }
    // the kernel still runs as compiled
    auto x = random_floats(100, 5);
    auto xb = ctx.storage<float>(x, "x");
    auto yb = ctx.create_buffer(400, gpu::kStorage, "y");
    std::vector<float> poison(100, std::nanf(""));
    ctx.upload<float>(yb, poison);
    auto g = ctx.bind(k, {{&xb}, {&yb}});
    gpu::Recorder rec(ctx);
    rec.dispatch(k, g, gpu::Grid{2, 1, 1});
    rec.submit();
    auto y = ctx.download<float>(yb, 0, 100);
    for (size_t i = 0; i < 100; ++i) EXPECT_EQ(y[i], x[i] * 2.f + 1.f) << i;
  }
  fs::remove_all(dir);
}

TEST(Runtime, KernelCacheCompilesOnce) {
  auto& ctx = test_context();
  int made = 0;
  auto make = [&] { ++made; return affine(32); };
  const auto& a = ctx.kernel("test.cache", "test.cache", make);
  const auto& b = ctx.kernel("test.cache", "test.cache", make);
  EXPECT_EQ(&a, &b);
  EXPECT_EQ(made, 1);
}

TEST(Runtime, UploadDownloadRoundTripsOddSizes) {
  auto& ctx = test_context();
  std::vector<uint8_t> bytes(1027);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 37 + 11);
  auto b = ctx.create_buffer(bytes.size(), gpu::kStorage, "odd");
  EXPECT_EQ(b.size() % 4, 0u);
  ctx.upload(b, std::span<const uint8_t>(bytes));
  auto back = ctx.download(b, 0, bytes.size());
  EXPECT_EQ(back, bytes);
  EXPECT_THROW(ctx.download(b, 0, b.size() + 4), Error);
}

TEST(Runtime, TimingGivesPositiveDurations) {
  auto& ctx = test_context();
  const uint64_t n = 4096;
  auto xb = ctx.create_buffer(n * 4, gpu::kStorage, "x");
  auto yb = ctx.create_buffer(n * 4, gpu::kStorage, "y");
  const auto& k = ctx.kernel("test.affine.4096", "test.affine", [&] { return affine(n); });
  auto g = ctx.bind(k, {{&xb}, {&yb}});
  auto t = gpu::time_passes(ctx, 5, [&](gpu::Recorder& r) { r.dispatch(k, g, {64, 1, 1}); });
  ASSERT_EQ(t.ns.size(), 5u);
  EXPECT_GT(t.median(), 0.0);
  EXPECT_EQ(t.gpu_timestamps, ctx.features().timestamp);
}

TEST(Runtime, DeviceLossBecomesAnError) {
  auto ctx = gpu::Context::create({});
  wgpuDeviceDestroy(ctx.device());
  EXPECT_THROW(
      {
        auto b = ctx.create_buffer(64, gpu::kStorage, "after-loss");
        ctx.download(b, 0, 64);
      },
      Error);
}
