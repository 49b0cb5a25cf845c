// Row gather from the matvec layout (a model's embedding lookup, reading the
// same upload as the lm_head matvec when the embeddings are tied):
//   y[t, e] = W[ids[t], e],  ids: [M] u32, W: [N, K] in the matvec layout, y: [M, K] f32
// One invocation decodes one 8-element chunk of one token's row with the
// format's load/chunk functions, as the matvec kernel does, then computes
// scale * code + min per element (the dequantized value). A dispatch covers
// one row chunk of W, rows [row0, row0 + rows); a token whose id falls in
// another chunk is written by that chunk's dispatch. The host checks ids < N.
const K: u32 = {{K}};        // row length (elements)
const KP: u32 = {{KP}};      // K padded to whole units
const M: u32 = {{M}};        // tokens
const WG: u32 = {{WG}};
const UNIT: u32 = {{UNIT}};  // elements per unit
const GROUP: u32 = {{GROUP}};  // elements per scale group
const UPR: u32 = KP / UNIT;  // units per row
const CPU_: u32 = UNIT / 8u; // chunks per unit
const CPR: u32 = KP / 8u;    // chunks per row

struct Params { row0: u32, rows: u32, side_off: u32, pad: u32 }  // this dispatch's row chunk

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> ids: array<u32>;  // [M]
{{BINDINGS}}

{{HELPERS}}

{{FORMAT}}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
  let i = (wid.x + wid.y * nwg.x) * WG + li;  // (token, chunk), wrapped past 65535 workgroups
  if (i >= M * CPR) { return; }
  let t = i / CPR;
  let c8 = i % CPR;
  let id = ids[t];
  if (id < params.row0 || id - params.row0 >= params.rows) { return; }
  let u = c8 / CPU_;
  let c = c8 % CPU_;
  let un = loadA(id - params.row0, u);
  let w = chunkA(un, c);
{{DECODE}}
  let e = u * UNIT + c * 8u;
  let o = t * K + e;
  let vals = array<f32, 8>(v.a.x, v.a.y, v.a.z, v.a.w, v.b.x, v.b.y, v.b.z, v.b.w);
  for (var j = 0u; j < 8u; j++) {
    if (e + j < K) { y[o + j] = vals[j]; }
  }
}
