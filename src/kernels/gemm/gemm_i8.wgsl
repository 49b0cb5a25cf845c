// Int8 register-tiled gemm for prompts (features.dot4, ggml's q8 activations):
//   y[t, r] = epilogue( sum over blocks b of 32: (dw[r, b] * dx[t, b]) * f32(isum(t, r, b)) ),
//   isum = sum_e qx[t, e] * qw[r, e] - OFF * sum_e qx[t, e]   (exact, i32, dot4I8Packed)
// x arrives quantized in xq (kernels/matvec/xquant.wgsl, one row a token,
// M = params.m rows): codes [M][K / 16] vec4<u32>, then meta [M][K / 32]
// vec4<u32> (bitcast scale, code sums of each half, 0). W [N, K] is in the
// matvec layout; the {{FMT}} snippet gives each block's 8 words of codes as
// packed int8 (qw; the 4-bit formats: nibbles 0..15, OFF 8 for Q4_0), its
// f32 scale (dw) and, for Q4_1 and Q4_K, its min (mw: acc also adds
// mw * (dx * f32(sum of qx))).
// Workgroup (wid.x, wid.y) owns tokens [m0, m0 + TM) x rows [n0, n0 + TN) of
// this dispatch's row chunk. Per step of KS blocks of k it stages the tile's
// x words and W words k-major (vec4 rows of 4 tokens or rows, padded by one
// vec4), their scales and the x code sums, then invocation (tx, ty) sums its
// RM x RN outputs (tokens m0 + ty * RM + i, rows n0 + tx * RN + j), blocks
// in order. Split-k: workgroup z sums only the blocks [sb, se) of its slice
// and stores raw sums into the partials (split_sum adds the slices).
{{HEAD}}
var<workgroup> xs: array<vec4<u32>, KS * 8u * XP4>;  // [KS * 8 words][TM / 4] x codes of the step
var<workgroup> xd: array<f32, KS * TM>;              // [KS][TM] x scales
var<workgroup> xc: array<i32, KS * TM>;              // [KS][TM] x code sums
{{WS_DECL}}

{{FORMAT}}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) li: u32) {
  let n0 = wid.x * TN;
  let m0 = wid.y * TM;
  let tx = li % TNT;
  let ty = li / TNT;
  let meta0 = params.m * K16;  // the first meta vec4
{{FORMAT_INIT}}
{{ACC_DECL}}
{{SLICE}}
  for (var kb0 = sb; kb0 < se; kb0 += KS) {
    // x words of the step: word w is word w % 8 of block kb0 + w / 8
    for (var i = li; i < TM * 8u * KS; i += WG) {
      let r = i / (8u * KS);
      let w = i % (8u * KS);
      var v = 0u;
      if (m0 + r < params.m) { v = xq[(m0 + r) * K16 + 2u * kb0 + w / 4u][w % 4u]; }
      xs[w * XP4 + r / 4u][r % 4u] = v;
    }
    for (var i = li; i < TM * KS; i += WG) {
      let r = i % TM;
      var d = 0.0;
      var c = 0;
      if (m0 + r < params.m) {
        let mt = xq[meta0 + (m0 + r) * KB + kb0 + i / TM];
        d = bitcast<f32>(mt.x);
        c = {{XC}};  // the block's code sum (Q6_K: each half's, in 16 bits)
      }
      xd[i] = d;
      xc[i] = c;
    }
{{STAGE_W}}
    workgroupBarrier();
{{INNER}}
    workgroupBarrier();
  }
  if (m0 + TM <= params.m && n0 + TN <= params.rows) {
{{STORE_FAST}}
  } else {
{{STORE_EDGE}}
  }
}
