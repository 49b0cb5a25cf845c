// Shared by the IQ4_NL and IQ4_XS matvec snippets: a unit of 32 codes (one
// vec4<u32>: element j < 16 is the low nibble of byte j, element j + 16 its
// high nibble) with its scale d. Codes: the levels KV{{W}}[nibble] (ggml's
// kvalues_iq4nl), looked up from a const array.
const KV{{W}} = array<f32, 16>(-127.0, -104.0, -83.0, -65.0, -49.0, -35.0, -22.0, -10.0, 1.0, 13.0, 25.0, 38.0, 53.0, 69.0, 89.0, 113.0);
struct Unit{{W}} { q: vec4<u32>, d: f32 }
fn lv{{W}}(n: vec4<u32>) -> vec4<f32> { return vec4<f32>(KV{{W}}[n.x], KV{{W}}[n.y], KV{{W}}[n.z], KV{{W}}[n.w]); }
fn chunk{{W}}(un: Unit{{W}}, c: u32) -> W8 {
  let i = (c & 1u) * 2u;
  let sh = select(0u, 4u, c >= 2u);
  return W8(lv{{W}}(nibs4(un.q[i], sh)), lv{{W}}(nibs4(un.q[i + 1u], sh)));
}
fn scale{{W}}(un: Unit{{W}}, g: u32) -> f32 { return un.d; }
