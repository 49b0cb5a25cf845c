// ONNX MatMulNBits, 8 bits: unit = 16 elements = one vec4<u32> of bytes;
// scale groups of min(16, {{BS}}) elements. side{{W}}: f32 scales per block
// ({{NB}} blocks of {{BS}} per row), then from word params.side_off zero
// points: {{ZP_DOC}}. Codes q - zp (exact), scale s.
struct Unit{{W}} { q: vec4<u32>, r: u32, u: u32 }
fn load{{W}}(r: u32, u: u32) -> Unit{{W}} { return Unit{{W}}(main{{W}}[r * UPR + u], r, u); }
fn zp{{W}}(r: u32, b: u32) -> f32 {
{{ZP_CODE}}
}
fn chunk{{W}}(un: Unit{{W}}, c: u32) -> W8 {
  let z = zp{{W}}(un.r, (un.u * 16u + 8u * c) / {{BS}}u);
  return W8(mag4(bytes4(un.q[2u * c]), z), mag4(bytes4(un.q[2u * c + 1u]), z));
}
fn scale{{W}}(un: Unit{{W}}, g: u32) -> f32 {
  return bitcast<f32>(side{{W}}[un.r * {{NB}}u + (un.u * 16u + g * GROUP) / {{BS}}u]);
}
