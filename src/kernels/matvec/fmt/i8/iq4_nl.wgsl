// IQ4_NL and IQ4_XS (fmt/iq4.wgsl units) as int8 codes: chunk c is the
// levels of the low (c < 2) or high nibbles of two code words, one int8
// level a byte; offset 0.
const LV8{{W}} = array<u32, 16>(0x81u, 0x98u, 0xadu, 0xbfu, 0xcfu, 0xddu, 0xeau, 0xf6u, 0x01u, 0x0du, 0x19u, 0x26u, 0x35u, 0x45u, 0x59u, 0x71u);
fn kb4{{W}}(w: u32, sh: u32) -> u32 {
  let n = nibs4(w, sh);
  return LV8{{W}}[n.x] | (LV8{{W}}[n.y] << 8u) | (LV8{{W}}[n.z] << 16u) | (LV8{{W}}[n.w] << 24u);
}
fn ichunk{{W}}(un: Unit{{W}}, c: u32) -> vec2<u32> {
  let i = (c & 1u) * 2u;
  let sh = select(0u, 4u, c >= 2u);
  return vec2<u32>(kb4{{W}}(un.q[i], sh), kb4{{W}}(un.q[i + 1u], sh));
}
fn ioff{{W}}(un: Unit{{W}}, g: u32) -> i32 { return 0; }
