// F16 unit = 32 elements: main{{W}}: 4 vec4<u32>, two f16 per u32. No scale.
// A half h becomes f32 with bit operations and one exact multiply: its
// exponent and mantissa shifted into f32 position give h * 2^-112 (for
// normal halves; subnormal halves become f32 subnormals, which a GPU may
// flush to zero), the sign is copied, and 2^112 restores the value.
struct Unit{{W}} { v0: vec4<u32>, v1: vec4<u32>, v2: vec4<u32>, v3: vec4<u32> }
fn load{{W}}(r: u32, u: u32) -> Unit{{W}} {
  let b = 4u * (r * UPR + u);
  return Unit{{W}}(main{{W}}[b], main{{W}}[b + 1u], main{{W}}[b + 2u], main{{W}}[b + 3u]);
}
fn h2{{W}}(w: u32) -> vec2<u32> {
  return vec2<u32>(((w & 0x7fffu) << 13u) | ((w & 0x8000u) << 16u), ((w >> 3u) & 0x0fffe000u) | (w & 0x80000000u));
}
fn h4{{W}}(v: vec2<u32>) -> vec4<f32> {
  return bitcast<vec4<f32>>(vec4<u32>(h2{{W}}(v.x), h2{{W}}(v.y))) * 5.192296858534828e33;  // 2^112
}
fn chunk{{W}}(un: Unit{{W}}, c: u32) -> W8 {
  let v = select(select(un.v0, un.v1, c == 1u), select(un.v2, un.v3, c == 3u), c >= 2u);
  return W8(h4{{W}}(v.xy), h4{{W}}(v.zw));
}
