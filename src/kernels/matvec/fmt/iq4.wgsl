// Shared by the IQ4_NL and IQ4_XS matvec snippets: a unit of 32 codes (one
// vec4<u32>: element j < 16 is the low nibble of byte j, element j + 16 its
// high nibble) with its scale d. Codes: the levels of ggml's kvalues_iq4nl
// (iq4lv, fmt/helpers.wgsl: the level plus 128, exact after mag4).
struct Unit{{W}} { q: vec4<u32>, d: f32 }
fn chunk{{W}}(un: Unit{{W}}, c: u32) -> W8 {
  let i = (c & 1u) * 2u;
  let sh = select(0u, 4u, c >= 2u);
  return W8(mag4(iq4lv(nibs4(un.q[i], sh)), 128.0), mag4(iq4lv(nibs4(un.q[i + 1u], sh)), 128.0));
}
fn scale{{W}}(un: Unit{{W}}, g: u32) -> f32 { return un.d; }
