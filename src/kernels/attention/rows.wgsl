// Attention of many query tokens at once (a prompt pass) over an f32 or f16
// KV cache, in tiles of keys: workgroup (x, y, c) takes the QR = TQ * HG
// query rows r = i * HG + g (token t0 + i, t0 = y * TQ; head h0 + g, h0 = x *
// HG, all of kv head kh) and the CHUNK positions from c * CHUNK. Each tile
// of BK keys is read once for all QR rows. Row r belongs to the L lanes
// r * L + e (e < L); lane e of it scores the tile's keys j = e + L * u (u <
// BK / L), each a sum over d in order, then
//   mt = the max of the row's visible scores;  mn = max(m, mt);  a = exp(m - mn)
//   p_j = exp(s_j - mn);  part_e = sum over u of p_j in order (from 0)
//   l = l * a + (sum over e of part_e in order, from 0);  m = mn
// (rows that see none of the tile: a = 1, p = 0), and the value lanes
// o[r][d] = o[r][d] * a, then o = o + p_j * v_j[d] for j in order.
// The key tile shares one buffer with the value tile: the values are loaded
// while the softmax runs, the next keys while the values are summed. With
// one chunk dispatched (num_workgroups.z == 1) row r writes out = o / l
// (zeros for a token that sees nothing); otherwise its partial (m, l, o) for
// combine.wgsl. Order: twin.hpp (attention_rows).
@group(0) @binding(0) var<storage, read> q: array<f32>;           // [M, Q_ROW] from Q_OFF: [N_HEAD, HD] each
@group(0) @binding(1) var<storage, read> kc: array<{{KV_Q}}>;     // [CTX, N_KV, HD] in quads of 4
@group(0) @binding(2) var<storage, read> vc: array<{{KV_Q}}>;     // [CTX, N_KV, HD] in quads of 4
@group(0) @binding(3) var<storage, read> pos: array<u32>;         // [M] the queries' positions
@group(0) @binding(4) var<storage, read_write> out: array<f32>;   // [M, N_HEAD, HD]
@group(0) @binding(5) var<storage, read_write> part: array<f32>;  // [M, N_HEAD, S, 2 + HD]: m, l, o

const WG: u32 = {{WG}};
const M: u32 = {{M}};          // query tokens
const TQ: u32 = {{TQ}};        // tokens per workgroup
const HG: u32 = {{HG}};        // query heads per workgroup (they share one kv head)
const QR: u32 = TQ * HG;       // query rows per workgroup
const BK: u32 = {{BK}};        // keys per tile (a power of two dividing WG)
const N_HEAD: u32 = {{N_HEAD}};
const HD: u32 = {{HD}};
const HQ: u32 = HD / 4u;       // quads of dims
const KP: u32 = HQ + 1u;       // a key row's stride in kvs (padded: lanes of one quad read distinct banks)
const PQ: u32 = BK / 4u + 1u;  // a row's stride in ps, vec4s (BK is a multiple of 4)
const N_KV: u32 = {{N_KV}};
const GQA: u32 = {{GQA}};
const CTX: u32 = {{CTX}};
const CHUNK: u32 = {{CHUNK}};  // positions per workgroup, a multiple of BK
const S: u32 = {{S}};          // chunks of the cache: ceil(CTX / CHUNK)
const L: u32 = {{L}};          // lanes of a row in the scores and the softmax (QR * L <= WG)
const KL: u32 = BK / L;        // keys a lane scores
const QP: u32 = HQ + 1u;       // a query row's stride in qs (padded)
const PR: u32 = {{PR}};        // value quads per lane: ceil(QR * HQ / WG)
const LR: u32 = {{LR}};        // tile quads each lane loads: ceil(BK * HQ / WG)
const SCALE: f32 = {{SCALE}};
const Q_OFF: u32 = {{Q_OFF}};
const Q_ROW: u32 = {{Q_ROW}};
const NEG_MAX: f32 = -0x1.fffffep+127f;  // -FLT_MAX, the max identity

// Elements i .. i + 3 (i a multiple of 4) of the k and v caches.
{{KV_FUNCS}}

var<workgroup> qs: array<vec4f, QR * QP>;   // the query rows [QR][QP]
var<workgroup> kvs: array<vec4f, BK * KP>;  // the key tile, then the value tile [BK][KP]
var<workgroup> ps: array<vec4f, QR * PQ>;   // probabilities [QR][PQ], four keys a vec4
var<workgroup> al: array<f32, QR>;          // each row's rescale of the tile; at the end, l
var<workgroup> ns: array<u32, QR>;          // each row's visible positions (0: none)
var<workgroup> red: array<f32, QR * L>;     // the lanes' partial maxes, then partial sums [QR][L]

