// The GPU sampler's first dispatch when a logit bias is set (sample.hpp):
// logits [N] += bias at the ids of the table ids [B] (distinct; an id >= N
// is an empty slot), before the penalties, as llama.cpp's logit_bias
// sampler. One invocation per slot; an f32 add, so the twin's is the same
// bit for bit (twin::add_bias).
@group(0) @binding(0) var<storage, read_write> logits: array<f32>;  // [N]
@group(0) @binding(1) var<storage, read> ids: array<u32>;           // [B]
@group(0) @binding(2) var<storage, read> bias: array<f32>;          // [B]

const N: u32 = {{N}};
const B: u32 = {{B}};
const WG: u32 = {{WG}};

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.x;
  if (i >= B) { return; }
  let id = ids[i];
  if (id < N) { logits[id] = logits[id] + bias[i]; }
}
