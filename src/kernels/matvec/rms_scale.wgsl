// The RMSNorm prologue's scale of token tg, shared by the matvec kernel and
// the x quantize kernel (both declare K, M, WG, EPS, x4 and red: array<f32,
// WG>): 1 / sqrt(mean(x[tg]^2) + eps). Invocation i sums the squares of the
// vec4s i, i + WG, ... of x[tg] (a vec4's as (x^2 + y^2) + (z^2 + w^2));
// then invocation j < RL = min(WG, 32) adds partials j * WG / RL ... in
// order, and every invocation adds those RL sums in order (twin:
// rms_sum_squares). Each invocation loads at most a few vec4s at once and
// the sum takes two barriers, where a tree took log2(WG) + 2. rms_scale
// runs the three steps with a barrier after each of the first two; the
// matvec kernel's late scale (kRmsLate) runs them apart, with its staging's
// and lane loop's barriers between them.
const RL: u32 = min(WG, 32u);
var<workgroup> rms_part: array<f32, RL>;
// Step 1: this invocation's partial, into red[li].
fn rms_partial(tg: u32, li: u32) {
  var ss = 0.0;
  if (tg < M) {
    for (var i = li; i < K / 4u; i += WG) {
      let q = x4[tg * (K / 4u) + i];
      let s = q * q;
      ss = ss + ((s.x + s.y) + (s.z + s.w));
    }
  }
  red[li] = ss;
}
// Step 2 (invocations li < RL, after a barrier): WG / RL partials in order.
fn rms_fold(li: u32) {
  var a = 0.0;
  for (var i = 0u; i < WG / RL; i++) { a = a + red[li * (WG / RL) + i]; }
  rms_part[li] = a;
}
// Step 3 (every invocation, after a barrier): the RL sums in order, the scale.
fn rms_total() -> f32 {
  var tot = 0.0;
  for (var j = 0u; j < RL; j++) { tot = tot + rms_part[j]; }
  return 1.0 / sqrt(tot / f32(K) + EPS);
}
// Every invocation gets it; call from uniform control flow. A second call
// may follow at once: its first barrier orders its writes after these reads.
fn rms_scale(tg: u32, li: u32) -> f32 {
  rms_partial(tg, li);
  workgroupBarrier();
  if (li < RL) { rms_fold(li); }
  workgroupBarrier();
  return rms_total();
}
