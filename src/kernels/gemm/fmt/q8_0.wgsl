// Q8_0 block (34 bytes): f16 d, int8 qs[32]; element j = d * qs[j].
// Elements e .. e + 3 (e % 4 == 0) of the row at byte rb.
fn dq4{{W}}(rb: u32, e: u32) -> vec4<f32> {
  let bo = rb + (e / 32u) * 34u;
  return i8x4(word{{W}}(bo + 2u + e % 32u)) * half{{W}}(bo);
}
