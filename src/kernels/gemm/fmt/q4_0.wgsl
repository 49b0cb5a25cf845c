// Q4_0 block (18 bytes): f16 d, qs[16]; element j < 16 is the low nibble of
// qs[j], j >= 16 the high nibble of qs[j - 16]; value (q - 8) * d.
// ld loads the raw words of elements e .. e + 3, dc decodes them.
struct Raw{{W}} { q: vec2<u32>, d: u32 }
fn ld{{W}}(rb: u32, e: u32) -> Raw{{W}} {
  let bo = rb + (e / 32u) * 18u;
  return Raw{{W}}(ld2{{W}}(bo + 2u + (e % 32u) % 16u), w{{W}}[bo >> 2u]);
}
fn dc{{W}}(rb: u32, e: u32, r: Raw{{W}}) -> vec4<f32> {
  let bo = rb + (e / 32u) * 18u;
  let j = e % 32u;
  return (nib4(fsh(r.q, bo + 2u + j % 16u), select(0u, 4u, j >= 16u)) - 8.0) * f16at(r.d, bo);
}
fn dq4{{W}}(rb: u32, e: u32) -> vec4<f32> { return dc{{W}}(rb, e, ld{{W}}(rb, e)); }
