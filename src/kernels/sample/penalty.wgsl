// The GPU sampler's first dispatch when penalties are on (sample.hpp):
// llama.cpp's repetition penalties, in place on the logits [N], for the
// tokens of the window recent [R] (the last R accepted ids, in any order;
// an id >= N is an empty slot). The ids are counted in a hash table of H
// slots in workgroup memory (open addressing, linear probing; H a power of
// two >= R, so every distinct id finds a slot), then each filled slot
// penalises its id once, with its count c among the R:
//   l = l <= 0 ? l * repeat : l / repeat;  l = l - (c * frequency + presence)
// (model/sampler.cpp's penalized; the twin is twin::penalize). Counts are
// integers, so the order the invocations insert in changes nothing.
@group(0) @binding(0) var<storage, read_write> logits: array<f32>;  // [N]
@group(0) @binding(1) var<storage, read> recent: array<u32>;        // [R]
@group(0) @binding(2) var<storage, read> params: array<f32>;        // [3] repeat, frequency, presence

const N: u32 = {{N}};
const R: u32 = {{R}};
const H: u32 = {{H}};
const SHIFT: u32 = {{SHIFT}};  // 32 - log2(H): a slot is the top bits of a multiplicative hash
const WG: u32 = {{WG}};
const EMPTY: u32 = 0xffffffffu;

var<workgroup> keys: array<atomic<u32>, H>;    // [H] an id, or EMPTY
var<workgroup> counts: array<atomic<u32>, H>;  // [H] its occurrences

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) li: u32) {
  for (var h = li; h < H; h += WG) {
    atomicStore(&keys[h], EMPTY);
    atomicStore(&counts[h], 0u);
  }
  workgroupBarrier();
  for (var i = li; i < R; i += WG) {
    let id = recent[i];
    if (id >= N) { continue; }
    var h = (id * 0x9e3779b1u) >> SHIFT;
    // At most H real collisions; the rest of the bound absorbs the weak
    // exchange's spurious failures, which retry the same slot.
    for (var tries = 0u; tries < 4u * H; tries++) {
      let r = atomicCompareExchangeWeak(&keys[h], EMPTY, id);
      if (r.exchanged || r.old_value == id) {
        atomicAdd(&counts[h], 1u);
        break;
      }
      if (r.old_value != EMPTY) { h = (h + 1u) & (H - 1u); }
    }
  }
  workgroupBarrier();
  let repeat = params[0];
  let frequency = params[1];
  let presence = params[2];
  for (var h = li; h < H; h += WG) {
    let id = atomicLoad(&keys[h]);
    if (id != EMPTY) {
      let count = atomicLoad(&counts[h]);
      var l = logits[id];
      l = select(l / repeat, l * repeat, l <= 0.0f);
      logits[id] = l - (f32(count) * frequency + presence);
    }
  }
}
