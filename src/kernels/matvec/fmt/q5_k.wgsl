// Q5_K unit = 64 elements = 2 scale groups (sub-blocks 2p, 2p+1 of a
// super-block): main{{W}}: each 176-byte block as 11 vec4<u32>: [d, dmin,
// scales[12]], qh[32] (2 vec4), qs[128]. Element l of sub-block j takes bit j
// of qh[l] as bit 4. Codes q (5 bits); scale d * sc, min -(dmin * m).
// fetch (loads only) and decode split load for the pipelined lane loop.
struct Unit{{W}} { qa: vec4<u32>, qb: vec4<u32>, ha: vec4<u32>, hb: vec4<u32>, d1: f32, m1: f32, d2: f32, m2: f32, p: u32 }
struct Raw{{W}} { h: vec4<u32>, qa: vec4<u32>, qb: vec4<u32>, ha: vec4<u32>, hb: vec4<u32> }
{{KSCALE}}
fn fetch{{W}}(r: u32, u: u32) -> Raw{{W}} {
  let sb = r * (UPR / 4u) + u / 4u;
  let p = u % 4u;
  return Raw{{W}}(main{{W}}[11u * sb], main{{W}}[11u * sb + 3u + 2u * p], main{{W}}[11u * sb + 4u + 2u * p],
                  main{{W}}[11u * sb + 1u], main{{W}}[11u * sb + 2u]);
}
fn decode{{W}}(w: Raw{{W}}, r: u32, u: u32) -> Unit{{W}} {
  let p = u % 4u;
  let dd = unpack2x16float(w.h.x);
  let s = scmin2{{W}}(w.h, p);  // (scale, min) of sub-blocks 2p and 2p + 1
  return Unit{{W}}(w.qa, w.qb, w.ha, w.hb, dd.x * f32(s.x), -(dd.y * f32(s.y)), dd.x * f32(s.z), -(dd.y * f32(s.w)), p);
}
fn load{{W}}(r: u32, u: u32) -> Unit{{W}} { return decode{{W}}(fetch{{W}}(r, u), r, u); }
fn chunk{{W}}(un: Unit{{W}}, c: u32) -> W8 {
  let l = c % 4u;
  let q = select(un.qa, un.qb, l >= 2u);
  let hh = select(un.ha, un.hb, l >= 2u);
  let i = (l & 1u) * 2u;
  let hi = c >= 4u;
  let sh = select(0u, 4u, hi);
  let bit = 2u * un.p + select(0u, 1u, hi);
  return W8(mag4(nibs4(q[i], sh) | hbit4(hh[i], bit), 0.0), mag4(nibs4(q[i + 1u], sh) | hbit4(hh[i + 1u], bit), 0.0));
}
fn scale{{W}}(un: Unit{{W}}, g: u32) -> f32 { return select(un.d1, un.d2, g == 1u); }
fn min{{W}}(un: Unit{{W}}, g: u32) -> f32 { return select(un.m1, un.m2, g == 1u); }
