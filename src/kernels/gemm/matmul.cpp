// matvec/gemm dispatch and the crossover measurement (see matmul.hpp).
#include "kernels/gemm/matmul.hpp"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <iterator>
#include <random>

#include "kernels/matvec/xquant.hpp"
#include "util/error.hpp"

namespace blockq::gemm {

uint32_t crossover(const gpu::Context& ctx, const WeightKind& kind, const CrossoverOptions& opt) {
  const bool dot4 = ctx.features().packed_dot4;
  const bool mv8 = opt.mv_int8 && dot4 && matvec::int8_supported(kind);
  const bool g8 = opt.gemm_int8 && dot4 && !kind.onnx && int8_reads(kind.format);
  const std::string key = fmt::format("{}.n{}.k{}{}{}", kind.name(), opt.n, opt.k, mv8 ? ".mvi8" : "", g8 ? ".gi8" : "");
  if (opt.use_cache && !opt.force)
    if (auto c = cache_get(ctx, "crossover", key)) {
      try {
        return nlohmann::json::parse(*c).at("m").get<uint32_t>();
      } catch (const std::exception&) {
      }
    }
  const uint32_t ms[] = {1, 2, 4, 8, 16, 32, 64};
  auto blocks = random_blocks(kind.format, opt.n, opt.k, 9);
  auto w = matvec::upload(ctx, matvec::HostWeight{kind, opt.n, opt.k, blocks}, "crossover.w");  // read by both
  const uint32_t most = ms[std::size(ms) - 1];
  std::vector<float> x(size_t{most} * opt.k);
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  for (auto& v : x) v = d(rng);
  auto xb = ctx.storage<float>(x, "crossover.x");
  auto yb = ctx.create_buffer(uint64_t{most} * opt.n * 4, gpu::kStorage, "crossover.y");
  auto time = [&](auto& p) {
    auto body = [&](gpu::Recorder& r) { p.record(r); };
    gpu::keep_busy(ctx, body);  // compiles, ramps the clocks up
    return gpu::time_passes(ctx, opt.samples, body).median();
  };
  uint32_t best = 0;
  nlohmann::json detail = nlohmann::json::array();
  for (uint32_t m : ms) {
    matvec::Options mo;
    mo.int8 = mv8;
    auto mp = matvec::prepare(ctx, matvec::plan(ctx, kind, opt.n, opt.k, m, {}, mo), {&w, nullptr, &xb, &yb});
    auto gp = prepare(ctx, g8 ? plan_int8(limits_of(ctx), kind, opt.n, opt.k, m) : plan(ctx, kind, opt.n, opt.k, m),
                      {&w, nullptr, &xb, &yb, m});
    const double tm = time(mp), tg = time(gp);
    if (opt.verbose) std::fprintf(stderr, "  crossover %s m=%u: matvec %.1f us, gemm %.1f us\n", key.c_str(), m, tm / 1e3, tg / 1e3);
    detail.push_back({{"m", m}, {"matvec_ns", tm}, {"gemm_ns", tg}});
    if (tm < tg) best = m;
  }
  if (opt.use_cache) cache_put(ctx, "crossover", key, nlohmann::json{{"m", best}, {"timings", detail}}.dump());
  return best;
}

const KernelSpec& Matmul::spec() const {
  return std::visit([](const auto& p) -> const KernelSpec& { return p.spec; }, p_);
}

void Matmul::record(gpu::Recorder& rec) const {
  std::visit([&](const auto& p) { p.record(rec); }, p_);
}

bool gemm_reads(const WeightKind& kind, uint32_t k) {
  return !kind.onnx && supported(kind.format) && k % std::max<uint32_t>(32, traits(kind.format).block_elems) == 0;
}

namespace {

bool uses_int8(const gpu::Context& ctx, const MatmulArgs& a) {
  return a.int8 && !a.mv_a->kind.onnx && int8_reads(a.mv_a->kind.format) && ctx.features().packed_dot4;
}

bool mv_uses_int8(const gpu::Context& ctx, const MatmulArgs& a) {
  return a.mv_int8 && matvec::int8_supported(a.mv_a->kind) && ctx.features().packed_dot4;
}

// A crossover measured where the two sides differ in x (f32 matvec, int8
// gemm) moves with the shape (H200, session 39: smollm2's 960-wide weights
// ran 16 rows slower on the int8 gemm than on the f32 matvec, past the
// crossover of 4096 x 4096), so it is measured on the weight's own shape.
uint32_t crossover_of(const gpu::Context& ctx, const MatmulArgs& a) {
  if (a.crossover) return *a.crossover;
  CrossoverOptions o;
  o.mv_int8 = a.mv_int8;
  o.gemm_int8 = a.int8;
  if (a.crossover_own_shape || uses_int8(ctx, a) != mv_uses_int8(ctx, a)) {
    o.n = a.mv_a->n;
    o.k = a.mv_a->k;
  }
  return crossover(ctx, a.mv_a->kind, o);
}

// The matvec spec matmul() runs for a when it does not run the gemm.
KernelSpec matvec_spec(const gpu::Context& ctx, const MatmulArgs& a) {
  matvec::Options o;
  if (mv_uses_int8(ctx, a)) o.int8 = true;
  return matvec::plan(ctx, a.mv_a->kind, a.mv_a->n, a.mv_a->k, a.m, a.hooks, o);
}

// The gemm spec matmul() runs for a, or nullopt when it runs matvec.
std::optional<KernelSpec> gemm_spec(const gpu::Context& ctx, const MatmulArgs& a) {
  BQ_CHECK(a.mv_a && a.x && a.y && a.m > 0, "matmul: a weight, x, y and m > 0 are required");
  const WeightKind kind = a.mv_a->kind;
  const uint32_t n = a.mv_a->n, k = a.mv_a->k;
  if (!gemm_reads(kind, k) || a.m <= crossover_of(ctx, a)) return std::nullopt;
  const bool i8 = uses_int8(ctx, a);
  std::optional<Tiling> t;
  if (a.tuned) {
    TuneOptions o;
    o.int8 = i8;
    t = tune(ctx, kind, n, k, m_class(a.m), a.hooks, o).tiling;
  }
  // A tuned split-k needs partials for this m; past the binding limit it runs unsplit.
  if (t && t->splits > 1 &&
      split_sum::partial_bytes(t->splits, a.hooks, a.m, n) > ctx.limits().maxStorageBufferBindingSize)
    t->splits = 1;
  return i8 ? plan_int8(limits_of(ctx), kind, n, k, a.m, a.hooks, t) : plan(ctx, kind, n, k, a.m, a.hooks, t);
}

}  // namespace

Matmul matmul(const gpu::Context& ctx, const MatmulArgs& a) {
  Matmul out;
  if (auto s = gemm_spec(ctx, a)) {
    Args ga{a.mv_a, a.mv_b, a.x, a.y, a.m};
    ga.part = a.part;
    ga.xq = a.xq;
    out.p_ = prepare(ctx, *s, ga);
  } else {
    matvec::Args ma{a.mv_a, a.mv_b, a.x, a.y};
    ma.part = a.part;
    ma.xq = a.xq;
    out.p_ = matvec::prepare(ctx, matvec_spec(ctx, a), ma);
  }
  return out;
}

uint64_t partial_bytes(const gpu::Context& ctx, const MatmulArgs& a) {
  const auto g = gemm_spec(ctx, a);
  const KernelSpec s = g ? *g : matvec_spec(ctx, a);
  return s.splits > 1 ? split_sum::partial_bytes(s.splits, a.hooks, a.m, s.n) : 0;
}

uint64_t xq_bytes(const gpu::Context& ctx, const MatmulArgs& a) {
  if (const auto g = gemm_spec(ctx, a)) return g->features.dot4 ? int8_x_bytes(a.m, g->k) : 0;
  const KernelSpec s = matvec_spec(ctx, a);
  return matvec::x_prequantized(s) ? matvec::xquant::bytes(matvec::xquant::plan(s)) : 0;
}

}  // namespace blockq::gemm
