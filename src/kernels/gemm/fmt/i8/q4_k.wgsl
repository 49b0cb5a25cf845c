// Q4_K for the int8 gemm: main{{W}} holds the raw 144-byte super-blocks (36
// words; super-block s = r * K / 256 + kb / 8 of the chunk): f16 d and dmin,
// scales[12] (ggml's get_scale_min_k4), qs[128]. Block kb is sub-block
// j = kb % 8: its element l is the nibble (j odd: high) of qs[32 (j / 2) + l];
// value (d * sc) * q - (dmin * m), q 0..15.
fn qw{{W}}(r: u32, kb: u32, w: u32) -> u32 {
  let j = kb % 8u;
  return (main{{W}}[36u * (r * (K / 256u) + kb / 8u) + 4u + 8u * (j / 2u) + w] >> ((j & 1u) * 4u)) & 0x0f0f0f0fu;
}
// The 6-bit scale (x) and min (y) of sub-block j of the super-block at word i.
fn ksm{{W}}(i: u32, j: u32) -> vec2<f32> {
  return vec2<f32>(kscmin(vec3<u32>(main{{W}}[i + 1u], main{{W}}[i + 2u], main{{W}}[i + 3u]), j));  // fmt/kscale.wgsl
}
fn dw{{W}}(r: u32, kb: u32) -> f32 {
  let i = 36u * (r * (K / 256u) + kb / 8u);
  return unpack2x16float(main{{W}}[i]).x * ksm{{W}}(i, kb % 8u).x;
}
fn mw{{W}}(r: u32, kb: u32) -> f32 {
  let i = 36u * (r * (K / 256u) + kb / 8u);
  return -(unpack2x16float(main{{W}}[i]).y * ksm{{W}}(i, kb % 8u).y);
}
