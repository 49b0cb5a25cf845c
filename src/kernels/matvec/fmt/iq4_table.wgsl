// IQ4_NL / IQ4_XS levels from tables in workgroup memory, filled once per
// workgroup (iq4_init, then a barrier) from iq4lv (fmt/helpers.wgsl). Selects
// cost about 10 instructions a code, which made the matvec ALU-bound
// (41.7 us for 4096 x 14336 on the H100, against Q4_0's 16.2); a lookup
// costs a shift, a mask and one load. Same functions as fmt/iq4_select.wgsl.
var<workgroup> iq4lvf: array<f32, 16>;  // [nibble] the level as f32
var<workgroup> iq4lvb: array<u32, 64>;  // [byte position p][nibble] the int8 level's byte << 8p
fn iq4_init(li: u32) {
  for (var i = li; i < 64u; i += WG) {
    let n = vec4<u32>(i & 15u);
    iq4lvb[i] = ((iq4lv(n).x ^ 0x80u)) << (8u * (i >> 4u));
    if (i < 16u) { iq4lvf[i] = mag4(iq4lv(n), 128.0).x; }
  }
}
// The levels of the nibbles at bit sh (0 or 4) of the 4 bytes of w.
fn iq4levels(w: u32, sh: u32) -> vec4<f32> {
  let n = nibs4(w, sh);
  return vec4<f32>(iq4lvf[n.x], iq4lvf[n.y], iq4lvf[n.z], iq4lvf[n.w]);
}
// The same levels as 4 int8 bytes, byte i from byte i of w.
fn iq4bytes(w: u32, sh: u32) -> u32 {
  return iq4lvb[(w >> sh) & 15u] | iq4lvb[16u + ((w >> (sh + 8u)) & 15u)] |
         iq4lvb[32u + ((w >> (sh + 16u)) & 15u)] | iq4lvb[48u + ((w >> (sh + 24u)) & 15u)];
}
