// Q4_K super-block (144 bytes): f16 d, f16 dmin, scales[12] (6-bit scale and
// min per 32-element sub-block, ggml's get_scale_min_k4), qs[128]. Element j:
// g = j / 64, l = j % 64, sub-block 2g + l / 32, quant = nibble (l >= 32) of
// qs[32g + l % 32]; value (d * sc) * q - (dmin * m).
fn dq4{{W}}(rb: u32, e: u32) -> vec4<f32> {
  let bo = rb + (e / 256u) * 144u;
  let j = e % 256u;
  let g = j / 64u;
  let l = j % 64u;
  let is = 2u * g + l / 32u;
  let s = bo + 4u;
  var sc: u32;
  var mn: u32;
  if (is < 4u) {
    sc = byte{{W}}(s + is) & 63u;
    mn = byte{{W}}(s + is + 4u) & 63u;
  } else {
    sc = (byte{{W}}(s + is + 4u) & 15u) | ((byte{{W}}(s + is - 4u) >> 6u) << 4u);
    mn = (byte{{W}}(s + is + 4u) >> 4u) | ((byte{{W}}(s + is) >> 6u) << 4u);
  }
  let d1 = half{{W}}(bo) * f32(sc);
  let m1 = half{{W}}(bo + 2u) * f32(mn);
  return d1 * nib4(word{{W}}(bo + 16u + 32u * g + l % 32u), select(0u, 4u, l >= 32u)) - m1;
}
