// Q3_K in the matvec layout: super-block sb = r * K / 256 + e / 256 of the
// chunk is 28 words of main{{W}}: hmask[32] (words 0..7), qs[64] (8..23),
// scales[12] (24..26) and f16 d (the low half of word 27). Element j: h = j /
// 128, q = (j % 128) / 32, l = j % 32; quant = ((qs[32h + l] >> 2q) & 3) |
// (bit j / 32 of hmask[l]) << 2, minus 4, in sub-block s = 8h + 2q + l / 16
// whose 6-bit scale sc (blocks.hpp) gives value (d * (sc - 32)) * quant.
// ld loads the words of elements e .. e + 3 of chunk row r, dc decodes them.
struct Raw{{W}} { m: u32, q: u32, lo: u32, hi: u32, d: u32 }
fn ld{{W}}(r: u32, e: u32) -> Raw{{W}} {
  let i = 28u * (r * (K / 256u) + e / 256u);
  let j = e % 256u;
  let s = 8u * (j / 128u) + 2u * ((j % 128u) / 32u) + (j % 32u) / 16u;
  return Raw{{W}}(main{{W}}[i + (j % 32u) / 4u], main{{W}}[i + 8u + (32u * (j / 128u) + j % 32u) / 4u],
                  main{{W}}[i + 24u + (s % 8u) / 4u], main{{W}}[i + 26u], main{{W}}[i + 27u]);
}
fn dc{{W}}(r: u32, e: u32, v: Raw{{W}}) -> vec4<f32> {
  let j = e % 256u;
  let q = (j % 128u) / 32u;
  let s = 8u * (j / 128u) + 2u * q + (j % 32u) / 16u;
  let lo = (v.lo >> (8u * (s % 4u) + 4u * (s / 8u))) & 15u;
  let hi = (v.hi >> (8u * (s % 4u) + 2u * (s / 4u))) & 3u;
  let w = v.q >> (2u * q);
  let c = vec4<f32>(f32(w & 3u), f32((w >> 8u) & 3u), f32((w >> 16u) & 3u), f32((w >> 24u) & 3u));
  let m = v.m >> (j / 32u);
  let hb = vec4<f32>(f32(m & 1u), f32((m >> 8u) & 1u), f32((m >> 16u) & 1u), f32((m >> 24u) & 1u));
  return (unpack2x16float(v.d).x * (f32(lo | (hi << 4u)) - 32.0)) * ((c + 4.0 * hb) - 4.0);
}
fn dq4{{W}}(r: u32, e: u32) -> vec4<f32> { return dc{{W}}(r, e, ld{{W}}(r, e)); }
