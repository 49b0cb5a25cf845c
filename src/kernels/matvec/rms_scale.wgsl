// The RMSNorm prologue's scale of token tg, shared by the matvec kernel and
// the x quantize kernel (both declare K, M, WG, EPS, x4 and red: array<f32,
// WG>): 1 / sqrt(mean(x[tg]^2) + eps), the squares summed strided over the
// WG invocations, then added by a tree in red (the twin's order). Every
// invocation gets it; call from uniform control flow (it has barriers).
fn rms_scale(tg: u32, li: u32) -> f32 {
  var ss = 0.0;
  if (tg < M) {
    for (var i = li; i < K; i += WG) { let v = x4[(tg * K + i) / 4u][i % 4u]; ss = ss + v * v; }
  }
  red[li] = ss;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s / 2u) {
    if (li < s) { red[li] = red[li] + red[li + s]; }
    workgroupBarrier();
  }
  let r = 1.0 / sqrt(red[0] / f32(K) + EPS);
  workgroupBarrier();  // red is free again
  return r;
}
