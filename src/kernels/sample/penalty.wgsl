// The GPU sampler's first dispatch when penalties are on (sample.hpp):
// llama.cpp's repetition penalties, in place on the logits [N], for the
// tokens of the window recent [R] (the last R accepted ids, in any order;
// an id >= N is an empty slot). Each distinct id is penalised once, by the
// invocation holding its first slot, with its count c among the R:
//   l = l <= 0 ? l * repeat : l / repeat;  l = l - (c * frequency + presence)
// (model/sampler.cpp's penalized; the twin is twin::penalize).
@group(0) @binding(0) var<storage, read_write> logits: array<f32>;  // [N]
@group(0) @binding(1) var<storage, read> recent: array<u32>;        // [R]
@group(0) @binding(2) var<storage, read> params: array<f32>;        // [3] repeat, frequency, presence

const N: u32 = {{N}};
const R: u32 = {{R}};
const WG: u32 = {{WG}};

var<workgroup> ids: array<u32, R>;

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) li: u32) {
  for (var i = li; i < R; i += WG) { ids[i] = recent[i]; }
  workgroupBarrier();
  let repeat = params[0];
  let frequency = params[1];
  let presence = params[2];
  for (var i = li; i < R; i += WG) {
    let id = ids[i];
    var count = 0u;
    var first = id < N;
    for (var j = 0u; j < R && first; j++) {
      if (ids[j] == id) {
        first = j >= i;
        count = count + 1u;
      }
    }
    if (first) {
      var l = logits[id];
      l = select(l / repeat, l * repeat, l <= 0.0f);
      logits[id] = l - (f32(count) * frequency + presence);
    }
  }
}
