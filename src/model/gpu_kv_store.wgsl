// Writes the k and v rows [M, ROW] (ROW = N_KV * HD) of M tokens into the f32
// caches [CTX, ROW] at rows pos[t]; one invocation per element, the linear id
// recovered as (wid.x + wid.y * nwg.x) * WG + lid.
@group(0) @binding(0) var<storage, read> k: array<f32>;           // [M, ROW]
@group(0) @binding(1) var<storage, read> v: array<f32>;           // [M, ROW]
@group(0) @binding(2) var<storage, read> pos: array<u32>;         // [M]
@group(0) @binding(3) var<storage, read_write> kc: array<f32>;    // [CTX, ROW]
@group(0) @binding(4) var<storage, read_write> vc: array<f32>;    // [CTX, ROW]

const WG: u32 = {{WG}};
const ROW: u32 = {{ROW}};
const M: u32 = {{M}};
const CTX: u32 = {{CTX}};

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= M * ROW) {
    return;
  }
  let p = pos[i / ROW];
  if (p >= CTX) {
    return;
  }
  kc[p * ROW + i % ROW] = k[i];
  vc[p * ROW + i % ROW] = v[i];
}
