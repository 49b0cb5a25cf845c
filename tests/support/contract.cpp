// expect_contract_passes (contract.hpp): gtest failures name the case.
#include "support/contract.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "kernels/common/registry.hpp"
#include "support/gpu.hpp"

namespace blockq::testing_support {

void expect_contract_passes(const std::string& kernel_id) {
  gpu::Context& ctx = test_context();
  const auto& e = kernels::find_kernel(kernel_id);
  (void)kernels::load_bench(e);  // schema-checked too
  for (const auto& tc : kernels::load_tests(e).cases) {
    const auto r = e.run_case(ctx, tc);
    fmt::print("{} {}: vs twin {:.3g} (tol {:.3g}), vs f64 {:.3g} (tol {:.3g}) {}\n", r.pass ? "PASS" : "FAIL", r.name,
               r.max_rel_vs_twin, r.tol_twin, r.max_rel_vs_ref, r.tol_ref, r.detail);
    EXPECT_TRUE(r.pass) << r.name << ": " << r.detail;
    if (!tc.expect_error.empty()) continue;
    const kernels::Program p = e.export_case(ctx, tc);
    const auto outs = kernels::run_program(ctx, p);
    ASSERT_EQ(outs.size(), p.outputs.size()) << tc.name;
    for (size_t i = 0; i < outs.size(); ++i)
      EXPECT_LE(kernels::max_rel(outs[i], p.outputs[i].expected), p.outputs[i].tolerance)
          << tc.name << " replayed, output " << p.outputs[i].name;
  }
}

}  // namespace blockq::testing_support
