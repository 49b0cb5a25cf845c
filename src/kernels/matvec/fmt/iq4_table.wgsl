// IQ4_NL / IQ4_XS levels from tables in workgroup memory for the matvec
// kernel: the int8 bytes of kernels/common/iq4_bytes.wgsl (iq4bytes) and
// the f32 levels here (iq4levels), both filled once per workgroup by
// iq4_init (then a barrier). Same functions as fmt/iq4_select.wgsl.
var<workgroup> iq4lvf: array<f32, 16>;  // [nibble] the level as f32
fn iq4_init(li: u32) {
  iq4_bytes_init(li);
  for (var i = li; i < 16u; i += WG) { iq4lvf[i] = mag4(iq4lv(vec4<u32>(i)), 128.0).x; }
}
// The levels of the nibbles at bit sh (0 or 4) of the 4 bytes of w.
fn iq4levels(w: u32, sh: u32) -> vec4<f32> {
  let n = nibs4(w, sh);
  return vec4<f32>(iq4lvf[n.x], iq4lvf[n.y], iq4lvf[n.z], iq4lvf[n.w]);
}
