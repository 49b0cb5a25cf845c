// ONNX MatMulNBits, 4 bits: unit = 32 elements = one vec4<u32> of packed
// data (element 2i the low nibble of byte i); scale groups of min(32, {{BS}})
// elements. side{{W}}: f32 scales per block (row-major, {{NB}} blocks of {{BS}}
// per row), then from word params.side_off zero points: {{ZP_DOC}}.
// Codes q - zp (exact), scale s: y = (q - zp) * s.
struct Unit{{W}} { q: vec4<u32>, r: u32, u: u32 }
fn load{{W}}(r: u32, u: u32) -> Unit{{W}} { return Unit{{W}}(main{{W}}[r * UPR + u], r, u); }
fn zp{{W}}(r: u32, b: u32) -> f32 {
{{ZP_CODE}}
}
fn chunk{{W}}(un: Unit{{W}}, c: u32) -> W8 {
  let z = zp{{W}}(un.r, (un.u * 32u + 8u * c) / {{BS}}u);
  let w = un.q[c];
  return W8(mag4((vec4<u32>(w) >> vec4<u32>(0u, 4u, 8u, 12u)) & vec4<u32>(15u), z),
            mag4((vec4<u32>(w) >> vec4<u32>(16u, 20u, 24u, 28u)) & vec4<u32>(15u), z));
}
fn scale{{W}}(un: Unit{{W}}, g: u32) -> f32 {
  return bitcast<f32>(side{{W}}[un.r * {{NB}}u + (un.u * 32u + g * GROUP) / {{BS}}u]);
}
