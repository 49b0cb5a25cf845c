// IQ4_NL / IQ4_XS codes as int8 levels from a table in workgroup memory,
// shared by the matvec kernel (fmt/iq4_table.wgsl) and the int8 gemm: filled
// once per workgroup (iq4_bytes_init, then a barrier) from iq4lv (the
// kernel's helpers: the level of ggml's kvalues_iq4nl plus 128, by selects).
// Selects cost about 10 instructions a code, a lookup a shift, a mask and
// one load (H100, matvec 4096 x 14336: 41.7 us by selects, 23.0 by lookups).
// Uses the kernel's WG.
var<workgroup> iq4lvb: array<u32, 64>;  // [byte position p][nibble] the int8 level's byte << 8p
fn iq4_bytes_init(li: u32) {
  for (var i = li; i < 64u; i += WG) { iq4lvb[i] = (iq4lv(vec4<u32>(i & 15u)).x ^ 0x80u) << (8u * (i >> 4u)); }
}
// The int8 levels of the nibbles at bit sh (0 or 4) of the 4 bytes of w,
// byte i from byte i of w.
fn iq4bytes(w: u32, sh: u32) -> u32 {
  return iq4lvb[(w >> sh) & 15u] | iq4lvb[16u + ((w >> (sh + 8u)) & 15u)] |
         iq4lvb[32u + ((w >> (sh + 16u)) & 15u)] | iq4lvb[48u + ((w >> (sh + 24u)) & 15u)];
}
