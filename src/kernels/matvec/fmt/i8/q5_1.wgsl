// Q5_1 as int8 codes: 5-bit codes as for Q5_0 (0..31), offset 0 (the min
// term carries the offset).
fn ichunk{{W}}(un: Unit{{W}}, c: u32) -> vec2<u32> {
  let i = (c & 1u) * 2u;
  return nib8(un.q[i], un.q[i + 1u], select(0u, 4u, c >= 2u)) | hi5(un.qh >> (8u * c));
}
fn ioff{{W}}(un: Unit{{W}}, g: u32) -> i32 { return 0; }
