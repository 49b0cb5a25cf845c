// IQ4_NL in the matvec layout: block b = r * K / 32 + e / 32 of the chunk has
// its qs[16] as 4 words of main{{W}} (element j < 16 is the low nibble of byte
// j, j >= 16 the high nibble of byte j - 16) and its f16 d in half b % 2 of
// side{{W}}[b / 2]; value d * KV{{W}}[nibble] (ggml's kvalues_iq4nl).
// ld loads the words of elements e .. e + 3 of chunk row r, dc decodes them.
const KV{{W}} = array<f32, 16>(-127.0, -104.0, -83.0, -65.0, -49.0, -35.0, -22.0, -10.0, 1.0, 13.0, 25.0, 38.0, 53.0, 69.0, 89.0, 113.0);
struct Raw{{W}} { q: u32, d: u32 }
fn ld{{W}}(r: u32, e: u32) -> Raw{{W}} {
  let b = r * (K / 32u) + e / 32u;
  return Raw{{W}}(main{{W}}[4u * b + (e % 16u) / 4u], side{{W}}[b >> 1u]);
}
fn dc{{W}}(r: u32, e: u32, v: Raw{{W}}) -> vec4<f32> {
  let w = v.q >> select(0u, 4u, e % 32u >= 16u);
  let l = vec4<f32>(KV{{W}}[w & 15u], KV{{W}}[(w >> 8u) & 15u], KV{{W}}[(w >> 16u) & 15u], KV{{W}}[(w >> 24u) & 15u]);
  return f16of(v.d, r * (K / 32u) + e / 32u) * l;
}
fn dq4{{W}}(r: u32, e: u32) -> vec4<f32> { return dc{{W}}(r, e, ld{{W}}(r, e)); }
