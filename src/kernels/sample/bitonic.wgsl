// The GPU sampler's selection (topk.wgsl and pick.wgsl include it): the best
// KP (a power of two >= K) of the SEL (a power of two) (key, id) pairs in sv,
// in rank order, to sv[0 .. KP), by bitonic networks with a barrier after
// each stage, WG invocations:
//   runs of KP sorted, alternately best-first and worst-first
//     (log2(KP) (log2(KP) + 1) / 2 stages);
//   then log2(SEL / KP) halvings: run 2j takes the better of its element
//     and run 2j + 1's at each index (a bitonic sequence holding the best KP
//     of both), then is merged into order, alternately again (1 + log2(KP)
//     stages each); run j of halving h starts at j KP 2^h.
// Rank order: the higher key first, the lower id on a tie (keys: sample.hpp's
// rank_key, so the higher logit first, NaN last).
const KH: u32 = max(KP / 2u, 1u);  // pairs of a run (1 where KP is 1: no merge stages then)

fn ranks_before(a: vec2u, b: vec2u) -> bool {
  return a.x > b.x || (a.x == b.x && a.y < b.y);
}

// Orders positions lo < hi: best first when `best_first`, else worst first.
fn order_pair(lo: u32, hi: u32, best_first: bool) {
  let a = sv[lo];
  let b = sv[hi];
  if (ranks_before(b, a) == best_first) {
    sv[lo] = b;
    sv[hi] = a;
  }
}

// Pair i of a run's stage of stride st: i with a zero bit inserted at st.
fn pair_lo(i: u32, st: u32) -> u32 {
  return ((i & ~(st - 1u)) << 1u) | (i & (st - 1u));
}

fn top_chunk(li: u32) {
  // Runs of KP: blocks of `size` best-first where bit `size` of lo is 0.
  for (var size = 2u; size <= KP; size = size * 2u) {
    for (var st = size / 2u; st > 0u; st = st / 2u) {
      for (var i = li; i < SEL / 2u; i += WG) {
        let lo = pair_lo(i, st);
        order_pair(lo, lo + st, (lo & size) == 0u);
      }
      workgroupBarrier();
    }
  }
  // Halvings: runs(h) = SEL / KP / 2^h runs left, run j at j KP 2^h.
  for (var h = 1u; (KP << h) <= SEL; h = h + 1u) {
    let span = KP << h;  // run j's start is j * span
    let runs = SEL / span;
    for (var e = li; e < runs * KP; e += WG) {
      let a = (e / KP) * span + e % KP;
      let b = a + span / 2u;
      let vb = sv[b];
      if (ranks_before(vb, sv[a])) { sv[a] = vb; }
    }
    workgroupBarrier();
    for (var st = KP / 2u; st > 0u; st = st / 2u) {
      for (var q = li; q < runs * KH; q += WG) {
        let j = q / KH;
        let lo = j * span + pair_lo(q % KH, st);
        order_pair(lo, lo + st, (j & 1u) == 0u);
      }
      workgroupBarrier();
    }
  }
}
