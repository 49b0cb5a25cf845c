// A family test's check of its registered contract: every test case run
// natively (under the binary's limits profile) must pass, and each exported
// Program, replayed natively, must give its expected outputs within the
// case's tolerance.
#pragma once
#include <string>

namespace blockq::testing_support {

void expect_contract_passes(const std::string& kernel_id);

}  // namespace blockq::testing_support
