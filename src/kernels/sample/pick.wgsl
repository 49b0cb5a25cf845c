// The GPU sampler's last step (sample.hpp): one workgroup selects the best K
// of the N <= CHUNK candidates (the last top-k round's, or the logits
// themselves; CHUNK a power of two) in rank order (bitonic.wgsl); then
// invocation 0 picks the token from them as the host sampler
// does, in f32 (twin.hpp): top-p, min-p, temperature, softmax and the draw u
// (params: temperature, top_p, min_p, u; temperature <= 0: the first).
// result [K + 2]: the token, the top-K ids in rank order, the picked token's
// probability (f32 bits).
@group(0) @binding(0) var<storage, read> src: array<{{SRC_T}}>;     // [N]
@group(0) @binding(1) var<storage, read> params: array<f32>;        // [4]
@group(0) @binding(2) var<storage, read_write> result: array<u32>;  // [K + 2]

const N: u32 = {{N}};
const CHUNK: u32 = {{CHUNK}};
const K: u32 = {{K}};
const KP: u32 = {{KP}};  // K rounded up to a power of two
const WG: u32 = {{WG}};
// The key of -inf: keys at or below it (-inf, NaN) are never drawn (the first stays).
const NEG_INF_KEY: u32 = 0x007fffffu;

const SEL: u32 = CHUNK;
var<workgroup> sv: array<vec2u, CHUNK>;  // (key, id)
// Of the first K, exp(l - l0) and exp(l / t - l0 / t) (l0 the best logit),
// computed by all invocations for invocation 0's sums.
var<workgroup> e1: array<f32, KP>;
var<workgroup> e2: array<f32, KP>;

{{LOAD}}
{{SELECT}}
// The logit of a key (inverse of rank_key; key 0, NaN, is never asked for).
fn logit(key: u32) -> f32 {
  return bitcast<f32>(select(~key, key & 0x7fffffffu, (key & 0x80000000u) != 0u));
}

fn pick(t: f32) {
  let top_p = params[1];
  let min_p = params[2];
  let u = params[3];
  var n = K;
  while (n > 1u && sv[n - 1u].x <= NEG_INF_KEY) { n = n - 1u; }
  var at = 0u;
  var p = 1.0f;
  if (t > 0.0f) {
    let mx = logit(sv[0].x);
    if (top_p < 1.0f && n > 1u) {
      var sum = 0.0f;
      for (var i = 0u; i < n; i++) { sum = sum + e1[i]; }
      var cum = 0.0f;
      for (var i = 0u; i < n; i++) {
        cum = cum + e1[i] / sum;
        if (cum >= top_p) {
          n = i + 1u;
          break;
        }
      }
    }
    if (min_p > 0.0f && n > 1u) {
      let cut = mx + log(min_p);
      var keep = 1u;
      while (keep < n && logit(sv[keep].x) >= cut) { keep = keep + 1u; }
      n = keep;
    }
    var sum = 0.0f;
    for (var i = 0u; i < n; i++) { sum = sum + e2[i]; }
    var cum = 0.0f;
    at = n - 1u;
    for (var i = 0u; i < n; i++) {
      let q = e2[i] / sum;
      cum = cum + q;
      if (u < cum) {
        at = i;
        break;
      }
    }
    p = e2[at] / sum;
  }
  result[0] = sv[at].y;
  result[K + 1u] = bitcast<u32>(p);
}

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) li: u32) {
  for (var i = li; i < CHUNK; i += WG) {
    var e = vec2u(0u, 0xffffffffu);
    if (i < N) { e = load(i); }
    sv[i] = e;
  }
  workgroupBarrier();
  top_chunk(li);
  let t = params[0];
  let mx = logit(sv[0].x);
  for (var i = li; i < K; i += WG) {
    result[1u + i] = sv[i].y;
    if (t > 0.0f) {
      let l = logit(sv[i].x);
      e1[i] = exp(l - mx);
      e2[i] = exp(l / t - mx / t);
    }
  }
  workgroupBarrier();
  if (li == 0u) { pick(t); }
}
