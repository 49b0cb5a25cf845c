// Q8_0 for the int8 gemm: block b = r * KB + kb of the chunk has its int8
// qs[32] as 8 words of main{{W}} (the codes as they are) and its f16 d in
// half b % 2 of side{{W}}[b / 2].
fn qw{{W}}(r: u32, kb: u32, w: u32) -> u32 { return main{{W}}[8u * (r * KB + kb) + w]; }
fn dw{{W}}(r: u32, kb: u32) -> f32 {
  let b = r * KB + kb;
  return unpack2x16float(side{{W}}[b >> 1u] >> ((b & 1u) * 16u)).x;
}
