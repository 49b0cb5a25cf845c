// Q6_K for the int8 gemm: super-block s = r * K / 256 + kb / 8 of the chunk
// has its first 208 bytes (ql[128], qh[64], int8 scales[16]) as 52 words of
// main{{W}} and its f16 d in half s % 2 of side{{W}}[s / 2]. Block kb is
// sub-block j = kb % 8 (h = j / 4, q = j % 4): its element l is nibble
// (q >> 1) of ql[64h + l + 32(q & 1)] with bits 2q, 2q + 1 of qh[32h + l] as
// bits 4, 5 (0..63; the kernel takes OFF = 32 times each half's x code sum
// off). Its two halves of 16 have their own scales: d * scales[8h + 2q] (dw,
// words 0..3) and d * scales[8h + 2q + 1] (dh, words 4..7).
fn qw{{W}}(r: u32, kb: u32, w: u32) -> u32 {
  let j = kb % 8u;
  let h = j / 4u;
  let q = j % 4u;
  let i = 52u * (r * (K / 256u) + kb / 8u);
  return ((main{{W}}[i + 16u * h + 8u * (q & 1u) + w] >> (4u * (q >> 1u))) & 0x0f0f0f0fu) |
         (((main{{W}}[i + 32u + 8u * h + w] >> (2u * q)) & 0x03030303u) << 4u);
}
// d times the int8 scale of half `half` of block kb.
fn q6s{{W}}(r: u32, kb: u32, half: u32) -> f32 {
  let s = r * (K / 256u) + kb / 8u;
  let j = kb % 8u;
  let b = 8u * (j / 4u) + 2u * (j % 4u) + half;  // the scale's byte
  let sc = bitcast<i32>(((main{{W}}[52u * s + 48u + b / 4u] >> ((b % 4u) * 8u)) & 255u) << 24u) >> 24u;
  return unpack2x16float(side{{W}}[s >> 1u] >> ((s & 1u) * 16u)).x * f32(sc);
}
fn dw{{W}}(r: u32, kb: u32) -> f32 { return q6s{{W}}(r, kb, 0u); }
fn dh{{W}}(r: u32, kb: u32) -> f32 { return q6s{{W}}(r, kb, 1u); }
