// The matvec family's registry entries: contract cases (test.json, bench.json)
// of blockq.QuantizedMatVec and com.microsoft.MatMulNBits run natively against
// the CPU twin and the float64 reference, benched, and exported as Programs.
#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kernels/common/registry.hpp"
#include "kernels/matvec/op.hpp"
#include "kernels/matvec/register.hpp"
#include "kernels/matvec/twin.hpp"
#include "util/error.hpp"

namespace blockq::matvec {
namespace {

using kernels::guarded;

using contract::HostTensor;
using contract::TensorInit;
using kernels::BenchRow;
using kernels::CaseResult;
using Inputs = std::map<std::string, TensorInit>;

constexpr uint32_t kPoison = 0x7fc0deadu;  // a NaN: a value still poisoned was never written

// Owns the bytes a HostWeight points to (never moved once made).
struct OwnedWeight {
  std::vector<uint8_t> ggml;
  OnnxBlockMatrix onnx;
  HostWeight host;
};

// n normal values (mean 0, stddev sd) from splitmix64(seed), Box-Muller.
std::vector<float> normal_values(size_t n, uint64_t seed, double sd) {
  contract::SplitMix64 g{seed};
  std::vector<float> v(n);
  for (size_t i = 0; i < n; i += 2) {
    const double u1 = 1.0 - g.uniform(), u2 = g.uniform();
    const double r = std::sqrt(-2.0 * std::log(u1)) * sd;
    v[i] = float(r * std::cos(2 * M_PI * u2));
    if (i + 1 < n) v[i + 1] = float(r * std::sin(2 * M_PI * u2));
  }
  return v;
}

// A ggml weight [n, k] from a case input: values, or (tests) normal values
// quantized by the reference quantizer, or (bench, fast) random blocks.
std::unique_ptr<OwnedWeight> ggml_weight(const TensorInit& t, bool bench, const std::string& what) {
  auto f = contract::ggml_dtype(t.dtype);
  BQ_CHECK(f && t.shape.size() == 2, "{}: a ggml weight [n, k], got dtype {}", what, t.dtype);
  auto o = std::make_unique<OwnedWeight>();
  const uint64_t n = uint64_t(t.shape[0]), k = uint64_t(t.shape[1]);
  o->host.kind.format = *f;
  o->host.n = uint32_t(n);
  o->host.k = uint32_t(k);
  if (t.values) {
    std::vector<float> v;
    for (const auto& x : *t.values) v.push_back(x.get<float>());
    o->ggml = quantize(*f, v);
  } else if (bench) {
    o->ggml.resize(row_bytes(*f, k) * n);
    const bool q = traits(*f).quantized;
    contract::random_rows(*f, n, k, t.random->seed, q ? 0.001 : -1.0, q ? 0.01 : 1.0, o->ggml);
  } else {
    o->ggml = quantize(*f, normal_values(n * k, t.random->seed, 0.5));
  }
  o->host.ggml = o->ggml;
  return o;
}

std::vector<float> floats(const std::map<std::string, HostTensor>& t, const std::string& k) {
  auto it = t.find(k);
  return it == t.end() ? std::vector<float>{} : it->second.as<float>();
}

// One materialised case of either kernel: the weights, the host inputs, the
// hooks, and the planning / upload choices.
struct Mv {
  std::string name;
  WeightKind kind;
  uint32_t n = 0, k = 0, m = 0;
  Hooks hooks;
  std::unique_ptr<OwnedWeight> a, b;
  std::vector<float> x, norm_w, bias, y_in;
  std::vector<uint32_t> pos;
  Options opt;
  bool subgroups_on = false;  // the case asks for subgroups (else exports use the portable path)
  // int8 activations allowed (qmv activations=int8, MatMulNBits accuracy_level
  // 4 with 4 bits): used where the instance has packed_4x8_integer_dot_product,
  // else the case runs with f32 activations (as subgroups=on without subgroups).
  bool int8_allowed = false;
  UploadOptions uo;
  contract::Shape out_shape;

