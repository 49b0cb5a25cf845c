// Q2_K for the int8 gemm: super-block s = r * K / 256 + kb / 8 of the chunk
// is 20 words of main{{W}}: scales[16] (words 0..3), then qs[64] (4..19); its
// f16 d (low) and dmin (high) are side{{W}}[s]. Block kb is sub-block
// j = kb % 8 (h = j / 4, q = j % 4): its element l is bits 2q, 2q + 1 of
// qs[32h + l] (0..3, no offset). Its two halves of 16 have their own scale
// byte sc = scales[2j + half]: scale d * (sc & 15) (dw, dh) and min
// -(dmin * (sc >> 4)) (mw, mh).
fn qw{{W}}(r: u32, kb: u32, w: u32) -> u32 {
  let j = kb % 8u;
  return (main{{W}}[20u * (r * (K / 256u) + kb / 8u) + 4u + 8u * (j / 4u) + w] >> (2u * (j % 4u))) & 0x03030303u;
}
// The scale byte of half `half` of block kb, and the super-block's d and dmin.
fn q2sc{{W}}(r: u32, kb: u32, half: u32) -> u32 {
  let i = 20u * (r * (K / 256u) + kb / 8u);
  let g = 2u * (kb % 8u) + half;  // the sub-block of 16
  return (main{{W}}[i + g / 4u] >> (8u * (g % 4u))) & 255u;
}
fn q2dm{{W}}(r: u32, kb: u32) -> vec2<f32> { return unpack2x16float(side{{W}}[r * (K / 256u) + kb / 8u]); }
fn dw{{W}}(r: u32, kb: u32) -> f32 { return q2dm{{W}}(r, kb).x * f32(q2sc{{W}}(r, kb, 0u) & 15u); }
fn dh{{W}}(r: u32, kb: u32) -> f32 { return q2dm{{W}}(r, kb).x * f32(q2sc{{W}}(r, kb, 1u) & 15u); }
fn mw{{W}}(r: u32, kb: u32) -> f32 { return -(q2dm{{W}}(r, kb).y * f32(q2sc{{W}}(r, kb, 0u) >> 4u)); }
fn mh{{W}}(r: u32, kb: u32) -> f32 { return -(q2dm{{W}}(r, kb).y * f32(q2sc{{W}}(r, kb, 1u) >> 4u)); }
