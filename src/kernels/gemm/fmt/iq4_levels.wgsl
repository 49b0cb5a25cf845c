// Shared by the IQ4_NL and IQ4_XS decoders of both gemms.
// IQ4_NL / IQ4_XS levels: for nibbles n (0..15) the level of ggml's
// kvalues_iq4nl plus 128 (1..241), picked from four packed words by selects
// (an indexed const array was spilled: 210 us for 4096 x 14336 on the H100).
fn iq4lv(n: vec4<u32>) -> vec4<u32> {
  let b4 = (n & vec4<u32>(4u)) != vec4<u32>(0u);
  let w = select(select(vec4<u32>(0x3f2d1801u), vec4<u32>(0x766a5d4fu), b4),
                 select(vec4<u32>(0xa6998d81u), vec4<u32>(0xf1d9c5b5u), b4), n >= vec4<u32>(8u));
  return (w >> ((n & vec4<u32>(3u)) * 8u)) & vec4<u32>(255u);
}
