// The plan's variants around the hooks (plan_hooks.cpp has the rules and
// figures; plan() applies them last): the Acc epilogue's early y read
// (kAccEarly) and the RMSNorm scale on the row sums (kRmsLate).
#pragma once

#include <cstdint>

#include "kernels/matvec/generator.hpp"

namespace blockq::matvec {

// Sets or refuses s.variant's kAccEarly and kRmsLate for the spec planned so
// far (its shape, tile, splits and variant bits final). kp: k padded to
// whole units; probe: Options::probe or 0.
void hook_variants(KernelSpec& s, const Options& opt, uint32_t kp, uint32_t probe);

}  // namespace blockq::matvec