  TwinInputs twin_inputs() const {
    return {&a->host, b ? &b->host : nullptr, x, norm_w, bias, pos, y_in};
  }
  KernelSpec spec(const gpu::Context& ctx, bool for_export) const {
    Options o = opt;
    if (for_export && !subgroups_on) o.subgroups = false;
    if (int8_allowed && ctx.features().packed_dot4) o.int8 = true;
    o.splits = 1;  // one kernel, as an export runs it (the batch plan would split long rows)
    return plan(ctx, kind, n, k, m, hooks, o);
  }
};

void read_options(Mv& c, const contract::json& o) {
  const std::string sg = o.value("subgroups", std::string("auto"));
  if (sg != "auto") c.opt.subgroups = sg == "on";
  c.subgroups_on = sg == "on";
  auto opt_u32 = [&](const char* key, std::optional<uint32_t>& dst) {
    if (o.contains(key) && o[key].get<int64_t>() > 0) dst = o[key].get<uint32_t>();
  };
  opt_u32("workgroup_size", c.opt.wg);
  opt_u32("tpr", c.opt.tpr);
  opt_u32("unroll", c.opt.unroll);
  opt_u32("rpl", c.opt.rpl);
  opt_u32("max_tile", c.opt.max_tile);
  const std::string act = o.value("activations", std::string("f32"));
  BQ_CHECK(act == "f32" || act == "int8", "case {}: activations '{}' is neither f32 nor int8", c.name, act);
  if (act == "int8") {
    BQ_CHECK(int8_supported(c.kind), "case {}: activations int8 needs an integer ggml format or 4-bit weights, not {}",
             c.name, c.kind.name());
    c.int8_allowed = true;
  }
  const std::string gx = o.value("global_x", std::string("auto"));
  if (gx != "auto") c.opt.global_x = gx == "on";
  const int64_t mcb = o.value("max_chunk_bytes", int64_t{0});
  BQ_CHECK(mcb >= 0, "case {}: max_chunk_bytes {} is negative", c.name, mcb);
  c.uo.max_chunk_bytes = uint64_t(mcb);
  if (mcb) c.uo.row_granularity = 8;
  if (c.hooks.epilogue == Epilogue::Rope) c.uo.row_granularity = std::lcm(c.uo.row_granularity, c.hooks.head_dim);
}

std::map<std::string, HostTensor> materialize_plain(const Inputs& in, const std::string& name,
                                                    std::initializer_list<const char*> skip) {
  std::map<std::string, HostTensor> out;
  for (const auto& [key, t] : in) {
    if (std::find_if(skip.begin(), skip.end(), [&](const char* s) { return key == s; }) != skip.end()) continue;
    out[key] = contract::materialize(t, fmt::format("case {}: input {}", name, key));
  }
  return out;
}

// ---- blockq.QuantizedMatVec

Mv qmv_case(const std::string& name, const contract::json& attrs, const contract::json& options,
            const Inputs& inputs, bool bench) {
  Mv c;
  c.name = name;
  const TensorInit& w = inputs.at("weight");
  const std::string format = attrs.at("format").get<std::string>();
  BQ_CHECK(contract::ggml_dtype(w.dtype) == contract::ggml_dtype(format),
           "case {}: format {} does not match the weight's dtype {}", name, format, w.dtype);
  const std::string pro = attrs.at("prologue").get<std::string>(), epi = attrs.at("epilogue").get<std::string>();
  c.hooks.prologue = pro == "rmsnorm" ? Prologue::RmsNorm : Prologue::None;
  c.hooks.epilogue = epi == "acc" ? Epilogue::Acc
                     : epi == "silu_gate" ? Epilogue::SiluGate
                     : epi == "rope" ? Epilogue::Rope
                                     : Epilogue::Store;
  c.hooks.bias = inputs.count("bias") > 0;
  c.hooks.eps = attrs.at("eps").get<float>();
  c.n = uint32_t(w.shape[0]);
  c.k = uint32_t(w.shape[1]);
  const TensorInit& x = inputs.at("x");
  BQ_CHECK(x.shape.size() == 2 && uint64_t(x.shape[1]) == c.k, "case {}: x [{}] must be [m, {}]", name,
           fmt::join(x.shape, ", "), c.k);
  c.m = uint32_t(x.shape[0]);
  // Each hook input exactly when its hook is on.
  auto hook_input = [&](const char* input, bool on, const char* hook) {
    BQ_CHECK(!on || inputs.count(input), "case {}: {} needs input \"{}\"", name, hook, input);
    BQ_CHECK(on || !inputs.count(input), "case {}: input \"{}\" is only for {}", name, input, hook);
  };
  hook_input("weight_up", c.hooks.epilogue == Epilogue::SiluGate, "epilogue silu_gate");
  hook_input("norm_weight", c.hooks.prologue == Prologue::RmsNorm, "prologue rmsnorm");
  hook_input("pos", c.hooks.epilogue == Epilogue::Rope, "epilogue rope");
  hook_input("y_in", c.hooks.epilogue == Epilogue::Acc, "epilogue acc");
  if (c.hooks.epilogue == Epilogue::Rope) {
    c.hooks.rope_mode = attrs.at("rope_mode").get<std::string>() == "neox" ? RopeMode::Neox : RopeMode::Normal;
    const int64_t hd = attrs.at("head_dim").get<int64_t>(), nr = attrs.at("n_rot").get<int64_t>();
    BQ_CHECK(hd > 0 && hd % 2 == 0 && c.n % hd == 0, "case {}: rope head_dim {} does not divide n = {} (or is odd)",
             name, hd, c.n);
    BQ_CHECK(nr >= 0 && nr % 2 == 0 && nr <= hd, "case {}: rope n_rot {} must be even and <= head_dim {}", name, nr,
             hd);
    c.hooks.head_dim = uint32_t(hd);
    c.hooks.n_rot = nr ? uint32_t(nr) : uint32_t(hd);
    c.hooks.rope_base = attrs.at("rope_base").get<float>();
    c.hooks.rope_scale = attrs.at("rope_scale").get<float>();
  }
  c.kind = WeightKind{};
  c.kind.format = *contract::ggml_dtype(w.dtype);
  c.a = ggml_weight(w, bench, fmt::format("case {}: input weight", name));
  if (c.hooks.epilogue == Epilogue::SiluGate) {
    const TensorInit& u = inputs.at("weight_up");
    BQ_CHECK(u.dtype == w.dtype && u.shape == w.shape, "case {}: weight_up must be {} [{}]", name, w.dtype,
             fmt::join(w.shape, ", "));
    c.b = ggml_weight(u, bench, fmt::format("case {}: input weight_up", name));
  }
  const auto t = materialize_plain(inputs, name, {"weight", "weight_up"});
  c.x = floats(t, "x");
  c.norm_w = floats(t, "norm_weight");
  c.bias = floats(t, "bias");
  c.y_in = floats(t, "y_in");
  BQ_CHECK(c.norm_w.empty() || c.norm_w.size() == c.k, "case {}: norm_weight must be [{}]", name, c.k);
  BQ_CHECK(c.bias.empty() || c.bias.size() == c.n, "case {}: bias must be [{}]", name, c.n);
  BQ_CHECK(c.y_in.empty() || c.y_in.size() == size_t{c.m} * c.n, "case {}: y_in must be [{}, {}]", name, c.m, c.n);
  if (auto it = t.find("pos"); it != t.end()) {
    BQ_CHECK(it->second.numel() == c.m, "case {}: pos must be [{}]", name, c.m);
    for (int32_t p : it->second.as<int32_t>()) {
      BQ_CHECK(p >= 0, "case {}: position {} is negative", name, p);
      c.pos.push_back(uint32_t(p));
    }
  }
  c.out_shape = {int64_t(c.m), int64_t(c.n)};
  read_options(c, options);
  return c;
}

// ---- com.microsoft.MatMulNBits

Mv nbits_case(const std::string& name, const contract::json& attrs, const contract::json& options,
              const Inputs& inputs) {
  Mv c;
  c.name = name;
  const auto t = materialize_plain(inputs, name, {});
  const int64_t K = attrs.at("K").get<int64_t>(), N = attrs.at("N").get<int64_t>();
  const uint32_t bits = attrs.at("bits").get<uint32_t>(), bs = attrs.at("block_size").get<uint32_t>();
  BQ_CHECK(K > 0 && N > 0 && K < (int64_t{1} << 31) && N < (int64_t{1} << 31), "case {}: K = {} and N = {} must be positive",
           name, K, N);
  const HostTensor& A = t.at("A");
  BQ_CHECK(A.shape.back() == K, "case {}: A's last dimension {} does not match K = {}", name, A.shape.back(), K);
  const int64_t nb = (K + bs - 1) / bs, blob = int64_t{bs} * bits / 8;
  const HostTensor& B = t.at("B");
  BQ_CHECK(B.shape == contract::Shape({N, nb, blob}), "case {}: B [{}] must be [N, n_blocks, blob] = [{}, {}, {}]",
           name, fmt::join(B.shape, ", "), N, nb, blob);
  const HostTensor& S = t.at("scales");
  BQ_CHECK(S.numel() == N * nb, "case {}: scales hold {} values, N * n_blocks = {}", name, S.numel(), N * nb);
  c.n = uint32_t(N);
  c.k = uint32_t(K);
  c.m = uint32_t(A.numel() / K);
  c.x = A.as<float>();
  c.kind.onnx = true;
  c.kind.bits = uint8_t(bits);
  c.int8_allowed = attrs.value("accuracy_level", int64_t{0}) == 4 && int8_supported(c.kind);
  c.kind.block_size = bs;
  c.a = std::make_unique<OwnedWeight>();
  OnnxBlockMatrix& mat = c.a->onnx;
  mat.bits = bits;
  mat.block_size = bs;
  mat.rows = uint64_t(N);
  mat.cols = uint64_t(K);
  mat.data = B.bytes;
  mat.scales = S.as<float>();
  if (auto it = t.find("zero_points"); it != t.end()) {
    const int64_t zr = (nb * bits + 7) / 8;
    BQ_CHECK(it->second.numel() == N * zr, "case {}: zero_points hold {} bytes, N * ceil(n_blocks * bits / 8) = {}",
             name, it->second.numel(), N * zr);
    mat.zero_points = it->second.bytes;
    c.kind.zero_points = true;
  }
  c.a->host.kind = c.kind;
  c.a->host.n = c.n;
  c.a->host.k = c.k;
  c.a->host.onnx = &mat;
  c.out_shape.assign(A.shape.begin(), A.shape.end() - 1);
  c.out_shape.push_back(N);
  read_options(c, options);
  return c;
}

// ---- shared run / bench / export

struct Uploaded {
  Weights a, b;
  gpu::Buffer x, norm_w, bias, pos, y;
};

Uploaded upload_case(const gpu::Context& ctx, const Mv& c) {
  Uploaded u;
  u.a = upload(ctx, c.a->host, c.name + ".weight", c.uo);
  if (c.b) u.b = upload(ctx, c.b->host, c.name + ".weight_up", c.uo);
  u.x = ctx.storage<float>(c.x, c.name + ".x");
  if (!c.norm_w.empty()) u.norm_w = ctx.storage<float>(c.norm_w, c.name + ".norm_weight");
  if (!c.bias.empty()) u.bias = ctx.storage<float>(c.bias, c.name + ".bias");
  if (!c.pos.empty()) u.pos = ctx.storage<uint32_t>(c.pos, c.name + ".pos");
  u.y = ctx.create_buffer(uint64_t{c.m} * c.n * 4, gpu::kStorage, c.name + ".y");
  return u;
}

Args args_of(const Mv& c, const Uploaded& u) {
  return {&u.a, c.b ? &u.b : nullptr, &u.x, &u.y, u.norm_w ? &u.norm_w : nullptr, u.bias ? &u.bias : nullptr,
          u.pos ? &u.pos : nullptr};
}

CaseResult run(gpu::Context& ctx, const contract::TestCase& tc, const Mv& c) {
  const KernelSpec spec = c.spec(ctx, false);
  Uploaded u = upload_case(ctx, c);
  if (c.hooks.epilogue == Epilogue::Acc) {
    ctx.upload<float>(u.y, c.y_in);
  } else {
    const std::vector<uint32_t> poison(size_t{c.m} * c.n, kPoison);
    ctx.upload<uint32_t>(u.y, poison);
  }
  const Prepared p = prepare(ctx, spec, args_of(c, u));
  gpu::Recorder rec(ctx, "matvec.case");
  p.record(rec);
  rec.submit();
  const std::vector<float> got = ctx.download<float>(u.y, 0, size_t{c.m} * c.n);
  const TwinInputs in = c.twin_inputs();
  const std::vector<float> tw = twin(spec, in);
  const std::vector<double> ref = reference(spec, in);
  CaseResult r;
  r.name = tc.name;
  r.max_rel_vs_twin = kernels::max_rel(got, tw);
  r.max_rel_vs_ref = kernels::max_rel(got, ref);
  r.tol_twin = tc.tolerance.vs_twin;
  r.tol_ref = tc.tolerance.vs_ref;
  r.pass = r.max_rel_vs_twin <= r.tol_twin && r.max_rel_vs_ref <= r.tol_ref;
  r.detail = fmt::format("{} n={} k={} m={}, wg {} tpr {} rpl {} splits {} tile {} unroll {}{}{}{}, {} chunk(s)",
                         spec.weight.name(), c.n, c.k, c.m, spec.wg, spec.tpr, spec.rpl, spec.splits, spec.tile,
                         spec.unroll, spec.features.subgroups ? ", subgroups" : "",
                         spec.features.dot4 ? ", int8 activations" : "",
                         x_prequantized(spec)        ? " quantized by a kernel of their own"
                         : spec.variant & kGlobalX ? ", x from global memory"
                                                    : "",
                         u.a.chunks.size());
  for (const auto& [key, v] : tc.expected) {
    const double e = kernels::max_rel(got, v);
    if (!(e <= r.tol_ref)) {
      r.pass = false;
      r.detail += fmt::format("; expected {}: max rel {:.3g}", key, e);
    }
  }
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(got[i])) {
      r.pass = false;
      r.detail += fmt::format("; NaN (poison?) at y[{}, {}]", i / c.n, i % c.n);
      break;
    }
  }
  return r;
}

