// Q5_0 unit = one block of 32: main{{W}}: low-nibble bytes as one vec4<u32>,
// side{{W}}: the 32 high bits (qh) of each block, then from word params.side_off
// f16 scales two per u32. Bit j of qh is bit 4 of element j.
struct Unit{{W}} { q: vec4<u32>, qh: u32, d: f32 }
fn load{{W}}(r: u32, u: u32) -> Unit{{W}} {
  let b = r * UPR + u;
  return Unit{{W}}(main{{W}}[b], side{{W}}[b], f16pair(side{{W}}[params.side_off + (b >> 1u)], (b & 1u) == 1u));
}
fn chunk{{W}}(un: Unit{{W}}, c: u32) -> W8 {
  let i = (c & 1u) * 2u;
  let sh = select(0u, 4u, c >= 2u);
  let h = un.qh >> (8u * c);  // bits of the chunk's 8 elements
  let ha = vec4<f32>(f32(h & 1u), f32((h >> 1u) & 1u), f32((h >> 2u) & 1u), f32((h >> 3u) & 1u));
  let hb = vec4<f32>(f32((h >> 4u) & 1u), f32((h >> 5u) & 1u), f32((h >> 6u) & 1u), f32((h >> 7u) & 1u));
  return W8(un.d * (nib4(un.q[i], sh) + 16.0 * ha - 16.0), un.d * (nib4(un.q[i + 1u], sh) + 16.0 * hb - 16.0));
}
