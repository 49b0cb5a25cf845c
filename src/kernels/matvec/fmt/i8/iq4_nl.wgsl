// IQ4_NL and IQ4_XS (fmt/iq4.wgsl units) as int8 codes: chunk c is the
// levels of the low (c < 2) or high nibbles of two code words, one int8
// level a byte; offset 0.
fn kb4{{W}}(w: u32, sh: u32) -> u32 {
  let b = iq4lv(nibs4(w, sh)) ^ vec4<u32>(0x80u);  // the int8 level's byte
  return b.x | (b.y << 8u) | (b.z << 16u) | (b.w << 24u);
}
fn ichunk{{W}}(un: Unit{{W}}, c: u32) -> vec2<u32> {
  let i = (c & 1u) * 2u;
  let sh = select(0u, 4u, c >= 2u);
  return vec2<u32>(kb4{{W}}(un.q[i], sh), kb4{{W}}(un.q[i + 1u], sh));
}
fn ioff{{W}}(un: Unit{{W}}, g: u32) -> i32 { return 0; }
