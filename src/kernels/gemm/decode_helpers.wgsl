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

// The word at byte offset off from the two words v holding it (v.x at off & ~3).
fn fsh(v: vec2<u32>, off: u32) -> u32 {
  let sh = (off & 3u) * 8u;
  return select((v.x >> sh) | (v.y << ((32u - sh) & 31u)), v.x, sh == 0u);
}
// The f16 at even byte offset off of its word.
fn f16at(word: u32, off: u32) -> f32 { return unpack2x16float(word >> ((off & 2u) * 8u)).x; }
