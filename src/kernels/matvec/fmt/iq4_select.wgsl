// IQ4_NL / IQ4_XS levels by selects (iq4lv, fmt/helpers.wgsl), for kernels
// without the workgroup table (the row gather). Same functions as
// fmt/iq4_table.wgsl: iq4_init, iq4levels (f32) and iq4bytes (int8).
fn iq4_init(li: u32) {}
// The levels of the nibbles at bit sh (0 or 4) of the 4 bytes of w.
fn iq4levels(w: u32, sh: u32) -> vec4<f32> { return mag4(iq4lv(nibs4(w, sh)), 128.0); }
// The same levels as 4 int8 bytes, byte i from byte i of w.
fn iq4bytes(w: u32, sh: u32) -> u32 {
  let b = iq4lv(nibs4(w, sh)) ^ vec4<u32>(0x80u);
  return b.x | (b.y << 8u) | (b.z << 16u) | (b.w << 24u);
}
