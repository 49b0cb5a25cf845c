// In place on y [M, HEADS, HD]: an optional per-row bias (y += bias, the bias
// [HEADS * HD]), then an optional RoPE in the order of twin::rope
// (kernels/rope/twin.hpp), with optional freq factors ff [NROT / 2]
// (rope_freqs.weight). One invocation per (token, head, pair i < HD / 2);
// pairs past NROT / 2 take the pass-through dims two at a time. A token at
// position 0xffffffff (batch padding) is not rotated, nor are heads
// >= RHEADS (the v heads of a fused QKV output). The linear id is
// (wid.x + wid.y * nwg.x) * WG + lid.
{{DECLS}}
const WG: u32 = {{WG}};
const M: u32 = {{M}};
const HEADS: u32 = {{HEADS}};
const HD: u32 = {{HD}};
const NROT: u32 = {{NROT}};
const RHEADS: u32 = {{RHEADS}};  // heads [RHEADS, HEADS) of a token: bias only
const NEOX: bool = {{NEOX}};
const ROPE: bool = {{ROPE}};
const BASE: f32 = {{BASE}};
const SCALE: f32 = {{SCALE}};

{{FUNCS}}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) lid: u32) {
  let g = (wid.x + wid.y * nwg.x) * WG + lid;
  let half = HD / 2u;
  if (g >= M * HEADS * half) {
    return;
  }
  let i = g % half;
  let th = g / half;              // token * HEADS + head
  let row = th * HD;
  let brow = (th % HEADS) * HD;   // the head's offset in the bias
  var ia = NROT + 2u * (i - NROT / 2u);
  var ib = ia + 1u;
  let rot = i < NROT / 2u;
  if (rot) {
    if (NEOX) {
      ia = i;
      ib = i + NROT / 2u;
    } else {
      ia = 2u * i;
      ib = 2u * i + 1u;
    }
  }
  let a = y[row + ia] + bias_at(brow + ia);
  let b = y[row + ib] + bias_at(brow + ib);
  let p = pos[th / HEADS];
  if (!ROPE || !rot || p == 0xffffffffu || th % HEADS >= RHEADS) {
    y[row + ia] = a;
    y[row + ib] = b;
    return;
  }
  let ex = (-2.0f * f32(i)) / f32(NROT);
  let inv = pow(BASE, ex);
  let tp = ff_div(f32(p) * inv, i);
  let theta = SCALE * tp;
  let c = cos(theta);
  let s = sin(theta);
  let ac = a * c;
  let bs = b * s;
  let asn = a * s;
  let bc = b * c;
  y[row + ia] = ac - bs;
  y[row + ib] = asn + bc;
}
