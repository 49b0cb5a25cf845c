// One invocation quantizes block b of token t alone (the x quantize kernel's
// portable body, xquant_block.wgsl, and the fallback of its quad body): the
// codes of x[t, 32b .. 32b + 31] (zeros past K and M) at xq[t * KP / 16 + 2b]
// and + 1, the meta vec4 at xq[META + t * TBK + b]. ns is the RMSNorm scale
// of token t where the prologue is on.
fn quant_one(t: u32, b: u32, ns: f32) {
  var v: array<vec4<f32>, 8>;
  var am = 0.0;
  for (var q = 0u; q < 8u; q++) {
    let e = 32u * b + 4u * q;
    v[q] = vec4<f32>(0.0);
    if (t < M && e < K) {
      v[q] = x4[(t * K + e) / 4u];
{{HOOK}}
    }
    let a = abs(v[q]);
    am = max(am, max(max(a.x, a.y), max(a.z, a.w)));
  }
  let qb = quant_block(v, am);
  xq[t * (KP / 16u) + 2u * b] = vec4<u32>(qb.w[0], qb.w[1], qb.w[2], qb.w[3]);
  xq[t * (KP / 16u) + 2u * b + 1u] = vec4<u32>(qb.w[4], qb.w[5], qb.w[6], qb.w[7]);
  xq[META + t * TBK + b] = vec4<u32>(bitcast<u32>(am * {{INV127}}), bitcast<u32>(qb.s0), bitcast<u32>(qb.s1), 0u);
}
