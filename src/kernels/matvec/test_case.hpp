// The matvec family's parity-test case runner, shared by matvec_test.cpp and
// variants_test.cpp: uploads a random weight, runs the planned kernel on
// random x over a poisoned (or, for Acc, random) y, and returns the max
// relative error against float64 and against the CPU twin.
#pragma once
#include <gtest/gtest.h>

#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "kernels/matvec/op.hpp"
#include "kernels/matvec/test_weights.hpp"
#include "kernels/matvec/twin.hpp"
#include "support/gpu.hpp"
#include "support/random.hpp"
#include "util/error.hpp"

namespace blockq::matvec::test {

struct Case {
  Kind kind;
  Hooks hooks;
  uint32_t n, k, m;
  Options opt;
  uint64_t max_chunk_bytes = 0;
  double twin_ref_tol = 5e-4;  // the twin against float64 (int8 activations: their quantization error)
  bool external_part = false;  // split-k: the partials in a caller's scratch (Args::part), poisoned first
  bool external_xq = false;    // x pre-quantized: its scratch from the caller (Args::xq), poisoned first
};

struct Errors {
  double vs_ref, vs_twin;
};

// y_out, if given, receives the kernel's output.
inline Errors run_case(const Case& c, uint32_t seed, std::vector<float>* y_out = nullptr) {
  auto& ctx = testing_support::test_context();
  OwnedWeight wa = make_weight(c.kind.kind, c.n, c.k, seed);
  fix(wa);
  const bool silu = c.hooks.epilogue == Epilogue::SiluGate;
  OwnedWeight wb;
  if (silu) {
    wb = make_weight(c.kind.kind, c.n, c.k, seed + 7);
    fix(wb);
  }
  KernelSpec spec = plan(ctx, c.kind.kind, c.n, c.k, c.m, c.hooks, c.opt);
  auto x = testing_support::random_normal(size_t{c.m} * c.k, seed + 1, 0.f, 1.f);
  auto nw = testing_support::random_floats(c.k, seed + 2, 0.5f, 1.5f);
  auto bias = testing_support::random_floats(c.n, seed + 3, -1.f, 1.f);
  auto y_in = testing_support::random_floats(size_t{c.m} * c.n, seed + 4, -1.f, 1.f);
  std::vector<uint32_t> pos(c.m);
  for (uint32_t t = 0; t < c.m; ++t) pos[t] = 3 + 2 * t;

  UploadOptions uo;
  uo.max_chunk_bytes = c.max_chunk_bytes;
  if (c.max_chunk_bytes) uo.row_granularity = 8;
  if (c.hooks.epilogue == Epilogue::Rope) uo.row_granularity = std::lcm(uo.row_granularity, c.hooks.head_dim);
  Weights ga = upload(ctx, wa.host, "test.a", uo);
  Weights gb;
  if (silu) gb = upload(ctx, wb.host, "test.b", uo);
  auto xb = ctx.storage<float>(x, "x");
  auto nwb = ctx.storage<float>(nw, "nw");
  auto bb = ctx.storage<float>(bias, "bias");
  auto pb = ctx.storage<uint32_t>(pos, "pos");
  auto yb = ctx.create_buffer(y_in.size() * 4, gpu::kStorage, "y");
  if (c.hooks.epilogue == Epilogue::Acc) {
    ctx.upload<float>(yb, y_in);
  } else {
    std::vector<float> poison(y_in.size());
    testing_support::poison(poison);
    ctx.upload<float>(yb, poison);
  }
  Args args{&ga, silu ? &gb : nullptr, &xb, &yb, &nwb, &bb, &pb};
  gpu::Buffer part;
  if (c.external_part && spec.splits > 1) {
    std::vector<float> junk(split_sum::partial_bytes(spec.splits, spec.hooks, spec.m, spec.n) / 4 + 16);
    testing_support::poison(junk);
    part = ctx.storage<float>(junk, "scratch.partials");
    args.part = &part;
  }
  gpu::Buffer xq;
  if (c.external_xq && x_prequantized(spec)) {
    std::vector<float> junk(xquant::bytes(xquant::plan(spec)) / 4 + 16);
    testing_support::poison(junk);
    xq = ctx.storage<float>(junk, "scratch.xq");
    args.xq = &xq;
  }
  Prepared p = prepare(ctx, spec, args);
  gpu::Recorder rec(ctx);
  p.record(rec);
  rec.submit();
  auto y = ctx.download<float>(yb, 0, y_in.size());
  if (y_out) *y_out = y;
  EXPECT_EQ(testing_support::first_poisoned(y), -1) << spec.key();

  TwinInputs in{&wa.host, silu ? &wb.host : nullptr, x, nw, bias, pos, y_in};
  auto tw = twin(spec, in);
  auto ref = reference(spec, in);
  Errors e{testing_support::max_rel_err(y, ref), testing_support::max_rel_err(y, tw)};
  std::printf("  %-60s vs f64 %.2e  vs twin %.2e  twin vs f64 %.2e\n", spec.key().c_str(), e.vs_ref,
              e.vs_twin, testing_support::max_rel_err(tw, ref));
  EXPECT_LT(testing_support::max_rel_err(tw, ref), c.twin_ref_tol) << "twin vs float64, " << spec.key();
  return e;
}

// The H200's limits as this Dawn reports them (subgroups of 32, the int8 dot
// product, 4 GiB bindings), for tests of the plan's defaults.
inline Limits h200_limits() {
  Limits lim;
  lim.invocations = 1024;
  lim.shared = 49152;
  lim.subgroup_min = lim.subgroup_max = 32;
  lim.dot4 = true;
  lim.binding = 4ull << 30;
  return lim;
}

// The test kind named `name` ("q4_0", ...); throws blockq::Error for none.
inline const Kind& kind_named(const char* name) {
  static const auto kinds = all_kinds();
  for (const auto& kd : kinds)
    if (kd.name == name) return kd;
  throw Error(std::string("no kind ") + name);
}

inline Hooks hook(const std::string& name) {
  Hooks h;
  if (name == "acc") h.epilogue = Epilogue::Acc;
  if (name == "silu") h.epilogue = Epilogue::SiluGate;
  if (name == "rmsnorm") h.prologue = Prologue::RmsNorm;
  if (name == "bias") h.bias = true;
  if (name == "rope" || name == "rope_neox") {
    h.epilogue = Epilogue::Rope;
    h.rope_mode = name == "rope" ? RopeMode::Normal : RopeMode::Neox;
    h.head_dim = 8;
    h.n_rot = 6;  // the last two dims of each head pass through
    h.rope_base = 10000.f;
    h.rope_scale = 0.5f;
  }
  return h;
}

}  // namespace blockq::matvec::test