BenchRow bench(gpu::Context& ctx, const std::string& name, int samples, const Mv& c) {
  const KernelSpec spec = c.spec(ctx, false);
  Uploaded u = upload_case(ctx, c);
  if (c.hooks.epilogue == Epilogue::Acc) ctx.upload<float>(u.y, c.y_in);
  const Prepared p = prepare(ctx, spec, args_of(c, u));
  BenchRow row = kernels::time_body(ctx, samples, [&](gpu::Recorder& r) { p.record(r); });
  row.name = name;
  row.bytes = u.a.bytes() + (c.b ? u.b.bytes() : 0) + uint64_t{c.m} * c.k * 4 + uint64_t{c.m} * c.n * 4;
  row.gbps = double(row.bytes) / (row.us_median * 1e3);
  row.detail = fmt::format("{} {}x{} m={}, wg {} tpr {} rpl {} tile {} unroll {}{}{}, {} chunk(s)",
                           spec.weight.name(), c.n, c.k, c.m, spec.wg, spec.tpr, spec.rpl, spec.tile, spec.unroll,
                           spec.features.subgroups ? ", subgroups" : "",
                           spec.features.dot4 ? ", int8 activations" : "", u.a.chunks.size());
  return row;
}

template <class T>
std::vector<uint8_t> bytes_of(const std::vector<T>& v) {
  const auto* p = reinterpret_cast<const uint8_t*>(v.data());
  return std::vector<uint8_t>(p, p + v.size() * sizeof(T));
}

