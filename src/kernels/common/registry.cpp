// The kernel registry, the native Program runner, and shared error measures
// (see registry.hpp).
#include "kernels/common/registry.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "quant/half.hpp"
#include "util/embedded_wgsl.hpp"
#include "util/error.hpp"

namespace blockq::kernels {
namespace {

std::vector<KernelEntry>& table() {
  static std::vector<KernelEntry> t;
  return t;
}

}  // namespace

void register_kernel(KernelEntry e) {
  auto& t = table();
  for (auto& x : t)
    if (x.id == e.id) {
      x = std::move(e);
      return;
    }
  t.push_back(std::move(e));
}

const std::vector<KernelEntry>& registered_kernels() { return table(); }

const KernelEntry& find_kernel(std::string_view id) {
  std::string ids;
  for (const auto& e : table()) {
    if (e.id == id) return e;
    ids += (ids.empty() ? "" : ", ") + e.id;
  }
  throw Error(fmt::format("no kernel \"{}\" (registered: {})", id, ids.empty() ? "none" : ids));
}

contract::Manifest load_manifest(const KernelEntry& e) {
  return contract::parse_manifest(json_file(e.manifest_path), e.manifest_path);
}

contract::TestFile load_tests(const KernelEntry& e) {
  return contract::parse_tests(json_file(e.test_path), e.test_path, load_manifest(e));
}

contract::BenchFile load_bench(const KernelEntry& e) {
  return contract::parse_bench(json_file(e.bench_path), e.bench_path, load_manifest(e));
}

std::vector<std::vector<float>> run_program(gpu::Context& ctx, const Program& p) {
  std::vector<gpu::Buffer> bufs;
  bufs.reserve(p.buffers.size());
  for (const auto& b : p.buffers) {
    BQ_ASSERT(b.size % 4 == 0 && b.init.size() <= b.size, "program buffer {}", b.name);
    bufs.push_back(ctx.create_buffer(b.size, b.uniform ? gpu::kUniform : gpu::kStorage, b.name));
    if (!b.init.empty()) {
      ctx.upload(bufs.back(), std::span<const uint8_t>(b.init));
    } else if (!b.uniform) {
      std::vector<uint32_t> fill(b.size / 4, b.poison);
      ctx.upload(bufs.back(), std::span<const uint32_t>(fill));
    }
  }
  std::vector<const gpu::Kernel*> ks;
  for (const auto& k : p.kernels) ks.push_back(&ctx.kernel(k.key, k.key, [&] { return k.wgsl; }));
  gpu::Recorder rec(ctx, "program");
  std::vector<gpu::BindGroup> groups;
  for (const auto& d : p.dispatches) {
    std::vector<gpu::Binding> bs;
    std::vector<bool> uni;
    for (uint32_t i : d.bindings) {
      bs.push_back({&bufs.at(i)});
      uni.push_back(p.buffers[i].uniform);
    }
    std::unique_ptr<bool[]> u(new bool[uni.size()]);
    std::copy(uni.begin(), uni.end(), u.get());
    groups.push_back(ctx.bind(*ks.at(d.kernel), bs, std::span<const bool>(u.get(), uni.size())));
    rec.dispatch(*ks[d.kernel], groups.back(), d.grid);
  }
  rec.submit();
  std::vector<std::vector<float>> out;
  for (const auto& o : p.outputs) {
    int64_t n = 1;
    for (int64_t d : o.shape) n *= d;
    if (o.dtype == "float16") {
      auto h = ctx.download<uint16_t>(bufs.at(o.buffer), 0, uint64_t(n));
      out.push_back(f16_to_floats(h));
    } else if (o.dtype == "uint32") {
      auto u = ctx.download<uint32_t>(bufs.at(o.buffer), 0, uint64_t(n));
      out.emplace_back(u.begin(), u.end());
    } else {
      out.push_back(ctx.download<float>(bufs.at(o.buffer), 0, uint64_t(n)));
    }
  }
  return out;
}

double max_rel(std::span<const float> got, std::span<const float> ref) {
  std::vector<double> r(ref.begin(), ref.end());
  return max_rel(got, std::span<const double>(r));
}

double max_rel(std::span<const float> got, std::span<const double> ref) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  if (got.size() != ref.size()) return inf;
  double err = 0, mag = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(got[i]) != std::isnan(ref[i])) return inf;
    if (std::isnan(got[i])) continue;
    err = std::max(err, std::fabs(double(got[i]) - ref[i]));
    mag = std::max(mag, std::fabs(ref[i]));
  }
  return err / std::max(mag, 1e-30);
}

std::vector<float> f16_to_floats(std::span<const uint16_t> h) {
  std::vector<float> f(h.size());
  for (size_t i = 0; i < h.size(); ++i) f[i] = f16_to_f32(h[i]);
  return f;
}

BenchRow time_body(gpu::Context& ctx, int samples, const std::function<void(gpu::Recorder&)>& body) {
  gpu::keep_busy(ctx, body);  // warm-up: pipelines, first touches, clocks
  const gpu::Timing t = gpu::time_passes(ctx, samples, body);
  BenchRow r;
  r.us_median = t.median() / 1e3;
  r.samples = samples;
  r.gpu_timestamps = t.gpu_timestamps;
  return r;
}

}  // namespace blockq::kernels
