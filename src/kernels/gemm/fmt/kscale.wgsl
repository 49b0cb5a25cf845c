// The 6-bit scale (x) and min (y) of sub-block j (0..7) of a Q4_K or Q5_K
// super-block, from its 12-byte scales array as three words (ggml's
// get_scale_min_k4). Shared by the f32 and int8 gemms' Q4_K and Q5_K snippets.
fn kbyte(s: vec3<u32>, b: u32) -> u32 { return (s[b >> 2u] >> ((b & 3u) * 8u)) & 255u; }
fn kscmin(s: vec3<u32>, j: u32) -> vec2<u32> {
  if (j < 4u) { return vec2<u32>(kbyte(s, j) & 63u, kbyte(s, j + 4u) & 63u); }
  return vec2<u32>((kbyte(s, j + 4u) & 15u) | ((kbyte(s, j - 4u) >> 6u) << 4u),
                   (kbyte(s, j + 4u) >> 4u) | ((kbyte(s, j) >> 6u) << 4u));
}
