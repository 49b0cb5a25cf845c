// Q5_K as int8 codes: nibbles as for Q4_K with bit (2p + high half) of each
// qh byte as bit 4 (0..31); offset 0 (the min term).
fn ichunk{{W}}(un: Unit{{W}}, c: u32) -> vec2<u32> {
  let l = c % 4u;
  let q = select(un.qa, un.qb, l >= 2u);
  let hh = select(un.ha, un.hb, l >= 2u);
  let i = (l & 1u) * 2u;
  let hi = c >= 4u;
  let sh = select(0u, 4u, hi);
  let bit = 2u * un.p + select(0u, 1u, hi);
  return nib8(q[i], q[i + 1u], sh) | hib8(hh[i], hh[i + 1u], bit, 0x01010101u);
}
fn ioff{{W}}(un: Unit{{W}}, g: u32) -> i32 { return 0; }