// The case as a Program: one kernel, one dispatch per weight row chunk, the
// buffers bound in bindings(spec) order, y poisoned (acc: y_in).
kernels::Program program(gpu::Context& ctx, const contract::TestCase& tc, const Mv& c) {
  const KernelSpec spec = c.spec(ctx, true);
  kernels::Program prog;
  prog.kernels.push_back({spec.key(), wgsl(spec), spec.wg});
  auto add = [&](std::string name, std::vector<uint8_t> init, uint64_t size, bool uniform = false) {
    prog.buffers.push_back({std::move(name), std::max<uint64_t>(4, (size + 3) & ~uint64_t{3}), uniform,
                            std::move(init), kPoison});
    return uint32_t(prog.buffers.size() - 1);
  };
  auto add_init = [&](std::string name, std::vector<uint8_t> init, bool uniform = false) {
    const uint64_t size = init.size();
    return add(std::move(name), std::move(init), size, uniform);
  };
  uint32_t x = add_init("x", bytes_of(c.x));
  const uint32_t y = add("y", c.hooks.epilogue == Epilogue::Acc ? bytes_of(c.y_in) : std::vector<uint8_t>{},
                         uint64_t{c.m} * c.n * 4);
  const uint32_t nw = c.norm_w.empty() ? 0 : add_init("norm_weight", bytes_of(c.norm_w));
  const uint32_t bias = c.bias.empty() ? 0 : add_init("bias", bytes_of(c.bias));
  const uint32_t pos = c.pos.empty() ? 0 : add_init("pos", bytes_of(c.pos));
  if (x_prequantized(spec)) {
    // The quantize kernel first; the matvec's binding X is its output.
    const KernelSpec qs = xquant::plan(spec);
    prog.kernels.push_back({qs.key(), xquant::wgsl(qs), qs.wg});
    const uint32_t xq = add("xq", {}, xquant::bytes(qs));
    kernels::ProgramDispatch d;
    d.kernel = 1;
    d.bindings = {x, xq};
    if (qs.hooks.prologue == Prologue::RmsNorm) d.bindings.push_back(nw);
    d.grid = xquant::grid(qs);
    prog.dispatches.push_back(std::move(d));
    x = xq;
  }
  // Row chunks exactly as the native upload makes them.
  const Weights chunks = upload(ctx, c.a->host, c.name + ".weight", c.uo);
  const auto roles = bindings(spec);
  for (size_t ci = 0; ci < chunks.chunks.size(); ++ci) {
    const uint32_t row0 = chunks.chunks[ci].row0, rows = chunks.chunks[ci].rows;
    const Packed pa = pack_rows(c.a->host, row0, rows);
    Packed pb;
    if (c.b) pb = pack_rows(c.b->host, row0, rows);
    const std::vector<uint32_t> params = {row0, rows, pa.side_off, 0};
    const uint32_t pr = add_init(fmt::format("params.{}", ci), bytes_of(params), true);
    const uint32_t ma = add_init(fmt::format("main.{}", ci), bytes_of(pa.main));
    const uint32_t sa = pa.side.empty() ? 0 : add_init(fmt::format("side.{}", ci), bytes_of(pa.side));
    const uint32_t mb = c.b ? add_init(fmt::format("up.main.{}", ci), bytes_of(pb.main)) : 0;
    const uint32_t sb = c.b && !pb.side.empty() ? add_init(fmt::format("up.side.{}", ci), bytes_of(pb.side)) : 0;
    kernels::ProgramDispatch d;
    d.kernel = 0;
    for (Role r : roles) {
      switch (r) {
        case Role::Params: d.bindings.push_back(pr); break;
        case Role::X: d.bindings.push_back(x); break;
        case Role::MainA: d.bindings.push_back(ma); break;
        case Role::SideA: d.bindings.push_back(sa); break;
        case Role::MainB: d.bindings.push_back(mb); break;
        case Role::SideB: d.bindings.push_back(sb); break;
        case Role::NormW: d.bindings.push_back(nw); break;
        case Role::Bias: d.bindings.push_back(bias); break;
        case Role::Pos: d.bindings.push_back(pos); break;
        case Role::Y: d.bindings.push_back(y); break;
        case Role::KCache:
        case Role::VCache: fail("matvec {}: the KV store hook is not part of the contract", spec.key());
      }
    }
    d.grid = grid(spec, rows);
    prog.dispatches.push_back(std::move(d));
  }
  kernels::ProgramOutput out;
  out.name = "y";
  out.buffer = y;
  out.dtype = "float32";
  out.shape = c.out_shape;
  out.expected = twin(spec, c.twin_inputs());
  out.tolerance = tc.tolerance.vs_twin;
  prog.outputs.push_back(std::move(out));
  return prog;
}

