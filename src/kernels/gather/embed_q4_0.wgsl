// Q4_0 decode (block_q4_0, 18 bytes: f16 d, qs[16]): element i < 16 of a block
// is the low nibble of qs[i], element 16 + i the high nibble; (q - 8) * d.
fn decode(row: u32, j: u32) -> f32 {
  let b = row * ROW_BYTES + (j / 32u) * 18u;
  let i = j % 32u;
  let byte = byte_at(b + 2u + i % 16u);
  let q = select(byte & 15u, byte >> 4u, i >= 16u);
  return f32(i32(q) - 8) * f16_at(b);
}
