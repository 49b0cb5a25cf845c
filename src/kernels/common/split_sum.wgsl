// Split-k sum: the last step of a split-k matvec or gemm.
//   y[t, r] = epilogue( p[0, 0, t, r] + p[1, 0, t, r] + ... + p[S - 1, 0, t, r] (+ bias[r]) )
// p: [S][W][M][N] f32 partial sums, slice s of the reduction in p[s] (W = 2
// for SiluGate: gate sums, then up sums), y: [M, N] f32. The slices are added
// in order, one invocation per (t, r); M and N are run-time values.
const S: u32 = {{S}};          // slices
const WG: u32 = {{WG}};

struct Params { m: u32, n: u32, pad0: u32, pad1: u32 }

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> p: array<f32>;  // [S * W * M * N]
{{BINDINGS}}

fn slices(base: u32, stride: u32) -> f32 {
  var v = p[base];
  for (var s = 1u; s < S; s++) { v = v + p[base + s * stride]; }
  return v;
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
  let i = (wid.x + wid.y * nwg.x) * WG + li;  // t * N + r
  let mn = params.m * params.n;
  if (i >= mn) { return; }
  let r = i % params.n;
{{EPILOGUE}}
}
