// The int8-activation path of the matvec generator (KernelSpec
// features.dot4): the lane step of matvec.wgsl over int8 x codes.
#pragma once
#include <string>

#include "kernels/common/spec.hpp"
#include "kernels/matvec/layout.hpp"

namespace blockq::matvec::detail {

// The UNIT_LOOP part of matvec.wgsl for features.dot4 (see int8.cpp).
std::string unit_loop_i8(const KernelSpec& s, const UnitInfo& ui);

}  // namespace blockq::matvec::detail
