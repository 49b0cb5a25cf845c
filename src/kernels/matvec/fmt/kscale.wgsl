// Scale and min decoding shared by the Q4_K and Q5_K matvec snippets: the
// 6-bit (scale, min) pairs of sub-blocks 2p and 2p + 1 (ggml's
// get_scale_min_k4 for j = 2p, 2p + 1) from words 1..3 of a block's first
// vec4 (its 12-byte scales array; word 1 holds bytes 0..3). Branch-free, so
// the lanes of a row, which take different p, do not diverge: bytes jj and
// jj + 1 (jj = 2 (p % 2)) of each word, then the p < 2 or the p >= 2 form.
// Returns (scale 2p, min 2p, scale 2p + 1, min 2p + 1). H200, int8 x, against
// a per-byte decode with branches (docs/perf/2026-12-01-session10-h200.md):
// q4_K 4096 x 14336 21.7 -> 18.4 us at batch 1, 55.9 -> 42.0 at batch 8.
fn scmin2{{W}}(h: vec4<u32>, p: u32) -> vec4<u32> {
  let s = 16u * (p & 1u);
  let sh = vec2<u32>(s, s + 8u);
  let a = vec2<u32>(h.y) >> sh;  // bytes jj, jj + 1 of scales[0..3]
  let b = vec2<u32>(h.z) >> sh;  // of scales[4..7]
  let c = vec2<u32>(h.w) >> sh;  // of scales[8..11]
  let m63 = vec2<u32>(63u);
  let m15 = vec2<u32>(15u);
  let top = vec2<u32>(0x30u);  // bits 6..7 of a byte, moved down to bits 4..5
  let sc = select(a & m63, (c & m15) | ((a >> vec2<u32>(2u)) & top), p >= 2u);
  let mn = select(b & m63, ((c >> vec2<u32>(4u)) & m15) | ((b >> vec2<u32>(2u)) & top), p >= 2u);
  return vec4<u32>(sc.x, mn.x, sc.y, mn.y);
}
