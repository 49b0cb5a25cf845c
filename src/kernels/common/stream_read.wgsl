// Streaming-read ceiling: each workgroup reads {{WG}} * {{ITEMS}} consecutive
// vec4<u32> of src (src: [WORDS4] vec4<u32>) once, coalesced, and writes one
// u32 so the reads cannot be optimised away (sink: [GROUPS]).
@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> sink: array<u32>;

const WORDS4: u32 = {{WORDS4}};
const WG: u32 = {{WG}};
const ITEMS: u32 = {{ITEMS}};
const GROUPS: u32 = {{GROUPS}};

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
  let g = wid.x + wid.y * nwg.x;
  if (g >= GROUPS) { return; }
  var acc = vec4<u32>(0u);
  let base = g * WG * ITEMS + li;
  for (var j = 0u; j < ITEMS; j++) {
    let i = base + j * WG;
    if (i < WORDS4) { acc ^= src[i]; }
  }
  let v = acc.x ^ acc.y ^ acc.z ^ acc.w;
  if (v == 0x9e3779b9u) { sink[g] = v; }  // almost never taken; keeps the loads live
}
