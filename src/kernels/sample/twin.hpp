// The GPU sampler's CPU twin: the logit bias as bias.wgsl; the penalties,
// each distinct id of the window once with its count, as penalty.wgsl;
// the same top-K selection (exact: rank order is total, so the chunked
// rounds give the K best in rank order) and the same f32 pick in the same
// order as pick.wgsl; plus a float64 reference of the picked token's
// probability, and how close the pick came to a boundary.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/sample/sample.hpp"

namespace blockq::sample::twin {

struct Pick {
  uint32_t token = 0;
  std::vector<uint32_t> top;  // [K] ids in rank order
  float p = 1;                // the token's probability among the kept candidates (f32, as the kernel)
  double p_ref = 1;           // the same in float64 (softmax over the kept candidates' logits / t)
  // The smallest gap, relative to 1, between a compared sum and its
  // threshold (top-p's cumulative sums against p, the draw's against u) or a
  // logit and min-p's cut, over the comparisons the pick made: a GPU whose
  // exp rounds differently may decide otherwise only within such a gap.
  double margin = 1e30;
};

// logits [n]; top_k in 1..min(kMaxTopK, n).
Pick pick(std::span<const float> logits, uint32_t top_k, const Params& p);

// penalty.wgsl on logits [n] in place, for the window recent [W] (ids >= n
// skipped): each distinct id once, by its first slot, with its count. Ids
// and counts are exact; the logits may differ from a GPU's by the rounding
// of its division (WGSL allows 2.5 ulp) and of a fused multiply-add.
void penalize(std::span<float> logits, std::span<const uint32_t> recent, const Penalties& p);

// bias.wgsl on logits [n] in place: logits[ids[i]] += bias[i] in f32 (ids
// distinct; ids >= n skipped). Bit for bit the GPU's.
void add_bias(std::span<float> logits, std::span<const uint32_t> ids, std::span<const float> bias);

}  // namespace blockq::sample::twin
