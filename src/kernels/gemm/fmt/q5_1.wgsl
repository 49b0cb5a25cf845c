// Q5_1 in the matvec layout: block b = r * K / 32 + e / 32 of the chunk has
// its qs[16] as 4 words of main{{W}} (the nibble order of Q4_0), its qh (bit
// j is bit 4 of element j) in side{{W}}[b], and f16 d (low half) and m (high
// half) in side{{W}}[params.rows * K / 32 + b] (the side's second section);
// value q * d + m, q 0..31.
// ld loads the words of elements e .. e + 3 of chunk row r, dc decodes them.
struct Raw{{W}} { q: u32, h: u32, dm: u32 }
fn ld{{W}}(r: u32, e: u32) -> Raw{{W}} {
  let b = r * (K / 32u) + e / 32u;
  return Raw{{W}}(main{{W}}[4u * b + (e % 16u) / 4u], side{{W}}[b], side{{W}}[params.rows * (K / 32u) + b]);
}
fn dc{{W}}(r: u32, e: u32, v: Raw{{W}}) -> vec4<f32> {
  let dm = unpack2x16float(v.dm);
  return (nib4(v.q, select(0u, 4u, e % 32u >= 16u)) + hi4(v.h >> (e % 32u))) * dm.x + dm.y;
}
fn dq4{{W}}(r: u32, e: u32) -> vec4<f32> { return dc{{W}}(r, e, ld{{W}}(r, e)); }
