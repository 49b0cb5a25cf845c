// One quad lane's quarter of a block of 32 x values (v0, v1: its elements
// 8j .. 8j + 7, j its place in the quad), for kernels with subgroups: the
// quad exchanges the block's max |x| and code sums by subgroupShuffleXor, so
// all four lanes must call it. Returns the codes of v0 and of v1 (packed by
// pack4xI8), the code sum of elements 0..15 on lanes 0 and 1 and of 16..31 on
// lanes 2 and 3 (bitcast), and the block's max |x| (bitcast): the codes,
// scale and sums of quant_block.
fn quant_quarter(v0: vec4<f32>, v1: vec4<f32>) -> vec4<u32> {
  var am = 0.0;
  let a0 = abs(v0);
  am = max(am, max(max(a0.x, a0.y), max(a0.z, a0.w)));
  let a1 = abs(v1);
  am = max(am, max(max(a1.x, a1.y), max(a1.z, a1.w)));
  am = max(am, subgroupShuffleXor(am, 1u));
  am = max(am, subgroupShuffleXor(am, 2u));
  let inv = qinv(am);
  let c0 = vec4<i32>(clamp(round(v0 * inv), vec4<f32>(-127.0), vec4<f32>(127.0)));
  let c1 = vec4<i32>(clamp(round(v1 * inv), vec4<f32>(-127.0), vec4<f32>(127.0)));
  var cs = ((c0.x + c0.y) + (c0.z + c0.w)) + ((c1.x + c1.y) + (c1.z + c1.w));
  cs = cs + subgroupShuffleXor(cs, 1u);
  return vec4<u32>(pack4xI8(c0), pack4xI8(c1), bitcast<u32>(cs), bitcast<u32>(am));
}
