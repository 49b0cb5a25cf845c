// Q4_0 as int8 codes: chunk c is the low (c < 2) or high nibbles of two quant
// words, one nibble per byte (0..15); the offset 8 is taken off per group.
fn ichunk{{W}}(un: Unit{{W}}, c: u32) -> vec2<u32> {
  let i = (c & 1u) * 2u;
  return nib8(un.q[i], un.q[i + 1u], select(0u, 4u, c >= 2u));
}
fn ioff{{W}}(un: Unit{{W}}, g: u32) -> i32 { return 8; }
