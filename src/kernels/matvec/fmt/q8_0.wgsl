// Q8_0 unit = one block of 32 = one scale group: main{{W}}: 2 vec4<u32> of
// int8 quants per block, side{{W}}: f16 scales two per u32 (block b in half
// b % 2 of word b / 2). Codes are the int8 values; scale d.
// fetch (the words, loads only) and decode split load for the pipelined
// lane loop (KernelSpec variant kPipeline).
struct Unit{{W}} { q0: vec4<u32>, q1: vec4<u32>, d: f32 }
struct Raw{{W}} { q0: vec4<u32>, q1: vec4<u32>, s: u32 }
fn fetch{{W}}(r: u32, u: u32) -> Raw{{W}} {
  let b = r * UPR + u;
  return Raw{{W}}(main{{W}}[2u * b], main{{W}}[2u * b + 1u], side{{W}}[b >> 1u]);
}
fn decode{{W}}(w: Raw{{W}}, r: u32, u: u32) -> Unit{{W}} {
  return Unit{{W}}(w.q0, w.q1, f16pair(w.s, ((r * UPR + u) & 1u) == 1u));
}
fn load{{W}}(r: u32, u: u32) -> Unit{{W}} { return decode{{W}}(fetch{{W}}(r, u), r, u); }
fn chunk{{W}}(un: Unit{{W}}, c: u32) -> W8 {
  let q = select(un.q0, un.q1, c >= 2u);
  let i = (c & 1u) * 2u;
  // Flipping the sign bit maps int8 v to the byte v + 128.
  return W8(mag4(bytes4(q[i] ^ 0x80808080u), 128.0), mag4(bytes4(q[i + 1u] ^ 0x80808080u), 128.0));
}
fn scale{{W}}(un: Unit{{W}}, g: u32) -> f32 { return un.d; }
