// IQ4_NL for the int8 gemm: block b = r * KB + kb of the chunk has its qs[16]
// as 4 words of main{{W}} (element j < 16 the low nibble of byte j, j >= 16
// the high nibble of byte j - 16) and its f16 d in half b % 2 of
// side{{W}}[b / 2]. Word w of codes (elements 4w .. 4w + 3) is the int8
// levels of its nibbles (ggml's kvalues_iq4nl, iq4bytes:
// kernels/common/iq4_bytes.wgsl); OFF 0.
fn qw{{W}}(r: u32, kb: u32, w: u32) -> u32 {
  return iq4bytes(main{{W}}[4u * (r * KB + kb) + w % 4u], select(0u, 4u, w >= 4u));
}
fn dw{{W}}(r: u32, kb: u32) -> f32 {
  let b = r * KB + kb;
  return unpack2x16float(side{{W}}[b >> 1u] >> ((b & 1u) * 16u)).x;
}
