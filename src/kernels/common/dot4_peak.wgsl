// Packed int8 dot-product throughput (dot4I8Packed, WGSL's
// packed_4x8_integer_dot_product): every invocation runs ITERS rounds of 8
// independent chains a = dot4I8Packed(a, b) + c (4 multiply-adds, 8 integer
// ops, each), then writes one value only if it equals a constant that never
// occurs, so the work stays live (sink: [GROUPS * WG]). A rate well above the
// f32 FMA rate means the adapter runs it natively; a rate far below means a
// polyfill of shifts and multiplies.
@group(0) @binding(0) var<storage, read_write> sink: array<u32>;

const WG: u32 = {{WG}};
const ITERS: u32 = {{ITERS}};

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * WG;
  let b = 0x01020304u + (i & 255u);
  let c = i32(i & 7u);
  var a0 = i * 2654435761u;
  var a1 = a0 ^ 0x11111111u;
  var a2 = a0 ^ 0x22222222u;
  var a3 = a0 ^ 0x33333333u;
  var a4 = a0 ^ 0x44444444u;
  var a5 = a0 ^ 0x55555555u;
  var a6 = a0 ^ 0x66666666u;
  var a7 = a0 ^ 0x77777777u;
  for (var r = 0u; r < ITERS; r++) {
    a0 = bitcast<u32>(dot4I8Packed(a0, b) + c);
    a1 = bitcast<u32>(dot4I8Packed(a1, b) + c);
    a2 = bitcast<u32>(dot4I8Packed(a2, b) + c);
    a3 = bitcast<u32>(dot4I8Packed(a3, b) + c);
    a4 = bitcast<u32>(dot4I8Packed(a4, b) + c);
    a5 = bitcast<u32>(dot4I8Packed(a5, b) + c);
    a6 = bitcast<u32>(dot4I8Packed(a6, b) + c);
    a7 = bitcast<u32>(dot4I8Packed(a7, b) + c);
  }
  let t = (a0 ^ a1) ^ (a2 ^ a3) ^ (a4 ^ a5) ^ (a6 ^ a7);
  if (t == 0x9e3779b9u) { sink[i] = t; }  // almost never true; keeps the chains live
}
