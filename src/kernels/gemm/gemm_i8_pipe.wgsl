// Int8 register-tiled gemm for prompts, pipelined (features.dot4; variant 1):
// the sums of gemm_i8.wgsl in the same order,
//   y[t, r] = epilogue( sum over blocks b of 32: (dw[r, b] * dx[t, b]) * f32(isum(t, r, b)) ),
// with the workgroup storage doubled: step s (KS blocks) loads step s + 1's
// x words, x scales and code sums, W words, scales and mins into registers
// (the slots), computes from buffer s % 2 and puts the slots into buffer
// (s + 1) % 2, one barrier a step. Invocation (tx, ty) owns tokens m0 + 4 (g
// TMT + ty) + c and rows n0 + 4 (h TNT + tx) + d (g < RM / 4, h < RN / 4, c,
// d < 4), so a row of invocations reads consecutive vec4s of W. x and the
// constants: gemm_i8_head.wgsl. W [N, K] is in the matvec layout; the {{FMT}}
// snippet gives each block's 8 words of codes (qw), its scale (dw) and, for
// Q4_1 and Q4_K, its min (mw). Split-k: workgroup z sums only the blocks [sb,
// se) of its slice and stores raw sums into the partials.
{{HEAD}}
const XB: u32 = KS * 8u * XP4;  // one buffer of xs, vec4s
const WB: u32 = KS * 8u * WP4;  // one buffer of ws, vec4s
const XDB: u32 = KS * TM;       // one buffer of xd and xc
const WDB: u32 = KS * TN;       // one buffer of wd (and wm)
var<workgroup> xs: array<vec4<u32>, 2u * XB>;  // [2][KS * 8 words][TM / 4] x codes
var<workgroup> xd: array<f32, 2u * XDB>;       // [2][KS][TM] x scales
var<workgroup> xc: array<i32, 2u * XDB>;       // [2][KS][TM] x code sums
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
  // Slot j of each kind holds staging index li + j * WG of a step: x word w
  // of token r (i = r * 8 KS + w), x meta of token i % TM and block i / TM,
  // W word w of row r, W scale (and min) of row i % TN and block i / TN.
{{SLOTS}}
  var kl = sb;  // the first block of the step the slots load
  if (sb < se) {
{{LOAD}}
    let xb = 0u;
    let xdb = 0u;
    let wb = 0u;
    let wdb = 0u;
{{PUT}}
  }
  workgroupBarrier();
  for (var kb0 = sb; kb0 < se; kb0 += KS) {
    let cur = ((kb0 - sb) / KS) & 1u;
    kl = kb0 + KS;
    let more = kl < se;
    if (more) {
{{LOAD}}
    }
    {
      let xb = cur * XB;
      let xdb = cur * XDB;
      let wb = cur * WB;
      let wdb = cur * WDB;
{{INNER}}
    }
    if (more) {
      let xb = (1u - cur) * XB;
      let xdb = (1u - cur) * XDB;
      let wb = (1u - cur) * WB;
      let wdb = (1u - cur) * WDB;
{{PUT}}
    }
    workgroupBarrier();
  }
  if (m0 + TM <= params.m && n0 + TN <= params.rows) {
{{STORE_FAST}}
  } else {
{{STORE_EDGE}}
  }
}
