// Q2_K unit = 64 elements (quarters 2 (p % 2) and 2 (p % 2) + 1 of half
// h = p / 2 of a 256-element super-block, p = u % 4) = 4 scale groups of 16
// (a unit with a min sums x over at most 4 groups): main{{W}}: each block's
// scales[16] and qs[64] as 5 vec4<u32>; side{{W}}: one u32 per block holding
// f16 d (low) and dmin (high). Element 32q + l of half h (q = 0..3, l =
// 0..31) has code (qs[32h + l] >> 2q) & 3, in sub-block 8h + 2q + l / 16,
// whose scale byte s gives scale d * (s & 15) and min -(dmin * (s >> 4)).
// Unit p's groups are sub-blocks 4p .. 4p + 3: scale word p.
struct Unit{{W}} { qa: vec4<u32>, qb: vec4<u32>, sc: u32, q0: u32, d: f32, m: f32 }
fn load{{W}}(r: u32, u: u32) -> Unit{{W}} {
  let sb = r * (UPR / 4u) + u / 4u;
  let p = u % 4u;
  let base = 5u * sb;
  let dm = unpack2x16float(side{{W}}[sb]);
  return Unit{{W}}(main{{W}}[base + 1u + 2u * (p / 2u)], main{{W}}[base + 2u + 2u * (p / 2u)], main{{W}}[base][p],
                   2u * (p % 2u), dm.x, dm.y);
}
fn chunk{{W}}(un: Unit{{W}}, c: u32) -> W8 {
  let q = un.q0 + c / 4u;  // quarter of the half: bits 2q..2q+1 of each byte
  let l = c % 4u;          // bytes 8l .. 8l + 7 of the half's 32 qs bytes
  let v = select(un.qa, un.qb, l >= 2u);
  let i = (l & 1u) * 2u;
  return W8(mag4(crumbs4(v[i], 2u * q), 0.0), mag4(crumbs4(v[i + 1u], 2u * q), 0.0));
}
fn scale{{W}}(un: Unit{{W}}, g: u32) -> f32 { return un.d * f32((un.sc >> (8u * g)) & 15u); }
fn min{{W}}(un: Unit{{W}}, g: u32) -> f32 { return -(un.m * f32((un.sc >> (8u * g + 4u)) & 15u)); }
