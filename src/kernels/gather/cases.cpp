// The gather family's registry entries: contract cases (test.json, bench.json)
// of com.microsoft.GatherBlockQuantized and blockq.Embedding run natively
// against the CPU twins and float64 references, benched, and exported.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kernels/gather/gather.hpp"
#include "kernels/gather/register.hpp"
#include "quant/half.hpp"
#include "util/error.hpp"

namespace blockq::gather {
namespace {

using kernels::guarded;

using contract::HostTensor;
using contract::TensorInit;
using kernels::BenchRow;
using kernels::CaseResult;

Options options_of(const contract::json& o) {
  Options opt;
  if (o.contains("workgroup_size")) opt.workgroup_size = o["workgroup_size"].get<uint32_t>();
  if (o.contains("max_binding_bytes")) opt.max_binding_bytes = o["max_binding_bytes"].get<uint64_t>();
  return opt;
}

std::map<std::string, HostTensor> materialize_all(const std::map<std::string, TensorInit>& in,
                                                  const std::string& name) {
  std::map<std::string, HostTensor> out;
  for (const auto& [k, t] : in) out[k] = contract::materialize(t, fmt::format("case {}: input {}", name, k));
  return out;
}

// ---- GatherBlockQuantized

struct GbqCase {
  std::map<std::string, HostTensor> t;
  std::vector<int32_t> i32;
  std::vector<int64_t> i64;
  std::vector<float> scales;
  twin::GbqSpec spec;
  OutType out = OutType::F32;
  Options opt;
  twin::GbqInputs in() const {
    twin::GbqInputs g;
    const HostTensor& d = t.at("data");
    g.data = d.bytes;
    g.data_shape = d.shape;
    const HostTensor& ix = t.at("indices");
    if (ix.dtype == "int64") g.indices = std::span<const int64_t>(i64);
    else g.indices = std::span<const int32_t>(i32);
    g.indices_shape = ix.shape;
    g.scales = scales;
    g.scales_shape = t.at("scales").shape;
    if (auto it = t.find("zero_points"); it != t.end()) {
      g.zero_points = it->second.bytes;
      g.zero_points_shape = it->second.shape;
    }
    return g;
  }
  IndexType idx_type() const { return t.at("indices").dtype == "int64" ? IndexType::I64 : IndexType::I32; }
};

GbqCase gbq_case(const std::string& name, const contract::json& attrs, const contract::json& options,
                 const std::map<std::string, TensorInit>& inputs) {
  GbqCase c;
  c.t = materialize_all(inputs, name);
  const HostTensor& ix = c.t.at("indices");
  if (ix.dtype == "int64") c.i64 = ix.as<int64_t>();
  else c.i32 = ix.as<int32_t>();
  c.scales = c.t.at("scales").as<float>();
  c.spec.bits = attrs.at("bits").get<uint32_t>();
  c.spec.block_size = attrs.at("block_size").get<uint32_t>();
  c.spec.gather_axis = attrs.at("gather_axis").get<int64_t>();
  c.spec.quantize_axis = attrs.at("quantize_axis").get<int64_t>();
  c.out = options.value("output_dtype", std::string("float32")) == "float16" ? OutType::F16 : OutType::F32;
  c.opt = options_of(options);
  return c;
}

// The twin's output as floats.
std::vector<float> gbq_twin(const GbqCase& c, size_t n) {
  if (c.out == OutType::F16) {
    std::vector<uint16_t> h(n);
    twin::gather_block_quantized_f16(c.in(), c.spec, h);
    return kernels::f16_to_floats(h);
  }
  std::vector<float> f(n);
  twin::gather_block_quantized(c.in(), c.spec, f);
  return f;
}

CaseResult finish(CaseResult r, const std::vector<float>& gpu, const std::vector<float>& tw,
                  const std::vector<double>& ref, const contract::TestCase& tc) {
  r.max_rel_vs_twin = kernels::max_rel(gpu, tw);
  r.max_rel_vs_ref = kernels::max_rel(gpu, ref);
  r.tol_twin = tc.tolerance.vs_twin;
  r.tol_ref = tc.tolerance.vs_ref;
  r.pass = r.max_rel_vs_twin <= r.tol_twin && r.max_rel_vs_ref <= r.tol_ref;
  for (const auto& [k, v] : tc.expected) {
    const double e = kernels::max_rel(gpu, v);
    if (!(e <= r.tol_ref)) {
      r.pass = false;
      r.detail += fmt::format(" expected {}: max rel {:.3g}", k, e);
    }
  }
  if (std::any_of(gpu.begin(), gpu.end(), [](float x) { return std::isnan(x); })) {
    r.pass = false;
    r.detail += " NaN (poison) in the output";
  }
  return r;
}

CaseResult gbq_run(gpu::Context& ctx, const contract::TestCase& tc) {
  return guarded(tc, [&] {
    const GbqCase c = gbq_case(tc.name, tc.attributes, tc.options, tc.inputs);
    const twin::GbqInputs in = c.in();
    const twin::GbqPlan p = twin::gbq_plan(in, c.spec);
    GbqGpu g(ctx, in, c.spec, c.out, c.idx_type(), uint64_t(p.n_indices), c.opt);
    g.set_indices(in.indices, in.indices_shape);  // checks indices before any dispatch
    g.poison();
    gpu::Recorder rec(ctx, "gbq.case");
    g.record(rec);
    rec.submit();
    std::vector<float> got = c.out == OutType::F16 ? kernels::f16_to_floats(g.read_f16()) : g.read_f32();
    std::vector<double> ref(p.out_elems);
    twin::gather_block_quantized_ref(in, c.spec, ref);
    CaseResult r;
    r.name = tc.name;
    r.detail = fmt::format("out {} {}, {} chunk(s), {} dispatch(es)", fmt::join(g.out_shape(), "x"),
                           c.out == OutType::F16 ? "f16" : "f32", g.layout().chunks.size(), g.dispatches());
    return finish(std::move(r), got, gbq_twin(c, p.out_elems), ref, tc);
  });
}

BenchRow gbq_bench(gpu::Context& ctx, const contract::BenchCase& bc) {
  const GbqCase c = gbq_case(bc.name, bc.attributes, bc.options, bc.inputs);
  const twin::GbqInputs in = c.in();
  const twin::GbqPlan p = twin::gbq_plan(in, c.spec);
  GbqGpu g(ctx, in, c.spec, c.out, c.idx_type(), uint64_t(p.n_indices), c.opt);
  g.set_indices(in.indices, in.indices_shape);
  BenchRow row = kernels::time_body(ctx, bc.samples, [&](gpu::Recorder& r) { g.record(r); });
  row.name = bc.name;
  row.bytes = gbq_bytes_moved(g.layout(), c.spec, uint64_t(p.n_indices), c.idx_type(), c.out);
  row.gbps = double(row.bytes) / (row.us_median * 1e3);
  row.detail = fmt::format("{}, wg {}, {} chunk(s)", g.layout().spec.weight.name(), g.layout().spec.wg,
                           g.layout().chunks.size());
  return row;
}

kernels::Program gbq_export(gpu::Context& ctx, const contract::TestCase& tc) {
  const GbqCase c = gbq_case(tc.name, tc.attributes, tc.options, tc.inputs);
  const twin::GbqInputs in = c.in();
  kernels::Program prog = gbq_program(ctx, in, c.spec, c.out, c.opt);
  prog.outputs[0].expected = gbq_twin(c, twin::gbq_plan(in, c.spec).out_elems);
  prog.outputs[0].tolerance = tc.tolerance.vs_twin;
  return prog;
}

// ---- Embedding

struct EmbedCase {
  std::map<std::string, HostTensor> t;
  std::vector<int32_t> ids;
  twin::EmbedSpec spec;
  Options opt;
};

EmbedCase embed_case(const std::string& name, const contract::json& options,
                     const std::map<std::string, TensorInit>& inputs) {
  EmbedCase c;
  c.t = materialize_all(inputs, name);
  const HostTensor& tab = c.t.at("table");
  c.spec.format = *contract::ggml_dtype(tab.dtype);
  BQ_CHECK(tab.shape.size() == 2, "case {}: table must be [n_vocab, n_embd]", name);
  c.spec.n_vocab = uint64_t(tab.shape[0]);
  c.spec.n_embd = uint64_t(tab.shape[1]);
  c.ids = c.t.at("ids").as<int32_t>();
  c.opt = options_of(options);
  return c;
}

contract::Shape embed_out_shape(const EmbedCase& c) {
  contract::Shape s = c.t.at("ids").shape;
  s.push_back(int64_t(c.spec.n_embd));
  return s;
}

CaseResult embed_run(gpu::Context& ctx, const contract::TestCase& tc) {
  return guarded(tc, [&] {
    const EmbedCase c = embed_case(tc.name, tc.options, tc.inputs);
    const std::span<const uint8_t> table = c.t.at("table").bytes;
    EmbedGpu g(ctx, table, c.spec, c.ids.size(), c.opt);
    g.set_ids(c.ids);
    g.poison();
    gpu::Recorder rec(ctx, "embed.case");
    g.record(rec);
    rec.submit();
    const std::vector<float> got = g.read();
    std::vector<float> tw(c.ids.size() * c.spec.n_embd);
    std::vector<double> ref(tw.size());
    twin::embed_rows(table, c.ids, tw, c.spec);
    twin::embed_rows_ref(table, c.ids, ref, c.spec);
    CaseResult r;
    r.name = tc.name;
    r.detail = fmt::format("{} [{}, {}], {} ids, {} chunk(s), {} dispatch(es)", traits(c.spec.format).name,
                           c.spec.n_vocab, c.spec.n_embd, c.ids.size(), g.layout().chunks.size(), g.dispatches());
    return finish(std::move(r), got, tw, ref, tc);
  });
}

BenchRow embed_bench(gpu::Context& ctx, const contract::BenchCase& bc) {
  const EmbedCase c = embed_case(bc.name, bc.options, bc.inputs);
  EmbedGpu g(ctx, c.t.at("table").bytes, c.spec, c.ids.size(), c.opt);
  g.set_ids(c.ids);
  BenchRow row = kernels::time_body(ctx, bc.samples, [&](gpu::Recorder& r) { g.record(r); });
  row.name = bc.name;
  row.bytes = embed_bytes_moved(g.layout(), c.ids.size());
  row.gbps = double(row.bytes) / (row.us_median * 1e3);
  row.detail = fmt::format("{}, wg {}, {} chunk(s)", traits(c.spec.format).name, g.layout().spec.wg,
                           g.layout().chunks.size());
  return row;
}

kernels::Program embed_export(gpu::Context& ctx, const contract::TestCase& tc) {
  const EmbedCase c = embed_case(tc.name, tc.options, tc.inputs);
  const std::span<const uint8_t> table = c.t.at("table").bytes;
  kernels::Program prog = embed_program(ctx, table, c.spec, c.ids, c.opt);
  prog.outputs[0].shape = embed_out_shape(c);
  prog.outputs[0].expected.resize(c.ids.size() * c.spec.n_embd);
  twin::embed_rows(table, c.ids, prog.outputs[0].expected, c.spec);
  prog.outputs[0].tolerance = tc.tolerance.vs_twin;
  return prog;
}

}  // namespace

void register_kernels() {
  kernels::register_kernel({"com.microsoft.GatherBlockQuantized", "gather", "kernels/gather/gbq/manifest.json",
                            "kernels/gather/gbq/test.json", "kernels/gather/gbq/bench.json", gbq_run,
                            gbq_bench, gbq_export});
  kernels::register_kernel({"blockq.Embedding", "gather", "kernels/gather/embedding/manifest.json",
                            "kernels/gather/embedding/test.json", "kernels/gather/embedding/bench.json",
                            embed_run, embed_bench, embed_export});
}

}  // namespace blockq::gather
