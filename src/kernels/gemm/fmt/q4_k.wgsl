// Q4_K super-block (144 bytes, 4-byte aligned): f16 d, f16 dmin, scales[12]
// (6-bit scale and min per 32-element sub-block, ggml's get_scale_min_k4),
// qs[128]. Element j: g = j / 64, l = j % 64, sub-block 2g + l / 32, quant =
// nibble (l >= 32) of qs[32g + l % 32]; value (d * sc) * q - (dmin * m).
// ld loads the raw words of elements e .. e + 3 (d/dmin, the three scale
// words, the quant word), dc decodes them.
struct Raw{{W}} { dm: u32, s: vec3<u32>, q: u32 }
fn ld{{W}}(rb: u32, e: u32) -> Raw{{W}} {
  let bo = rb + (e / 256u) * 144u;
  let j = e % 256u;
  let i = bo >> 2u;
  return Raw{{W}}(w{{W}}[i], vec3<u32>(w{{W}}[i + 1u], w{{W}}[i + 2u], w{{W}}[i + 3u]),
                  w{{W}}[(bo + 16u + 32u * (j / 64u) + j % 32u) >> 2u]);
}
fn sbyte{{W}}(s: vec3<u32>, b: u32) -> u32 { return (s[b >> 2u] >> ((b & 3u) * 8u)) & 255u; }
fn dc{{W}}(rb: u32, e: u32, r: Raw{{W}}) -> vec4<f32> {
  let bo = rb + (e / 256u) * 144u;
  let j = e % 256u;
  let g = j / 64u;
  let l = j % 64u;
  let is = 2u * g + l / 32u;
  var sc: u32;
  var mn: u32;
  if (is < 4u) {
    sc = sbyte{{W}}(r.s, is) & 63u;
    mn = sbyte{{W}}(r.s, is + 4u) & 63u;
  } else {
    sc = (sbyte{{W}}(r.s, is + 4u) & 15u) | ((sbyte{{W}}(r.s, is - 4u) >> 6u) << 4u);
    mn = (sbyte{{W}}(r.s, is + 4u) >> 4u) | ((sbyte{{W}}(r.s, is) >> 6u) << 4u);
  }
  let d1 = f16at(r.dm, bo) * f32(sc);
  let m1 = f16at(r.dm, bo + 2u) * f32(mn);
  return d1 * nib4(r.q, select(0u, 4u, l >= 32u)) - m1;
}
fn dq4{{W}}(rb: u32, e: u32) -> vec4<f32> { return dc{{W}}(rb, e, ld{{W}}(rb, e)); }
