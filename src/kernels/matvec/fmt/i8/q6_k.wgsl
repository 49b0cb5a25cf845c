// Q6_K as int8 codes: the ql nibble of each byte with two qh bits as bits
// 4..5 (0..63); offset 32.
fn ichunk{{W}}(un: Unit{{W}}, c: u32) -> vec2<u32> {
  let q = c / 4u;
  let l = c % 4u;
  let lv = select(select(un.l0, un.l1, l >= 2u), select(un.l2, un.l3, l >= 2u), (q & 1u) == 1u);
  let hv = select(un.h0, un.h1, l >= 2u);
  let i = (l & 1u) * 2u;
  let sh = 4u * (q >> 1u);
  return nib8(lv[i], lv[i + 1u], sh) | hib8(hv[i], hv[i + 1u], 2u * q, 0x03030303u);
}
fn ioff{{W}}(un: Unit{{W}}, g: u32) -> i32 { return 32; }
