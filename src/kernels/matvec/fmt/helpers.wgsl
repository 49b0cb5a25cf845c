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
// Bit `b` of byte i of w, moved to bit 4 (the fifth bit of a 5-bit code).
fn hbit4(w: u32, b: u32) -> vec4<u32> {
  return ((vec4<u32>(w) >> vec4<u32>(b, b + 8u, b + 16u, b + 24u)) & vec4<u32>(1u)) << vec4<u32>(4u);
}
fn f16pair(w: u32, hi: bool) -> f32 {
  let v = unpack2x16float(w);
  return select(v.x, v.y, hi);
}
// Four f16 values (two per word, low half first) as f32, with bit operations
// and one exact multiply: a half's exponent and mantissa shifted into f32
// position give h * 2^-112 (for normal halves; subnormal halves become f32
// subnormals, which a GPU may flush to zero), the sign is copied, and 2^112
// restores the value.
fn f16bits2(w: u32) -> vec2<u32> {
  return vec2<u32>(((w & 0x7fffu) << 13u) | ((w & 0x8000u) << 16u), ((w >> 3u) & 0x0fffe000u) | (w & 0x80000000u));
}
fn f16x4(v: vec2<u32>) -> vec4<f32> {
  return bitcast<vec4<f32>>(vec4<u32>(f16bits2(v.x), f16bits2(v.y))) * 5.192296858534828e33;  // 2^112
}
// Four bf16 values (two per word, low half first) as f32.
fn bf16x4(v: vec2<u32>) -> vec4<f32> {
  return bitcast<vec4<f32>>(vec4<u32>(v.x << 16u, v.x & 0xffff0000u, v.y << 16u, v.y & 0xffff0000u));
}
