// Quantized matrix-vector product, generated per model and adapter:
//   y[t, r] = epilogue( sum_e x'[t, e] * W[r, e] ),  x: [M, K] f32, W: [N, K], y: [M, N] f32
// where x' is x, or RMSNorm(x) * nw when the prologue is on.
// A workgroup of WG invocations computes RPW = (WG / TPR) * RPL rows for TOKENS
// tokens (the z axis is the token chunk). TPR invocations share a row: lane
// ln takes units u = ln, ln + TPR, ... of each staged tile (a unit is UNIT
// elements, decoded 8 at a time by the format's chunk function). x is staged
// once per workgroup in workgroup memory, TILE elements per token at a time:
// as f32, or (spec.features.dot4) as int8 codes with a scale per block of
// 32, summed against int8 weight codes by dot4I8Packed. With kGlobalX the
// lane loop reads x from global memory instead (one tile a slice): f32 x,
// or with dot4 the int8 blocks a quantize kernel wrote (xquant.wgsl).
// Lane partial sums are added by {{REDUCE_KIND}}; the epilogue runs once per
// (token, row): on lane 0 of the row's lanes, or, where the row sums go
// through workgroup memory (no subgroups, split-k, RoPE), store_rows.wgsl. With SPLITS > 1 the workgroups of a row group each sum one
// slice of k and store their partial sums; a split_sum kernel adds them. Lane groups of TPR lanes own RPL rows each and decode them
// against the same x reads. Summation order depends only on WG, TPR, TILE and UNROLL and
// is reproduced by the CPU twin (twin.cpp).
{{ENABLE}}
const K: u32 = {{K}};          // input length (elements)
const KP: u32 = {{KP}};        // K padded to whole units
const N: u32 = {{N}};          // output rows in total (y row stride)
const M: u32 = {{M}};          // tokens
const WG: u32 = {{WG}};
const TPR: u32 = {{TPR}};
const RPL: u32 = {{RPL}};      // rows per lane group: lane group lr has rows lr + i * LPW, i < RPL
const LPW: u32 = WG / TPR;     // lane groups per workgroup
const RPW: u32 = LPW * RPL;    // rows per workgroup
const TOKENS: u32 = {{TOKENS}};
const ZC: u32 = (M + TOKENS - 1u) / TOKENS;  // token chunks
const TILE: u32 = {{TILE}};    // staged elements per token, a multiple of UNIT
const TILE4: u32 = TILE / 4u;
// xs keeps one vec4 of padding after each unit, so the lanes of a row, which
// read units UNIT apart, fall on different banks of workgroup memory.
const UNIT4P: u32 = UNIT / 4u + 1u;
const TILE4P: u32 = (TILE / UNIT) * UNIT4P;
const UNROLL: u32 = {{UNROLL}};
const UNIT: u32 = {{UNIT}};    // elements per unit
const GROUP: u32 = {{GROUP}};  // elements per scale group
const UPR: u32 = KP / UNIT;    // units per row
const SPLITS: u32 = {{SPLITS}};  // slices of k: each workgroup sums one (split-k; 1: the whole row)
const UPS: u32 = (UPR + SPLITS - 1u) / SPLITS;  // units per slice
const EPS: f32 = {{EPS}};

struct Params { row0: u32, rows: u32, side_off: u32, pad: u32 }  // this dispatch's row chunk

@group(0) @binding(0) var<uniform> params: Params;
{{X_DECL}}
{{BINDINGS}}
{{XS_DECL}}
{{RED_DECL}}
{{RS_DECL}}
var<workgroup> nscale: array<f32, TOKENS>;
{{SHARED_EXTRA}}

{{HELPERS}}

{{FORMAT}}

{{HOOK_FUNCS}}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32{{SG_ARGS}}) {
  let lin0 = wid.x + wid.y * nwg.x;      // linear workgroup id (wrapped past 65535)
  let z = {{Z_OF}};                        // token chunk
  let lin = {{LIN_OF}};                    // workgroup id within the chunk
  let wg = lin / SPLITS;                 // row group
  let slice = lin % SPLITS;              // slice of k: elements [kb, ke)
  let kb = slice * UPS * UNIT;
  let ke = min(KP, kb + UPS * UNIT);
  let live = wg * RPW < params.rows;     // a padding workgroup still joins the barriers
{{LANES}}
{{ROWS}}
  let valid = live && lr < LPW && row_first < params.rows;
{{FORMAT_INIT}}

  // Prologue: per-token statistics of x (RMSNorm), each reduced over WG.
{{PROLOGUE}}

{{ACC_DECL}}
  for (var t0 = kb; t0 < ke; t0 += TILE) {
    let u0 = t0 / UNIT;
    let u1 = min(ke, t0 + TILE) / UNIT;
{{STAGE}}{{SUMX}}
    if (valid) {
{{LANE_LOOP}}
{{UNIT_LOOP}}
      }
    }
    workgroupBarrier();
  }

  // Reduce the TPR lane sums of each row, then the epilogue of each (token, row).
{{REDUCE}}{{STORE}}}
