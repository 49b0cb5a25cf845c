// IQ4_NL and IQ4_XS (fmt/iq4.wgsl units) as int8 codes: chunk c is the
// levels of the low (c < 2) or high nibbles of two code words, one int8
// level a byte (iq4bytes: fmt/iq4_table.wgsl or fmt/iq4_select.wgsl); offset 0.
fn ichunk{{W}}(un: Unit{{W}}, c: u32) -> vec2<u32> {
  let i = (c & 1u) * 2u;
  let sh = select(0u, 4u, c >= 2u);
  return vec2<u32>(iq4bytes(un.q[i], sh), iq4bytes(un.q[i + 1u], sh));
}
fn ioff{{W}}(un: Unit{{W}}, g: u32) -> i32 { return 0; }
