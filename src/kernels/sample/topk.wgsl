// One round of the GPU sampler's top-k (sample.hpp): workgroup g selects the
// best K of the CHUNK elements [g * CHUNK, (g + 1) * CHUNK) of the input
// (bitonic.wgsl) and writes them in rank order as (key, id) pairs to dst
// [groups * K] (elements past N
// are padding: key 0, id 0xffffffff, after every real element). The next
// round, or the pick, reads dst.
@group(0) @binding(0) var<storage, read> src: array<{{SRC_T}}>;        // [N]: logits as f32 bits, or (key, id)
@group(0) @binding(1) var<storage, read_write> dst: array<vec2<u32>>;  // [groups * K] (key, id)

const N: u32 = {{N}};
const CHUNK: u32 = {{CHUNK}};
const K: u32 = {{K}};
const KP: u32 = {{KP}};  // K rounded up to a power of two
const WG: u32 = {{WG}};

// The pairs selected from: the chunk, or with K = 1 (greedy) each
// invocation's best of its CHUNK / WG elements.
const SEL: u32 = select(CHUNK, WG, KP == 1u);
var<workgroup> sv: array<vec2u, SEL>;  // (key, id)

{{LOAD}}
{{SELECT}}
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
  let g = wid.x;
  if (KP == 1u) {
    var best = vec2u(0u, 0xffffffffu);
    for (var i = li; i < CHUNK; i += WG) {
      if (i < N - g * CHUNK) {
        let e = load(g * CHUNK + i);
        if (ranks_before(e, best)) { best = e; }
      }
    }
    sv[li] = best;
  } else {
    for (var i = li; i < CHUNK; i += WG) {
      var e = vec2u(0u, 0xffffffffu);
      if (i < N - g * CHUNK) { e = load(g * CHUNK + i); }
      sv[i] = e;
    }
  }
  workgroupBarrier();
  top_chunk(li);
  for (var i = li; i < K; i += WG) { dst[g * K + i] = sv[i]; }
}
