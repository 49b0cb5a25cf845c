// Q3_K unit = 128 elements (half h of a 256-element super-block) = 8 scale
// groups of 16: main{{W}}: each 110-byte block and 2 bytes of padding as 7
// vec4<u32>: hmask[32], qs[64], then scales[12] and d (the low half of the
// last word). Element 32q + l of the half (q = 0..3, l = 0..31) has code
// ((qs[32h + l] >> 2q) & 3) | (bit 4h + q of hmask[l]) << 2, minus 4, in
// group 2q + l / 16, whose scale is d * (sc - 32), sc = sub-block 8h + 2q +
// l / 16's 6-bit scale (blocks.hpp).
struct Unit{{W}} { ma: vec4<u32>, mb: vec4<u32>, qa: vec4<u32>, qb: vec4<u32>, sc: vec4<u32>, h: u32, d: f32 }
fn load{{W}}(r: u32, u: u32) -> Unit{{W}} {
  let sb = r * (UPR / 2u) + u / 2u;
  let h = u % 2u;
  let base = 7u * sb;
  let s = main{{W}}[base + 6u];
  return Unit{{W}}(main{{W}}[base], main{{W}}[base + 1u], main{{W}}[base + 2u + 2u * h], main{{W}}[base + 3u + 2u * h],
                   s, h, unpack2x16float(s.w).x);
}
// Bit `b` of byte i of w, moved to bit 2 (the third bit of a 3-bit code).
fn hb3{{W}}(w: u32, b: u32) -> vec4<u32> {
  return ((vec4<u32>(w) >> vec4<u32>(b, b + 8u, b + 16u, b + 24u)) & vec4<u32>(1u)) << vec4<u32>(2u);
}
fn chunk{{W}}(un: Unit{{W}}, c: u32) -> W8 {
  let q = c / 4u;  // quarter of the half: bits 2q..2q+1 of each qs byte
  let l = c % 4u;  // bytes 8l .. 8l + 7 of the half's 32 qs bytes and of hmask
  let v = select(un.qa, un.qb, l >= 2u);
  let m = select(un.ma, un.mb, l >= 2u);
  let i = (l & 1u) * 2u;
  let b = 4u * un.h + q;
  return W8(mag4(crumbs4(v[i], 2u * q) | hb3{{W}}(m[i], b), 4.0),
            mag4(crumbs4(v[i + 1u], 2u * q) | hb3{{W}}(m[i + 1u], b), 4.0));
}
fn scale{{W}}(un: Unit{{W}}, g: u32) -> f32 {
  let lo = (un.sc[g / 4u] >> (8u * (g % 4u) + 4u * un.h)) & 15u;
  let hi = (un.sc.z >> (8u * (g % 4u) + 2u * (2u * un.h + g / 4u))) & 3u;
  return un.d * (f32(lo | (hi << 4u)) - 32.0);
}
