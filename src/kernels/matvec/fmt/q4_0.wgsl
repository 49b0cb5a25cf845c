// Q4_0 unit = one block of 32 = one scale group: main{{W}}: the 16 quant
// bytes as one vec4<u32> (element j < 16 is the low nibble of byte j, element
// j + 16 its high nibble), side{{W}}: f16 scales two per u32. Codes q - 8; scale d.
// fetch (loads only) and decode split load for the pipelined lane loop.
struct Unit{{W}} { q: vec4<u32>, d: f32 }
struct Raw{{W}} { q: vec4<u32>, s: u32 }
fn fetch{{W}}(r: u32, u: u32) -> Raw{{W}} {
  let b = r * UPR + u;
  return Raw{{W}}(main{{W}}[b], side{{W}}[b >> 1u]);
}
fn decode{{W}}(w: Raw{{W}}, r: u32, u: u32) -> Unit{{W}} {
  return Unit{{W}}(w.q, f16pair(w.s, ((r * UPR + u) & 1u) == 1u));
}
fn load{{W}}(r: u32, u: u32) -> Unit{{W}} { return decode{{W}}(fetch{{W}}(r, u), r, u); }
fn chunk{{W}}(un: Unit{{W}}, c: u32) -> W8 {
  let i = (c & 1u) * 2u;
  let sh = select(0u, 4u, c >= 2u);
  return W8(mag4(nibs4(un.q[i], sh), 8.0), mag4(nibs4(un.q[i + 1u], sh), 8.0));
}
fn scale{{W}}(un: Unit{{W}}, g: u32) -> f32 { return un.d; }
