// Demo kernel for `blockq demo`: each workgroup of {{WG}} invocations sums
// {{WG}} * {{PER}} consecutive floats of x (x: [N]) by a tree reduction in
// workgroup memory and writes one partial sum (partial: [ceil(N / (WG*PER))]).
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> partial: array<f32>;

const N: u32 = {{N}};
const WG: u32 = {{WG}};
const PER: u32 = {{PER}};
var<workgroup> red: array<f32, WG>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) li: u32) {
  let base = wid.x * WG * PER;
  var acc = 0.0;
  for (var j = 0u; j < PER; j++) {
    let i = base + j * WG + li;
    if (i < N) { acc += x[i]; }
  }
  red[li] = acc;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s / 2u) {
    if (li < s) { red[li] += red[li + s]; }
    workgroupBarrier();
  }
  if (li == 0u) { partial[wid.x] = red[0]; }
}
