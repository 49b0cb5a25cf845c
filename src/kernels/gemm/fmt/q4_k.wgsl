// Q4_K in the matvec layout: main{{W}} holds the raw 144-byte super-blocks
// (36 words; block sb = r * K / 256 + e / 256 of the chunk): f16 d, f16 dmin,
// scales[12] (6-bit scale and min per 32-element sub-block, ggml's
// get_scale_min_k4), qs[128]; no side. Element j: g = j / 64, l = j % 64,
// sub-block 2g + l / 32, quant = nibble (l >= 32) of qs[32g + l % 32]; value
// (d * sc) * q - (dmin * m).
// ld loads the words of elements e .. e + 3 of chunk row r (d/dmin, the
// three scale words, the quant word), dc decodes them.
struct Raw{{W}} { dm: u32, s: vec3<u32>, q: u32 }
fn ld{{W}}(r: u32, e: u32) -> Raw{{W}} {
  let i = 36u * (r * (K / 256u) + e / 256u);
  let j = e % 256u;
  return Raw{{W}}(main{{W}}[i], vec3<u32>(main{{W}}[i + 1u], main{{W}}[i + 2u], main{{W}}[i + 3u]),
                  main{{W}}[i + 4u + 8u * (j / 64u) + (j % 32u) / 4u]);
}
fn dc{{W}}(r: u32, e: u32, v: Raw{{W}}) -> vec4<f32> {
  let j = e % 256u;
  let g = j / 64u;
  let l = j % 64u;
  let is = 2u * g + l / 32u;
  let sm = kscmin(v.s, is);  // fmt/kscale.wgsl
  let dd = unpack2x16float(v.dm);
  let d1 = dd.x * f32(sm.x);
  let m1 = dd.y * f32(sm.y);
  return d1 * nib4(v.q, select(0u, 4u, l >= 32u)) - m1;
}
fn dq4{{W}}(r: u32, e: u32) -> vec4<f32> { return dc{{W}}(r, e, ld{{W}}(r, e)); }
