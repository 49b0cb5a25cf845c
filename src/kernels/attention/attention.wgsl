// Attention of M query tokens over an f32 or f16 KV cache (f16 packed two per
// u32, unpacked exactly to f32), split over positions: workgroup (x, t, c)
// takes the HG query heads h0 = x * HG .. h0 + HG - 1 (one kv head kh, read
// once for all of them), token t and the CHUNK positions from c * CHUNK of
// the n = min(pos[t] + 1, CTX) it sees. Order (twin.hpp): invocation li
// scores positions li, li + WG, ... of the chunk (each a dot product over d in
// order), the chunk's max and exp-sum are strided partials reduced by the
// power-of-two tree of reduce_twin.hpp, and the V sum runs R position groups
// of DW lanes, each lane 4 dims, the groups summed by the same tree. With one
// chunk dispatched (num_workgroups.z == 1) the workgroup writes out = o / l;
// otherwise it writes its partial (m, l, o) for combine.wgsl.
//
// For latency (a short context is a few dependent loads and barriers): a
// tree's levels run in registers (lanes c < T fold the partials c, c + T, ...
// as the tree's first levels would, then every lane folds the T results), so
// a reduction takes two barriers; the V groups' tree runs in the lanes of
// group 0; KB quads of a k row and VU positions of a V group are loaded
// before their sums. None of this changes the order of any sum.
@group(0) @binding(0) var<storage, read> q: array<f32>;           // [M, Q_ROW] from Q_OFF: [N_HEAD, HD] each
@group(0) @binding(1) var<storage, read> kc: array<{{KV_Q}}>;     // [CTX, N_KV, HD] in quads of 4
@group(0) @binding(2) var<storage, read> vc: array<{{KV_Q}}>;     // [CTX, N_KV, HD] in quads of 4
@group(0) @binding(3) var<storage, read> pos: array<u32>;         // [M] the queries' positions
@group(0) @binding(4) var<storage, read_write> out: array<f32>;   // [M, N_HEAD, HD]
@group(0) @binding(5) var<storage, read_write> part: array<f32>;  // [M, N_HEAD, S, 2 + HD]: m, l, o

const WG: u32 = {{WG}};
const HG: u32 = {{HG}};        // query heads per workgroup (they share one kv head)
const N_HEAD: u32 = {{N_HEAD}};
const HD: u32 = {{HD}};
const N_KV: u32 = {{N_KV}};
const GQA: u32 = {{GQA}};      // query heads per kv head
const CTX: u32 = {{CTX}};
const CHUNK: u32 = {{CHUNK}};  // positions per workgroup, a multiple of WG
const S: u32 = {{S}};          // chunks of the cache: ceil(CTX / CHUNK)
const HQ: u32 = HD / 4u;       // quads of dims
const KB: u32 = {{KB}};        // scores: quads of a k row in flight at once (divides HQ)
const DW: u32 = {{DW}};        // V: lanes of a position group (4 dims each), min(HQ, WG)
const R: u32 = {{R}};          // V: position groups, a power of two <= WG / DW
const T: u32 = {{T}};          // the reductions' top partials, min(WG, 32)
const VU: u32 = {{VU}};        // V: positions of a group loaded before their sums
const SCALE: f32 = {{SCALE}};
const Q_OFF: u32 = {{Q_OFF}};  // token t's query starts at Q_OFF + t * Q_ROW (rows of a fused QKV output)
const Q_ROW: u32 = {{Q_ROW}};
const NEG_MAX: f32 = -0x1.fffffep+127f;  // -FLT_MAX, the max identity

// Elements i .. i + 3 (i a multiple of 4) of the k and v caches.
{{KV_FUNCS}}

// Component e of v without a dynamic index (which would put o in local memory).
fn component(v: vec4f, e: u32) -> f32 { return select(select(v.x, v.y, e == 1u), select(v.z, v.w, e == 3u), e >= 2u); }

var<workgroup> qs: array<vec4f, HG * HQ>;   // the query heads, staged
var<workgroup> es: array<f32, HG * CHUNK>;  // scores, then exponentials [HG][CHUNK]
var<workgroup> red: array<f32, HG * WG>;    // reduction partials [HG][WG]
var<workgroup> top: array<f32, HG * T>;     // the trees' top partials [HG][T]

