// Q5_0 for the int8 gemm: block b = r * KB + kb of the chunk has its qs[16]
// as 4 words of main{{W}} (the nibble order of Q4_0), its qh (bit j is bit 4
// of element j) in side{{W}}[b] and its f16 d in half b % 2 of
// side{{W}}[params.rows * KB + b / 2] (the side's second section). Word w of
// codes (elements 4w .. 4w + 3) is one code a byte, 0..31; the kernel takes
// OFF = 16 times the x code sum off.
fn qw{{W}}(r: u32, kb: u32, w: u32) -> u32 {
  let b = r * KB + kb;
  let h = (side{{W}}[b] >> (4u * w)) & 15u;  // bit 4 of the word's four codes
  return ((main{{W}}[4u * b + w % 4u] >> select(0u, 4u, w >= 4u)) & 0x0f0f0f0fu) |
         (((h * 0x00204081u) & 0x01010101u) << 4u);
}
fn dw{{W}}(r: u32, kb: u32) -> f32 {
  let b = r * KB + kb;
  return unpack2x16float(side{{W}}[params.rows * KB + (b >> 1u)] >> ((b & 1u) * 16u)).x;
}
