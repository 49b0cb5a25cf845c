// The attention family's registry entry: the contract cases of
// blockq.Attention (contract/*.json) run natively against the twin and the
// float64 reference, benched, and exported as a replayable Program.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "kernels/attention/attention.hpp"
#include "kernels/attention/register.hpp"
#include "kernels/attention/twin.hpp"
#include "kernels/common/registry.hpp"
#include "quant/half.hpp"
#include "util/error.hpp"

namespace blockq::attention {
namespace {

using contract::HostTensor;
using kernels::BenchRow;
using kernels::CaseResult;

constexpr uint32_t kPoison = 0x7fc0deadu;  // a NaN: outputs never written show

// A case's inputs on the host: q, the caches (their bytes as given, their
// values as f32), the positions, and the shape and options they imply.
struct Case {
  Shape s;
  Options o;
  std::vector<float> q, k, v;  // k, v: f16 caches decoded (exactly) to f32
  std::vector<uint8_t> kb, vb;  // the caches' bytes
  std::vector<uint32_t> pos;
  uint32_t visible = 0;  // the most positions a token sees
};

Case make_case(const std::string& name, const contract::json& opt,
               const std::map<std::string, contract::TensorInit>& inputs) {
  auto in = [&](const char* k) { return contract::materialize(inputs.at(k), fmt::format("case {}: input {}", name, k)); };
  const HostTensor q = in("q"), k = in("k_cache"), v = in("v_cache"), pos = in("pos");
  BQ_CHECK(q.shape.size() == 3 && k.shape.size() == 3 && k.shape == v.shape && k.dtype == v.dtype,
           "case {}: q [m, n_head, head_dim] and caches [n_ctx, n_kv_head, head_dim] of one shape and dtype", name);
  BQ_CHECK(k.shape[2] == q.shape[2], "case {}: the caches' head_dim {} is not q's {}", name, k.shape[2], q.shape[2]);
  Case c;
  c.s = {uint32_t(q.shape[1]), uint32_t(k.shape[1]), uint32_t(q.shape[2]), uint32_t(k.shape[0]),
         uint32_t(q.shape[0]), k.dtype == "float16" ? Format::F16 : Format::F32};
  BQ_CHECK(pos.numel() == q.shape[0], "attention: pos has {} entries for {} tokens", pos.numel(), q.shape[0]);
  c.o.max_wg = opt.value("workgroup_size", 256u);
  c.o.chunk = opt.value("chunk", 0u);
  c.o.max_heads = opt.value("max_heads", 8u);
  // The short_* options give one tier in place of the default tiers (short_positions 0: none).
  if (opt.contains("short_positions") || opt.contains("short_workgroup_size") || opt.contains("short_max_heads")) {
    const uint32_t p = opt.value("short_positions", 2048u);
    c.o.tiers.clear();
    if (p)
      c.o.tiers.push_back(
          {.positions = p, .max_wg = opt.value("short_workgroup_size", 128u), .max_heads = opt.value("short_max_heads", 1u)});
  }
  // The prompt kernel: rows_min tokens or more (0: never), its workgroup, keys a tile and chunking.
  c.o.rows.min_rows = opt.value("rows_min", c.o.rows.min_rows);
  c.o.rows.max_wg = opt.value("rows_workgroup_size", c.o.rows.max_wg);
  c.o.rows.rows = opt.value("rows_rows", c.o.rows.rows);
  c.o.rows.keys = opt.value("rows_keys", c.o.rows.keys);
  c.o.rows.min_groups = opt.value("rows_min_groups", c.o.rows.min_groups);
  c.o.rows.min_chunk = opt.value("rows_min_chunk", c.o.rows.min_chunk);
  c.o.rows.min_rows_far = opt.value("rows_min_far", c.o.rows.min_rows_far);
  c.o.rows.far_positions = opt.value("rows_far_positions", c.o.rows.far_positions);
  c.q = q.as<float>();
  c.kb = k.bytes, c.vb = v.bytes;
  auto floats = [&](const HostTensor& t) {
    if (t.dtype == "float32") return t.as<float>();
    return kernels::f16_to_floats(t.as<uint16_t>());
  };
  c.k = floats(k), c.v = floats(v);
  for (int32_t p : pos.as<int32_t>()) {
    c.pos.push_back(uint32_t(p));
    if (p >= 0) c.visible = std::max(c.visible, std::min(uint32_t(p) + 1, c.s.n_ctx));
  }
  return c;
}

uint32_t seen(const Case& c, uint32_t t) { return c.pos[t] == 0xffffffffu ? 0 : std::min(c.pos[t] + 1, c.s.n_ctx); }

// The twin's output for every token, in the plan the step runs.
std::vector<float> twin_out(const gpu::Context& ctx, const Case& c) {
  const KernelSpec sp = plan_for(ctx, c.s, c.o, c.visible);
  const uint32_t nq = c.s.n_head * c.s.head_dim;
  std::vector<float> out(size_t(c.s.m) * nq);
  for (uint32_t t = 0; t < c.s.m; ++t) {
    const auto qt = std::span(c.q).subspan(size_t(t) * nq, nq);
    const auto ot = std::span(out).subspan(size_t(t) * nq, nq);
    const twin::AttentionShape ts{c.s.n_head, c.s.n_kv_head, c.s.head_dim, seen(c, t)};
    if (sp.op == Op::AttentionRows)
      twin::attention_rows(qt, c.k, c.v, ot, ts, {sp.reg_n, rows_lanes(sp), sp.tile_n, dispatched_chunks(sp, c.visible)});
    else
      twin::attention_decode(qt, c.k, c.v, ot, ts, {sp.wg, sp.tile_n, dispatched_chunks(sp, c.visible)});
  }
  return out;
}

std::vector<double> ref_out(const Case& c) {
  const uint32_t nq = c.s.n_head * c.s.head_dim;
  std::vector<double> out(size_t(c.s.m) * nq);
  for (uint32_t t = 0; t < c.s.m; ++t)
    twin::attention_decode_ref(std::span(c.q).subspan(size_t(t) * nq, nq), c.k, c.v,
                               std::span(out).subspan(size_t(t) * nq, nq),
                               {c.s.n_head, c.s.n_kv_head, c.s.head_dim, seen(c, t)});
  return out;
}

// Device buffers of a case and its bound attention.
struct Bound {
  gpu::Buffer q, k, v, pos, out;
  Attention att;
  Bound(const gpu::Context& ctx, const Case& c)
      : q(ctx.storage<float>(c.q, "attention.q")),
        k(ctx.storage<uint8_t>(c.kb, "attention.k")),
        v(ctx.storage<uint8_t>(c.vb, "attention.v")),
        pos(ctx.storage<uint32_t>(c.pos, "attention.pos")),
        out(ctx.create_buffer(c.q.size() * 4, gpu::kStorage, "attention.out")),
        att(ctx, c.s, {&q, &k, &v, &pos, &out}, c.o) {}
};

CaseResult run(gpu::Context& ctx, const contract::TestCase& tc) {
  return kernels::guarded(tc, [&] {
    const Case c = make_case(tc.name, tc.options, tc.inputs);
    Bound b(ctx, c);
    ctx.upload<uint32_t>(b.out, std::vector<uint32_t>(c.q.size(), kPoison));
    gpu::Recorder rec(ctx, "attention.case");
    b.att.record(rec, c.visible);
    rec.submit();
    const std::vector<float> got = ctx.download<float>(b.out);
    const KernelSpec& sp = b.att.spec(c.visible);
    CaseResult r;
    r.name = tc.name;
    r.max_rel_vs_twin = kernels::max_rel(got, twin_out(ctx, c));
    r.max_rel_vs_ref = kernels::max_rel(got, ref_out(c));
    r.tol_twin = tc.tolerance.vs_twin;
    r.tol_ref = tc.tolerance.vs_ref;
    r.pass = r.max_rel_vs_twin <= r.tol_twin && r.max_rel_vs_ref <= r.tol_ref;
    r.detail = fmt::format("{}{} tokens, {} positions seen, {} chunk(s) of {}, wg {}, {} head(s) a workgroup",
                           sp.op == Op::AttentionRows ? "prompt kernel: " : "", c.s.m,
                           c.visible, dispatched_chunks(sp, c.visible), sp.tile_n, sp.wg, sp.tile_m);
    return r;
  });
}

BenchRow bench(gpu::Context& ctx, const contract::BenchCase& bc) {
  const Case c = make_case(bc.name, bc.options, bc.inputs);
  Bound b(ctx, c);
  BenchRow row = kernels::time_body(ctx, bc.samples, [&](gpu::Recorder& r) { b.att.record(r, c.visible); });
  const KernelSpec& sp = b.att.spec(c.visible);
  row.name = bc.name;
  const uint64_t elem = c.s.kv == Format::F16 ? 2 : 4;
  row.bytes = 2 * uint64_t{c.visible} * c.s.n_kv_head * c.s.head_dim * elem + 2 * c.q.size() * 4;
  row.gbps = double(row.bytes) / (row.us_median * 1e3);
  row.detail = fmt::format("{}{} chunk(s) of {}, wg {}, {} head(s) a workgroup",
                           sp.op == Op::AttentionRows ? "prompt kernel: " : "", dispatched_chunks(sp, c.visible),
                           sp.tile_n, sp.wg, sp.tile_m);
  return row;
}

// The dispatches record() makes, with the case's inputs, as a Program.
kernels::Program program(const gpu::Context& ctx, const contract::TestCase& tc) {
  const Case c = make_case(tc.name, tc.options, tc.inputs);
  const KernelSpec sp = plan_for(ctx, c.s, c.o, c.visible);
  const uint32_t z = dispatched_chunks(sp, c.visible);
  kernels::Program prog;
  auto add = [&](std::string name, uint64_t size, const void* init, size_t n, uint32_t poison = 0) {
    const auto* p = static_cast<const uint8_t*>(init);
    prog.buffers.push_back({std::move(name), std::max<uint64_t>(4, (size + 3) & ~uint64_t{3}), false,
                            std::vector<uint8_t>(p, p + n), poison});
    return uint32_t(prog.buffers.size() - 1);
  };
  const uint32_t bq = add("q", c.q.size() * 4, c.q.data(), c.q.size() * 4);
  const uint32_t bk = add("k_cache", c.kb.size(), c.kb.data(), c.kb.size());
  const uint32_t bv = add("v_cache", c.vb.size(), c.vb.data(), c.vb.size());
  const uint32_t bp = add("pos", c.pos.size() * 4, c.pos.data(), c.pos.size() * 4);
  const uint32_t bo = add("output", c.q.size() * 4, nullptr, 0, kPoison);
  const uint32_t bt = add("partials", scratch_bytes(sp), nullptr, 0, kPoison);
  const bool rows = sp.op == Op::AttentionRows;
  prog.kernels.push_back({sp.key(), rows ? rows_wgsl(sp) : wgsl(sp), sp.wg});
  prog.dispatches.push_back({0, {bq, bk, bv, bp, bo, bt}, {sp.n / sp.tile_m, rows ? (sp.m + sp.reg_m - 1) / sp.reg_m : sp.m, z}});
  if (z > 1) {
    const KernelSpec cs = combine_spec(ctx, sp);
    prog.kernels.push_back({cs.key(), combine_wgsl(cs), cs.wg});
    prog.dispatches.push_back({1, {bt, bp, bo}, {cs.n, cs.m, z}});
  }
  kernels::ProgramOutput po;
  po.name = "output";
  po.buffer = bo;
  po.dtype = "float32";
  po.shape = {int64_t(c.s.m), int64_t(c.s.n_head), int64_t(c.s.head_dim)};
  po.expected = twin_out(ctx, c);
  po.tolerance = tc.tolerance.vs_twin;
  prog.outputs.push_back(std::move(po));
  return prog;
}

}  // namespace

void register_kernels() {
  kernels::register_kernel({"blockq.Attention", "attention", "kernels/attention/contract/manifest.json",
                            "kernels/attention/contract/test.json", "kernels/attention/contract/bench.json", run, bench,
                            program});
}

}  // namespace blockq::attention
