// F16: two elements per u32 (rows start 4-byte aligned since k % 32 == 0).
// ld loads the two words of elements e .. e + 3, dc unpacks them.
struct Raw{{W}} { v: vec2<u32> }
fn ld{{W}}(rb: u32, e: u32) -> Raw{{W}} {
  let i = (rb + 2u * e) >> 2u;
  return Raw{{W}}(vec2<u32>(w{{W}}[i], w{{W}}[i + 1u]));
}
fn dc{{W}}(rb: u32, e: u32, r: Raw{{W}}) -> vec4<f32> {
  return vec4<f32>(unpack2x16float(r.v.x), unpack2x16float(r.v.y));
}
fn dq4{{W}}(rb: u32, e: u32) -> vec4<f32> { return dc{{W}}(rb, e, ld{{W}}(rb, e)); }
