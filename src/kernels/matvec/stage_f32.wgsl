// Staging of one x tile in f32 for the matvec kernel (the STAGE part of
// matvec.wgsl): token-major, one padding vec4 after each unit (xs[unit][vec4]).
    // Stage x[t, t0 .. t0 + TILE) for the chunk's tokens; zeros past K and M.
    // Four loads are issued before their stores.
    for (var i0 = li; i0 < TOKENS * TILE4; i0 += 4u * WG) {
      var v: array<vec4<f32>, 4>;
      for (var q = 0u; q < 4u; q++) {
        let i = i0 + q * WG;
        let t = i / TILE4;
        let e = t0 + (i % TILE4) * 4u;
        let tg = z * TOKENS + t;
        if (i < TOKENS * TILE4 && tg < M && e < K) {
          v[q] = x4[(tg * K + e) / 4u];
{{STAGE_HOOK}}
        }
      }
      for (var q = 0u; q < 4u; q++) {
        let i = i0 + q * WG;
        let j = i % TILE4;
        if (i < TOKENS * TILE4) { xs[(i / TILE4) * (TILE / UNIT) + j / (UNIT / 4u)][j % (UNIT / 4u)] = v[q]; }
      }
    }
    workgroupBarrier();
