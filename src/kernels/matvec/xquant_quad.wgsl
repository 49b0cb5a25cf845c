// The x quantize kernel's body (xquant.wgsl) with subgroups and no
// prologue: quads of lanes share a block, as the quad staging does
// (stage_i8_sg.wgsl, fmt/i8/quad.wgsl), so neighbouring lanes read
// neighbouring bytes of x. Lane qi = wid.x * WG + li takes quarter qi % 4 of
// block qi / 4. The quad's exchanges need invocations li ^ 1 and li ^ 2 to be
// lanes sg_id ^ 1 and sg_id ^ 2 of the same subgroup. Drivers lay subgroups
// out that way, but WebGPU does not promise it, so each subgroup checks; one
// that fails quantizes each of its blocks on the quad's lane 0 alone
// (quant_one, no shuffles), with the same codes, scale and sums. Either
// way no barrier runs (an atomic slot and its barrier cost 0.1-0.2 us of a
// 2.4-2.6 us dispatch on the H200, docs/perf/2026-12-02-session14-h200.md).
  let qi = wid.x * WG + li;
  let b = qi / 4u;
  let j = qi % 4u;
  let ok = b < TBK && t < M;
  let e = 32u * b + 8u * j;  // this lane's 8 elements
  var v0 = vec4<f32>(0.0);
  var v1 = vec4<f32>(0.0);
  if (ok && e < K) { v0 = x4[(t * K + e) / 4u]; }
  if (ok && e + 4u < K) { v1 = x4[(t * K + e) / 4u + 1u]; }
  let p1 = subgroupShuffleXor(li, 1u);
  let p2 = subgroupShuffleXor(li, 2u);
  let quads = subgroupAll(p1 == (li ^ 1u) && p2 == (li ^ 2u));
  let r = quant_quarter(v0, v1);
  let s1 = subgroupShuffleXor(r.z, 2u);  // lane 0: the code sum of elements 16..31
  let h = t * (KP / 16u) + 2u * b;       // the block's first code vec4
  if (b < TBK && quads) {
    xq[h + j / 2u][(j % 2u) * 2u] = r.x;
    xq[h + j / 2u][(j % 2u) * 2u + 1u] = r.y;
    if (j == 0u) { xq[META + t * TBK + b] = vec4<u32>(bitcast<u32>(bitcast<f32>(r.w) * {{INV127}}), r.z, s1, 0u); }
  }
  if (b < TBK && !quads && j == 0u) { quant_one(t, b, 1.0); }
