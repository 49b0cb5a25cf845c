// IQ4_XS in the matvec layout: super-block s = r * K / 256 + e / 256 of the
// chunk has its qs[128] as 32 words of main{{W}} (sub-block j's codes in words
// 4j .. 4j + 3, as IQ4_NL's) and two words of side{{W}} from 2s: f16 d (low)
// and scales_h (high), then scales_l[4]; value (d * (ls - 32)) * level,
// ls the 6-bit scale of sub-block j (blocks.hpp).
// ld loads the words of elements e .. e + 3 of chunk row r, dc decodes them.
struct Raw{{W}} { q: u32, h: u32, l: u32 }
fn ld{{W}}(r: u32, e: u32) -> Raw{{W}} {
  let s = r * (K / 256u) + e / 256u;
  return Raw{{W}}(main{{W}}[32u * s + (e % 256u) / 32u * 4u + (e % 16u) / 4u], side{{W}}[2u * s], side{{W}}[2u * s + 1u]);
}
fn dc{{W}}(r: u32, e: u32, v: Raw{{W}}) -> vec4<f32> {
  let j = (e % 256u) / 32u;
  let ls = ((v.l >> (4u * j)) & 15u) | (((v.h >> (16u + 2u * j)) & 3u) << 4u);
  let w = v.q >> select(0u, 4u, e % 32u >= 16u);
  let n = (vec4<u32>(w) >> vec4<u32>(0u, 8u, 16u, 24u)) & vec4<u32>(15u);
  let l = bitcast<vec4<f32>>(iq4lv(n) | vec4<u32>(0x4B000000u)) - 8388736.0;  // the levels, exact (fmt/iq4_levels.wgsl)
  return (unpack2x16float(v.h).x * (f32(ls) - 32.0)) * l;
}
fn dq4{{W}}(r: u32, e: u32) -> vec4<f32> { return dc{{W}}(r, e, ld{{W}}(r, e)); }
