// Embedding lookup: out[t][j] = row ids[t] of a ggml table, element j, for the
// rows [row_lo, row_hi) held by this chunk (raw blocks, ROW_BYTES bytes per row,
// read as u32 words). Output [n_ids, N_EMBD] f32; one invocation per element,
// the linear id recovered as (wid.x + wid.y * nwg.x) * WG + lid.
struct Params {
  n_out: u32,  // n_ids * N_EMBD
  row_lo: u32,
  row_hi: u32,
  pad: u32,
}
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> ids: array<u32>;    // [n_ids] i32
@group(0) @binding(2) var<storage, read> table: array<u32>;  // [chunk rows][ROW_BYTES] bytes
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

const WG: u32 = {{WG}};
const N_EMBD: u32 = {{N_EMBD}};
const N_VOCAB: u32 = {{N_VOCAB}};
const ROW_BYTES: u32 = {{ROW_BYTES}};

fn byte_at(b: u32) -> u32 {
  return (table[b >> 2u] >> ((b & 3u) * 8u)) & 0xffu;
}

fn sbyte_at(b: u32) -> i32 {  // int8
  return bitcast<i32>(byte_at(b) << 24u) >> 24u;
}

fn f16_at(b: u32) -> f32 {  // b even: both bytes lie in one word
  let h = unpack2x16float(table[b >> 2u]);
  return select(h.x, h.y, (b & 2u) != 0u);
}

{{DECODE}}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) lid: u32) {
  let g = (wid.x + wid.y * nwg.x) * WG + lid;
  if (g >= params.n_out) {
    return;
  }
  let t = g / N_EMBD;
  let j = g % N_EMBD;
  let id = u32(clamp(bitcast<i32>(ids[t]), 0, i32(N_VOCAB) - 1));  // host-checked; clamped for bounds
  if (id < params.row_lo || id >= params.row_hi) {
    return;
  }
  out[g] = decode(id - params.row_lo, j);
}
