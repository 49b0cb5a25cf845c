// F32 decode: element j of a row is word j.
fn decode(row: u32, j: u32) -> f32 {
  return bitcast<f32>(table[row * (ROW_BYTES / 4u) + j]);
}
