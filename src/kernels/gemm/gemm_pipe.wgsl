// Pipelined register-tiled quantized matrix-matrix product for prompts:
//   y[t, r] = epilogue( sum_e x[t, e] * W[r, e] ),  x: [M, K] f32, W: [N, K] in the matvec layout, y: [M, N] f32
// Workgroup (wid.x, wid.y) owns tokens [m0, m0 + TM) x rows [n0, n0 + TN) of
// this dispatch's row chunk. xs and ws hold two k steps (double buffer), each
// [TK][TM / 4] and [TK][TN / 4] vec4s, k-major, padded by one vec4 per k row.
// Step s: load step s + 1's x vec4s and W words into registers, compute
// step s from buffer s % 2, decode the loaded words into buffer (s + 1) % 2,
// one barrier. Invocation (tx, ty) owns tokens m0 + 4 (g TMT + ty) + c and
// rows n0 + 4 (h TNT + tx) + d (g < RM / 4, h < RN / 4, c, d < 4): a row of
// invocations reads consecutive vec4s (no bank conflicts). k is summed in
// order per output: acc = acc + x * w. Loads clamp ragged tokens and rows to
// the last valid one (their outputs are not stored); only the stores of a
// workgroup that reaches past M or the chunk's rows check bounds.
// Split-k (SPLITS > 1): workgroup z sums steps [z SPS, (z + 1) SPS) and
// stores its raw sums in the partial y [SPLITS][weights][M][N]; split_sum
// adds the slices in order and runs the epilogue.
const K: u32 = {{K}};          // reduction length (elements), a multiple of TK
const K4: u32 = K / 4u;
const TM: u32 = {{TM}};        // tokens per workgroup tile
const TN: u32 = {{TN}};        // rows per workgroup tile
const RM: u32 = {{RM}};        // tokens per invocation (a multiple of 4)
const RN: u32 = {{RN}};        // rows per invocation (a multiple of 4)
const TK: u32 = {{TK}};        // elements of k per step
const TK4: u32 = TK / 4u;
const NS: u32 = K / TK;        // steps
const SPLITS: u32 = {{SPLITS}};  // slices of the steps (split-k; 1: all of k)
const SPS: u32 = (NS + SPLITS - 1u) / SPLITS;  // steps per slice
const TMT: u32 = TM / RM;      // invocations along tokens
const TNT: u32 = TN / RN;      // invocations along rows
const WG: u32 = TMT * TNT;
const XP4: u32 = TM / 4u + 1u; // xs stride per k in vec4 (padded)
const WP4: u32 = TN / 4u + 1u; // ws stride per k in vec4 (padded)
const XB: u32 = TK * XP4;      // one buffer of xs, vec4s
const WB: u32 = TK * WP4;      // one buffer of ws, vec4s

struct Params { row0: u32, rows: u32, m: u32, n: u32 }

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> x4: array<vec4<f32>>;  // [M * K / 4]
{{BINDINGS}}
{{XS_DECL}}
{{WS_DECL}}

{{DECODE_HELPERS}}

{{FORMAT}}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) li: u32) {
  let n0 = wid.x * TN;
  let m0 = wid.y * TM;
  let tx = li % TNT;
  let ty = li / TNT;
  let interior = m0 + TM <= params.m && n0 + TN <= params.rows;
  let mlast = params.m - 1u;
  let rlast = params.rows - 1u;
  // Staging slots: x slot i is token i % TM, k vec4 i / TM of a step; W slot
  // i is row i % TN, elements 4 (i / TN) .. + 3 (consecutive invocations store
  // consecutive words of a k row).
{{SLOTS}}
{{ACC_DECL}}
{{MAIN}}
  if (interior) {
{{STORE_FAST}}
  } else {
{{STORE_EDGE}}
  }
}
