// Q4_K unit = 64 elements = 2 scale groups (sub-blocks 2p and 2p+1 of a
// 256-element super-block): main{{W}}: each 144-byte block as 9 vec4<u32>: [d,
// dmin, scales[12]], then qs[128]. Sub-block 2p reads the low nibbles of qs
// bytes 32p..32p+31, sub-block 2p+1 their high nibbles. Codes q; group g has
// scale d * sc and min -(dmin * m): y = (d*sc)*q - (dmin*m).
// fetch (loads only) and decode split load for the pipelined lane loop.
struct Unit{{W}} { qa: vec4<u32>, qb: vec4<u32>, d1: f32, m1: f32, d2: f32, m2: f32 }
struct Raw{{W}} { h: vec4<u32>, qa: vec4<u32>, qb: vec4<u32> }
{{KSCALE}}
fn fetch{{W}}(r: u32, u: u32) -> Raw{{W}} {
  let sb = r * (UPR / 4u) + u / 4u;
  let p = u % 4u;
  return Raw{{W}}(main{{W}}[9u * sb], main{{W}}[9u * sb + 1u + 2u * p], main{{W}}[9u * sb + 2u + 2u * p]);
}
fn decode{{W}}(w: Raw{{W}}, r: u32, u: u32) -> Unit{{W}} {
  let dd = unpack2x16float(w.h.x);
  let s = scmin2{{W}}(w.h, u % 4u);  // (scale, min) of sub-blocks 2p and 2p + 1
  return Unit{{W}}(w.qa, w.qb, dd.x * f32(s.x), -(dd.y * f32(s.y)), dd.x * f32(s.z), -(dd.y * f32(s.w)));
}
fn load{{W}}(r: u32, u: u32) -> Unit{{W}} { return decode{{W}}(fetch{{W}}(r, u), r, u); }
fn chunk{{W}}(un: Unit{{W}}, c: u32) -> W8 {
  let l = c % 4u;  // bytes 8l .. 8l + 7 of the 32
  let q = select(un.qa, un.qb, l >= 2u);
  let i = (l & 1u) * 2u;
  let sh = select(0u, 4u, c >= 4u);
  return W8(mag4(nibs4(q[i], sh), 0.0), mag4(nibs4(q[i + 1u], sh), 0.0));
}
fn scale{{W}}(un: Unit{{W}}, g: u32) -> f32 { return select(un.d1, un.d2, g == 1u); }
fn min{{W}}(un: Unit{{W}}, g: u32) -> f32 { return select(un.m1, un.m2, g == 1u); }