// The trees (reduce_twin.hpp's order): red_*_top(b) folds red[b + k * T],
// k < WG / T; top_*(b) folds top[b .. b + T); groups_sum(b) folds the V
// groups' red[b + r * DW], r < R.
{{TREES}}
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) li: u32) {
  let h0 = wid.x * HG;
  let kh = h0 / GQA;
  let t = wid.y;
  let c = wid.z;
  let direct = nwg.z == 1u;
  let j0 = c * CHUNK;
  let n = min(pos[t] + 1u, CTX);  // a padding token's position 0xffffffff sees none
  for (var i = li; i < HG * HQ; i += WG) {
    let qi = Q_OFF + t * Q_ROW + h0 * HD + 4u * i;
    qs[i] = vec4f(q[qi], q[qi + 1u], q[qi + 2u], q[qi + 3u]);
  }
  if (j0 >= n) {  // an empty chunk (uniform); alone, it still writes the zeros of n == 0
    if (direct) {
      for (var i = li; i < HG * HD; i += WG) { out[(t * N_HEAD + h0) * HD + i] = 0.0; }
    }
    return;
  }
  let jn = min(n - j0, CHUNK);
  workgroupBarrier();

  // Scores: invocation li takes positions li, li + WG, ... of the chunk.
  var mx: array<f32, HG>;
  for (var g = 0u; g < HG; g++) { mx[g] = NEG_MAX; }
  for (var j = li; j < jn; j += WG) {
    let kb = ((j0 + j) * N_KV + kh) * HD;
    var acc: array<f32, HG>;  // zeroed explicitly each position (not by the declaration)
    for (var g = 0u; g < HG; g++) { acc[g] = 0.0; }
    for (var d = 0u; d < HD; d += 4u * KB) {  // KB quads of the row loaded before their sums
{{K_BLOCK}}
    }
    for (var g = 0u; g < HG; g++) {
      let s = acc[g] * SCALE;
      es[g * CHUNK + j] = s;
      mx[g] = max(mx[g], s);
    }
  }
  for (var g = 0u; g < HG; g++) { red[g * WG + li] = mx[g]; }
  workgroupBarrier();
  if (li < T) {
    for (var g = 0u; g < HG; g++) { top[g * T + li] = red_max_top(g * WG + li); }
  }
  workgroupBarrier();
  var mc: array<f32, HG>;
  for (var g = 0u; g < HG; g++) { mc[g] = top_max(g * T); }

  // Exponentials and their sum (red and top are free: their reads came before the last barrier).
  var sm: array<f32, HG>;
  for (var g = 0u; g < HG; g++) { sm[g] = 0.0; }
  for (var j = li; j < jn; j += WG) {
    for (var g = 0u; g < HG; g++) {
      let e = exp(es[g * CHUNK + j] - mc[g]);
      es[g * CHUNK + j] = e;
      sm[g] = sm[g] + e;
    }
  }
  for (var g = 0u; g < HG; g++) { red[g * WG + li] = sm[g]; }
  workgroupBarrier();
  if (li < T) {
    for (var g = 0u; g < HG; g++) { top[g * T + li] = red_sum_top(g * WG + li); }
  }
  workgroupBarrier();
  var lc: array<f32, HG>;
  for (var g = 0u; g < HG; g++) { lc[g] = top_sum(g * T); }

  // The weighted sum of the values: lane (r, dl) sums dims 4 qd .. 4 qd + 3
  // over positions r, r + R, ... of the chunk, VU loads at a time; the R
  // groups meet in red, one component at a time.
  let r = li / DW;
  let dl = li % DW;
  let base = ((t * N_HEAD + h0) * S + c) * (2u + HD);  // head h0 + g: base + g * S * (2 + HD)
  for (var q0 = 0u; q0 < HQ; q0 += DW) {
    let qd = q0 + dl;
    let live = r < R && qd < HQ;
    var o: array<vec4f, HG>;
    for (var g = 0u; g < HG; g++) { o[g] = vec4f(0.0); }
    if (live) {
      let vb = (j0 * N_KV + kh) * HD + 4u * qd;  // position j's quad: vb + j * N_KV * HD
      for (var j = r; j < jn; j += VU * R) {  // positions j + u * R < jn, u < VU, loaded, then summed in order
{{V_BLOCK}}
      }
    }
    for (var e = 0u; e < 4u; e++) {
      if (live) {
        for (var g = 0u; g < HG; g++) { red[g * WG + r * DW + dl] = component(o[g], e); }
      }
      workgroupBarrier();
      if (live && r == 0u) {
        let d = 4u * qd + e;
        for (var g = 0u; g < HG; g++) {
          let ov = groups_sum(g * WG + dl);
          if (direct) {
            out[(t * N_HEAD + h0 + g) * HD + d] = ov / lc[g];
          } else {
            part[base + g * S * (2u + HD) + 2u + d] = ov;
          }
        }
      }
      workgroupBarrier();
    }
  }
  if (!direct && li == 0u) {
    for (var g = 0u; g < HG; g++) {
      part[base + g * S * (2u + HD)] = mc[g];
      part[base + g * S * (2u + HD) + 1u] = lc[g];
    }
  }
}
