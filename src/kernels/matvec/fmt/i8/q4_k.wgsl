// Q4_K as int8 codes: chunk c is the low (c < 4) or high nibbles of two
// words of the unit's 32 quant bytes (0..15); offset 0 (the min term).
fn ichunk{{W}}(un: Unit{{W}}, c: u32) -> vec2<u32> {
  let l = c % 4u;
  let q = select(un.qa, un.qb, l >= 2u);
  let i = (l & 1u) * 2u;
  return nib8(q[i], q[i + 1u], select(0u, 4u, c >= 4u));
}
fn ioff{{W}}(un: Unit{{W}}, g: u32) -> i32 { return 0; }
