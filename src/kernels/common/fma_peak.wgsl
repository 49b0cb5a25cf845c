// f32 FMA throughput ceiling: every invocation runs ITERS rounds of 8
// independent vec4 chains a = fma(a, b, c) (32 FMAs = 64 flops a round), then
// writes one value only if it equals a constant that never occurs, so the
// work cannot be optimised away (sink: [GROUPS * WG]).
@group(0) @binding(0) var<storage, read_write> sink: array<f32>;

const WG: u32 = {{WG}};
const ITERS: u32 = {{ITERS}};

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * WG;
  let s = f32(i & 1023u) * 1e-6;
  let b = vec4<f32>(0.999, 0.998, 0.997, 0.996) + s;
  let c = vec4<f32>(1e-3, 2e-3, 3e-3, 4e-3);
  var a0 = vec4<f32>(s);
  var a1 = a0 + 0.1;
  var a2 = a0 + 0.2;
  var a3 = a0 + 0.3;
  var a4 = a0 + 0.4;
  var a5 = a0 + 0.5;
  var a6 = a0 + 0.6;
  var a7 = a0 + 0.7;
  for (var r = 0u; r < ITERS; r++) {
    a0 = fma(a0, b, c);
    a1 = fma(a1, b, c);
    a2 = fma(a2, b, c);
    a3 = fma(a3, b, c);
    a4 = fma(a4, b, c);
    a5 = fma(a5, b, c);
    a6 = fma(a6, b, c);
    a7 = fma(a7, b, c);
  }
  let v = (a0 + a1) + (a2 + a3) + (a4 + a5) + (a6 + a7);
  let t = v.x + v.y + v.z + v.w;
  if (t == -12345.678) { sink[i] = t; }  // never true; keeps the chains live
}
