// com.microsoft.GatherBlockQuantized over one chunk of the data. The data is
// viewed as [slices][INNER] logical values (slice = m * AXIS_DIM + index),
// rows of COLS values quantized along the row in blocks of 2^BLOCK_SHIFT;
// this chunk holds slices [slice_lo, slice_hi). Output [outer, n_indices, INNER]
// (as f32, or f16 pairs packed in u32); one invocation per output word, the
// linear id recovered as (wid.x + wid.y * nwg.x) * WG + lid.
struct Params {
  n_out: u32,      // output elements
  n_indices: u32,  // elements of the indices tensor
  slice_lo: u32,
  slice_hi: u32,
}
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> indices: array<u32>;  // [n_indices] i32, or [n_indices][2] i64 (lo, hi)
@group(0) @binding(2) var<storage, read> data: array<u32>;     // the chunk's uint8 data, 32 / BITS values per word
@group(0) @binding(3) var<storage, read> scales: array<f32>;   // [chunk rows][N_BLOCKS]
{{ZP_DECL}}
@group(0) @binding({{OUT_BINDING}}) var<storage, read_write> out: array<{{OUT_T}}>;

const WG: u32 = {{WG}};
const INNER: u32 = {{INNER}};
const COLS: u32 = {{COLS}};
const AXIS_DIM: u32 = {{AXIS_DIM}};
const N_BLOCKS: u32 = {{N_BLOCKS}};
const ZP_ROW_BYTES: u32 = {{ZP_ROW_BYTES}};
const BITS: u32 = {{BITS}};
const PER_BYTE: u32 = 8u / BITS;
const PER_WORD: u32 = 32u / BITS;
const MASK: u32 = (1u << BITS) - 1u;
const BLOCK_SHIFT: u32 = {{BLOCK_SHIFT}};
const DEFAULT_ZP: u32 = 1u << (BITS - 1u);
const IDX64: bool = {{IDX64}};

// Index n normalised to [0, AXIS_DIM) (the host has checked the range; the
// clamp keeps every read in bounds whatever the indices hold).
fn index_at(n: u32) -> u32 {
  var v: i32;
  if (IDX64) {
    v = bitcast<i32>(indices[2u * n]);
  } else {
    v = bitcast<i32>(indices[n]);
  }
  if (v < 0) {
    v += i32(AXIS_DIM);
  }
  return u32(clamp(v, 0, i32(AXIS_DIM) - 1));
}

fn zero_point(row: u32, blk: u32) -> u32 {
  {{ZP_CODE}}
}

// Output element o; *hit is false when its slice is not in this chunk.
fn value(o: u32, hit: ptr<function, bool>) -> f32 {
  let k = o % INNER;
  let t = o / INNER;
  let n = t % params.n_indices;
  let m = t / params.n_indices;
  let s = m * AXIS_DIM + index_at(n);
  if (s < params.slice_lo || s >= params.slice_hi) {
    *hit = false;
    return 0.0;
  }
  *hit = true;
  let e = (s - params.slice_lo) * INNER + k;  // logical element within the chunk
  let row = e / COLS;
  let blk = (e % COLS) >> BLOCK_SHIFT;
  let q = (data[e / PER_WORD] >> ((e % PER_WORD) * BITS)) & MASK;
  let zp = zero_point(row, blk);
  return f32(i32(q) - i32(zp)) * scales[row * N_BLOCKS + blk];
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) lid: u32) {
  let g = (wid.x + wid.y * nwg.x) * WG + lid;
  {{STORE}}
}
