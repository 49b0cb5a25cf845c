// Q2_K as int8 codes: bits 2q..2q+1 of each byte of two words of the half's
// qs (0..3); offset 0 (the min term).
fn ichunk{{W}}(un: Unit{{W}}, c: u32) -> vec2<u32> {
  let q = un.q0 + c / 4u;
  let l = c % 4u;
  let v = select(un.qa, un.qb, l >= 2u);
  let i = (l & 1u) * 2u;
  return (vec2<u32>(v[i], v[i + 1u]) >> vec2<u32>(2u * q)) & vec2<u32>(0x03030303u);
}
fn ioff{{W}}(un: Unit{{W}}, g: u32) -> i32 { return 0; }
