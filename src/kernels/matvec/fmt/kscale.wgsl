// Scale and min decoding shared by the Q4_K and Q5_K matvec snippets: byte i
// of a block's 12-byte scales array (words 1..3 of its first vec4), and
fn sbyte{{W}}(h: vec4<u32>, i: u32) -> u32 { return (h[1u + i / 4u] >> (8u * (i % 4u))) & 255u; }
// 6-bit scale and min of sub-block j (ggml's get_scale_min_k4).
fn scmin{{W}}(h: vec4<u32>, j: u32) -> vec2<u32> {
  if (j < 4u) { return vec2<u32>(sbyte{{W}}(h, j) & 63u, sbyte{{W}}(h, j + 4u) & 63u); }
  return vec2<u32>((sbyte{{W}}(h, j + 4u) & 15u) | ((sbyte{{W}}(h, j - 4u) >> 6u) << 4u),
                   (sbyte{{W}}(h, j + 4u) >> 4u) | ((sbyte{{W}}(h, j) >> 6u) << 4u));
}
