// IQ4_XS for the int8 gemm: super-block s = r * K / 256 + kb / 8 of the
// chunk has its qs[128] as 32 words of main{{W}} (block kb is sub-block j = kb
// % 8, words 4j .. 4j + 3, as IQ4_NL's) and two words of side{{W}} from 2s:
// f16 d (low) and scales_h (high), then scales_l[4]. Word w of codes is the
// int8 levels of its nibbles (iq4bytes); OFF 0; scale d * (ls - 32).
fn qw{{W}}(r: u32, kb: u32, w: u32) -> u32 {
  let s = r * (K / 256u) + kb / 8u;
  return iq4bytes(main{{W}}[32u * s + 4u * (kb % 8u) + w % 4u], select(0u, 4u, w >= 4u));
}
fn dw{{W}}(r: u32, kb: u32) -> f32 {
  let s = r * (K / 256u) + kb / 8u;
  let j = kb % 8u;
  let h = side{{W}}[2u * s];
  let ls = ((side{{W}}[2u * s + 1u] >> (4u * j)) & 15u) | (((h >> (16u + 2u * j)) & 3u) << 4u);
  return unpack2x16float(h).x * (f32(ls) - 32.0);
}
