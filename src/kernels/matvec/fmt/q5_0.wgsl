// Q5_0 unit = one block of 32 = one scale group: main{{W}}: low-nibble bytes
// as one vec4<u32>, side{{W}}: the 32 high bits (qh) of each block, then from
// word params.side_off f16 scales two per u32. Bit j of qh is bit 4 of
// element j. Codes q - 16; scale d.
struct Unit{{W}} { q: vec4<u32>, qh: u32, d: f32 }
fn load{{W}}(r: u32, u: u32) -> Unit{{W}} {
  let b = r * UPR + u;
  return Unit{{W}}(main{{W}}[b], side{{W}}[b], f16pair(side{{W}}[params.side_off + (b >> 1u)], (b & 1u) == 1u));
}
// Bits 0..3 and 4..7 of h, each moved to bit 4 of its lane.
fn hlo{{W}}(h: u32) -> vec4<u32> { return ((vec4<u32>(h) << vec4<u32>(4u, 3u, 2u, 1u)) & vec4<u32>(16u)); }
fn hhi{{W}}(h: u32) -> vec4<u32> { return ((vec4<u32>(h) >> vec4<u32>(0u, 1u, 2u, 3u)) & vec4<u32>(16u)); }
fn chunk{{W}}(un: Unit{{W}}, c: u32) -> W8 {
  let i = (c & 1u) * 2u;
  let sh = select(0u, 4u, c >= 2u);
  let h = un.qh >> (8u * c);  // bits of the chunk's 8 elements
  return W8(mag4(nibs4(un.q[i], sh) | hlo{{W}}(h), 16.0), mag4(nibs4(un.q[i + 1u], sh) | hhi{{W}}(h), 16.0));
}
fn scale{{W}}(un: Unit{{W}}, g: u32) -> f32 { return un.d; }
