// The plan's variants around the hooks: the Acc epilogue's old y read before
// the lane loop (kAccEarly) and the RMSNorm scale on the row sums (kRmsLate).
#include "kernels/matvec/plan_hooks.hpp"

#include "kernels/matvec/lane_step.hpp"
#include "util/error.hpp"

namespace blockq::matvec {

void hook_variants(KernelSpec& s, const Options& opt, uint32_t kp, uint32_t probe) {
  // Acc's old y read before the lane loop (kAccEarly): on by default in
  // workgroups of up to 512 invocations. H100, session 46, µs, four passes
  // of one process: q8_0 4096 x 14336 28.2-28.4 -> 26.6-26.7, 2048 x 8192
  // 12.1-12.3 -> 11.4-11.6, 2048 x 2048 5.55-5.59 -> 5.31-5.35; q4_0 2048 x
  // 2048 4.59-4.64 -> 4.51-4.53; q4_K 2048 x 8192 8.51-8.53 -> 8.42-8.49. The
  // 1024-invocation plans lost over long rows (q4_0 4096 x 14336 16.8 ->
  // 18.6, q4_K 17.0 -> 17.9) and tied or gained a little at 4096 x 4096
  // (q4_K 7.70-7.75 -> 7.57-7.59), so they keep the late read.
  const bool ya_ok = s.hooks.epilogue == Epilogue::Acc && s.tokens == 1 && detail::direct_store(s);
  if (opt.acc_early.value_or(ya_ok && probe == 0 && s.wg <= 512)) {
    BQ_CHECK(ya_ok, "matvec {}: the early y read needs Acc, one token a workgroup and the direct row store",
             s.weight.name());
    s.variant |= kAccEarly;
  }
  // The RMSNorm scale on the row sums (kRmsLate): off by default until timed
  // on a GPU. The prologue it takes off the path to the staging cost 0.9 to
  // 2.2 us a call over the same kernel without it (H100, session 46, q4_0
  // and q4_K at batch 1: 3072 x 2048 +0.9, 6144 x 4096 +1.3 to 1.4,
  // 14336 x 4096 +1.4 to 1.5, 4096 x 4096 +2.1 to 2.2).
  const bool rl_ok = s.hooks.prologue == Prologue::RmsNorm && !(s.variant & kGlobalX) && s.tokens == 1 &&
                     s.splits == 1 && s.tile >= kp && probe == 0;
  if (opt.rms_late.value_or(false)) {
    BQ_CHECK(rl_ok, "matvec {}: the late RMSNorm scale needs staged x, one token a workgroup, one tile, no split-k "
             "and no probe", s.weight.name());
    s.variant |= kRmsLate;
  }
}

}  // namespace blockq::matvec
