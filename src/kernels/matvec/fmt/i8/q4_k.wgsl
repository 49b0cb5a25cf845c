// Q4_K as int8 codes: chunk c is the low (c < 4) or high nibbles of two
// words of the unit's 32 quant bytes (0..15); offset 0 (the min term).
fn ichunk{{W}}(un: Unit{{W}}, c: u32) -> vec2<u32> {
  let l = c % 4u;
  let q = select(un.qa, un.qb, l >= 2u);
  let i = (l & 1u) * 2u;
  let sh = select(0u, 4u, c >= 4u);
  return (vec2<u32>(q[i], q[i + 1u]) >> vec2<u32>(sh)) & vec2<u32>(0x0f0f0f0fu);
}
fn ioff{{W}}(un: Unit{{W}}, g: u32) -> i32 { return 0; }
