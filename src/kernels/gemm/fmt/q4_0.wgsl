// Q4_0 block (18 bytes): f16 d, qs[16]; element j < 16 is the low nibble of
// qs[j], j >= 16 the high nibble of qs[j - 16]; value (q - 8) * d.
fn dq4{{W}}(rb: u32, e: u32) -> vec4<f32> {
  let bo = rb + (e / 32u) * 18u;
  let j = e % 32u;
  return (nib4(word{{W}}(bo + 2u + j % 16u), select(0u, 4u, j >= 16u)) - 8.0) * half{{W}}(bo);
}
