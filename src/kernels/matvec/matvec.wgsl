// Quantized matrix-vector product, generated per model and adapter:
//   y[t, r] = epilogue( sum_e x'[t, e] * W[r, e] ),  x: [M, K] f32, W: [N, K], y: [M, N] f32
// where x' is x, or RMSNorm(x) * nw when the prologue is on.
// A workgroup of WG invocations computes RPW = WG / TPR rows for TOKENS
// tokens (the z axis is the token chunk). TPR invocations share a row: lane
// ln takes units u = ln, ln + TPR, ... of each staged tile (a unit is UNIT
// elements, decoded 8 at a time by the format's chunk function). x is staged
// once per workgroup in workgroup memory, TILE elements per token at a time.
// Lane partial sums are added by {{REDUCE_KIND}}; the epilogue runs once per
// (token, row). Summation order depends only on WG, TPR, TILE and UNROLL and
// is reproduced by the CPU twin (twin.cpp).
{{ENABLE}}
const K: u32 = {{K}};          // input length (elements)
const KP: u32 = {{KP}};        // K padded to whole units
const N: u32 = {{N}};          // output rows in total (y row stride)
const M: u32 = {{M}};          // tokens
const WG: u32 = {{WG}};
const TPR: u32 = {{TPR}};
const RPW: u32 = WG / TPR;
const TOKENS: u32 = {{TOKENS}};
const TILE: u32 = {{TILE}};    // staged elements per token, a multiple of UNIT
const TILE4: u32 = TILE / 4u;
// xs keeps one vec4 of padding after each unit, so the lanes of a row, which
// read units UNIT apart, fall on different banks of workgroup memory.
const UNIT4P: u32 = UNIT / 4u + 1u;
const TILE4P: u32 = (TILE / UNIT) * UNIT4P;
const UNROLL: u32 = {{UNROLL}};
const UNIT: u32 = {{UNIT}};    // elements per unit
const UPR: u32 = KP / UNIT;    // units per row
const EPS: f32 = {{EPS}};

struct Params { row0: u32, rows: u32, side_off: u32, pad: u32 }  // this dispatch's row chunk

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> x4: array<vec4<f32>>;  // [M * K / 4]
{{BINDINGS}}
var<workgroup> xs: array<vec4<f32>, TOKENS * TILE4P>;          // staged x tile, token-major, padded
{{RED_DECL}}
var<workgroup> rs: array<f32, {{RS_SIZE}}>;                     // row sums [weights][TOKENS][RPW]
var<workgroup> nscale: array<f32, TOKENS>;
{{SHARED_EXTRA}}

struct W8 { a: vec4<f32>, b: vec4<f32> }  // 8 decoded weights

// Byte and bit-field extraction with extractBits (one bit-field instruction
// per element where the hardware has one), exact integers either way.
fn i8x4(w: u32) -> vec4<f32> {
  let v = bitcast<i32>(w);
  return vec4<f32>(f32(extractBits(v, 0u, 8u)), f32(extractBits(v, 8u, 8u)), f32(extractBits(v, 16u, 8u)),
                   f32(extractBits(v, 24u, 8u)));
}
fn u8x4(w: u32) -> vec4<f32> {
  return vec4<f32>(f32(extractBits(w, 0u, 8u)), f32(extractBits(w, 8u, 8u)), f32(extractBits(w, 16u, 8u)),
                   f32(extractBits(w, 24u, 8u)));
}
// Nibbles at bit `sh` (0 or 4) of each byte of w.
fn nib4(w: u32, sh: u32) -> vec4<f32> {
  return vec4<f32>(f32(extractBits(w, sh, 4u)), f32(extractBits(w, sh + 8u, 4u)), f32(extractBits(w, sh + 16u, 4u)),
                   f32(extractBits(w, sh + 24u, 4u)));
}
// Bit `b` of each byte of w, as 0.0 or 1.0.
fn bit4(w: u32, b: u32) -> vec4<f32> {
  return vec4<f32>(f32(extractBits(w, b, 1u)), f32(extractBits(w, b + 8u, 1u)), f32(extractBits(w, b + 16u, 1u)),
                   f32(extractBits(w, b + 24u, 1u)));
}
fn f16pair(w: u32, hi: bool) -> f32 {
  let v = unpack2x16float(w);
  return select(v.x, v.y, hi);
}

{{FORMAT}}

{{HOOK_FUNCS}}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32{{SG_ARGS}}) {
  let wg = wid.x + wid.y * nwg.x;        // linear workgroup id (wrapped past 65535)
  let live = wg * RPW < params.rows;     // a padding workgroup still joins the barriers
  let z = wid.z;                         // token chunk
{{LANES}}
  let row = {{ROW_MAP}};                 // row in this chunk's weights
  let valid = live && lr < RPW && row < params.rows;

  // Prologue: per-token statistics of x (RMSNorm), each reduced over WG.
{{PROLOGUE}}

{{ACC_DECL}}
  for (var t0 = 0u; t0 < KP; t0 += TILE) {
    // Stage x[t, t0 .. t0 + TILE) for the chunk's tokens; zeros past K and M.
    for (var i = li; i < TOKENS * TILE4; i += WG) {
      let t = i / TILE4;
      let e = t0 + (i % TILE4) * 4u;
      let tg = z * TOKENS + t;
      var v = vec4<f32>(0.0);
      if (tg < M && e < K) {
        v = x4[(tg * K + e) / 4u];
{{STAGE_HOOK}}
      }
      let j = i % TILE4;
      xs[t * TILE4P + (j / (UNIT / 4u)) * UNIT4P + j % (UNIT / 4u)] = v;
    }
    workgroupBarrier();
    let u0 = t0 / UNIT;
    let u1 = min(KP, t0 + TILE) / UNIT;
    if (valid) {
      for (var u = u0 + ln; u < u1; u += TPR * UNROLL) {
{{UNIT_LOOP}}
      }
    }
    workgroupBarrier();
  }

  // Reduce the TPR lane sums of each row.
{{REDUCE}}
  workgroupBarrier();

  // Epilogue: one invocation per (token, row) of this workgroup.
  for (var e = li; e < TOKENS * RPW; e += WG) {
    let t = e / RPW;
    let slot = e % RPW;
    let tg = z * TOKENS + t;
    let r = {{ROW_MAP_SLOT}};
    if (live && tg < M && r < params.rows) {
      let gr = params.row0 + r;          // row of the whole output
      var v = rs[t * RPW + slot];
{{EPILOGUE}}
    }
  }
}
