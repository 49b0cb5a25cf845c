// Decode helpers shared by the format snippets (fmt/*.wgsl) in every kernel
// that reads the matvec layout: the matvec kernel and the row gather.
struct W8 { a: vec4<f32>, b: vec4<f32> }  // 8 raw codes (or values, for float formats)

// Codes become floats without int-to-float conversions (an eighth-rate
// instruction on many GPUs): a code v < 2^23 goes into the mantissa of 2^23,
// then 2^23 + off is subtracted, giving v - off exactly (off a small integer).
fn mag4(v: vec4<u32>, off: f32) -> vec4<f32> {
  return bitcast<vec4<f32>>(v | vec4<u32>(0x4B000000u)) - (8388608.0 + off);
}
// Byte i of w in lane i.
fn bytes4(w: u32) -> vec4<u32> { return (vec4<u32>(w) >> vec4<u32>(0u, 8u, 16u, 24u)) & vec4<u32>(255u); }
// The nibble at bit `sh` (0 or 4) of byte i of w in lane i.
fn nibs4(w: u32, sh: u32) -> vec4<u32> {
  return (vec4<u32>(w) >> vec4<u32>(sh, sh + 8u, sh + 16u, sh + 24u)) & vec4<u32>(15u);
}
// The 2-bit field at bit `sh` (0, 2, 4 or 6) of byte i of w in lane i.
fn crumbs4(w: u32, sh: u32) -> vec4<u32> {
  return (vec4<u32>(w) >> vec4<u32>(sh, sh + 8u, sh + 16u, sh + 24u)) & vec4<u32>(3u);
}
// Bit `b` of byte i of w, moved to bit 4 (the fifth bit of a 5-bit code).
fn hbit4(w: u32, b: u32) -> vec4<u32> {
  return ((vec4<u32>(w) >> vec4<u32>(b, b + 8u, b + 16u, b + 24u)) & vec4<u32>(1u)) << vec4<u32>(4u);
}
fn f16pair(w: u32, hi: bool) -> f32 {
  let v = unpack2x16float(w);
  return select(v.x, v.y, hi);
}
// Four f16 values (two per word, low half first) as f32 by unpack2x16float.
// A subnormal half may come out as 0 where the GPU flushes subnormals. H200,
// against a decode by bit operations (docs/perf/2026-12-01-session10-h200.md,
// two processes each): f16 4096 x 14336 35.0 -> 34.4 us at batch 1 and 65.0
// -> 59.8 at batch 8, 14336 x 4096 36.3 -> 35.4 and 69.6 -> 64.3.
fn f16x4(v: vec2<u32>) -> vec4<f32> { return vec4<f32>(unpack2x16float(v.x), unpack2x16float(v.y)); }
// Four bf16 values (two per word, low half first) as f32.
fn bf16x4(v: vec2<u32>) -> vec4<f32> {
  return bitcast<vec4<f32>>(vec4<u32>(v.x << 16u, v.x & 0xffff0000u, v.y << 16u, v.y & 0xffff0000u));
}
// IQ4_NL / IQ4_XS levels: for nibbles n (0..15) the level of ggml's
// kvalues_iq4nl plus 128 (1..241), picked from four packed words by selects
// (an indexed const array was spilled: 210 us for 4096 x 14336 on the H100).
// The matvec kernel looks them up in workgroup memory instead
// (fmt/iq4_table.wgsl); the row gather uses fmt/iq4_select.wgsl.
fn iq4lv(n: vec4<u32>) -> vec4<u32> {
  let b4 = (n & vec4<u32>(4u)) != vec4<u32>(0u);
  let w = select(select(vec4<u32>(0x3f2d1801u), vec4<u32>(0x766a5d4fu), b4),
                 select(vec4<u32>(0xa6998d81u), vec4<u32>(0xf1d9c5b5u), b4), n >= vec4<u32>(8u));
  return (w >> ((n & vec4<u32>(3u)) * 8u)) & vec4<u32>(255u);
}
