// IQ4_NL in the matvec layout: block b = r * K / 32 + e / 32 of the chunk has
// its qs[16] as 4 words of main{{W}} (element j < 16 is the low nibble of byte
// j, j >= 16 the high nibble of byte j - 16) and its f16 d in half b % 2 of
// side{{W}}[b / 2]; value d * the level of ggml's kvalues_iq4nl for its nibble.
// ld loads the words of elements e .. e + 3 of chunk row r, dc decodes them.
struct Raw{{W}} { q: u32, d: u32 }
fn ld{{W}}(r: u32, e: u32) -> Raw{{W}} {
  let b = r * (K / 32u) + e / 32u;
  return Raw{{W}}(main{{W}}[4u * b + (e % 16u) / 4u], side{{W}}[b >> 1u]);
}
fn dc{{W}}(r: u32, e: u32, v: Raw{{W}}) -> vec4<f32> {
  let w = v.q >> select(0u, 4u, e % 32u >= 16u);
  let n = (vec4<u32>(w) >> vec4<u32>(0u, 8u, 16u, 24u)) & vec4<u32>(15u);
  let l = bitcast<vec4<f32>>(iq4lv(n) | vec4<u32>(0x4B000000u)) - 8388736.0;  // the levels, exact (fmt/iq4_levels.wgsl)
  return f16of(v.d, r * (K / 32u) + e / 32u) * l;
}
fn dq4{{W}}(r: u32, e: u32) -> vec4<f32> { return dc{{W}}(r, e, ld{{W}}(r, e)); }
