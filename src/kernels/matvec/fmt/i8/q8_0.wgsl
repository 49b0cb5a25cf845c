// Q8_0 as int8 codes for the int8-activation path: chunk c (elements 8c ..
// 8c + 7) is two words of the unit's signed quants as they are; offset 0.
fn ichunk{{W}}(un: Unit{{W}}, c: u32) -> vec2<u32> {
  let q = select(un.q0, un.q1, c >= 2u);
  let i = (c & 1u) * 2u;
  return vec2<u32>(q[i], q[i + 1u]);
}
fn ioff{{W}}(un: Unit{{W}}, g: u32) -> i32 { return 0; }
