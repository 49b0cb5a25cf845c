// Q2_K in the matvec layout: super-block sb = r * K / 256 + e / 256 of the
// chunk has its scales[16] and qs[64] as 20 words of main{{W}} and f16 d
// (low) and dmin (high) in side{{W}}[sb]. Element j: h = j / 128, q = (j %
// 128) / 32, l = j % 32; quant = (qs[32h + l] >> 2q) & 3 in sub-block s =
// 8h + 2q + l / 16, whose scale byte gives value (d * (s & 15)) * quant -
// dmin * (s >> 4).
// ld loads the words of elements e .. e + 3 of chunk row r, dc decodes them.
struct Raw{{W}} { s: u32, q: u32, dm: u32 }
fn ld{{W}}(r: u32, e: u32) -> Raw{{W}} {
  let sb = r * (K / 256u) + e / 256u;
  let j = e % 256u;
  let s = 8u * (j / 128u) + 2u * ((j % 128u) / 32u) + (j % 32u) / 16u;
  return Raw{{W}}(main{{W}}[20u * sb + s / 4u], main{{W}}[20u * sb + 4u + (32u * (j / 128u) + j % 32u) / 4u], side{{W}}[sb]);
}
fn dc{{W}}(r: u32, e: u32, v: Raw{{W}}) -> vec4<f32> {
  let j = e % 256u;
  let s = 8u * (j / 128u) + 2u * ((j % 128u) / 32u) + (j % 32u) / 16u;
  let sc = (v.s >> (8u * (s % 4u))) & 255u;
  let dm = unpack2x16float(v.dm);
  let w = v.q >> (2u * ((j % 128u) / 32u));
  let c = vec4<f32>(f32(w & 3u), f32((w >> 8u) & 3u), f32((w >> 16u) & 3u), f32((w >> 24u) & 3u));
  return (dm.x * f32(sc & 15u)) * c - dm.y * f32(sc >> 4u);
}
fn dq4{{W}}(r: u32, e: u32) -> vec4<f32> { return dc{{W}}(r, e, ld{{W}}(r, e)); }
