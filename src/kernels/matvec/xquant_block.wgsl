// The x quantize kernel's body (xquant.wgsl) with one invocation a block b
// of token t: the portable form, and the form with the RMSNorm prologue,
// whose scale each workgroup reduces in the matvec's WG (rms_scale.wgsl), so
// the twin's order holds.
{{PROLOGUE}}
  let b = wid.x * WG + li;
  if (b < TBK) {
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