CaseResult qmv_run(gpu::Context& ctx, const contract::TestCase& tc) {
  return guarded(tc, [&] { return run(ctx, tc, qmv_case(tc.name, tc.attributes, tc.options, tc.inputs, false)); });
}
BenchRow qmv_bench(gpu::Context& ctx, const contract::BenchCase& bc) {
  return bench(ctx, bc.name, bc.samples, qmv_case(bc.name, bc.attributes, bc.options, bc.inputs, true));
}
kernels::Program qmv_export(gpu::Context& ctx, const contract::TestCase& tc) {
  return program(ctx, tc, qmv_case(tc.name, tc.attributes, tc.options, tc.inputs, false));
}

CaseResult nbits_run(gpu::Context& ctx, const contract::TestCase& tc) {
  return guarded(tc, [&] { return run(ctx, tc, nbits_case(tc.name, tc.attributes, tc.options, tc.inputs)); });
}
BenchRow nbits_bench(gpu::Context& ctx, const contract::BenchCase& bc) {
  return bench(ctx, bc.name, bc.samples, nbits_case(bc.name, bc.attributes, bc.options, bc.inputs));
}
kernels::Program nbits_export(gpu::Context& ctx, const contract::TestCase& tc) {
  return program(ctx, tc, nbits_case(tc.name, tc.attributes, tc.options, tc.inputs));
}

}  // namespace

void register_kernels() {
  kernels::register_kernel({"blockq.QuantizedMatVec", "matvec", "kernels/matvec/qmv/manifest.json",
                            "kernels/matvec/qmv/test.json", "kernels/matvec/qmv/bench.json", qmv_run, qmv_bench,
                            qmv_export});
  kernels::register_kernel({"com.microsoft.MatMulNBits", "matvec", "kernels/matvec/nbits/manifest.json",
                            "kernels/matvec/nbits/test.json", "kernels/matvec/nbits/bench.json", nbits_run,
                            nbits_bench, nbits_export});
}

}  // namespace blockq::matvec
