// Q4_1 for the int8 gemm: block b = r * KB + kb of the chunk has its qs[16]
// as 4 words of main{{W}} (the nibble order of Q4_0) and side{{W}}[b] holding
// f16 d (low half) and m (high half): value d * q + m, q 0..15.
fn qw{{W}}(r: u32, kb: u32, w: u32) -> u32 {
  return (main{{W}}[4u * (r * KB + kb) + w % 4u] >> select(0u, 4u, w >= 4u)) & 0x0f0f0f0fu;
}
fn dw{{W}}(r: u32, kb: u32) -> f32 { return unpack2x16float(side{{W}}[r * KB + kb]).x; }
fn mw{{W}}(r: u32, kb: u32) -> f32 { return unpack2x16float(side{{W}}[r * KB + kb]).y; }
