// Q4_1 unit = one block of 32 = one scale group: main{{W}}: quant bytes as one
// vec4<u32> (nibble order of Q4_0), side{{W}}: one u32 per block holding f16 d
// (low) and m (high). Codes q; scale d, min m (y = d * q + m).
struct Unit{{W}} { q: vec4<u32>, d: f32, m: f32 }
fn load{{W}}(r: u32, u: u32) -> Unit{{W}} {
  let b = r * UPR + u;
  let dm = unpack2x16float(side{{W}}[b]);
  return Unit{{W}}(main{{W}}[b], dm.x, dm.y);
}
fn chunk{{W}}(un: Unit{{W}}, c: u32) -> W8 {
  let i = (c & 1u) * 2u;
  let sh = select(0u, 4u, c >= 2u);
  return W8(mag4(nibs4(un.q[i], sh), 0.0), mag4(nibs4(un.q[i + 1u], sh), 0.0));
}
fn scale{{W}}(un: Unit{{W}}, g: u32) -> f32 { return un.d; }
fn min{{W}}(un: Unit{{W}}, g: u32) -> f32 { return un.m; }
