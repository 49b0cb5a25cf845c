// ONNX MatMulNBits, 4 bits: unit = 32 elements = one vec4<u32> of packed
// data (element 2i the low nibble of byte i). side{{W}}: f32 scales per block
// (row-major, {{NB}} blocks of {{BS}} per row), then from word params.side_off
// zero points: {{ZP_DOC}}. y = (q - zp) * scale.
struct Unit{{W}} { q: vec4<u32>, r: u32, u: u32 }
fn load{{W}}(r: u32, u: u32) -> Unit{{W}} { return Unit{{W}}(main{{W}}[r * UPR + u], r, u); }
fn zp{{W}}(r: u32, b: u32) -> f32 {
{{ZP_CODE}}
}
fn chunk{{W}}(un: Unit{{W}}, c: u32) -> W8 {
  let b = (un.u * 32u + 8u * c) / {{BS}}u;
  let s = bitcast<f32>(side{{W}}[un.r * {{NB}}u + b]);
  let z = zp{{W}}(un.r, b);
  let w = un.q[c];
  let a = vec4<f32>(f32(w & 15u), f32((w >> 4u) & 15u), f32((w >> 8u) & 15u), f32((w >> 12u) & 15u));
  let d = vec4<f32>(f32((w >> 16u) & 15u), f32((w >> 20u) & 15u), f32((w >> 24u) & 15u), f32(w >> 28u));
  return W8((a - z) * s, (d - z) * s);
}
