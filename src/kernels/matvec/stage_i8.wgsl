// Staging of one x tile as int8 blocks for the matvec kernel (the STAGE part
// of matvec.wgsl) when spec.features.dot4 is on.
    // Stage x[t, t0 .. t0 + TILE) of the chunk's tokens as int8 blocks of 32
    // (zeros past K and M): one invocation per block reads its 8 vec4s, then
    // stores the codes in xq (two vec4<u32>), the scale amax / 127 in xd and
    // the code sums of the two halves (16 elements each) in xsum.
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
      let inv = qinv(am);
      var w: array<u32, 8>;
      var s0 = 0i;
      var s1 = 0i;
      for (var q = 0u; q < 8u; q++) {
        let c = vec4<i32>(clamp(round(v[q] * inv), vec4<f32>(-127.0), vec4<f32>(127.0)));
        w[q] = pack4xI8(c);
        let cs = (c.x + c.y) + (c.z + c.w);
        if (q < 4u) { s0 += cs; } else { s1 += cs; }
      }
      xq[2u * i] = vec4<u32>(w[0], w[1], w[2], w[3]);
      xq[2u * i + 1u] = vec4<u32>(w[4], w[5], w[6], w[7]);
      xd[i] = am * {{INV127}};
      xsum[2u * i] = s0;
      xsum[2u * i + 1u] = s1;
    }
    workgroupBarrier();
