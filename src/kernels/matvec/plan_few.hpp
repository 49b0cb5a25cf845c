// The plan for a few tokens (2 to 4) of int8 activations: batch 1's lane
// shapes with every token in each workgroup, where they beat the batch plans
// (plan_few.cpp has the rules and figures; plan() applies them).
#pragma once

#include <cstdint>

#include "kernels/matvec/generator.hpp"

namespace blockq::matvec {

struct FewPlan {
  bool pair_long = false;     // 2 tokens over rows of k >= 12288 (Q4_0, Q4_1, Q5_0, Q5_1): 32 lanes, 1 row
  bool pair_gx = false;       // 2 tokens of Q8_0 over rows of k >= 8192: x pre-quantized
  uint32_t short_wg = 0;      // rows of 4096 <= k < 8192 (n >= 12288): invocations (0: not taken)
  uint32_t short_unroll = 0;  // ... and units a lane step
  bool any() const { return pair_long || pair_gx || short_wg != 0; }
};

// kp: k padded to whole units; dot4: int8 activations; rope: the RoPE epilogue.
FewPlan few_tokens_plan(const WeightKind& kind, uint32_t n, uint32_t kp, uint32_t m, bool dot4, bool rope,
                        const Hooks& hooks, const Options& opt);

}  // namespace blockq::matvec
