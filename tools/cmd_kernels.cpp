// `blockq kernels list|test|bench|export`: the registered kernels' contracts,
// their test cases run natively, their bench cases against the measured read
// bandwidth, and exports of final WGSL + bindings + data for web/runner.js.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "kernels/common/bandwidth.hpp"
#include "kernels/common/registry.hpp"
#include "tools/context.hpp"
#include "util/embedded_wgsl.hpp"
#include "util/error.hpp"

namespace blockq::tools {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::vector<const kernels::KernelEntry*> selected(const std::string& id) {
  kernels::register_all_kernels();
  std::vector<const kernels::KernelEntry*> v;
  if (id.empty() || id == "all") {
    for (const auto& e : kernels::registered_kernels()) v.push_back(&e);
  } else {
    v.push_back(&kernels::find_kernel(id));
  }
  return v;
}

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  BQ_CHECK(f, "cannot read {}", path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void write_file(const fs::path& p, const void* data, size_t n) {
  fs::create_directories(p.parent_path());
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  BQ_CHECK(f, "cannot write {}", p.string());
  f.write(static_cast<const char*>(data), std::streamsize(n));
  BQ_CHECK(f.good(), "write to {} failed", p.string());
}

void write_text(const fs::path& p, const std::string& s) { write_file(p, s.data(), s.size()); }

bool has_tag(const std::vector<std::string>& tags, const char* t) {
  return std::find(tags.begin(), tags.end(), t) != tags.end();
}

// ---- list

void run_list() {
  for (const auto* e : selected("")) {
    const auto m = kernels::load_manifest(*e);
    const auto t = kernels::load_tests(*e);
    const auto b = kernels::load_bench(*e);
    fmt::print("{:<38} v{:<7} {:<8} {:>3} test case(s) {:>3} bench case(s)\n  {}\n", m.id, m.version, e->family,
               t.cases.size(), b.cases.size(), m.summary);
  }
}

// ---- test

int run_test(gpu::Context& ctx, const std::string& id, const std::string& cases_file, bool skip_large) {
  std::vector<std::pair<const kernels::KernelEntry*, contract::TestFile>> work;
  if (!cases_file.empty()) {
    const std::string text = read_text(cases_file);
    std::string kid = id;
    if (kid.empty()) {
      try {
        kid = json::parse(text).at("kernel").get<std::string>();
      } catch (const std::exception& e) {
        throw Error(fmt::format("{}: no \"kernel\" to pick the kernel by ({})", cases_file, e.what()));
      }
    }
    kernels::register_all_kernels();
    const auto& e = kernels::find_kernel(kid);
    work.emplace_back(&e, contract::parse_tests(text, cases_file, kernels::load_manifest(e)));
  } else {
    for (const auto* e : selected(id)) work.emplace_back(e, kernels::load_tests(*e));
  }
  int pass = 0, fail = 0;
  for (const auto& [e, file] : work)
    for (const auto& tc : file.cases) {
      if (skip_large && has_tag(tc.tags, "large")) continue;
      kernels::CaseResult r;
      try {
        r = e->run_case(ctx, tc);
      } catch (const Error& err) {
        r.name = tc.name;
        r.detail = fmt::format("error: {}", err.what());
      }
      (r.pass ? pass : fail)++;
      fmt::print("{} {}/{}  max rel vs twin {:.3g} (tol {:.3g})  vs f64 {:.3g} (tol {:.3g})  {}\n",
                 r.pass ? "PASS" : "FAIL", e->id, r.name, r.max_rel_vs_twin, r.tol_twin, r.max_rel_vs_ref,
                 r.tol_ref, r.detail);
    }
  fmt::print("{} passed, {} failed\n", pass, fail);
  return fail ? 1 : 0;
}

// ---- bench

int run_bench(gpu::Context& ctx, const std::string& id, bool as_json, bool tune, const std::string& only,
              uint64_t bw_bytes) {
  const auto entries = selected(id);
  if (!bw_bytes) bw_bytes = ctx.adapter().type == WGPUAdapterType_CPU ? (uint64_t{32} << 20) : (uint64_t{1} << 30);
  const Bandwidth bw = measure_read_bandwidth(ctx, bw_bytes);
  json rows = json::array();
  if (!as_json)
    fmt::print("adapter {} ({}), read bandwidth {:.1f} GB/s ({} MB, {} samples, {})\n", ctx.adapter().name(),
               ctx.low_end() ? "low-end" : "adapter", bw.gbps, bw.bytes >> 20, bw.samples,
               bw.gpu_timestamps ? "timestamps" : "wall clock");
  if (!as_json)
    fmt::print("{:<40} {:<36} {:>10} {:>12} {:>9} {:>7}  {}\n", "kernel", "case", "us/call", "bytes", "GB/s",
               "of bw", "detail");
  for (const auto* e : entries) {
    const auto file = kernels::load_bench(*e);
    for (const auto& bc : file.cases) {
      if (!only.empty() && bc.name != only) continue;
      std::vector<contract::BenchCase> variants = {bc};
      if (tune)
        for (const auto& [opt, vals] : file.tuning.items())
          for (const auto& v : vals) {
            contract::BenchCase c = bc;
            c.options[opt] = v;
            c.name = fmt::format("{}[{}={}]", bc.name, opt, v.dump());
            variants.push_back(std::move(c));
          }
      for (const auto& c : variants) {
        const kernels::BenchRow r = e->bench_case(ctx, c);
        const double ratio = bw.gbps > 0 ? r.gbps / bw.gbps : 0;
        rows.push_back({{"kernel", e->id}, {"case", r.name}, {"us_median", r.us_median}, {"bytes", r.bytes},
                        {"gbps", r.gbps}, {"ratio_to_read_bw", ratio}, {"samples", r.samples},
                        {"gpu_timestamps", r.gpu_timestamps}, {"detail", r.detail}});
        if (!as_json)
          fmt::print("{:<40} {:<36} {:>10.2f} {:>12} {:>9.2f} {:>6.1f}%  {}\n", e->id, r.name, r.us_median, r.bytes,
                     r.gbps, 100 * ratio, r.detail);
      }
    }
  }
  if (as_json) {
    json j = {{"adapter", ctx.adapter().name()},
              {"backend", std::string(gpu::backend_name(ctx.adapter().backend))},
              {"profile", ctx.low_end() ? "low-end" : "adapter"},
              {"read_bandwidth", {{"gbps", bw.gbps}, {"bytes", bw.bytes}, {"samples", bw.samples},
                                  {"gpu_timestamps", bw.gpu_timestamps}}},
              {"rows", rows}};
    fmt::print("{}\n", j.dump(2));
  }
  return 0;
}

// ---- export (folder format: docs/KERNELS.md)

std::string safe_name(const std::string& s) {
  std::string o = s;
  for (char& c : o)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
  return o;
}

int export_kernel(gpu::Context& ctx, const kernels::KernelEntry& e, const fs::path& root,
                  const std::string& only) {
  const auto manifest = kernels::load_manifest(e);
  const auto tests = kernels::load_tests(e);
  const fs::path dir = root / safe_name(e.id);
  fs::remove_all(dir);
  fs::create_directories(dir);
  write_text(dir / "manifest.json", std::string(json_file(e.manifest_path)));
  json cases = json::array(), src_cases = json::array();
  const json test_json = json::parse(json_file(e.test_path));
  int failures = 0;
  for (const auto& tc : tests.cases) {
    if (!only.empty() && tc.name != only) continue;
    if (!tc.expect_error.empty() || (only.empty() && has_tag(tc.tags, "large"))) continue;
    const kernels::Program p = e.export_case(ctx, tc);
    const auto native = kernels::run_program(ctx, p);
    const std::string cdir = "cases/" + safe_name(tc.name) + "/";
    json c = {{"name", tc.name}};
    json ks = json::array(), bs = json::array(), ds = json::array(), os = json::array();
    for (const auto& k : p.kernels) {
      const std::string path = "shaders/" + safe_name(k.key) + ".wgsl";
      write_text(dir / path, k.wgsl);
      ks.push_back({{"key", k.key}, {"wgsl", path}, {"entry_point", "main"}, {"workgroup_size", k.workgroup_size}});
    }
    for (const auto& b : p.buffers) {
      json jb = {{"name", b.name}, {"size", b.size}, {"usage", b.uniform ? "uniform" : "storage"}};
      if (!b.init.empty()) {
        const std::string path = cdir + safe_name(b.name) + ".bin";
        write_file(dir / path, b.init.data(), b.init.size());
        jb["init"] = path;
      } else {
        jb["init"] = nullptr;
        jb["poison"] = b.poison;
      }
      bs.push_back(jb);
    }
    for (const auto& d : p.dispatches)
      ds.push_back({{"kernel", d.kernel}, {"bindings", d.bindings}, {"grid", {d.grid.x, d.grid.y, d.grid.z}}});
    bool ok = true;
    double worst = 0;
    for (size_t i = 0; i < p.outputs.size(); ++i) {
      const auto& o = p.outputs[i];
      const std::string ep = cdir + safe_name(o.name) + ".expected.bin", np = cdir + safe_name(o.name) + ".native.bin";
      write_file(dir / ep, o.expected.data(), o.expected.size() * 4);
      write_file(dir / np, native[i].data(), native[i].size() * 4);
      const double err = kernels::max_rel(native[i], o.expected);
      worst = std::max(worst, err);
      ok = ok && err <= o.tolerance;
      os.push_back({{"name", o.name}, {"buffer", o.buffer}, {"dtype", o.dtype}, {"shape", o.shape},
                    {"count", o.expected.size()}, {"expected", ep}, {"native", np}, {"tolerance", o.tolerance}});
    }
    c["kernels"] = ks;
    c["buffers"] = bs;
    c["dispatches"] = ds;
    c["outputs"] = os;
    cases.push_back(c);
    for (const auto& sc : test_json.at("cases"))
      if (sc.at("name") == tc.name) src_cases.push_back(sc);
    failures += !ok;
    fmt::print("{} export {}/{}: native max rel vs expected {:.3g}, {} dispatch(es)\n", ok ? "PASS" : "FAIL", e.id,
               tc.name, worst, p.dispatches.size());
  }
  BQ_CHECK(!cases.empty(), "export {}: no case{}", e.id, only.empty() ? "" : " named " + only);
  write_text(dir / "tests.json", json({{"kernel", e.id}, {"cases", src_cases}}).dump(1) + "\n");
  const json exp = {{"format", "blockq-kernel-export"},
                    {"format_version", 1},
                    {"kernel", e.id},
                    {"version", manifest.version},
                    {"exported_on", {{"adapter", ctx.adapter().name()},
                                     {"backend", std::string(gpu::backend_name(ctx.adapter().backend))},
                                     {"profile", ctx.low_end() ? "low-end" : "adapter"}}},
                    {"cases", cases}};
  write_text(dir / "export.json", exp.dump(1) + "\n");
  // index.json at the root lists every exported kernel folder.
  json index = {{"format", "blockq-kernel-export"}, {"kernels", json::array()}};
  if (fs::exists(root / "index.json")) {
    try {
      index = json::parse(read_text((root / "index.json").string()));
    } catch (const std::exception&) {
    }
  }
  auto& list = index["kernels"];
  if (std::find(list.begin(), list.end(), safe_name(e.id)) == list.end()) list.push_back(safe_name(e.id));
  write_text(root / "index.json", index.dump(1) + "\n");
  return failures;
}

void add_kernels(CLI::App& app, GlobalOptions& g) {
  auto* cmd = app.add_subcommand("kernels", "Kernel contracts: list, test, bench, export");
  cmd->require_subcommand(1);
  static std::string id, cases_file, out_dir, only;
  static bool as_json = false, tune = false, skip_large = false;
  static uint64_t bw_bytes = 0;

  cmd->add_subcommand("list", "List the registered kernels")->callback([] { run_list(); });

  auto* test = cmd->add_subcommand("test", "Run a kernel's test cases natively (PASS/FAIL per case)");
  test->add_option("id", id, "Kernel id (default: every kernel)");
  test->add_option("--cases", cases_file, "Run the cases of FILE (test.json schema) instead");
  test->add_flag("--skip-large", skip_large, "Leave out cases tagged \"large\"");
  test->callback([&g] {
    auto ctx = make_context(g);
    set_exit_code(run_test(ctx, id, cases_file, skip_large));
  });

  auto* bench = cmd->add_subcommand("bench", "Time a kernel's bench cases against the read bandwidth");
  bench->add_option("id", id, "Kernel id (default: every kernel)");
  bench->add_flag("--json", as_json, "Print one JSON object");
  bench->add_flag("--tune", tune, "Also run each case with every value of bench.json's tuning options");
  bench->add_option("--case", only, "Only the case NAME");
  bench->add_option("--bandwidth-bytes", bw_bytes, "Bytes the read-bandwidth kernel streams (default: 1 GiB, "
                                                    "32 MiB on a CPU adapter; clamped to the limits)");
  bench->callback([&g] {
    auto ctx = make_context(g);
    set_exit_code(run_bench(ctx, id, as_json, tune, only, bw_bytes));
  });

  auto* exp = cmd->add_subcommand("export", "Write a kernel's final WGSL, bindings and test data for the browser");
  exp->add_option("id", id, "Kernel id, or 'all'")->required();
  exp->add_option("--out", out_dir, "Output folder (one subfolder per kernel)")->required();
  exp->add_option("--case", only, "Only the case NAME");
  exp->callback([&g] {
    auto ctx = make_context(g);
    int failures = 0;
    for (const auto* e : selected(id)) failures += export_kernel(ctx, *e, out_dir, only);
    set_exit_code(failures ? 1 : 0);
  });
}

}  // namespace
BQ_REGISTER_COMMAND(add_kernels);
}  // namespace blockq::tools
