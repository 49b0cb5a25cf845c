// BF16 unit = 32 elements (rows under 4096; bf16_u8.wgsl takes longer rows):
// main{{W}}: 4 vec4<u32>, two bf16 per u32.
struct Unit{{W}} { v0: vec4<u32>, v1: vec4<u32>, v2: vec4<u32>, v3: vec4<u32> }
fn load{{W}}(r: u32, u: u32) -> Unit{{W}} {
  let b = 4u * (r * UPR + u);
  return Unit{{W}}(main{{W}}[b], main{{W}}[b + 1u], main{{W}}[b + 2u], main{{W}}[b + 3u]);
}
fn chunk{{W}}(un: Unit{{W}}, c: u32) -> W8 {
  let v = select(select(un.v0, un.v1, c == 1u), select(un.v2, un.v3, c == 3u), c >= 2u);
  return W8(bf16x4(v.xy), bf16x4(v.zw));
}
