// F16 in the matvec layout: main{{W}} holds the chunk's rows of K elements
// (k % 32 == 0, so no padding), two f16 per word, no side.
// ld loads the two words of elements e .. e + 3 of chunk row r, dc unpacks them.
struct Raw{{W}} { v: vec2<u32> }
fn ld{{W}}(r: u32, e: u32) -> Raw{{W}} {
  let i = r * (K / 2u) + e / 2u;
  return Raw{{W}}(vec2<u32>(main{{W}}[i], main{{W}}[i + 1u]));
}
fn dc{{W}}(r: u32, e: u32, v: Raw{{W}}) -> vec4<f32> {
  return vec4<f32>(unpack2x16float(v.v.x), unpack2x16float(v.v.y));
}
fn dq4{{W}}(r: u32, e: u32) -> vec4<f32> { return dc{{W}}(r, e, ld{{W}}(r, e)); }
