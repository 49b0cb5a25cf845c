// IQ4_NL unit = one block of 32 = one scale group: main{{W}}: the 16 code
// bytes as one vec4<u32>, side{{W}}: f16 scales two per u32. Codes and
// chunks: fmt/iq4.wgsl; scale d.
{{IQ4}}
fn load{{W}}(r: u32, u: u32) -> Unit{{W}} {
  let b = r * UPR + u;
  return Unit{{W}}(main{{W}}[b], f16pair(side{{W}}[b >> 1u], (b & 1u) == 1u));
}
