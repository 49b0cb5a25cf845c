// Q3_K for the int8 gemm: super-block s = r * K / 256 + kb / 8 of the chunk
// is 28 words of main{{W}}: hmask[32] (words 0..7), qs[64] (8..23),
// scales[12] (24..26) and f16 d (the low half of word 27). Block kb is
// sub-block j = kb % 8 (h = j / 4, q = j % 4): its element l is bits 2q, 2q +
// 1 of qs[32h + l] with bit j of hmask[l] as bit 2 (0..7; the kernel takes
// OFF = 4 times each half's x code sum off). Its two halves of 16 have their
// own scales: d * (sc[2j] - 32) (dw) and d * (sc[2j + 1] - 32) (dh), sc the
// 6-bit scales (blocks.hpp).
fn qw{{W}}(r: u32, kb: u32, w: u32) -> u32 {
  let j = kb % 8u;
  let i = 28u * (r * (K / 256u) + kb / 8u);
  return ((main{{W}}[i + 8u + 8u * (j / 4u) + w] >> (2u * (j % 4u))) & 0x03030303u) |
         (((main{{W}}[i + w] >> j) & 0x01010101u) << 2u);
}
// d times the scale of half `half` of block kb.
fn q3s{{W}}(r: u32, kb: u32, half: u32) -> f32 {
  let i = 28u * (r * (K / 256u) + kb / 8u);
  let s = 2u * (kb % 8u) + half;  // the sub-block of 16
  let lo = (main{{W}}[i + 24u + (s % 8u) / 4u] >> (8u * (s % 4u) + 4u * (s / 8u))) & 15u;
  let hi = (main{{W}}[i + 26u] >> (8u * (s % 4u) + 2u * (s / 4u))) & 3u;
  return unpack2x16float(main{{W}}[i + 27u]).x * (f32(lo | (hi << 4u)) - 32.0);
}
fn dw{{W}}(r: u32, kb: u32) -> f32 { return q3s{{W}}(r, kb, 0u); }
fn dh{{W}}(r: u32, kb: u32) -> f32 { return q3s{{W}}(r, kb, 1u); }
