// The GPU context shared by a test binary: created once, honouring
// BLOCKQ_ADAPTER and BLOCKQ_LIMITS, so CI can run every GPU test both on the
// adapter's limits and under the low-end profile.
#pragma once
#include "gpu/context.hpp"

namespace blockq::testing_support {

gpu::Context& test_context();

}  // namespace blockq::testing_support
