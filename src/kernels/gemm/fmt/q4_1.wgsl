// Q4_1 block (20 bytes): f16 d, f16 m, qs[16] (nibble order of Q4_0); value q * d + m.
fn dq4{{W}}(rb: u32, e: u32) -> vec4<f32> {
  let bo = rb + (e / 32u) * 20u;
  let j = e % 32u;
  return nib4(word{{W}}(bo + 4u + j % 16u), select(0u, 4u, j >= 16u)) * half{{W}}(bo) + half{{W}}(bo + 2u);
}
