// The sample family's registry entry: the contract cases of blockq.Sample
// (contract/*.json) run natively against the twin (token and ids exactly,
// biased and penalised logits within rounding) and float64 (the drawn
// probability), benched, and exported as a replayable Program (the bias, the
// penalties, the rounds and the pick).
#include <algorithm>
#include <bit>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "kernels/common/registry.hpp"
#include "kernels/sample/register.hpp"
#include "kernels/sample/sample.hpp"
#include "kernels/sample/twin.hpp"
#include "util/error.hpp"

namespace blockq::sample {
namespace {

using kernels::BenchRow;
using kernels::CaseResult;

constexpr uint32_t kPoison = 0x7fc0deadu;  // outputs never written show

// A case's logits [n], top-k, draw parameters and plan options; with
// `recent` [W] the penalties (o.penalty_window W); with `bias_ids` and
// `bias` [B] a bias table (o.bias_slots: its distinct ids).
struct Case {
  std::vector<float> logits;
  uint32_t k = 1;
  Params prm;
  Options o;
  std::vector<uint32_t> recent;  // -1 read as kNoToken
  Penalties pen;
  std::vector<uint32_t> bias_ids;  // distinct, below n
  std::vector<float> bias;
  // The logits the rounds see: after the twin's bias and penalties, if any.
  std::vector<float> penalized() const {
    std::vector<float> v = logits;
    twin::add_bias(v, bias_ids, bias);
    if (!recent.empty()) twin::penalize(v, recent, pen);
    return v;
  }
};

// The penalised logits may differ from the twin's by a GPU's rounding of a
// division and a fused multiply-add (a few ulp): normwise relative.
constexpr double kPenaltyTolerance = 1e-6;

Case make_case(const std::string& name, const contract::json& opt,
               const std::map<std::string, contract::TensorInit>& inputs) {
  const contract::HostTensor l = contract::materialize(inputs.at("logits"), fmt::format("case {}: input logits", name));
  BQ_CHECK(l.shape.size() == 1 && l.numel() > 0, "case {}: logits must be [n_vocab]", name);
  Case c;
  c.logits = l.as<float>();
  const int64_t k = opt.value("top_k", int64_t{1});
  BQ_CHECK(k >= 0 && k <= int64_t{UINT32_MAX}, "sampler: top-k {} on the GPU must lie in 1..{}", k, kMaxTopK);
  c.k = uint32_t(k);
  c.prm = {opt.value("temperature", 0.0f), opt.value("top_p", 1.0f), opt.value("min_p", 0.0f), opt.value("u", 0.5f)};
  c.o.max_chunk = opt.value("chunk", 1024u);
  c.o.max_wg = opt.value("workgroup_size", 512u);
  c.pen = {opt.value("repeat_penalty", 1.0f), opt.value("frequency_penalty", 0.0f),
           opt.value("presence_penalty", 0.0f)};
  if (inputs.count("recent")) {
    const contract::HostTensor r = contract::materialize(inputs.at("recent"), fmt::format("case {}: input recent", name));
    BQ_CHECK(r.shape.size() == 1 && r.numel() > 0, "case {}: recent must be [W], W >= 1", name);
    for (const int32_t id : r.as<int32_t>()) c.recent.push_back(id < 0 ? kNoToken : uint32_t(id));
    c.o.penalty_window = uint32_t(std::min<size_t>(c.recent.size(), UINT32_MAX));
    BQ_CHECK(c.pen.repeat > 0.0f, "case {}: repeat_penalty {} must be positive", name, c.pen.repeat);
  }
  BQ_CHECK(inputs.count("bias_ids") == inputs.count("bias"), "case {}: bias_ids and bias go together", name);
  if (inputs.count("bias_ids")) {
    const contract::HostTensor i =
        contract::materialize(inputs.at("bias_ids"), fmt::format("case {}: input bias_ids", name));
    const contract::HostTensor b = contract::materialize(inputs.at("bias"), fmt::format("case {}: input bias", name));
    BQ_CHECK(i.shape.size() == 1 && i.shape == b.shape, "case {}: bias_ids and bias must be [B] alike", name);
    // A repeated id's biases add up (in order, f32); -1 and ids past the
    // vocabulary are dropped.
    std::map<uint32_t, float> merged;
    const std::vector<int32_t> ids = i.as<int32_t>();
    const std::vector<float> vals = b.as<float>();
    for (size_t j = 0; j < ids.size(); ++j)
      if (ids[j] >= 0 && size_t(ids[j]) < c.logits.size()) merged[uint32_t(ids[j])] += vals[j];
    for (const auto& [id, v] : merged) {
      c.bias_ids.push_back(id);
      c.bias.push_back(v);
    }
    c.o.bias_slots = uint32_t(c.bias_ids.size());
  }
  return c;
}

// The case's bias and window, onto a sampler planned for them.
void set_inputs(const gpu::Context& ctx, const GpuSampler& s, const Case& c) {
  if (!c.bias_ids.empty()) s.set_bias(ctx, c.bias_ids, c.bias);
  if (!c.recent.empty()) {
    s.set_recent(ctx, c.recent);
    s.set_penalties(ctx, c.pen);
  }
}

// The twin's token and ids as numbers: result words [0, k].
std::vector<float> expected(const twin::Pick& w) {
  std::vector<float> e{float(w.token)};
  for (uint32_t id : w.top) e.push_back(float(id));
  return e;
}

CaseResult run(gpu::Context& ctx, const contract::TestCase& tc) {
  return kernels::guarded(tc, [&] {
    const Case c = make_case(tc.name, tc.options, tc.inputs);
    const uint32_t n = uint32_t(c.logits.size());
    const gpu::Buffer lb = ctx.storage<float>(c.logits, "sample.logits");
    const GpuSampler s(ctx, n, c.k, lb, c.o);
    ctx.upload<uint32_t>(s.result(), std::vector<uint32_t>(c.k + 2, kPoison));
    s.set(ctx, c.prm);
    set_inputs(ctx, s, c);
    gpu::Recorder rec(ctx, "sample.case");
    s.record(rec);
    rec.submit();
    const std::vector<uint32_t> w = ctx.download<uint32_t>(s.result());
    const std::vector<float> pl_twin = c.penalized();
    const twin::Pick want = twin::pick(pl_twin, c.k, c.prm);
    const bool edits = !c.recent.empty() || !c.bias_ids.empty();
    const double pen_err = edits ? kernels::max_rel(ctx.download<float>(lb), pl_twin) : 0.0;
    const std::vector<float> got(w.begin(), w.begin() + c.k + 1);
    const float p = std::bit_cast<float>(w[c.k + 1]);
    CaseResult r;
    r.name = tc.name;
    r.max_rel_vs_twin = kernels::max_rel(got, expected(want));
    r.max_rel_vs_ref = w[c.k + 1] == kPoison ? INFINITY : std::abs(double(p) - want.p_ref) / want.p_ref;
    r.tol_twin = tc.tolerance.vs_twin;
    r.tol_ref = tc.tolerance.vs_ref;
    r.pass = r.max_rel_vs_twin <= r.tol_twin && r.max_rel_vs_ref <= r.tol_ref && pen_err <= kPenaltyTolerance;
    const Plan& pl = s.plan();
    r.detail = fmt::format("{} logits, top-{}: token {} (twin {}), p {:.6g}, {} round(s), a pick of {}", n, c.k, w[0],
                           want.token, p, pl.rounds.size(), pl.pick.n);
    if (!c.bias_ids.empty()) r.detail += fmt::format("; a bias on {} ids", c.bias_ids.size());
    if (!c.recent.empty()) r.detail += fmt::format("; penalties over a window of {}", c.recent.size());
    if (edits)
      r.detail += fmt::format(": logits rel err vs twin {:.2g} (at most {:.0e})", pen_err, kPenaltyTolerance);
    if (c.prm.temperature > 0) r.detail += fmt::format("; the draw's margin {:.2g}", want.margin);
    return r;
  });
}

BenchRow bench(gpu::Context& ctx, const contract::BenchCase& bc) {
  const Case c = make_case(bc.name, bc.options, bc.inputs);
  const uint32_t n = uint32_t(c.logits.size());
  const gpu::Buffer lb = ctx.storage<float>(c.logits, "sample.logits");
  const GpuSampler s(ctx, n, c.k, lb, c.o);
  s.set(ctx, c.prm);
  set_inputs(ctx, s, c);
  BenchRow row = kernels::time_body(ctx, bc.samples, [&](gpu::Recorder& r) { s.record(r); });
  row.name = bc.name;
  row.bytes = uint64_t{n} * 4;
  row.gbps = double(row.bytes) / (row.us_median * 1e3);
  const Plan& pl = s.plan();
  row.detail = fmt::format("{} round(s) of chunks of {} (wg {}), a pick of {}", pl.rounds.size(),
                           pl.rounds.empty() ? 0 : pl.rounds[0].tile, pl.rounds.empty() ? pl.pick.wg : pl.rounds[0].wg,
                           pl.pick.n);
  if (pl.penalty.k) row.detail = fmt::format("penalties over {} (wg {}), ", pl.penalty.k, pl.penalty.wg) + row.detail;
  if (pl.bias.k) row.detail = fmt::format("a bias on {} ids, ", pl.bias.k) + row.detail;
  return row;
}

// The dispatches record() makes, with the case's inputs, as a Program.
kernels::Program program(const gpu::Context& ctx, const contract::TestCase& tc) {
  const Case c = make_case(tc.name, tc.options, tc.inputs);
  const uint32_t n = uint32_t(c.logits.size());
  const Plan pl = plan(ctx, n, c.k, c.o);
  kernels::Program prog;
  auto add = [&](std::string name, uint64_t size, const void* init, size_t bytes, uint32_t poison = 0) {
    const auto* p = static_cast<const uint8_t*>(init);
    prog.buffers.push_back({std::move(name), std::max<uint64_t>(4, (size + 3) & ~uint64_t{3}), false,
                            std::vector<uint8_t>(p, p + bytes), poison});
    return uint32_t(prog.buffers.size() - 1);
  };
  const float prm[4] = {c.prm.temperature, c.prm.top_p, c.prm.min_p, c.prm.u};
  const uint32_t bl = add("logits", uint64_t{n} * 4, c.logits.data(), size_t{n} * 4);
  const uint32_t bp = add("params", sizeof(prm), prm, sizeof(prm));
  const uint32_t br = add("result", uint64_t{c.k + 2} * 4, nullptr, 0, kPoison);
  const uint32_t bc[2] = {add("candidates0", candidate_bytes(pl), nullptr, 0, kPoison),
                          add("candidates1", candidate_bytes(pl), nullptr, 0, kPoison)};
  if (pl.bias.k) {
    const uint32_t bi = add("bias_ids", c.bias_ids.size() * 4, c.bias_ids.data(), c.bias_ids.size() * 4);
    const uint32_t bb = add("bias", c.bias.size() * 4, c.bias.data(), c.bias.size() * 4);
    prog.kernels.push_back({pl.bias.key(), wgsl(pl.bias), pl.bias.wg});
    prog.dispatches.push_back(
        {uint32_t(prog.kernels.size() - 1), {bl, bi, bb}, {(pl.bias.k + pl.bias.wg - 1) / pl.bias.wg, 1, 1}});
  }
  if (pl.penalty.k) {
    const float pen[3] = {c.pen.repeat, c.pen.frequency, c.pen.presence};
    const uint32_t bw = add("recent", c.recent.size() * 4, c.recent.data(), c.recent.size() * 4);
    const uint32_t bpen = add("penalties", sizeof(pen), pen, sizeof(pen));
    prog.kernels.push_back({pl.penalty.key(), wgsl(pl.penalty), pl.penalty.wg});
    prog.dispatches.push_back({uint32_t(prog.kernels.size() - 1), {bl, bw, bpen}, {1, 1, 1}});
  }
  uint32_t src = bl;
  for (size_t r = 0; r < pl.rounds.size(); ++r) {
    prog.kernels.push_back({pl.rounds[r].key(), wgsl(pl.rounds[r]), pl.rounds[r].wg});
    prog.dispatches.push_back({uint32_t(prog.kernels.size() - 1), {src, bc[r % 2]}, {pl.groups(r), 1, 1}});
    src = bc[r % 2];
  }
  prog.kernels.push_back({pl.pick.key(), wgsl(pl.pick), pl.pick.wg});
  prog.dispatches.push_back({uint32_t(prog.kernels.size() - 1), {src, bp, br}, {1, 1, 1}});
  kernels::ProgramOutput po;
  po.name = "result";
  po.buffer = br;
  po.dtype = "uint32";
  po.shape = {int64_t{c.k} + 1};  // the token and the ids; the probability is checked natively
  po.expected = expected(twin::pick(c.penalized(), c.k, c.prm));
  po.tolerance = tc.tolerance.vs_twin;
  prog.outputs.push_back(std::move(po));
  return prog;
}

}  // namespace

void register_kernels() {
  kernels::register_kernel({"blockq.Sample", "sample", "kernels/sample/contract/manifest.json",
                            "kernels/sample/contract/test.json", "kernels/sample/contract/bench.json", run, bench,
                            program});
}

}  // namespace blockq::sample
