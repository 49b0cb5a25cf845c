// Writes the k and v rows [M, ROW] (ROW = N_KV * HD) of M tokens into the
// caches [CTX, ROW] at rows pos[t]: as f32, or as f16 packed two per u32
// (pack2x16float, WGSL core: no shader-f16 feature). One invocation per PACK
// elements, the linear id recovered as (wid.x + wid.y * nwg.x) * WG + lid.
// Positions >= CTX (batch padding) are skipped. Token t's k row starts at
// element K_OFF + t * STRIDE of k, its v row at V_OFF + t * STRIDE of v (a
// fused QKV projection: one buffer of rows [q | k | v] bound as both).
@group(0) @binding(0) var<storage, read> k: array<f32>;               // [M, STRIDE] from K_OFF
@group(0) @binding(1) var<storage, read> v: array<f32>;               // [M, STRIDE] from V_OFF
@group(0) @binding(2) var<storage, read> pos: array<u32>;             // [M]
@group(0) @binding(3) var<storage, read_write> kc: array<{{KV_T}}>;  // [CTX, ROW / PACK]
@group(0) @binding(4) var<storage, read_write> vc: array<{{KV_T}}>;  // [CTX, ROW / PACK]

const WG: u32 = {{WG}};
const ROW: u32 = {{ROW}};
const M: u32 = {{M}};
const CTX: u32 = {{CTX}};
const PACK: u32 = {{PACK}};  // values per cache word: 1 (f32) or 2 (f16 pairs)
const K_OFF: u32 = {{K_OFF}};
const V_OFF: u32 = {{V_OFF}};
const STRIDE: u32 = {{STRIDE}};

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= M * ROW / PACK) {
    return;
  }
  let e = i * PACK;
  let t = e / ROW;
  let p = pos[t];
  if (p >= CTX) {
    return;
  }
  let c = p * (ROW / PACK) + (e % ROW) / PACK;
  let ke = K_OFF + t * STRIDE + e % ROW;
  let ve = V_OFF + t * STRIDE + e % ROW;
  kc[c] = {{STORE_K}};
  vc[c] = {{STORE_V}};
}
