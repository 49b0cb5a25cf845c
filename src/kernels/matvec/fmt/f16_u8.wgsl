// F16 unit = 8 elements (rows of 4096 or more; f16.wgsl takes shorter rows):
// main{{W}}: one vec4<u32>, two f16 per u32 (decoded by f16x4). No scale.
struct Unit{{W}} { v: vec4<u32> }
fn load{{W}}(r: u32, u: u32) -> Unit{{W}} { return Unit{{W}}(main{{W}}[r * UPR + u]); }
fn chunk{{W}}(un: Unit{{W}}, c: u32) -> W8 { return W8(f16x4(un.v.xy), f16x4(un.v.zw)); }
