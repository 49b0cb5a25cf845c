// Q6_K unit = 128 elements (half h of a 256-element super-block) = 8 scale
// groups of 16: main{{W}}: each block's ql[128], qh[64] and int8 scales[16]
// as 13 vec4<u32>; side{{W}}: f16 d two per u32. Element 32q + l of the half
// (q = 0..3, l = 0..31) has code ql[64h + l + 32(q & 1)] (nibble q >> 1) |
// ((qh[32h + l] >> 2q) & 3) << 4, minus 32, in group 2q + l / 16, whose scale
// is d * scales[8h + 2q + l / 16].
// fetch (loads only) and decode split load for the pipelined lane loop; a
// Unit is its words plus d, so decode only unpacks d.
struct Unit{{W}} { l0: vec4<u32>, l1: vec4<u32>, l2: vec4<u32>, l3: vec4<u32>, h0: vec4<u32>, h1: vec4<u32>, sc: vec2<u32>, d: f32 }
struct Raw{{W}} { l0: vec4<u32>, l1: vec4<u32>, l2: vec4<u32>, l3: vec4<u32>, h0: vec4<u32>, h1: vec4<u32>, sc: vec2<u32>, s: u32 }
fn fetch{{W}}(r: u32, u: u32) -> Raw{{W}} {
  let sb = r * (UPR / 2u) + u / 2u;
  let h = u % 2u;
  let base = 13u * sb;
  let s = main{{W}}[base + 12u];
  return Raw{{W}}(main{{W}}[base + 4u * h], main{{W}}[base + 4u * h + 1u], main{{W}}[base + 4u * h + 2u],
                  main{{W}}[base + 4u * h + 3u], main{{W}}[base + 8u + 2u * h], main{{W}}[base + 9u + 2u * h],
                  select(s.xy, s.zw, h == 1u), side{{W}}[sb >> 1u]);
}
fn decode{{W}}(w: Raw{{W}}, r: u32, u: u32) -> Unit{{W}} {
  let sb = r * (UPR / 2u) + u / 2u;
  return Unit{{W}}(w.l0, w.l1, w.l2, w.l3, w.h0, w.h1, w.sc, f16pair(w.s, (sb & 1u) == 1u));
}
fn load{{W}}(r: u32, u: u32) -> Unit{{W}} { return decode{{W}}(fetch{{W}}(r, u), r, u); }
// The two high bits at bit b of each byte of w, moved to bits 4..5.
fn hb2{{W}}(w: u32, b: u32) -> vec4<u32> {
  return ((vec4<u32>(w) >> vec4<u32>(b, b + 8u, b + 16u, b + 24u)) & vec4<u32>(3u)) << vec4<u32>(4u);
}
fn chunk{{W}}(un: Unit{{W}}, c: u32) -> W8 {
  let q = c / 4u;          // quarter of the half
  let l = c % 4u;          // bytes 8l .. 8l + 7 of ql / qh
  let lv = select(select(un.l0, un.l1, l >= 2u), select(un.l2, un.l3, l >= 2u), (q & 1u) == 1u);
  let hv = select(un.h0, un.h1, l >= 2u);
  let i = (l & 1u) * 2u;
  let sh = 4u * (q >> 1u);
  return W8(mag4(nibs4(lv[i], sh) | hb2{{W}}(hv[i], 2u * q), 32.0),
            mag4(nibs4(lv[i + 1u], sh) | hb2{{W}}(hv[i + 1u], 2u * q), 32.0));
}
fn scale{{W}}(un: Unit{{W}}, g: u32) -> f32 {
  let sw = un.sc[g / 4u];
  return un.d * f32(bitcast<i32>(sw << (24u - 8u * (g % 4u))) >> 24u);
}
