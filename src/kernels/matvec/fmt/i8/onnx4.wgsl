// ONNX MatMulNBits 4-bit as int8 codes: chunk c is word c of the unit
// (element 2i the low nibble of byte i), its nibbles spread to one byte each
// in element order (0..15); the offset is the block's zero point.
fn ichunk{{W}}(un: Unit{{W}}, c: u32) -> vec2<u32> {
  let w = un.q[c];
  let lo = unpack4xU8(w & 0x0f0f0f0fu);
  let hi = unpack4xU8((w >> 4u) & 0x0f0f0f0fu);
  return vec2<u32>(pack4xU8(vec4<u32>(lo.x, hi.x, lo.y, hi.y)), pack4xU8(vec4<u32>(lo.z, hi.z, lo.w, hi.w)));
}
fn ioff{{W}}(un: Unit{{W}}, g: u32) -> i32 { return i32(zp{{W}}(un.r, (un.u * 32u + g * GROUP) / {{BS}}u)); }
