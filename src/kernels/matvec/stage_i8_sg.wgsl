// Staging of one x tile as int8 blocks for the matvec kernel (the STAGE part
// of matvec.wgsl) with subgroups: the same codes, scales and code sums as
// stage_i8.wgsl, but four lanes of a subgroup share a block of 32 (lane j of
// the quad reads elements 8j .. 8j + 7 as two vec4, fmt/i8/quad.wgsl), so
// neighbouring lanes read neighbouring bytes of x. The quad exchanges the
// block's max |x| and its code sums by subgroupShuffleXor (a subgroup holds
// at least 4 lanes). (Issuing the loads of several passes before using any
// was slower on the H200: docs/perf/2026-12-01-session8-h200.md.)
    // Stage x[t, t0 .. t0 + TILE) of the chunk's tokens (zeros past K and M):
    // quad lane qi = p * WG + si takes quarter qi % 4 of block qi / 4; the
    // passes are uniform so every lane reaches the shuffles.
    let si = sgs * sg_size + sg_id;  // dense index of this invocation (full subgroups)
    for (var p = 0u; p < (TOKENS * TB * 4u + WG - 1u) / WG; p++) {
      let qi = p * WG + si;
      let i = qi / 4u;  // block: token i / TB, elements 32 * (i % TB) .. of the tile
      let j = qi % 4u;
      let ok = i < TOKENS * TB;
      let t = i / TB;
      let tg = z * TOKENS + t;
      var v: array<vec4<f32>, 2>;
      for (var q = 0u; q < 2u; q++) {
        let e = t0 + (i % TB) * 32u + 8u * j + 4u * q;
        v[q] = vec4<f32>(0.0);
        if (ok && tg < M && e < K) {
          v[q] = x4[(tg * K + e) / 4u];
{{STAGE_HOOK}}
        }
      }
      let r = quant_quarter(v[0], v[1]);  // lanes 0 and 2: the sums of elements 0..15 and 16..31
      if (ok) {
        let h = j / 2u;  // the block's code vec4 holding this quarter
        xblk[i][h][(j % 2u) * 2u] = r.x;
        xblk[i][h][(j % 2u) * 2u + 1u] = r.y;
        // meta: the scale (lane 0), the code sums of 0..15 (lane 0) and 16..31 (lane 2)
        if (j == 0u) { xblk[i][2u].x = bitcast<u32>(bitcast<f32>(r.w) * {{INV127}}); xblk[i][2u].w = 0u; }
        if ((j % 2u) == 0u) { xblk[i][2u][1u + h] = r.z; }
      }
    }
    workgroupBarrier();
