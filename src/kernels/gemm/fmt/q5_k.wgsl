// Q5_K in the matvec layout: main{{W}} holds the raw 176-byte super-blocks
// (44 words; block sb = r * K / 256 + e / 256 of the chunk): f16 d, f16 dmin,
// scales[12] (as Q4_K's), qh[32], qs[128]; no side. Element j: sub-block
// s = j / 32, l = j % 32, quant = nibble (s odd: high) of qs[32 (s / 2) + l]
// | ((qh[l] >> s) & 1) << 4, 0..31; value (d * sc) * q - (dmin * m).
// ld loads the words of elements e .. e + 3 of chunk row r (d/dmin, the
// three scale words, the qh word, the quant word), dc decodes them.
struct Raw{{W}} { dm: u32, s: vec3<u32>, h: u32, q: u32 }
fn ld{{W}}(r: u32, e: u32) -> Raw{{W}} {
  let i = 44u * (r * (K / 256u) + e / 256u);
  let j = e % 256u;
  return Raw{{W}}(main{{W}}[i], vec3<u32>(main{{W}}[i + 1u], main{{W}}[i + 2u], main{{W}}[i + 3u]),
                  main{{W}}[i + 4u + (j % 32u) / 4u], main{{W}}[i + 12u + 8u * (j / 64u) + (j % 32u) / 4u]);
}
fn dc{{W}}(r: u32, e: u32, v: Raw{{W}}) -> vec4<f32> {
  let is = (e % 256u) / 32u;
  let sm = kscmin(v.s, is);  // fmt/kscale.wgsl
  let dd = unpack2x16float(v.dm);
  let d1 = dd.x * f32(sm.x);
  let m1 = dd.y * f32(sm.y);
  let hb = (v.h >> is) & 0x01010101u;  // bit 4 of each element, at bit 0 of its byte
  let hi = vec4<f32>(f32(hb & 1u), f32((hb >> 8u) & 1u), f32((hb >> 16u) & 1u), f32(hb >> 24u)) * 16.0;
  return d1 * (nib4(v.q, select(0u, 4u, (is & 1u) == 1u)) + hi) - m1;
}
fn dq4{{W}}(r: u32, e: u32) -> vec4<f32> { return dc{{W}}(r, e, ld{{W}}(r, e)); }
