// Writes the current token's k and v rows [N_KV * HD] into the f32 caches
// [CTX, N_KV * HD] at row pos[0]; one invocation per element, the linear id
// recovered as (wid.x + wid.y * nwg.x) * WG + lid.
@group(0) @binding(0) var<storage, read> k: array<f32>;           // [ROW]
@group(0) @binding(1) var<storage, read> v: array<f32>;           // [ROW]
@group(0) @binding(2) var<storage, read> pos: array<u32>;         // [1]
@group(0) @binding(3) var<storage, read_write> kc: array<f32>;    // [CTX, ROW]
@group(0) @binding(4) var<storage, read_write> vc: array<f32>;    // [CTX, ROW]

const WG: u32 = {{WG}};
const ROW: u32 = {{ROW}};
const CTX: u32 = {{CTX}};

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  let p = pos[0];
  if (i >= ROW || p >= CTX) {
    return;
  }
  kc[p * ROW + i] = k[i];
  vc[p * ROW + i] = v[i];
}
