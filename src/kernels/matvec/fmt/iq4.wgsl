// Shared by the IQ4_NL and IQ4_XS matvec snippets: a unit of 32 codes (one
// vec4<u32>: element j < 16 is the low nibble of byte j, element j + 16 its
// high nibble) with its scale d. Codes: the levels of ggml's kvalues_iq4nl
// (iq4levels: fmt/iq4_table.wgsl in the matvec kernel, fmt/iq4_select.wgsl
// in the row gather).
struct Unit{{W}} { q: vec4<u32>, d: f32 }
fn chunk{{W}}(un: Unit{{W}}, c: u32) -> W8 {
  let i = (c & 1u) * 2u;
  let sh = select(0u, 4u, c >= 2u);
  return W8(iq4levels(un.q[i], sh), iq4levels(un.q[i + 1u], sh));
}
fn scale{{W}}(un: Unit{{W}}, g: u32) -> f32 { return un.d; }
