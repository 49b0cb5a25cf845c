// IQ4_XS unit = one sub-block of 32 = one scale group: main{{W}}: each
// super-block's qs[128] as 8 vec4<u32> (sub-block s's codes in vec4 s);
// side{{W}}: two u32 per super-block: f16 d (low) and scales_h (high), then
// scales_l[4]. Codes and chunks: fmt/iq4.wgsl; scale d * (ls - 32), ls the
// 6-bit scale of the sub-block (blocks.hpp).
{{IQ4}}
fn load{{W}}(r: u32, u: u32) -> Unit{{W}} {
  let sb = r * (UPR / 8u) + u / 8u;
  let s = u % 8u;
  let h = side{{W}}[2u * sb];
  let ls = ((side{{W}}[2u * sb + 1u] >> (4u * s)) & 15u) | (((h >> (16u + 2u * s)) & 3u) << 4u);
  return Unit{{W}}(main{{W}}[8u * sb + s], unpack2x16float(h).x * (f32(ls) - 32.0));
}
