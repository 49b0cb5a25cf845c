// Q6_K super-block (210 bytes): ql[128], qh[64], int8 scales[16], f16 d.
// Element j: h = j / 128, q = (j % 128) / 32, l = j % 32; quant = nibble
// (q >> 1) of ql[64h + l + 32(q & 1)] | ((qh[32h + l] >> 2q) & 3) << 4, minus
// 32; value (d * scales[8h + l / 16 + 2q]) * quant.
// ld loads the raw words of elements e .. e + 3, dc decodes them.
struct Raw{{W}} { ql: vec2<u32>, qh: vec2<u32>, sc: u32, d: u32 }
fn ld{{W}}(rb: u32, e: u32) -> Raw{{W}} {
  let bo = rb + (e / 256u) * 210u;
  let j = e % 256u;
  let h = j / 128u;
  let q = (j % 128u) / 32u;
  let l = j % 32u;
  return Raw{{W}}(ld2{{W}}(bo + 64u * h + l + 32u * (q & 1u)), ld2{{W}}(bo + 128u + 32u * h + l),
                  w{{W}}[(bo + 192u + 8u * h + l / 16u + 2u * q) >> 2u], w{{W}}[(bo + 208u) >> 2u]);
}
fn dc{{W}}(rb: u32, e: u32, r: Raw{{W}}) -> vec4<f32> {
  let bo = rb + (e / 256u) * 210u;
  let j = e % 256u;
  let h = j / 128u;
  let q = (j % 128u) / 32u;
  let l = j % 32u;
  let lo = nib4(fsh(r.ql, bo + 64u * h + l + 32u * (q & 1u)), 4u * (q >> 1u));
  let hw = fsh(r.qh, bo + 128u + 32u * h + l) >> (2u * q);
  let hi = vec4<f32>(f32(hw & 3u), f32((hw >> 8u) & 3u), f32((hw >> 16u) & 3u), f32((hw >> 24u) & 3u));
  let so = bo + 192u + 8u * h + l / 16u + 2u * q;
  let sc = f32(bitcast<i32>(((r.sc >> ((so & 3u) * 8u)) & 255u) << 24u) >> 24u);
  return (f16at(r.d, bo + 208u) * sc) * ((lo + 16.0 * hi) - 32.0);
}
fn dq4{{W}}(rb: u32, e: u32) -> vec4<f32> { return dc{{W}}(rb, e, ld{{W}}(rb, e)); }
