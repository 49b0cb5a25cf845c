// Byte, nibble and f16 extraction shared by the gemm kernels (gemm.wgsl,
// gemm_pipe.wgsl) and their fmt/*.wgsl decoders.
fn i8x4(w: u32) -> vec4<f32> {
  return vec4<f32>(f32(bitcast<i32>(w << 24u) >> 24u), f32(bitcast<i32>(w << 16u) >> 24u),
                   f32(bitcast<i32>(w << 8u) >> 24u), f32(bitcast<i32>(w) >> 24u));
}
// Nibbles at bit `sh` (0 or 4) of each byte of w.
fn nib4(w: u32, sh: u32) -> vec4<f32> {
  return vec4<f32>(f32((w >> sh) & 15u), f32((w >> (sh + 8u)) & 15u), f32((w >> (sh + 16u)) & 15u),
                   f32((w >> (sh + 24u)) & 15u));
}
// Bits 0..3 of h as 16 or 0 each (the fifth bit of four Q5_0 / Q5_1 codes).
fn hi4(h: u32) -> vec4<f32> {
  return vec4<f32>(f32((h << 4u) & 16u), f32((h << 3u) & 16u), f32((h << 2u) & 16u), f32((h << 1u) & 16u));
}
// f16 value i of an array holding two per word, from its word (i % 2 == 1:
// the high half).
fn f16of(word: u32, i: u32) -> f32 { return unpack2x16float(word >> ((i & 1u) * 16u)).x; }
