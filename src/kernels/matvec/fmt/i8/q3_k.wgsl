// Q3_K as int8 codes: bits 2q..2q+1 of each qs byte with hmask bit 4h + q as
// bit 2 (0..7); offset 4.
fn ichunk{{W}}(un: Unit{{W}}, c: u32) -> vec2<u32> {
  let q = c / 4u;
  let l = c % 4u;
  let v = select(un.qa, un.qb, l >= 2u);
  let m = select(un.ma, un.mb, l >= 2u);
  let i = (l & 1u) * 2u;
  let lo = (vec2<u32>(v[i], v[i + 1u]) >> vec2<u32>(2u * q)) & vec2<u32>(0x03030303u);
  return lo | (((vec2<u32>(m[i], m[i + 1u]) >> vec2<u32>(4u * un.h + q)) & vec2<u32>(0x01010101u)) << vec2<u32>(2u));
}
fn ioff{{W}}(un: Unit{{W}}, g: u32) -> i32 { return 4; }
