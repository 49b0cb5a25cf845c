// `blockq demo`: a small checked kernel run — a workgroup sum over random
// data on the chosen adapter, compared with a float64 sum on the CPU.
#include <fmt/format.h>

#include <cmath>
#include <random>

#include "gpu/recorder.hpp"
#include "tools/context.hpp"
#include "util/embedded_wgsl.hpp"
#include "util/error.hpp"
#include "util/template.hpp"

namespace blockq::tools {
namespace {

void run_demo(const GlobalOptions& g) {
  auto ctx = make_context(g);
  const uint32_t n = 1 << 20, per = 8;
  const uint32_t wg = std::min<uint32_t>(256, ctx.limits().maxComputeInvocationsPerWorkgroup);
  const uint32_t groups = (n + wg * per - 1) / (wg * per);
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> x(n);
  for (auto& v : x) v = d(rng);
  double ref = 0;
  for (float v : x) ref += v;

  auto xb = ctx.storage<float>(x, "demo.x");
  auto pb = ctx.create_buffer(groups * 4, gpu::kStorage, "demo.partial");
  std::vector<float> poison(groups, std::nanf(""));
  ctx.upload<float>(pb, poison);
  const std::string label = fmt::format("demo_sum.n{}.wg{}", n, wg);
  const auto& k = ctx.kernel(label, label, [&] {
    return Template(wgsl_file("gpu/wgsl/demo_sum.wgsl"), label)
        .set_u("N", n).set_u("WG", wg).set_u("PER", per).render();
  });
  auto bg = ctx.bind(k, {{&xb}, {&pb}});
  gpu::Recorder rec(ctx, "demo");
  rec.dispatch(k, bg, {groups, 1, 1});
  rec.submit();
  auto partial = ctx.download<float>(pb, 0, groups);
  double got = 0;
  for (float v : partial) got += v;
  const double rel = std::abs(got - ref) / std::max(1e-30, std::abs(ref));
  const bool ok = std::isfinite(got) && rel < 1e-4;
  fmt::print("demo: sum of {} random floats on {} ({} workgroups of {}): gpu {:.6f}, float64 {:.6f}, "
             "rel. error {:.2e}: {}\n",
             n, ctx.adapter().name(), groups, wg, got, ref, rel, ok ? "OK" : "MISMATCH");
  BQ_CHECK(ok, "demo kernel result does not match the CPU reference");
}

void add_demo(CLI::App& app, GlobalOptions& g) {
  auto* cmd = app.add_subcommand("demo", "Run a small checked kernel on the adapter");
  cmd->callback([&g] { run_demo(g); });
}

}  // namespace
BQ_REGISTER_COMMAND(add_demo);
}  // namespace blockq::tools
