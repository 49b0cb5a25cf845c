// Q8_0 block (34 bytes): f16 d, int8 qs[32]; element j = d * qs[j].
// Elements e .. e + 3 (e % 4 == 0) of the row at byte rb: ld loads the raw
// words (issued early by the pipelined kernel), dc decodes them.
struct Raw{{W}} { q: vec2<u32>, d: u32 }
fn ld{{W}}(rb: u32, e: u32) -> Raw{{W}} {
  let bo = rb + (e / 32u) * 34u;
  return Raw{{W}}(ld2{{W}}(bo + 2u + e % 32u), w{{W}}[bo >> 2u]);
}
fn dc{{W}}(rb: u32, e: u32, r: Raw{{W}}) -> vec4<f32> {
  let bo = rb + (e / 32u) * 34u;
  return i8x4(fsh(r.q, bo + 2u + e % 32u)) * f16at(r.d, bo);
}
fn dq4{{W}}(rb: u32, e: u32) -> vec4<f32> { return dc{{W}}(rb, e, ld{{W}}(rb, e)); }
