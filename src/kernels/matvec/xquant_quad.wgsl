// The x quantize kernel's body (xquant.wgsl) with subgroups and no
// prologue: quads of subgroup lanes share a block, as the quad staging does
// (stage_i8_sg.wgsl, fmt/i8/quad.wgsl), so neighbouring lanes read
// neighbouring bytes of x. Quad lane qi takes quarter qi % 4 of block qi / 4;
// its index is dense from the subgroup's slot, taken atomically, so that a
// quad is four lanes of one subgroup whatever the layout of subgroups.
  if (li == 0u) { atomicStore(&sg_count, 0u); }
  workgroupBarrier();
  var sgs = 0u;
  if (sg_id == 0u) { sgs = atomicAdd(&sg_count, 1u); }
  sgs = subgroupBroadcast(sgs, 0u);
  let qi = wid.x * WG + sgs * sg_size + sg_id;
  let b = qi / 4u;
  let j = qi % 4u;
  let ok = b < TBK;
  var v: array<vec4<f32>, 2>;
  for (var q = 0u; q < 2u; q++) {
    let e = 32u * b + 8u * j + 4u * q;
    v[q] = vec4<f32>(0.0);
    if (ok && t < M && e < K) { v[q] = x4[(t * K + e) / 4u]; }
  }
  let r = quant_quarter(v[0], v[1]);
  let s1 = subgroupShuffleXor(r.z, 2u);  // lane 0: the code sum of elements 16..31
  if (ok) {
    let h = t * (KP / 16u) + 2u * b + j / 2u;  // the block's vec4 holding this quarter
    xq[h][(j % 2u) * 2u] = r.x;
    xq[h][(j % 2u) * 2u + 1u] = r.y;
    if (j == 0u) { xq[META + t * TBK + b] = vec4<u32>(bitcast<u32>(bitcast<f32>(r.w) * {{INV127}}), r.z, s1, 0u); }
  }
