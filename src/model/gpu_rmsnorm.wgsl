// RMSNorm of M rows of N floats, one workgroup per row t (wid.x): the order of
// twin::rmsnorm (kernels/norm/twin.hpp) with WG invocations: strided partial
// sums of squares, a power-of-two tree, then y = (x * (1 / sqrt(ss / N + EPS))) * w.
@group(0) @binding(0) var<storage, read> x: array<f32>;         // [M, N]
@group(0) @binding(1) var<storage, read> w: array<f32>;         // [N]
@group(0) @binding(2) var<storage, read_write> y: array<f32>;   // [M, N]

const WG: u32 = {{WG}};
const N: u32 = {{N}};
const EPS: f32 = {{EPS}};

var<workgroup> red: array<f32, WG>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
  let base = wid.x * N;
  var ss = 0.0f;
  for (var i = li; i < N; i += WG) {
    let v = x[base + i];
    let sq = v * v;
    ss = ss + sq;
  }
  red[li] = ss;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s / 2u) {
    if (li < s) { red[li] = red[li] + red[li + s]; }
    workgroupBarrier();
  }
  let mean = red[0] / f32(N);
  let shift = mean + EPS;
  let root = sqrt(shift);
  let scale = 1.0f / root;
  for (var i = li; i < N; i += WG) {
    y[base + i] = (x[base + i] * scale) * w[i];
  }
}
