// BF16 in the matvec layout: main{{W}} holds the chunk's rows of K elements
// (k % 32 == 0, so no padding), two bf16 per word (low half first), no side.
// ld loads the two words of elements e .. e + 3 of chunk row r, dc widens
// them (a bf16 is the top half of its f32).
struct Raw{{W}} { v: vec2<u32> }
fn ld{{W}}(r: u32, e: u32) -> Raw{{W}} {
  let i = r * (K / 2u) + e / 2u;
  return Raw{{W}}(vec2<u32>(main{{W}}[i], main{{W}}[i + 1u]));
}
fn dc{{W}}(r: u32, e: u32, v: Raw{{W}}) -> vec4<f32> {
  return bitcast<vec4<f32>>(vec4<u32>(v.v.x << 16u, v.v.x & 0xffff0000u, v.v.y << 16u, v.v.y & 0xffff0000u));
}
fn dq4{{W}}(r: u32, e: u32) -> vec4<f32> { return dc{{W}}(r, e, ld{{W}}(r, e)); }
