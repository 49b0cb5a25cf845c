// Helpers of the int8-activation matvec path: x is quantized per block of 32
// staged elements to int8 codes q = round(x * 127 / amax) with scale
// amax / 127 (ggml's q8 activations), and products are summed by
// dot4I8Packed (WGSL's packed_4x8_integer_dot_product).
// Bits 0..3 of each lane's word, one per byte (bit i to bit 8i).
fn spread4(h: vec2<u32>) -> vec2<u32> { return ((h & vec2<u32>(15u)) * vec2<u32>(0x204081u)) & vec2<u32>(0x01010101u); }
// The nibbles at bit sh (0 or 4) of each byte of two words, one per byte.
fn nib8(a: u32, b: u32, sh: u32) -> vec2<u32> { return (vec2<u32>(a, b) >> vec2<u32>(sh)) & vec2<u32>(0x0f0f0f0fu); }
// The bits at bit sh of each byte of two words, masked by m (per byte), moved
// up to bit 4 (the high bits of Q5_K and Q6_K codes).
fn hib8(a: u32, b: u32, sh: u32, m: u32) -> vec2<u32> {
  return ((vec2<u32>(a, b) >> vec2<u32>(sh)) & vec2<u32>(m)) << vec2<u32>(4u);
}
// Bits 0..7 of h as bit 4 of bytes 0..7 (the fifth bit of Q5_0/Q5_1 codes).
fn hi5(h: u32) -> vec2<u32> { return spread4(vec2<u32>(h, h >> 4u)) << vec2<u32>(4u); }
// 127 / a by three Newton steps from a bit-trick seed, written with fma so the
// CPU twin (twin.cpp) computes the same bits; 0 when a < 1e-30 (the block's
// codes are then all 0).
fn qinv(a: f32) -> f32 {
  if (a < {{TINY}}) { return 0.0; }
  var r = bitcast<f32>(0x7ef311c3u - bitcast<u32>(a));
  r = fma(r, fma(-a, r, 1.0), r);
  r = fma(r, fma(-a, r, 1.0), r);
  r = fma(r, fma(-a, r, 1.0), r);
  return 127.0 * r;
}
// The codes of one block of 32 x values v whose max |x| is am, packed four
// a word in element order, and the sums of codes 0..15 and 16..31 (the
// staging's and the quantize kernel's quantization).
struct QBlock { w: array<u32, 8>, s0: i32, s1: i32 }
fn quant_block(v: array<vec4<f32>, 8>, am: f32) -> QBlock {
  let inv = qinv(am);
  var o: QBlock;
  for (var q = 0u; q < 8u; q++) {
    let c = vec4<i32>(clamp(round(v[q] * inv), vec4<f32>(-127.0), vec4<f32>(127.0)));
    o.w[q] = pack4xI8(c);
    let cs = (c.x + c.y) + (c.z + c.w);
    if (q < 4u) { o.s0 += cs; } else { o.s1 += cs; }
  }
  return o;
}
