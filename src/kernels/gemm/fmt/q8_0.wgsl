// Q8_0 in the matvec layout (kernels/matvec/layout.cpp): block b = r * K / 32
// + e / 32 of the chunk has its int8 qs[32] as 8 words of main{{W}} and its
// f16 d in half b % 2 of side{{W}}[b / 2]; element j = d * qs[j].
// Elements e .. e + 3 (e % 4 == 0) of chunk row r: ld loads the words
// (issued early by the pipelined kernel), dc decodes them.
struct Raw{{W}} { q: u32, d: u32 }
fn ld{{W}}(r: u32, e: u32) -> Raw{{W}} {
  let b = r * (K / 32u) + e / 32u;
  return Raw{{W}}(main{{W}}[8u * b + (e % 32u) / 4u], side{{W}}[b >> 1u]);
}
fn dc{{W}}(r: u32, e: u32, v: Raw{{W}}) -> vec4<f32> {
  return i8x4(v.q) * f16of(v.d, r * (K / 32u) + e / 32u);
}
fn dq4{{W}}(r: u32, e: u32) -> vec4<f32> { return dc{{W}}(r, e, ld{{W}}(r, e)); }
