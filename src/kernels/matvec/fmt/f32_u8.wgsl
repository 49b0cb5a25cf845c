// F32 unit = 8 elements (rows of 4096 or more; f32.wgsl takes shorter rows):
// main{{W}}: 2 vec4<u32> of f32 bits.
struct Unit{{W}} { a: vec4<u32>, b: vec4<u32> }
fn load{{W}}(r: u32, u: u32) -> Unit{{W}} {
  let i = 2u * (r * UPR + u);
  return Unit{{W}}(main{{W}}[i], main{{W}}[i + 1u]);
}
fn chunk{{W}}(un: Unit{{W}}, c: u32) -> W8 { return W8(bitcast<vec4<f32>>(un.a), bitcast<vec4<f32>>(un.b)); }
