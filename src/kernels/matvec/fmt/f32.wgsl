// F32 unit = 32 elements (rows under 4096; f32_u8.wgsl takes longer rows):
// main{{W}}: 8 vec4<u32> of f32 bits.
struct Unit{{W}} { v: array<vec4<u32>, 8> }
fn load{{W}}(r: u32, u: u32) -> Unit{{W}} {
  let b = 8u * (r * UPR + u);
  return Unit{{W}}(array<vec4<u32>, 8>(main{{W}}[b], main{{W}}[b + 1u], main{{W}}[b + 2u], main{{W}}[b + 3u],
                                       main{{W}}[b + 4u], main{{W}}[b + 5u], main{{W}}[b + 6u], main{{W}}[b + 7u]));
}
fn chunk{{W}}(un: Unit{{W}}, c: u32) -> W8 {
  return W8(bitcast<vec4<f32>>(un.v[2u * c]), bitcast<vec4<f32>>(un.v[2u * c + 1u]));
}
