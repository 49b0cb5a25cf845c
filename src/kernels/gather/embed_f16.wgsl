// F16 decode: element j of a row is the f16 at byte 2j.
fn decode(row: u32, j: u32) -> f32 {
  return f16_at(row * ROW_BYTES + 2u * j);
}
