// Q4_1 block (20 bytes): f16 d, f16 m, qs[16] (nibble order of Q4_0); value q * d + m.
// Blocks are 4-byte aligned (rows of 20 * k / 32 bytes), so d and m share a word.
// ld loads the raw words of elements e .. e + 3, dc decodes them.
struct Raw{{W}} { q: vec2<u32>, dm: u32 }
fn ld{{W}}(rb: u32, e: u32) -> Raw{{W}} {
  let bo = rb + (e / 32u) * 20u;
  return Raw{{W}}(ld2{{W}}(bo + 4u + (e % 32u) % 16u), w{{W}}[bo >> 2u]);
}
fn dc{{W}}(rb: u32, e: u32, r: Raw{{W}}) -> vec4<f32> {
  let bo = rb + (e / 32u) * 20u;
  let j = e % 32u;
  return nib4(fsh(r.q, bo + 4u + j % 16u), select(0u, 4u, j >= 16u)) * f16at(r.dm, bo) + f16at(r.dm, bo + 2u);
}
fn dq4{{W}}(rb: u32, e: u32) -> vec4<f32> { return dc{{W}}(rb, e, ld{{W}}(rb, e)); }
