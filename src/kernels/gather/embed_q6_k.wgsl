// Q6_K decode (block_q6_K, 210 bytes: ql[128], qh[64], int8 scales[16], f16 d).
// Element i = 128h + 32k + l of a 256-block: low 4 bits from ql[64h + l + 32(k%2)]
// (high nibble when k >= 2), high 2 bits from qh[32h + l] bits 2k..2k+1, scale
// scales[8h + l/16 + 2k]; d * scale * (q - 32), multiplied in that order.
fn decode(row: u32, j: u32) -> f32 {
  let b = row * ROW_BYTES + (j / 256u) * 210u;
  let i = j % 256u;
  let h = i / 128u;
  let k = (i % 128u) / 32u;
  let l = i % 32u;
  let lb = byte_at(b + 64u * h + l + 32u * (k % 2u));
  let lo = select(lb & 15u, lb >> 4u, k >= 2u);
  let hi = (byte_at(b + 128u + 32u * h + l) >> (2u * k)) & 3u;
  let sc = sbyte_at(b + 192u + 8u * h + l / 16u + 2u * k);
  return f16_at(b + 208u) * f32(sc) * f32(i32(lo | (hi << 4u)) - 32);
}