// Loads quad e (< BK * HQ) of the tile at key k0 of the cache into a
// register: key k0 + e / HQ where it is below kend, else zeros.
fn tile_k(k0: u32, kend: u32, kh: u32, e: u32) -> vec4f {
  let key = k0 + e / HQ;
  if (e >= BK * HQ || key >= kend) { return vec4f(0.0); }
  return k_quad((key * N_KV + kh) * HD + 4u * (e % HQ));
}
fn tile_v(k0: u32, kend: u32, kh: u32, e: u32) -> vec4f {
  let key = k0 + e / HQ;
  if (e >= BK * HQ || key >= kend) { return vec4f(0.0); }
  return v_quad((key * N_KV + kh) * HD + 4u * (e % HQ));
}
fn tile_store(e: u32, x: vec4f) {
  if (e < BK * HQ) { kvs[(e / HQ) * KP + e % HQ] = x; }
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) li: u32) {
  let h0 = wid.x * HG;
  let kh = h0 / GQA;
  let t0 = wid.y * TQ;
  let c = wid.z;
  let direct = nwg.z == 1u;
  let j0 = c * CHUNK;
  let cend = min(j0 + CHUNK, CTX);
  for (var e = li; e < QR * HQ; e += WG) {
    let r = e / HQ;
    let t = t0 + r / HG;
    var x = vec4f(0.0);
    if (t < M) {
      let qi = Q_OFF + t * Q_ROW + (h0 + r % HG) * HD + 4u * (e % HQ);
      x = vec4f(q[qi], q[qi + 1u], q[qi + 2u], q[qi + 3u]);
    }
    qs[r * QP + e % HQ] = x;
  }
  for (var r = li; r < QR; r += WG) {
    let t = t0 + r / HG;
    var n = 0u;
    if (t < M) { n = min(pos[t] + 1u, CTX); }  // a padding token's position 0xffffffff sees none
    ns[r] = n;
  }
  // The workgroup's keys: j0 .. kend - 1 (uniform: read from pos, not ns).
  var nmax = 0u;
  for (var i = 0u; i < TQ; i++) {
    if (t0 + i < M) { nmax = max(nmax, min(pos[t0 + i] + 1u, CTX)); }
  }
  let kend = min(nmax, cend);
  workgroupBarrier();

  // Lane li < QR * L is lane e = li % L of row rs = li / L; the L lanes of a
  // row keep its softmax state alike.
  let rs = li / L;
  let e = li % L;
  let live = rs < QR;
  var m = NEG_MAX;
  var l = 0.0f;
  var nrow = 0u;  // the row's visible positions in the chunk: j0 .. nrow - 1
  if (live) { nrow = min(ns[rs], cend); }
  // Value quads: lane li's item i is row pr_i = (li + i * WG) / HQ (clamped
  // to QR - 1; written only below QR), quad pq_i = (li + i * WG) % HQ.
  var o: array<vec4f, PR>;
{{O_INIT}}

  if (j0 < kend) {  // the first key tile
{{LOAD_K}}
{{STORE_K}}
  }
  for (var k0 = j0; k0 < kend; k0 += BK) {
    workgroupBarrier();
    // Scores of the lane's keys, and their max.
    let nv = min(max(nrow, k0) - k0, BK);  // the row's visible keys in this tile
{{SCORES}}
    if (live) { red[li] = pm; }
    workgroupBarrier();
    // The value tile into registers; the softmax; the values stored.
{{LOAD_V}}
    var a = 1.0f;
    var psum = 0.0f;  // the lane's share of the row's sum
    if (live) {
      var mt = NEG_MAX;
      for (var f = 0u; f < L; f++) { mt = max(mt, red[rs * L + f]); }
      let mn = max(m, mt);
      if (nv > 0u) { a = exp(m - mn); }
{{PROBS}}
      if (nv > 0u) { m = mn; }
      if (e == 0u) { al[rs] = a; }
    }
{{STORE_V}}
    workgroupBarrier();
    if (live) { red[li] = psum; }
    // The next key tile into registers, then the weighted values of the lane's quads.
    let kn = k0 + BK;
{{LOAD_NEXT_K}}
    let jt = min(kend - k0, BK);
{{VALUES}}
    workgroupBarrier();
    if (live) {
      var sum = 0.0f;
      for (var f = 0u; f < L; f++) { sum = sum + red[rs * L + f]; }
      l = l * a + sum;
    }
{{STORE_NEXT_K}}
  }

  if (live && e == 0u) { al[rs] = l; }  // al's last reads came before the loop's last barrier
  workgroupBarrier();
{{WRITE}}
  if (!direct && live && e == 0u) {
    let t = t0 + rs / HG;
    if (t < M && nrow > j0) {
      let base = ((t * N_HEAD + h0 + rs % HG) * S + c) * (2u + HD);
      part[base] = m;
      part[base + 1u] = l;
    }
  }
}
