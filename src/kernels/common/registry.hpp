// The kernel registry: each family registers, per kernel id, its contract
// (embedded manifest, test and bench JSON) and how to run a test case, bench a
// case, and export a case as a Program (final WGSL, buffers with their bytes,
// bindings, dispatches, expected outputs) that web/runner.js replays.
#pragma once
#include <cstdint>
#include <fmt/format.h>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/context.hpp"
#include "gpu/recorder.hpp"
#include "kernels/common/contract.hpp"
#include "util/error.hpp"

namespace blockq::kernels {

// One test case's outcome. Errors are normwise: max |got - ref| / max |ref|.
struct CaseResult {
  std::string name;
  bool pass = false;
  double max_rel_vs_twin = 0, max_rel_vs_ref = 0;
  double tol_twin = 0, tol_ref = 0;
  std::string detail;  // shapes, chunks, or why it failed
};

// One bench row: median time per call, the bytes a call must move, GB/s.
struct BenchRow {
  std::string name;
  double us_median = 0;
  uint64_t bytes = 0;
  double gbps = 0;
  int samples = 0;
  bool gpu_timestamps = false;
  std::string detail;
};

// A replayable run of one case: what `blockq kernels export` writes
// (docs/KERNELS.md) and what a JavaScript WebGPU program executes.
struct ProgramBuffer {
  std::string name;
  uint64_t size = 0;           // bytes, a multiple of 4
  bool uniform = false;        // else storage (read or read_write as the WGSL says)
  std::vector<uint8_t> init;   // initial bytes (size() <= size); empty: `poison` words
  uint32_t poison = 0;         // fill word of a buffer without init (outputs)
};
struct ProgramKernel {
  std::string key;   // KernelSpec key: the file name of its WGSL
  std::string wgsl;  // final WGSL, entry point `main`, bind group 0
  uint32_t workgroup_size = 0;
};
struct ProgramDispatch {
  uint32_t kernel = 0;             // index into kernels
  std::vector<uint32_t> bindings;  // binding i = buffers[bindings[i]], whole buffer
  gpu::Grid grid;
};
struct ProgramOutput {
  std::string name;
  uint32_t buffer = 0;
  std::string dtype;          // "float32", "float16" (two per u32 word, low half first) or "uint32"
  contract::Shape shape;
  std::vector<float> expected;  // the CPU twin's values
  double tolerance = 0;         // normwise relative, against expected
};
struct Program {
  std::vector<ProgramKernel> kernels;
  std::vector<ProgramBuffer> buffers;
  std::vector<ProgramDispatch> dispatches;  // in order, one submit
  std::vector<ProgramOutput> outputs;
};

// Runs a Program natively exactly as web/runner.js does; one vector of floats
// per output.
std::vector<std::vector<float>> run_program(gpu::Context& ctx, const Program& p);

struct KernelEntry {
  std::string id;      // "com.microsoft.GatherBlockQuantized"
  std::string family;  // "gather"
  // Embedded paths (util/embedded_wgsl.hpp json_file), e.g. "kernels/gather/gbq/manifest.json".
  std::string manifest_path, test_path, bench_path;
  std::function<CaseResult(gpu::Context&, const contract::TestCase&)> run_case;
  std::function<BenchRow(gpu::Context&, const contract::BenchCase&)> bench_case;
  std::function<Program(gpu::Context&, const contract::TestCase&)> export_case;
};

// Adds (or replaces, by id) an entry.
void register_kernel(KernelEntry e);
const std::vector<KernelEntry>& registered_kernels();
// Throws blockq::Error listing the registered ids.
const KernelEntry& find_kernel(std::string_view id);

// The parsed, schema-checked contract files of an entry.
contract::Manifest load_manifest(const KernelEntry& e);
contract::TestFile load_tests(const KernelEntry& e);
contract::BenchFile load_bench(const KernelEntry& e);

// max |got - ref| / max(max |ref|, 1e-30); +inf for a NaN or a size mismatch.
double max_rel(std::span<const float> got, std::span<const float> ref);
double max_rel(std::span<const float> got, std::span<const double> ref);
// f16 bits to floats.
std::vector<float> f16_to_floats(std::span<const uint16_t> h);

// Runs `body`; for an expect_error case, passes only on a blockq::Error with that text.
template <class F>
CaseResult guarded(const contract::TestCase& tc, F&& body) {
  if (tc.expect_error.empty()) return body();
  CaseResult r;
  r.name = tc.name;
  try {
    body();
    r.detail = fmt::format("no error; expected one containing \"{}\"", tc.expect_error);
  } catch (const Error& e) {
    r.pass = std::string(e.what()).find(tc.expect_error) != std::string::npos;
    r.detail = fmt::format("error: {}", e.what());
  }
  return r;
}

// Median µs per call of `body` (timestamp queries when the device has them).
BenchRow time_body(gpu::Context& ctx, int samples, const std::function<void(gpu::Recorder&)>& body);

}  // namespace blockq::kernels

// Each family's register function (declared in its register.hpp).
#include "kernels/attention/register.hpp"
#include "kernels/gather/register.hpp"
#include "kernels/matvec/register.hpp"
#include "kernels/sample/register.hpp"

namespace blockq::kernels {

// Registers every family's kernels (idempotent). A new family adds its
// register.hpp include above and one line here. Inline, so that only the
// binaries calling it (the CLI) need every family's library.
inline void register_all_kernels() {
  attention::register_kernels();
  gather::register_kernels();
  matvec::register_kernels();
  sample::register_kernels();
}

}  // namespace blockq::kernels
