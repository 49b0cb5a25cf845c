// BF16 unit = 8 elements (rows of 4096 or more; bf16.wgsl takes shorter
// rows): main{{W}}: one vec4<u32>, two bf16 per u32.
struct Unit{{W}} { v: vec4<u32> }
fn load{{W}}(r: u32, u: u32) -> Unit{{W}} { return Unit{{W}}(main{{W}}[r * UPR + u]); }
fn chunk{{W}}(un: Unit{{W}}, c: u32) -> W8 { return W8(bf16x4(un.v.xy), bf16x4(un.v.zw)); }
