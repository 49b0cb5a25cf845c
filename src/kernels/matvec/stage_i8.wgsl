// Staging of one x tile as int8 blocks for the matvec kernel (the STAGE part
// of matvec.wgsl) when spec.features.dot4 is on.
    // Stage x[t, t0 .. t0 + TILE) of the chunk's tokens as int8 blocks of 32
    // (zeros past K and M): one invocation per block reads its 8 vec4s, then
    // stores the codes (two vec4<u32>) and the meta vec4 (the scale amax / 127,
    // the code sums of the two halves of 16) in xblk[i].
    for (var i = li; i < TOKENS * TB; i += WG) {
      let t = i / TB;
      let e0 = t0 + (i % TB) * 32u;
      let tg = z * TOKENS + t;
      var v: array<vec4<f32>, 8>;
      var am = 0.0;
      for (var q = 0u; q < 8u; q++) {
        let e = e0 + 4u * q;
        v[q] = vec4<f32>(0.0);
        if (tg < M && e < K) {
          v[q] = x4[(tg * K + e) / 4u];
{{STAGE_HOOK}}
        }
        let a = abs(v[q]);
        am = max(am, max(max(a.x, a.y), max(a.z, a.w)));
      }
      let qb = quant_block(v, am);
      xblk[i][0u] = vec4<u32>(qb.w[0], qb.w[1], qb.w[2], qb.w[3]);
      xblk[i][1u] = vec4<u32>(qb.w[4], qb.w[5], qb.w[6], qb.w[7]);
      xblk[i][2u] = vec4<u32>(bitcast<u32>(am * {{INV127}}), bitcast<u32>(qb.s0), bitcast<u32>(qb.s1), 0u);
    }
    workgroupBarrier();
