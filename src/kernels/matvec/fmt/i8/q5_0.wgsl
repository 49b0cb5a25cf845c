// Q5_0 as int8 codes: nibbles as for Q4_0 with bit j of qh as bit 4 of
// element j (0..31); offset 16.
fn ichunk{{W}}(un: Unit{{W}}, c: u32) -> vec2<u32> {
  let i = (c & 1u) * 2u;
  return nib8(un.q[i], un.q[i + 1u], select(0u, 4u, c >= 2u)) | hi5(un.qh >> (8u * c));
}
fn ioff{{W}}(un: Unit{{W}}, g: u32) -> i32 { return 16; }
