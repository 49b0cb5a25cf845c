// IQ4_NL for the int8 gemm: block b = r * KB + kb of the chunk has its qs[16]
// as 4 words of main{{W}} (element j < 16 the low nibble of byte j, j >= 16
// the high nibble of byte j - 16) and its f16 d in half b % 2 of
// side{{W}}[b / 2]. Word w of codes (elements 4w .. 4w + 3) is the int8
// levels of its nibbles (ggml's kvalues_iq4nl); OFF 0.
const LV8{{W}} = array<u32, 16>(0x81u, 0x98u, 0xadu, 0xbfu, 0xcfu, 0xddu, 0xeau, 0xf6u, 0x01u, 0x0du, 0x19u, 0x26u, 0x35u, 0x45u, 0x59u, 0x71u);
fn kb4{{W}}(w: u32) -> u32 {
  return LV8{{W}}[w & 15u] | (LV8{{W}}[(w >> 8u) & 15u] << 8u) | (LV8{{W}}[(w >> 16u) & 15u] << 16u) |
         (LV8{{W}}[(w >> 24u) & 15u] << 24u);
}
fn qw{{W}}(r: u32, kb: u32, w: u32) -> u32 {
  return kb4{{W}}(main{{W}}[4u * (r * KB + kb) + w % 4u] >> select(0u, 4u, w >= 4u));
}
fn dw{{W}}(r: u32, kb: u32) -> f32 {
  let b = r * KB + kb;
  return unpack2x16float(side{{W}}[b >> 1u] >> ((b & 1u) * 16u)).x;
}
