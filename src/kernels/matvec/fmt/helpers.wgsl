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
