// Register-tiled quantized matrix-matrix product for prompts:
//   y[t, r] = epilogue( sum_e x[t, e] * W[r, e] ),  x: [M, K] f32, W: [N, K] in the matvec layout, y: [M, N] f32
// Workgroup (wid.x, wid.y) owns outputs tokens [m0, m0 + TM) x rows [n0, n0 + TN)
// of this dispatch's row chunk. Per step of TK elements it stages x[m0.., k0..]
// into xs and dequantizes W[n0.., k0..] once into ws (both k-major vec4 rows,
// padded by one vec4 to spread banks), then every invocation (tx, ty) adds the
// RM x RN outputs tokens m0 + ty * RM + i, rows n0 + tx * RN + j into scalar
// registers (reading x and W as vec4 where RM, RN allow), k in order:
// acc = acc + x * w. A workgroup whose tile lies wholly inside M and the
// chunk's rows takes the unchecked path (chosen per workgroup, uniformly).
const K: u32 = {{K}};          // reduction length (elements), a multiple of TK
const K4: u32 = K / 4u;
const TM: u32 = {{TM}};        // tokens per workgroup tile
const TN: u32 = {{TN}};        // rows per workgroup tile
const RM: u32 = {{RM}};        // tokens per invocation
const RN: u32 = {{RN}};        // rows per invocation
const TK: u32 = {{TK}};        // staged elements of k per step
const TK4: u32 = TK / 4u;
const TMT: u32 = TM / RM;      // invocations along tokens
const TNT: u32 = TN / RN;      // invocations along rows
const WG: u32 = TMT * TNT;
const XP4: u32 = TM / 4u + 1u; // xs stride per k in vec4 (padded)
const WP4: u32 = TN / 4u + 1u; // ws stride per k in vec4 (padded)

// This dispatch's row chunk, the tokens M and the rows N of the whole output
// (y's row stride): run-time values, so one pipeline serves every m and n.
struct Params { row0: u32, rows: u32, m: u32, n: u32 }

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> x4: array<vec4<f32>>;  // [M * K / 4]
{{BINDINGS}}
var<workgroup> xs: array<vec4<f32>, TK * XP4>;   // [TK][TM / 4] staged x, k-major
{{WS_DECL}}

{{DECODE_HELPERS}}

{{FORMAT}}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) li: u32) {
  let n0 = wid.x * TN;                   // first row of the tile, in this chunk
  let m0 = wid.y * TM;                   // first token of the tile
  let tx = li % TNT;
  let ty = li / TNT;
  let interior = m0 + TM <= params.m && n0 + TN <= params.rows;
{{ACC_DECL}}
  for (var k0 = 0u; k0 < K; k0 += TK) {
    if (interior) {
{{STAGE_FAST}}
    } else {
{{STAGE_EDGE}}
    }
    workgroupBarrier();
    for (var kk = 0u; kk < TK; kk++) {
{{INNER}}
    }
    workgroupBarrier();
  }
  if (interior) {
{{STORE_FAST}}
  } else {
{{STORE_EDGE}}
  }
}
