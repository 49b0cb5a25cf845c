// The combine of attention.wgsl's chunk partials: workgroup (h, t) merges the
// sc = min(ceil(n / CHUNK), num_workgroups.z) partials of head h and token t
// in chunk order (twin.hpp). It is dispatched with the attention's grid z so
// that it reads only the chunks that dispatch wrote; workgroups with z > 0
// return at once.
@group(0) @binding(0) var<storage, read> part: array<f32>;        // [M, N_HEAD, S, 2 + HD]: m, l, o
@group(0) @binding(1) var<storage, read> pos: array<u32>;         // [M]
@group(0) @binding(2) var<storage, read_write> out: array<f32>;   // [M, N_HEAD, HD]

const WG: u32 = {{WG}};
const N_HEAD: u32 = {{N_HEAD}};
const HD: u32 = {{HD}};
const CTX: u32 = {{CTX}};
const CHUNK: u32 = {{CHUNK}};
const S: u32 = {{S}};
const NEG_MAX: f32 = -0x1.fffffep+127f;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) li: u32) {
  if (wid.z != 0u) { return; }
  let h = wid.x;
  let t = wid.y;
  let n = min(pos[t] + 1u, CTX);
  let sc = min((n + CHUNK - 1u) / CHUNK, nwg.z);
  let base = (t * N_HEAD + h) * S * (2u + HD);
  var m = NEG_MAX;
  for (var c = 0u; c < sc; c++) { m = max(m, part[base + c * (2u + HD)]); }
  var l = 0.0f;
  for (var c = 0u; c < sc; c++) {
    let w = exp(part[base + c * (2u + HD)] - m);
    l = l + w * part[base + c * (2u + HD) + 1u];
  }
  for (var d = li; d < HD; d += WG) {
    var acc = 0.0f;
    for (var c = 0u; c < sc; c++) {
      let w = exp(part[base + c * (2u + HD)] - m);
      acc = acc + w * part[base + c * (2u + HD) + 2u + d];
    }
    out[(t * N_HEAD + h) * HD + d] = select(0.0, acc / l, sc > 0u);
  }
}
