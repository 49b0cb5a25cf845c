// Q5_1 unit = one block of 32 = one scale group: main{{W}}: low-nibble bytes
// as one vec4<u32>, side{{W}}: qh of each block, then from word
// params.side_off one u32 per block holding f16 d (low) and m (high).
// Codes q (5 bits); scale d, min m.
struct Unit{{W}} { q: vec4<u32>, qh: u32, d: f32, m: f32 }
fn load{{W}}(r: u32, u: u32) -> Unit{{W}} {
  let b = r * UPR + u;
  let dm = unpack2x16float(side{{W}}[params.side_off + b]);
  return Unit{{W}}(main{{W}}[b], side{{W}}[b], dm.x, dm.y);
}
fn hlo{{W}}(h: u32) -> vec4<u32> { return ((vec4<u32>(h) << vec4<u32>(4u, 3u, 2u, 1u)) & vec4<u32>(16u)); }
fn hhi{{W}}(h: u32) -> vec4<u32> { return ((vec4<u32>(h) >> vec4<u32>(0u, 1u, 2u, 3u)) & vec4<u32>(16u)); }
fn chunk{{W}}(un: Unit{{W}}, c: u32) -> W8 {
  let i = (c & 1u) * 2u;
  let sh = select(0u, 4u, c >= 2u);
  let h = un.qh >> (8u * c);
  return W8(mag4(nibs4(un.q[i], sh) | hlo{{W}}(h), 0.0), mag4(nibs4(un.q[i + 1u], sh) | hhi{{W}}(h), 0.0));
}
fn scale{{W}}(un: Unit{{W}}, g: u32) -> f32 { return un.d; }
fn min{{W}}(un: Unit{{W}}, g: u32) -> f32 { return un.m; }
