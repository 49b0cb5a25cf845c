// F16: two elements per u32 (rows start 4-byte aligned since k % 32 == 0).
fn dq4{{W}}(rb: u32, e: u32) -> vec4<f32> {
  let i = (rb + 2u * e) >> 2u;
  return vec4<f32>(unpack2x16float(w{{W}}[i]), unpack2x16float(w{{W}}[i + 1u]));
}
