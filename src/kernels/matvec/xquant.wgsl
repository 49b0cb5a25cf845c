// Quantization of x to int8 blocks of 32 for the int8 matvec that reads x from
// global memory (features.dot4 with kGlobalX): the codes, scales and code
// sums the staging (stage_i8.wgsl) computes, written once per call instead
// of once per workgroup. Output xq (array<vec4<u32>>), for MT = ZC * TOKENS
// tokens (rows past M are zeros) and KP = K padded to whole units (zeros
// past K):
//   codes [MT][KP / 16] vec4<u32>: block b of token t at t * KP / 16 + 2b, + 1,
//     16 codes a vec4 in element order (pack4xI8);
//   meta [MT][KP / 32] vec4<u32> from META on: (bitcast scale amax / 127,
//     bitcast code sum of elements 0..15, of 16..31, 0).
// The body ({{BODY_KIND}}) takes token t = wid.z.
{{ENABLE}}
const K: u32 = {{K}};
const KP: u32 = {{KP}};
const M: u32 = {{M}};
const MT: u32 = {{MT}};
const WG: u32 = {{WG}};
const TBK: u32 = KP / 32u;        // blocks per token
const META: u32 = MT * KP / 16u;  // first meta vec4
const EPS: f32 = {{EPS}};

@group(0) @binding(0) var<storage, read> x4: array<vec4<f32>>;  // [M * K / 4]
@group(0) @binding(1) var<storage, read_write> xq: array<vec4<u32>>;  // codes, then meta
{{DECLS}}

{{HELPERS}}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) li: u32{{SG_ARGS}}) {
  let t = wid.z;
{{BODY}}
}
