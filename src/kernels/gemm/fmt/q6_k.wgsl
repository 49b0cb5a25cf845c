// Q6_K in the matvec layout: super-block sb = r * K / 256 + e / 256 of the
// chunk has its first 208 bytes (ql[128], qh[64], int8 scales[16]) as 52
// words of main{{W}} and its f16 d in half sb % 2 of side{{W}}[sb / 2].
// Element j: h = j / 128, q = (j % 128) / 32, l = j % 32; quant = nibble
// (q >> 1) of ql[64h + l + 32(q & 1)] | ((qh[32h + l] >> 2q) & 3) << 4, minus
// 32; value (d * scales[8h + l / 16 + 2q]) * quant.
// ld loads the words of elements e .. e + 3 of chunk row r, dc decodes them.
struct Raw{{W}} { ql: u32, qh: u32, sc: u32, d: u32 }
fn ld{{W}}(r: u32, e: u32) -> Raw{{W}} {
  let sb = r * (K / 256u) + e / 256u;
  let i = 52u * sb;
  let j = e % 256u;
  let h = j / 128u;
  let q = (j % 128u) / 32u;
  let l = j % 32u;
  return Raw{{W}}(main{{W}}[i + (64u * h + l + 32u * (q & 1u)) / 4u], main{{W}}[i + (128u + 32u * h + l) / 4u],
                  main{{W}}[i + (192u + 8u * h + l / 16u + 2u * q) / 4u], side{{W}}[sb >> 1u]);
}
fn dc{{W}}(r: u32, e: u32, v: Raw{{W}}) -> vec4<f32> {
  let sb = r * (K / 256u) + e / 256u;
  let j = e % 256u;
  let q = (j % 128u) / 32u;
  let l = j % 32u;
  let lo = nib4(v.ql, 4u * (q >> 1u));
  let hw = v.qh >> (2u * q);
  let hi = vec4<f32>(f32(hw & 3u), f32((hw >> 8u) & 3u), f32((hw >> 16u) & 3u), f32((hw >> 24u) & 3u));
  let so = l / 16u + 2u * q;  // the scale's byte in its word (192 + 8h is a multiple of 4)
  let sc = f32(bitcast<i32>(((v.sc >> ((so & 3u) * 8u)) & 255u) << 24u) >> 24u);
  return (f16of(v.d, sb) * sc) * ((lo + 16.0 * hi) - 32.0);
}
fn dq4{{W}}(r: u32, e: u32) -> vec4<f32> { return dc{{W}}(r, e, ld{{W}}(r, e)); }
