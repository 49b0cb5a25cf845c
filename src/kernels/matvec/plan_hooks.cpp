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
  // The RMSNorm scale on the row sums (kRmsLate): on by default wherever it
  // applies, but for Q4_0 with SiLU-gate over rows of k < 4096. The
  // prologue it takes off the path to the staging cost 0.9 to 2.2 us a call
  // over the same kernel without it (H100, session 46, q4_0 and q4_K at
  // batch 1). H100, session 47, with the RMSNorm prologue at batch 1, one
  // process, the two orders once each, us: rope 3072 x 2048 q4_0 6.00-6.01
  // -> 5.76-5.80, q8_0 7.00-7.05 -> 6.98-6.99, q4_K 6.17-6.28 -> 6.17;
  // rope 6144 x 4096 q4_0 10.20-10.22 -> 10.02-10.04, q4_K 10.84-10.86 ->
  // 10.61-10.65, q8_0 14.45-14.47 -> 14.28-14.37; SiLU-gate 8192 x 2048 q4_K
  // 9.01-9.03 -> 8.80-8.81, q8_0 12.01-12.05 -> 11.43-11.50; SiLU-gate
  // 14336 x 4096 q4_0 29.00-29.01 -> 28.77-28.78, q4_K 29.76-29.77 ->
  // 29.29-29.30, q8_0 50.62-50.70 -> 49.39-49.43. q4_0 SiLU-gate 8192 x 2048
  // lost (8.45-8.51 -> 8.85-8.89) and keeps the prologue first.
  // llama-3.2-1b, GPU time a token, two runs each: q4_0 0.686-0.692 ->
  // 0.677-0.678 ms, q4_K 0.712-0.714 -> 0.707-0.709.
  const bool rl_ok = s.hooks.prologue == Prologue::RmsNorm && !(s.variant & kGlobalX) && s.tokens == 1 &&
                     s.splits == 1 && s.tile >= kp && probe == 0;
  const bool rl_lost = s.weight.format == Format::Q4_0 && !s.weight.onnx && s.hooks.epilogue == Epilogue::SiluGate &&
                       kp < 4096;
  if (opt.rms_late.value_or(rl_ok && !rl_lost)) {
    BQ_CHECK(rl_ok, "matvec {}: the late RMSNorm scale needs staged x, one token a workgroup, one tile, no split-k "
             "and no probe", s.weight.name());
    s.variant |= kRmsLate;
  }
}

}  // namespace blockq::matvec
