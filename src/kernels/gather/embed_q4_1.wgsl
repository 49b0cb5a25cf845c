// Q4_1 decode (block_q4_1, 20 bytes: f16 d, f16 m, qs[16]): nibbles as Q4_0;
// q * d + m.
fn decode(row: u32, j: u32) -> f32 {
  let b = row * ROW_BYTES + (j / 32u) * 20u;
  let i = j % 32u;
  let byte = byte_at(b + 4u + i % 16u);
  let q = select(byte & 15u, byte >> 4u, i >= 16u);
  return f32(q) * f16_at(b) + f16_at(b + 2u);
}
