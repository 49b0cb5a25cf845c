// Q8_0 decode (ggml block_q8_0, 34 bytes: f16 d, int8 qs[32]): element j of a
// row is qs[j % 32] * d of block j / 32. Blocks are only 2-byte aligned.
fn decode(row: u32, j: u32) -> f32 {
  let b = row * ROW_BYTES + (j / 32u) * 34u;
  return f32(sbyte_at(b + 2u + j % 32u)) * f16_at(b);
}
