// Attention of M query tokens over an f32 or f16 KV cache (f16: packed two
// per u32, read with unpack2x16float, exact in f32), one workgroup per query
// head h (wid.x) and token t (wid.y); kv head kh = h / GQA. The order follows the twin
// (kernels/softmax/twin.hpp, attention_decode): dot products in d order,
// scaled, a max-subtracted softmax whose max and sum are strided partials
// combined by a power-of-two tree (kernels/common/reduce_twin.hpp), then
// out[h, d] = sum over j in order of p[j] * v[j, kh, d].
// Token t sees cache positions 0..pos[t] (n = pos[t] + 1): causal, since a
// batch's k and v are all stored before this kernel runs. The scores and then
// the probabilities p live in workgroup memory when CTX of them fit (reads
// of p in the weighted sum are then broadcasts, not L2 round trips), else in
// the scores buffer; the arithmetic is the same either way.
@group(0) @binding(0) var<storage, read> q: array<f32>;           // [M, Q_ROW] from Q_OFF: [N_HEAD, HD] each
@group(0) @binding(1) var<storage, read> kc: array<{{KV_T}}>;     // [CTX, N_KV, HD / PACK]
@group(0) @binding(2) var<storage, read> vc: array<{{KV_T}}>;     // [CTX, N_KV, HD / PACK]
@group(0) @binding(3) var<storage, read> pos: array<u32>;         // [M] the queries' positions
{{P_DECL}}

const WG: u32 = {{WG}};
const N_HEAD: u32 = {{N_HEAD}};
const HD: u32 = {{HD}};
const N_KV: u32 = {{N_KV}};
const GQA: u32 = {{GQA}};
const CTX: u32 = {{CTX}};
const SCALE: f32 = {{SCALE}};
const Q_OFF: u32 = {{Q_OFF}};  // token t's query starts at Q_OFF + t * Q_ROW (rows of a fused QKV output)
const Q_ROW: u32 = {{Q_ROW}};

// Element pair (i, i + 1) of the k cache (i even) and element i of the v cache.
{{KV_FUNCS}}

var<workgroup> red: array<f32, WG>;  // per-invocation partials
var<workgroup> qs: array<f32, HD>;   // the query head, staged

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) li: u32) {
  let h = wid.x;
  let t = wid.y;
  let kh = h / GQA;
  let n = min(pos[t] + 1u, CTX);
  let qh = (t * N_HEAD + h) * HD;
  let qi = Q_OFF + t * Q_ROW + h * HD;
  let row = (t * N_HEAD + h) * CTX;
  for (var d = li; d < HD; d += WG) {
    qs[d] = q[qi + d];
  }
  workgroupBarrier();

  // Scores and their maximum.
  var m = -0x1.fffffep+127f;  // -FLT_MAX, the max identity
  for (var j = li; j < n; j += WG) {
    let kb = (j * N_KV + kh) * HD;
    var acc = 0.0f;
    for (var d = 0u; d < HD; d += 2u) {
      let kk = k_pair(kb + d);
      acc = acc + qs[d] * kk.x;
      acc = acc + qs[d + 1u] * kk.y;
    }
    let v = acc * SCALE;
    {{PJ}} = v;
    m = max(m, v);
  }
  red[li] = m;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s / 2u) {
    if (li < s) { red[li] = max(red[li], red[li + s]); }
    workgroupBarrier();
  }
  let mx = red[0];
  workgroupBarrier();

  // Exponentials and their sum.
  var sum = 0.0f;
  for (var j = li; j < n; j += WG) {
    let e = exp({{PJ}} - mx);
    {{PJ}} = e;
    sum = sum + e;
  }
  red[li] = sum;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s / 2u) {
    if (li < s) { red[li] = red[li] + red[li + s]; }
    workgroupBarrier();
  }
  let total = red[0];
  for (var j = li; j < n; j += WG) {
    {{PJ}} = {{PJ}} / total;
  }
  storageBarrier();
  workgroupBarrier();

  // Weighted sum of the values.
  for (var d = li; d < HD; d += WG) {
    var acc = 0.0f;
    for (var j = 0u; j < n; j++) {
      acc = acc + {{PJ}} * v_at((j * N_KV + kh) * HD + d);
    }
    out[qh + d] = acc;
  }
}
