// matvec::few_tokens_plan(): the plan() choice for 2 to 4 tokens of int8 x
// (plan_few.hpp), with the H200 sweeps behind it.
#include "kernels/matvec/plan_few.hpp"

namespace blockq::matvec {

// A few tokens (int8 x, no prologue, n >= 4096): batch 1's lane shapes
// with every token in each workgroup, not plan()'s batch plans, which
// were tuned for 8 tokens. H200, two processes or passes each (run 6 of
// docs/perf/2026-12-03-session20-h200.md and
// docs/perf/2026-12-03-session21-h200.md), us against the batch plans:
//  - Pairs over long rows (k >= 12288) of Q4_0, Q4_1, Q5_0 and Q5_1:
//    staged x, 1024 invocations, 32 lanes, one row a lane group, 2 units a
//    step. 4096 x 14336: q4_0 20.0 -> 15.1-15.3, q4_1 25.1 -> 16.1, q5_0
//    24.6 -> 17.6, q5_1 33.0 -> 18.4-18.5. Batches of 3 and 4 lost or tied
//    (q4_0 b4 19.4 against 19.7, b3 22.9 against 21.2), 8 lost.
//  - Pairs of Q8_0 over rows of k >= 8192: its batch-1 plan, x
//    pre-quantized (plan.cpp). 4096 x 14336: 21.8-21.9 -> 20.9-21.2.
//  - Rows of 4096 <= k < 8192 (n >= 12288): batch 1's 16 lanes and 2 rows
//    a lane group, invocations and units a step from kFew. 14336 x 4096,
//    batch 2: q4_0 18.4-19.4 -> 13.6, q4_1 20.3 -> 15.0, q5_0 21.8-21.9 ->
//    16.2, q5_1 25.4-25.5 -> 16.7, q8_0 21.2-23.1 -> 19.8-19.9, q4_K 18.6
//    -> 15.5, q5_K 24.9-25.0 -> 20.4; batch 3: q4_0 17.9 -> 14.6-14.7,
//    q4_1 21.8 -> 16.2, q5_0 23.8 -> 18.4, q5_1 24.7-24.8 -> 19.0, q8_0
//    22.7 -> 20.9; batch 4: q4_0 18.2 -> 16.2, q4_1 19.0 -> 17.5, q5_0 22.4
//    -> 19.8-19.9, q5_1 22.8-22.9 -> 21.1, q8_0 24.0 -> 22.1. Q4_K and Q5_K
//    lost or tied at batches 3 and 4 (q4_K b4 20.8-21.1 against 25.6) and
//    Q6_K at 2 (24.6 against 26.8 at best); the K-quants keep their plans
//    over long rows (q4_K b2 16.7 against 17.4 at best).
namespace {

struct Few {
  Format format;
  uint16_t wg[3];     // batch 2, 3, 4 (0: the batch plan)
  uint8_t unroll[3];  // units a step
};
constexpr Few kFew[] = {
    {Format::Q4_0, {512, 1024, 1024}, {1, 2, 1}}, {Format::Q4_1, {512, 1024, 1024}, {2, 2, 1}},
    {Format::Q5_0, {1024, 1024, 1024}, {2, 1, 1}}, {Format::Q5_1, {512, 1024, 1024}, {1, 1, 1}},
    {Format::Q8_0, {512, 1024, 1024}, {1, 1, 1}},  {Format::Q4_K, {512, 0, 0}, {1, 0, 0}},
    {Format::Q5_K, {1024, 0, 0}, {1, 0, 0}}};

}  // namespace

FewPlan few_tokens_plan(const WeightKind& kind, uint32_t n, uint32_t kp, uint32_t m, bool dot4, bool rope,
                        const Hooks& hooks, const Options& opt) {
  FewPlan p;
  const bool legacy32 = kind.format == Format::Q4_0 || kind.format == Format::Q4_1 ||
                        kind.format == Format::Q5_0 || kind.format == Format::Q5_1;
  const bool few_any = m >= 2 && m <= 4 && dot4 && !kind.onnx && n >= 4096 && !rope &&
                       hooks.prologue == Prologue::None && opt.probe.value_or(0) == 0 && !opt.global_x &&
                       !(opt.wg || opt.tpr || opt.rpl || opt.tokens || opt.splits);
  p.pair_long = few_any && m == 2 && legacy32 && kp >= 12288;
  p.pair_gx = few_any && m == 2 && kind.format == Format::Q8_0 && kp >= 8192;
  if (few_any && n >= 12288 && kp >= 4096 && kp < 8192)
    for (const Few& f : kFew)
      if (f.format == kind.format && f.wg[m - 2] != 0) {
        p.short_wg = f.wg[m - 2];
        p.short_unroll = f.unroll[m - 2];
      }
  return p;
}

}  // namespace blockq::matvec
