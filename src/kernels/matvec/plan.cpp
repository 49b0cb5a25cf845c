// matvec::plan(): a KernelSpec from the device's limits and the problem
// (workgroup size, lanes per row, rows per lane group, tokens per workgroup,
// staged tile, subgroups, int8 activations); the rules and the H200 sweeps
// behind them are in the comments.
#include <algorithm>

#include "kernels/matvec/generator.hpp"
#include "kernels/matvec/layout.hpp"
#include "kernels/matvec/plan_few.hpp"
#include "kernels/matvec/plan_hooks.hpp"
#include "util/error.hpp"

namespace blockq::matvec {

namespace {

uint32_t pow2_floor(uint32_t v) {
  uint32_t p = 1;
  while (p * 2 <= v) p *= 2;
  return p;
}

}  // namespace

KernelSpec plan(const Limits& lim, const WeightKind& kind, uint32_t n, uint32_t k, uint32_t m,
                const Hooks& hooks, const Options& opt) {
  BQ_CHECK(n > 0 && k > 0 && m > 0, "matvec: empty problem n={} k={} m={}", n, k, m);
  BQ_CHECK(k % 4 == 0, "matvec: k = {} must be a multiple of 4", k);
  const UnitInfo ui = unit_info(kind, k);
  KernelSpec s;
  s.op = Op::Matvec;
  s.weight = kind;
  s.n = n;
  s.k = k;
  s.m = m;
  s.hooks = hooks;
  s.max_groups = lim.max_groups;
  const bool sg_ok = lim.subgroup_min > 0 && lim.subgroup_max >= lim.subgroup_min;
  s.features.subgroups = opt.subgroups.value_or(sg_ok) && sg_ok;
  s.features.dot4 = opt.int8.value_or(false);
  BQ_CHECK(!s.features.dot4 || int8_supported(kind), "matvec {}: no int8-activation path for this format",
           kind.name());
  BQ_CHECK(!s.features.dot4 || lim.dot4,
           "matvec {}: int8 activations need WGSL's packed_4x8_integer_dot_product, which this adapter lacks",
           kind.name());
  const uint32_t upr = ui.kp / ui.unit;
  // The float formats' 8-element units (rows of 4096 or more, layout.cpp) go
  // 4 to a lane step (`unroll` 4), so that the lanes of a row load one
  // contiguous run per load while a step still covers 32 elements, as one
  // unit of the other formats does. H200, f16 4096 x 14336 at batch 1
  // (docs/perf/2026-12-01-session9-h200.md): the weight loads alone took
  // 36.9 us with 32-element units (64 bytes a lane) and 31.6 with these, the
  // kernel 36.0 and 34.7-35.1. The rules below count units in such steps
  // (spr: steps per row for one lane).
  const bool float_units = ui.group == 0;
  const uint32_t per_step = float_units && ui.unit == 8 ? 4 : 1;
  const uint32_t spr = (upr + per_step - 1) / per_step;
  // Defaults from the limits (H200 sweeps, docs/perf: the widest workgroup won
  // at batch 1 on the 8B shapes, with 32 lanes per row for k = 14336 or
  // n <= 4096 and 16 for 14336 x 4096; Q6_K's 128-element units spill their
  // registers at 1024 invocations; at batch 8, 512 invocations of 16 lanes,
  // 2 rows per lane group and 4 tokens per workgroup). Below, the workgroup
  // shrinks until the grid has kMinGroups workgroups.
  const bool batched = m > 1;
  const bool big_unit = ui.unit >= 128;
  const uint32_t long_k_tpr = ui.kp >= 32 * 256 || n <= 4096 ? 32 : 16;
  // A batch over many short rows (at most 128 units, e.g. k = 4096, and
  // n >= 12288, so the grid keeps about 100 workgroups or more; only 14336
  // rows were measured, and grid size decides: see the batch-1 case in the
  // same record, where 8192 rows preferred the old plan): 8 lanes a
  // row and all 8 tokens in one workgroup, so each weight is read once. H200
  // at batch 8 (docs/perf/2026-12-01-session4-h200.md), 14336 x 4096: q8_0
  // 93.1 -> 71.2 us, q4_0 88.9 -> 71.5, q4_K 134.2 -> 98.5, f16 111 -> 74;
  // but 2560 x 960 (20 workgroups) went from 9.3 to 19.8 us, hence the bound on n.
  const bool short_batch = batched && !big_unit && spr <= 128 && n >= 12288;
  s.tpr = opt.tpr.value_or(
      std::min<uint32_t>(short_batch ? 8 : batched || big_unit ? 16 : long_k_tpr, pow2_floor(spr)));
  if (s.features.subgroups) s.tpr = std::min(s.tpr, pow2_floor(lim.subgroup_min));
  const uint32_t max_inv = pow2_floor(lim.invocations);
  s.wg = opt.wg.value_or(std::min<uint32_t>(batched || big_unit ? 512 : 1024, max_inv));
  if (s.features.subgroups) s.wg = std::max(s.wg, pow2_floor(lim.subgroup_max) * (lim.subgroup_max > pow2_floor(lim.subgroup_max) ? 2 : 1));
  const bool rope = hooks.epilogue == Epilogue::Rope;
  s.wg = std::max(s.wg, s.tpr * (rope ? 2 : 1));
  BQ_CHECK(s.wg <= max_inv, "matvec: workgroup of {} past maxComputeInvocationsPerWorkgroup {}", s.wg,
           lim.invocations);
  BQ_CHECK(s.wg % s.tpr == 0 && (s.tpr & (s.tpr - 1)) == 0 && (s.wg & (s.wg - 1)) == 0,
           "matvec: WG {} and TPR {} must be powers of two with TPR | WG", s.wg, s.tpr);
  if (rope) {
    BQ_CHECK(hooks.head_dim % 2 == 0 && hooks.n_rot % 2 == 0 && hooks.n_rot <= hooks.head_dim &&
                 hooks.head_dim > 0 && n % hooks.head_dim == 0,
             "matvec rope: head_dim {} and n_rot {} must be even, n_rot <= head_dim, n = {} whole heads",
             hooks.head_dim, hooks.n_rot, n);
    BQ_CHECK(hooks.rope_rows % hooks.head_dim == 0 && hooks.rope_rows <= n,
             "matvec rope: rope_rows {} must be whole heads of {} within n = {}", hooks.rope_rows, hooks.head_dim, n);
  }
  if (hooks.kv_n) {
    BQ_CHECK(rope, "matvec: the KV store goes with the rope epilogue");
    BQ_CHECK(uint64_t{hooks.kv_k} + hooks.kv_n <= n && uint64_t{hooks.kv_v} + hooks.kv_n <= n && hooks.kv_ctx > 0 &&
                 (hooks.kv_k + hooks.kv_n <= hooks.kv_v || hooks.kv_v + hooks.kv_n <= hooks.kv_k),
             "matvec KV store: rows [{}, +{}) and [{}, +{}) must be apart within n = {}, and kv_ctx {} > 0",
             hooks.kv_k, hooks.kv_n, hooks.kv_v, hooks.kv_n, n, hooks.kv_ctx);
    // f16 pairs: an invocation packs its row with its pair partner (slot ^ 1),
    // which is the next row only where rows keep their place (normal RoPE, or
    // rows past rope_rows).
    BQ_CHECK(!hooks.kv_f16 || (hooks.kv_n % 2 == 0 && hooks.kv_k % 2 == 0 && hooks.kv_v % 2 == 0 &&
                               (hooks.rope_mode == RopeMode::Normal ||
                                (hooks.rope_rows && hooks.kv_k >= hooks.rope_rows))),
             "matvec KV store: an f16 cache needs even rows and the normal RoPE for rotated k rows");
  }
  s.tokens = std::min(opt.tokens.value_or(short_batch ? 8 : 4), m);
  s.unroll = opt.unroll.value_or(per_step);
  // Batched tokens reuse each x read for several rows (workgroup-memory reads
  // of x, not weights, bound the batched kernel).
  s.rpl = opt.rpl.value_or(batched ? 2 : 1);
  // Many short rows (an lm_head: 49152 x 960, 128256 x 2048): with 16 or 32
  // lanes a row, each lane decodes only 1 to 4 units, and the reduction and
  // staging dominate. A single token then gives each lane about 8 units (at
  // least 4 lanes a row) and 2 rows per lane group, while n alone fills the
  // grid. H200, old and new plans timed in one sweep, twice
  // (docs/perf/2026-12-01-session4-h200.md): q8_0 49152 x 960 29.0 -> 23.5
  // us, q8_0 128256 x 2048 114 -> 82.5, q4_0 104 -> 73.3, q4_K 138 -> 106,
  // q6_K 137 -> 116, f16 156 -> 134.
  constexpr uint32_t kManyRows = 16384;
  bool many_rows = false;
  if (!batched && !opt.tpr && !opt.rpl && n >= kManyRows) {
    const uint32_t lane_tpr = std::max<uint32_t>(4, pow2_floor(std::max<uint32_t>(1, spr / 8)));
    if (lane_tpr < s.tpr) {
      s.tpr = lane_tpr;
      s.rpl = 2;
      many_rows = true;
    }
  }
  // int8 activations: reading x costs less than decoding f32 did, so sharing
  // each x read among more rows pays (H200 sweeps with the plans below
  // against the f32 ones, docs/perf/2026-12-01-session5-h200.md).
  //  - Batch 1, n >= 12288: 2 rows per lane group (14336 x 4096: q8_0 23.6 ->
  //    20.5 us, q4_0 18.6 -> 14.3, q4_K 25.8 -> 21.0).
  //  - Batch 1, Q6_K's 128-element units: 256 invocations, 16 lanes (8 for
  //    n > 4096) and 2 rows (4096 x 14336: 30.2 -> 23.7 us; 14336 x 4096:
  //    34.7 -> 22.2).
  //  - Batches, n >= 4096, while the grid keeps 96 workgroups or more: 512
  //    invocations and 4 rows per lane group; k < 8192 takes 8 lanes and 4
  //    tokens per workgroup (14336 x 4096: q8_0 42.3 -> 32.9 us, q4_0 42.4
  //    -> 32.7, q4_K 68.5 -> 58.9), longer rows of 32-element units 16 lanes
  //    and 2 tokens (4096 x 14336: q8_0 42.8 -> 39.2, q4_0 40.0 -> 35.5,
  //    q4_1 40.5 -> 35.8). Longer rows of K-quant units take the split plan
  //    below. The K-quants' units (64 or 128 elements) over k < 8192 take 4
  //    lanes and 2 rows (the same 256 rows a workgroup; their larger units
  //    held in fewer registers): H200, 14336 x 4096, alternating processes
  //    (docs/perf/2026-12-01-session10-h200.md): q4_K 39.4 -> 36.2 us, q5_K
  //    46.6 -> 40.2, q6_K 118.3 (the f32 plan's 16 lanes) -> 60.1.
  // Lanes a row and invocations the subgroups allow (the reduction's bounds).
  const uint32_t sg_tpr = s.features.subgroups ? pow2_floor(lim.subgroup_min) : 1u << 30;
  const uint32_t sg_wg = s.features.subgroups ? pow2_floor(lim.subgroup_max) *
                                                    (lim.subgroup_max > pow2_floor(lim.subgroup_max) ? 2 : 1)
                                              : 1u;
  // An lm_head of Q4_0 or Q8_0 with int8 x (n >= kManyRows, k <= 4096, one
  // token): 8 lanes, 4 rows a lane group, 512 invocations (256 for k <
  // 2048), Q4_0 two units a step. H200 with the final RMSNorm, one sweep pass
  // (docs/perf/2026-12-04-session31-h200.md, run H): q4_0 128256 x 2048
  // 57.1 -> 48.5 us, 128256 x 4096 104.4 -> 90.4, q8_0 49152 x 960 18.8 ->
  // 17.2. Q6_K (a Q4 GGUF's usual lm_head): 4 lanes, 1 row, 512 invocations
  // (session 32, one pass: 128256 x 4096 147.4 -> 133.7, x 2048 84.8 -> 76.0).
  const bool q6k = kind.format == Format::Q6_K;
  const bool lm_i8 = s.features.dot4 && !batched && !kind.onnx && n >= kManyRows && ui.kp <= 4096 &&
                     (kind.format == Format::Q4_0 || kind.format == Format::Q8_0 || q6k) && !opt.tpr && !opt.rpl &&
                     !opt.wg;
  if (s.features.dot4) {
    const bool long_rows = ui.kp >= 8192;
    if (lm_i8) {
      s.tpr = std::min({q6k ? 4u : 8u, pow2_floor(spr), sg_tpr});
      s.rpl = q6k ? 1 : 4;
      s.wg = std::max({std::min<uint32_t>(q6k || ui.kp >= 2048 ? 512 : 256, max_inv), s.tpr * (rope ? 2 : 1), sg_wg});
      many_rows = false;  // Q4_0 takes two units a step (below)
    } else if (!batched && big_unit) {
      // Q3_K over long rows (k >= 8192) with few of them (n <= 4096) takes
      // 32 lanes and 512 invocations: H100, 4096 x 14336
      // (docs/perf/2026-12-06-session44-h100.md): 18.87-19.16 us -> 18.01-18.34
      // with 32 lanes (three passes in two sessions) -> 17.60-17.65 with 512
      // invocations (two passes). Q6_K tied with 32 lanes and keeps 16.
      const bool q3k_long = kind.format == Format::Q3_K && n <= 4096 && ui.kp >= 8192;
      if (!opt.tpr) s.tpr = std::min({q3k_long ? 32u : n <= 4096 ? 16u : 8u, pow2_floor(upr), sg_tpr});
      if (!opt.rpl) s.rpl = 2;
      if (!opt.wg) s.wg = std::max({std::min<uint32_t>(q3k_long ? 512 : 256, max_inv), s.tpr * (rope ? 2 : 1), sg_wg});
    } else if (!batched && !opt.rpl && !opt.tpr && n >= 12288 && s.rpl == 1) {
      s.rpl = 2;
    } else if (batched && n >= 4096 && !(long_rows && ui.unit > 32)) {
      const bool kquant = ui.unit >= 64;  // 4 lanes and 2 rows (see above)
      const uint32_t tpr = opt.tpr.value_or(std::min({long_rows ? 16u : kquant ? 4u : 8u, pow2_floor(upr), sg_tpr}));
      // The SiLU gate sums two weights: half the rows a lane, so its sums
      // and weight words take the registers one weight's do. H200, 16
      // tokens (docs/perf/2026-12-05-session38-h200.md): q4_0 14336 x 4096
      // 338 -> 113 us, 8192 x 2048 224 -> 33 (the best of 1, 2 and 4 rows
      // with 2 and 4 tokens); llama-3-8b's 27-token prompt 29.1 -> 14.7 ms.
      const uint32_t two = hooks.epilogue == Epilogue::SiluGate ? 2 : 1;
      const uint32_t rpl = opt.rpl.value_or((kquant ? 2 : 4) / two);
      const uint32_t tokens = std::min(opt.tokens.value_or(long_rows ? 2 : 4), m);
      const uint32_t wg = opt.wg.value_or(std::max({std::min<uint32_t>(512, max_inv), tpr * (rope ? 2 : 1), sg_wg}));
      const uint64_t rpw = uint64_t{wg} / tpr * rpl;
      if ((n + rpw - 1) / rpw * ((m + tokens - 1) / tokens) >= 96) {
        s.tpr = tpr;
        s.rpl = rpl;
        s.tokens = tokens;
        s.wg = wg;
      }
    }
    BQ_CHECK(s.wg <= max_inv && s.wg % s.tpr == 0, "matvec: int8 plan WG {} TPR {} past the limits", s.wg, s.tpr);
  }
  // A few tokens (2 to 4, int8 x): batch 1's lane shapes with every token
  // in each workgroup (few_tokens_plan, plan_few.cpp, with its H200 figures).
  const bool legacy32 = kind.format == Format::Q4_0 || kind.format == Format::Q4_1 ||
                        kind.format == Format::Q5_0 || kind.format == Format::Q5_1;
  const FewPlan fp = few_tokens_plan(kind, n, ui.kp, m, s.features.dot4, rope, hooks, opt);
  const bool pair_long = fp.pair_long, pair_gx = fp.pair_gx, few_short = fp.short_wg != 0;
  const bool few = fp.any();
  if (pair_long || few_short) {
    s.tpr = std::min<uint32_t>({pair_long ? 32u : 16u, pow2_floor(spr), sg_tpr});
    s.wg = std::max({std::min<uint32_t>(pair_long ? 1024 : fp.short_wg, max_inv), s.tpr, sg_wg});
    s.rpl = pair_long ? 1 : 2;
    s.tokens = m;
  }
  // Batches over long rows (k >= 8192): every token (up to 8) in one
  // workgroup, so each weight is read once, and k split in 8 slices (4 for
  // the float formats) so that the slice of x for all the tokens fits the
  // staged tile (or nearly); a split_sum kernel adds the slices. H200, 4096 x
  // 14336 at batch 8, against the unsplit plan in alternating processes
  // (docs/perf/2026-12-01-session9-h200.md): int8 q8_0 39.2 -> 33.8 us, q4_K
  // 76.0 -> 55.8, q5_K 74.3 -> 64.5, q6_K 97.5 -> 67.3 (256 invocations: its
  // 128-element units); f32 x: f16 79.4 -> 65.0, bf16 69.0 -> 60.0, f32 94.2
  // -> 80.7. Q4_0 went 31.7 -> 32.6 and Q4_1 33.6 -> 36.0, so they keep the
  // plan above; Q5_0 and Q5_1 split (46.5 -> 39.0 us and 46.2 -> 40.3, session
  // 10); the f32 path of the integer formats was not measured. Not
  // with the rope epilogue (split_sum does not run it), nor where the partial
  // sums would pass a binding or the grid would have fewer than 96 workgroups.
  // The lanes of a row (at most 8) divide the slice's lane steps, so that no
  // lane idles on a last partial step. Session 10 (8 slices, 256 rows a
  // workgroup): Q4_K and Q5_K 4 lanes and 2 rows instead of 8 and 4, Q6_K 2
  // and 2. H200, 4096 x 14336 at batch 8, one sweep
  // (docs/perf/2026-12-01-session10-h200.md): q4_K 42.0 -> 34.7 us, q5_K
  // 52.2 -> 36.2, q6_K 67.1 -> 40.6.
  // Q8_0, Q4_K and Q5_K split k in 16 slices instead, with the lanes above
  // (4 for Q8_0's 28 units a slice at k = 14336, 2 for the K-quants' 14), 2
  // rows a lane group and 512 invocations: H200, 4096 x 14336 at batch 8,
  // two processes (docs/perf/2026-12-01-session11-h200.md): q8_0 33.9 ->
  // 29.6-29.8 us, q4_K 34.7 -> 32.7, q5_K 36.0-36.2 -> 34.7; q6_K lost
  // (40.6 -> 44.2-45.0) and keeps 8. Only k = 14336 was measured. Q5_0 and
  // Q5_1, whose lane step is two units (below), take 4 lanes and 2 rows
  // (q5_0 38.4 -> 37.3 us, q5_1 39.1 -> 37.9, two processes, same record).
  // K-quant batches over rows of 4096 <= k < 8192 split too, in slices of
  // 1024 elements, with 2 lanes, 2 rows, 8 tokens and 512 invocations (H200,
  // 14336 x 4096 at batch 8, two passes, same record: q4_K 36.2 -> 34.5 us,
  // q5_K 40.2 -> 35.8, q6_K 60.1 -> 42.3; 4 lanes lost: 40.9, 42.9, 64.4).
  // Since x is staged as one block a read (session 18), Q4_K and Q5_K over
  // long rows take 8 slices again, with 4 lanes (their 28 units a slice at k
  // = 14336) and 2 rows in 512 invocations: H200, 4096 x 14336 at batch 8,
  // three alternating pairs in one process
  // (docs/perf/2026-12-02-session19-h200.md): q5_K 31.41-31.66 -> 29.47-29.71
  // us, q4_K 27.49-27.57 -> 27.23-27.41. Q6_K keeps 8 slices with 2 lanes
  // (4 lanes: 48.5 against 43.0); the other K-quant plans keep 2 lanes.
  uint32_t def_splits = 1;
  const bool forced = opt.wg || opt.tpr || opt.rpl || opt.tokens || opt.splits;
  // The formats added later (H100, one sweep pass each, 4096 x 14336 and
  // 14336 x 4096 at batch 8, against the generic batch plan above;
  // docs/perf/2026-12-06-session43-h100.md): IQ4_NL and IQ4_XS take the
  // split as Q5_0 (8 slices, 4 lanes: 72.4 -> 37.6 us, 74.3 -> 38.0) and the
  // short-row split of the K-quants (50.4 -> 41.7, 52.4 -> 42.7); Q2_K takes
  // Q4_K's 8 slices of 4 lanes (45.1 -> 31.3) and keeps the batch plan over
  // short rows (32.6 against 33.4 split); Q3_K takes Q8_0's 16 slices with 2
  // lanes (69.4 -> 41.1; 8 slices of 4 lanes 43.4) and the short-row split
  // (41.4 -> 37.9).
  const bool iq4 = kind.format == Format::IQ4_NL || kind.format == Format::IQ4_XS;
  const bool split_i8 = s.features.dot4 && !kind.onnx &&
                        (kind.format == Format::Q8_0 || kind.format == Format::Q5_0 ||
                         kind.format == Format::Q5_1 || kind.format == Format::Q4_K ||
                         kind.format == Format::Q5_K || kind.format == Format::Q6_K || kind.format == Format::Q2_K ||
                         kind.format == Format::Q3_K || iq4);
  const bool split_f32 = !s.features.dot4 && float_units;
  const bool kq_split = split_i8 && ui.unit >= 64;                                  // the K-quants
  const bool short_kq = split_i8 && (ui.unit >= 64 || iq4) && kind.format != Format::Q2_K && ui.kp >= 4096 &&
                        ui.kp < 8192;  // rows of 4096 .. 8191
  const bool two_units = s.features.dot4 && ui.unit == 32 && row_bytes(kind, k).main == 16.0 * upr;  // below
  if (batched && !few && !forced && !rope && ((ui.kp >= 8192 && (split_i8 || split_f32)) || short_kq)) {
    const bool sixteen = split_i8 && (kind.format == Format::Q8_0 || kind.format == Format::Q3_K);
    const bool k45 = split_i8 && !short_kq &&
                     (kind.format == Format::Q4_K || kind.format == Format::Q5_K || kind.format == Format::Q2_K);
    const uint32_t splits = split_f32 ? 4 : short_kq ? ui.kp / 1024 : sixteen ? 16 : 8, tokens = std::min(m, 8u);
    const uint32_t rpl = 2;
    const uint32_t sps = std::max<uint32_t>(1, spr / splits / (two_units ? 2 : 1));  // lane steps a slice
    uint32_t tpr = std::min({k45 ? 4u : kq_split || short_kq ? 2u : 8u, pow2_floor(sps), sg_tpr});
    while (tpr > 2 && sps % tpr != 0) tpr /= 2;
    const uint32_t wg = std::max(
        {std::min<uint32_t>(split_f32 || sixteen || short_kq || k45 ? 512 : 256 * tpr / rpl, max_inv), tpr, sg_wg});
    const uint64_t rpw = uint64_t{wg} / tpr * rpl;
    const uint64_t groups = (n + rpw - 1) / rpw * splits * ((m + tokens - 1) / tokens);
    const uint64_t sets = hooks.epilogue == Epilogue::SiluGate ? 2 : 1;
    if (wg <= max_inv && groups >= 96 && uint64_t{splits} * sets * m * n * 4 <= lim.binding) {
      s.tpr = tpr;
      s.rpl = rpl;
      s.tokens = tokens;
      s.wg = wg;
      def_splits = splits;
    }
  }
  // int8 activations over 32-element units of 16 bytes (Q4_0, Q4_1, Q5_0,
  // Q5_1, 4-bit MatMulNBits): two units a step, so that a lane loads 32 bytes
  // of quants a step, as with Q8_0's one unit. H200, the 8B shapes, one
  // process plus a repeat of the batch-1 Q4_0/Q4_1 rows
  // (docs/perf/2026-12-01-session8-h200.md): q4_0 4096 x 14336 b1 16.9 ->
  // 15.0 us, b8 36.0 -> 31.8; q5_0 b1 19.2 -> 17.7; q5_1 b8 48.1 -> 46.2;
  // MatMulNBits b1 18.9 -> 17.4; Q4_1 at batch 1 unchanged. Q8_0 and Q4_K
  // lost at 14336 x 4096 and at batch 8, so they keep one unit. Not measured
  // for the many-rows (lm_head) plan, which keeps one.
  // Q4_1 at batch 1 over rows of k >= 8192 keeps one unit since x is staged
  // as one 48-byte block a read (H200, 4096 x 14336: 14.5 us against 17.3
  // with two; docs/perf/2026-12-02-session18-h200.md).
  const bool q41_long_b1 = kind.format == Format::Q4_1 && !kind.onnx && m == 1 && k >= 8192;
  if (!opt.unroll && two_units && !many_rows && !q41_long_b1) s.unroll = 2;
  if (few_short && !opt.unroll) s.unroll = fp.short_unroll;
  BQ_CHECK(s.rpl >= 1 && s.rpl <= 8, "matvec: rows per lane {} outside 1..8", s.rpl);
  // Small problems (a 360M model's 960 x 960) leave most of a large GPU idle
  // with wide workgroups: the time of a matvec is the time of one workgroup
  // when there are fewer workgroups than compute units. So, unless asked, a
  // single token's workgroup halves while the grid has fewer than kMinGroups
  // workgroups (a small GPU runs the extra ones in waves). On the H200 this
  // took 960 x 960 Q8_0 from 6.2 to 4.5 us and 960 x 2560 from 9.7 to 5.8 us,
  // and left the 8B shapes as they were (docs/perf/2026-11-30-session3-h200.md).
  constexpr uint64_t kMinGroups = 128;
  const uint32_t min_wg = std::max({s.tpr * (rope ? 2 : 1), s.features.subgroups ? lim.subgroup_max : 1u, 32u});
  auto grid_groups = [&](uint32_t wg) {
    const uint64_t rows_per_group = uint64_t{wg} / s.tpr * s.rpl;
    return (n + rows_per_group - 1) / rows_per_group * ((m + s.tokens - 1) / s.tokens);
  };
  // Short rows of one token, with the decoder's hooks (H200, `bench matvec
  // --hooks`, docs/perf/2026-12-04-session31-h200.md): f32 x over ggml's
  // integer formats, n and k <= 4096, >= 24 lane steps a row: 32 lanes (k =
  // 960: one unit each) and 256 invocations whatever the grid (q8_0 960 x 960
  // acc 4.72 -> 4.22 us, 1600 x 960 RMSNorm+RoPE 5.49 -> 5.11, 2560 x 960
  // SiLU-gate 6.31 -> 5.94, 960 x 2560 5.91 -> 5.70; q4_0 3072 x 2048 RoPE
  // 7.12 -> 6.54). int8 x over k <= 2048, n < 12288: at most 512 invocations
  // (q4_0 8192 x 2048 SiLU-gate 10.15 -> 9.00; 4096 x 4096 keeps 1024: 8.03
  // against 8.21 at 512).
  // (Where subgroups smaller than 32 cap the lanes, the plan stays as it was.)
  const bool short_f32 = !batched && !s.features.dot4 && !float_units && !many_rows && n <= 4096 && ui.kp <= 4096 &&
                         spr >= 24 && sg_tpr >= 32 && !opt.wg && !opt.tpr && !opt.rpl;
  if (short_f32) {
    s.tpr = 32;
    s.wg = std::max({std::min<uint32_t>(256, max_inv), s.tpr * (rope ? 2 : 1), sg_wg});
  }
  if (!batched && s.features.dot4 && !many_rows && ui.kp <= 2048 && n < 12288 && !opt.wg)
    s.wg = std::max({std::min<uint32_t>(s.wg, 512), s.tpr * (rope ? 2 : 1), sg_wg});
  // Batches keep their width: there each workgroup stages TOKENS rows of x,
  // and narrower ones were slower (960 x 2560 at batch 8: 19.6 us at 64
  // invocations).
  if (!opt.wg && !batched && !short_f32)
    while (s.wg / 2 >= min_wg && grid_groups(s.wg) < kMinGroups) s.wg /= 2;
  // x read from global memory, no staging (kGlobalX): by default for the
  // float formats' 8-element units (k >= 4096) at batch 1 without the
  // RMSNorm prologue (which would have every small workgroup reduce all of
  // x), with one 32-lane group a workgroup, 4 units a step and a constant
  // step count. H200 (docs/perf/2026-12-02-session13-h200.md): f16 4096 x
  // 14336 34.4 -> 29.5 us (ggml-Vulkan 30.6-30.7 in the same processes),
  // 14336 x 4096 35.5-35.9 -> 30.7-31.2, bf16 likewise, f32 71-73 -> 64-66.
  // Larger workgroups took 33-34 us, the guarded x reads about 34, and
  // other formats (f32 x over Q8_0, Q4_0, Q5_0, Q6_K) and batches were
  // slower than their staged plans (x is read once per row, not once per
  // workgroup). Not measured for the many-rows plan (an F16 lm_head), which
  // keeps its staging.
  //
  // With int8 activations, x quantized once per call by its own dispatch
  // (xquant) and read from global memory: by default for Q8_0, Q5_0 and Q5_1
  // at batch 1 over rows of k >= 8192 without the prologue, with one 32-lane
  // group a workgroup, 2 units a step and one row a lane group. H200, 4096 x
  // 14336, against the staged plan in the same process (the last run of
  // docs/perf/2026-12-02-session14-h200.md): q8_0 20.25 against 20.62-20.67
  // us (the quantize dispatch and its barrier take 2.3-2.5 of it), q5_0
  // 16.13 against 16.53, q5_1 16.87 against 17.26; q4_1 lost (15.1 against
  // 14.3). Hand-written kernels of this shape took 16.9 us without the
  // quantize dispatch, 17.8-18.1 with 2 rows a lane group and 17.3-17.4 in
  // 64 to 256 invocations. Q4_0, the K-quants and rows of k = 4096 lost to
  // their staged plans.
  //
  // Batches of 3 to 8 tokens (only 8 measured; pairs: above) take the same
  // path for Q4_0, Q5_0 and Q5_1 over rows of k >= 12288 (n >= 4096,
  // without the prologue): one 32-lane group
  // a workgroup, 4 rows a lane group, 4 tokens a workgroup, 2 units a step,
  // no split. H200, 4096 x 14336 at batch 8, int8 x, against the plans above
  // in the same processes (docs/perf/2026-12-02-session16-h200.md): q4_0
  // 30.7-30.9 -> 27.4-27.7 us (three processes), q5_0 35.5 -> 32.6-33.1,
  // q5_1 44.7 -> 33.1 (their split plans; session 11 had 37.3 and 37.9).
  // Lost or tied: Q4_1 (32.7-33.9 -> 34.1-34.3), Q4_0 at 14336 x 4096 (30.5
  // -> 34.4) and 8192 x 8192 (35.8 -> 36.7), Q8_0 (28.9 -> 33.1) and Q4_K
  // (31.0 -> 40.1) at 4096 x 14336; 8 tokens a workgroup (34.8 for Q4_0), 2
  // rows a lane group (38-45), 8 rows (33-44), chunks interleaved (29.1).
  // Q4_1 takes it too since x is staged as one block a read (session 18),
  // with 8 tokens a workgroup: H200, 4096 x 14336 at batch 8, two processes
  // (docs/perf/2026-12-02-session19-h200.md): 29.60-29.78 us against
  // 31.65-31.77 for its staged plan (16 lanes, 2 tokens); 4 tokens tied
  // (31.69). Q4_0 lost with 8 (40.4 against 23.1) and keeps 4; Q4_1 at
  // 14336 x 4096 lost (30.5 against 27.6) and keeps its staged plan.
  const bool no_probe = opt.probe.value_or(0) == 0;
  const bool gx_i8 = kind.format == Format::Q8_0 || kind.format == Format::Q5_0 || kind.format == Format::Q5_1;
  const bool gx_batch = batched && !few && m <= 8 && s.features.dot4 && !kind.onnx && ui.kp >= 12288 && n >= 4096 &&
                        (kind.format == Format::Q4_0 || kind.format == Format::Q4_1 || kind.format == Format::Q5_0 ||
                         kind.format == Format::Q5_1);
  const bool gx_default = pair_gx || (!many_rows && hooks.prologue == Prologue::None && no_probe && !kind.onnx &&
                                      (batched ? gx_batch
                                               : s.features.dot4 ? gx_i8 && ui.kp >= 8192
                                                                 : float_units && ui.unit == 8));
  const bool gx = opt.global_x.value_or(gx_default);
  if (gx && !opt.global_x && !opt.wg && !opt.tpr) {
    s.tpr = std::min<uint32_t>(32, sg_tpr);
    s.wg = std::max({32u, s.tpr * (rope ? 2 : 1), sg_wg});
    if (s.features.dot4) {
      if (!opt.rpl) s.rpl = batched && !few ? 4 : 1;
      if (!opt.unroll) s.unroll = 2;
      if (!opt.tokens) s.tokens = std::min(m, kind.format == Format::Q4_1 ? 8u : 4u);
    }
    if (!opt.splits) def_splits = 1;
  }
  const uint32_t splits = opt.splits.value_or(def_splits);
  BQ_CHECK(splits >= 1 && (splits == 1 || !rope), "matvec: split-k ({} slices) does not support the rope epilogue",
           splits);
  const uint32_t ups = (upr + splits - 1) / splits;  // units per slice
  s.splits = (upr + ups - 1) / ups;                  // no empty slice
  if (gx) {
    BQ_CHECK(global_x_supported(kind, k, s.features.dot4),
             "matvec {}: x from global memory needs int8 activations, or f32 ones over a format without a min "
             "whose units hold at most 32 elements", kind.name());
    BQ_CHECK(!opt.probe || *opt.probe == 0, "matvec: x from global memory does not combine with probe {}", *opt.probe);
    s.variant |= kGlobalX;
    s.tile = ups * ui.unit;  // one tile: the whole slice
  }
  while (!gx) {
    s.tile = 0;
    const int64_t avail = int64_t{lim.shared} - shared_bytes(s);
    const int64_t unit_bytes = s.features.dot4 ? ui.unit * 3 / 2 : (ui.unit + 4) * 4;  // as shared_bytes
    int64_t tile = avail > 0 ? avail / (int64_t{s.tokens} * unit_bytes) * ui.unit : 0;
    tile = std::min<int64_t>(tile, int64_t{ups} * ui.unit);
    if (opt.max_tile) tile = std::min<int64_t>(tile, *opt.max_tile / ui.unit * ui.unit);
    if (tile >= ui.unit) {
      s.tile = static_cast<uint32_t>(tile);
      break;
    }
    const uint32_t min_wg = std::max(s.tpr * (rope ? 2 : 1), s.features.subgroups ? lim.subgroup_max : 1u);
    if (s.wg / 2 >= min_wg) {
      s.wg /= 2;
    } else if (s.tokens > 1) {
      s.tokens = (s.tokens + 1) / 2;
    } else {
      fail("matvec {}: a {}-element unit does not fit {} bytes of workgroup memory", kind.name(), ui.unit,
           lim.shared);
    }
  }
  BQ_CHECK(!gx || shared_bytes(s) <= lim.shared, "matvec {}: {} bytes of workgroup memory past the limit {}",
           kind.name(), shared_bytes(s), lim.shared);
  // Token chunks interleaved: on by default for the int8 batch plans with x
  // staged over rows of k < 8192 (n >= 4096, nothing forced) of Q8_0, Q4_0,
  // Q4_1 and Q5_1, whose chunks then share each weight read in L2 (Q8_0 with
  // the biased sum, below). H200, 14336 x 4096 at batch 8 (2 chunks of 4
  // tokens), two machines or passes each, all reads clean
  // (docs/perf/2026-12-03-session22-h200.md): q8_0 30.8-31.1 -> 27.0-27.1
  // us (interleaved alone 28.2-28.3, biased alone 31.1-31.3), q4_0 25.5-25.7
  // -> 24.6, q4_1 27.1-27.2 -> 26.2-26.4, q5_1 32.1-32.3 -> 31.7. Q5_0 tied
  // (31.4-31.9); the pre-quantized plans over long rows lost (q4_0 4096 x
  // 14336 23.0 -> 24.3, q5_0 29.7 -> 31.4); session 6 (f32 x) found -6% to
  // +4%.
  const bool zi_default = s.features.dot4 && !kind.onnx && batched && !few && !forced && !gx && s.splits == 1 &&
                          n >= 4096 && ui.kp < 8192 && opt.probe.value_or(0) == 0 &&
                          (kind.format == Format::Q8_0 || kind.format == Format::Q4_0 ||
                           kind.format == Format::Q4_1 || kind.format == Format::Q5_1);
  const bool interleaved = opt.interleave.value_or(zi_default) && (m + s.tokens - 1) / s.tokens > 1;
  if (interleaved) s.variant |= kInterleaveChunks;
  // A constant step count: on by default with int8 activations over 32-element
  // units (H200, the 8B shapes, two processes each,
  // docs/perf/2026-12-01-session7-h200.md: q8_0 4096 x 14336 b1 22.45 ->
  // 21.8 us, q4_1 17.5 -> 15.9, q4_0 14336 x 4096 b8 32.7 -> 29.5, q5_0
  // 4096 x 14336 b8 48.7 -> 46.2). Q4_K lost 3% at 14336 x 4096 b8 and the
  // other K-quants' and the f32 path's figures were too noisy to decide, so
  // they keep the plain loop unless asked.
  const bool cs_default = s.features.dot4 && ui.unit == 32;
  if (opt.const_steps.value_or(cs_default || (gx && !opt.global_x)) && s.splits == 1 && s.tile >= ui.kp)
    s.variant |= kConstSteps;
  // Quad-lane int8 staging: on by default for the formats where it gained in
  // (nearly) every case measured (H200, the 8B shapes at batch 1 and 8, one
  // process, docs/perf/2026-12-01-session8-h200.md: q4_K 4096 x 14336 b1
  // 23.3 -> 21.7 us, 14336 x 4096 b1 22.0 -> 19.9; q5_K 24.8 -> 23.3 and
  // 24.1 -> 23.0; q8_0 0.2-0.5 us in all four). Q4_0 and Q4_1 at k = 14336
  // lost 2.5-2.9 us and Q6_K 1.5 us, so they kept the plain staging. Since
  // then (two units a lane step, constant steps), they gain from it in
  // batches and over long rows and still lose at batch 1 over k = 4096
  // (H200, two processes each, docs/perf/2026-12-01-session11-h200.md:
  // 4096 x 14336 b1 q4_0 15.1 -> 13.9 us, q5_0 17.7 -> 17.4, q5_1 18.4 ->
  // 18.0, q4_1 unchanged; b8 1-3% faster; 14336 x 4096 b8 q4_0 28.5 ->
  // 28.1, q4_1 29.9 -> 28.8, q5_0 37.8 -> 35.8, q5_1 37.1 -> 36.3; b1 8-12%
  // slower).
  // Q2_K and Q3_K take it too: H100, batch 1, int8 x, one sweep pass
  // (docs/perf/2026-12-06-session43-h100.md), faster in each of the 16 lane
  // shapes tried; with the plan's: q2_K 4096 x 14336 14.72 -> 14.11 us,
  // 14336 x 4096 13.44 -> 12.56; q3_K 19.12 -> 18.87 and 16.87 -> 15.41.
  // Since session 44 the legacy formats take it at batch 1 over k < 8192
  // too (H100, docs/perf/2026-12-06-session44-h100.md: q4_0 2048 x 2048
  // Acc 5.77 -> 4.59 us, 14336 x 4096 16.2-16.3 -> 15.2), and since session
  // 45 Q6_K and the IQ4 formats at batch 1 over k < 8192 (H100, session45
  // record: 14336 x 4096 q6_K 24.55 -> 23.9, iq4_xs 25.2 -> 24.0; at k =
  // 14336 q6_K lost 25.52 -> 26.54 and iq4_nl 23.28 -> 24.99).
  const bool short_b1 = m == 1 && ui.kp < 8192 &&
                        (kind.format == Format::Q6_K || kind.format == Format::IQ4_NL || kind.format == Format::IQ4_XS);
  const bool qs_default = !kind.onnx && (kind.format == Format::Q8_0 || kind.format == Format::Q4_K ||
                                         kind.format == Format::Q5_K || kind.format == Format::Q2_K ||
                                         kind.format == Format::Q3_K || legacy32 || short_b1);
  if (s.features.subgroups && s.features.dot4 && !gx && opt.quad_stage.value_or(qs_default)) s.variant |= kQuadStage;
  const uint32_t probe = opt.probe.value_or(0);
  BQ_CHECK(probe <= static_cast<uint32_t>(Probe::LoadsNoStage) && (probe != 5 || s.features.dot4),
           "matvec: probe {} is not 0..7 (5: int8 activations only)", probe);
  if (probe == static_cast<uint32_t>(Probe::LoadsInterleaved))
    BQ_CHECK(s.rpl == 1 && upr % s.tpr == 0 && n % s.rpw() == 0 && s.splits == 1,
             "matvec: probe 6 needs one row per lane group, whole steps per row, whole workgroups of rows and no "
             "split (rpl {}, {} units per row, {} lanes, n {}, {} rows a workgroup)",
             s.rpl, upr, s.tpr, n, s.rpw());
  s.variant |= probe << kProbeShift;
  // The pipelined lane loop: on by default where it gained on the H200 (two
  // processes each, docs/perf/2026-12-01-session12-h200.md): Q4_K batches
  // split over k (4096 x 14336 b8 32.7 -> 31.7 us, 14336 x 4096 b8 34.6 ->
  // 33.2) and Q8_0 at batch 1 with 2 rows a lane group (14336 x 4096 20.0 ->
  // 19.5), with int8 activations; with f32 x, Q4_0 in the short-batch plan
  // (14336 x 4096 b8 70.7 -> 64.8). It lost in the other plans of the 8B
  // shapes (int8: Q4_K at batch 1 18.4 -> 18.7, Q5_K and Q6_K batches 35 ->
  // 41 and 41 -> 43, Q4_0 in all four, Q8_0 at 4096 x 14336; f32 x: the
  // K-quants, Q8_0 at 4096 x 14336, Q4_0 at 14336 x 4096 b1) or tied (Q4_0
  // with f32 x at 4096 x 14336).
  // Since then (biased sums, interleaved chunks, two units a step), Q4_0's
  // staged batch plans with int8 x gain from it: H200 at batch 8, alternating
  // processes, µs against the plain loop (docs/perf/2026-12-03-session25-h200.md;
  // n >= 4096 only):
  // 14336 x 4096 23.99-24.20 against 24.43-24.52 (six pairs), 8192 x 8192
  // 36.38-36.48 against 37.70-37.75, 4096 x 4096 11.22 against 11.39-11.40,
  // 14336 x 2048 14.74-14.78 against 14.94-14.95. Not Q4_0 with x
  // pre-quantized (4096 x 14336 b8 34.3 against 23.2), in the plans for a few
  // tokens (14336 x 4096: b2 13.4 against 13.6, b3 15.9 against 14.6, b4 a
  // tie) or at batch 1 (13.6 against 13.1); Q8_0's batch plan lost too
  // (27.2-27.3 against 27.0).
  const bool q40_batch = kind.format == Format::Q4_0 && batched && !few && !gx && n >= 4096;  // as measured
  const bool pl_default =
      !kind.onnx && (probe == 0 || probe == 5) &&
      (s.features.dot4 ? (kind.format == Format::Q4_K && batched && s.splits > 1) ||
                             (kind.format == Format::Q8_0 && !batched && s.rpl == 2 && !many_rows) || q40_batch
                       : kind.format == Format::Q4_0 && short_batch);
  if (opt.pipeline.value_or(pl_default)) {
    BQ_CHECK(pipeline_supported(kind), "matvec {}: no pipelined lane loop for this format", kind.name());
    BQ_CHECK(probe == 0 || probe == static_cast<uint32_t>(Probe::GlobalX),
             "matvec: the pipelined lane loop does not combine with probe {}", probe);
    s.variant |= kPipeline;
  }
  // The biased int8 sum (kBiasedSum): on by default for Q4_0 batches, where
  // it gained on the H200 (docs/perf/2026-12-02-session17-h200.md; three
  // processes each): 4096 x 14336 at batch 2 28.0 -> 21.5-21.7 us, batch 4
  // 25.4 -> 22.5-22.7, batch 8 27.5-27.6 -> 26.4-26.6; 14336 x 4096 at batch 4
  // 23.3 -> 22.2, batch 8 30.1 -> 29.2-29.4 (batch 2 a tie). It lost for
  // Q5_0 (32.9 -> 46.5 at 4096 x 14336 b8), Q5_1, Q5_K and Q8_0 at
  // 4096 x 14336 b8, tied at batch 1 and for Q6_K, and gained 1-4% for
  // Q4_1, Q4_K and Q8_0 at 14336 x 4096 b8 in one lab run only.
  // Since then (session 22, same record as the interleaved chunks above):
  // Q8_0 where its token chunks are interleaved by default (14336 x 4096 at
  // batch 8: 28.2-28.3 -> 27.0-27.1 us), and Q4_1 batches in the
  // pre-quantized plan over long rows (4096 x 14336 at batch 8: 29.6-29.7
  // -> 28.3-28.4, one process; session 17's lab had 1-4%). Q4_K and Q5_K
  // lost or tied again, Q6_K gained at 14336 x 4096 and lost at 4096 x 14336.
  const bool bs_default =
      s.features.dot4 && !kind.onnx && batched && probe == 0 &&
      (kind.format == Format::Q4_0 || (kind.format == Format::Q8_0 && zi_default && interleaved) ||
       (kind.format == Format::Q4_1 && gx_batch && gx && !opt.global_x));
  if (opt.biased_sum.value_or(bs_default)) {
    BQ_CHECK(s.features.dot4, "matvec {}: the biased int8 sum needs int8 activations", kind.name());
    s.variant |= kBiasedSum;
  }
  // Two lane steps an iteration (kStepPairs): on by default for the staged
  // int8 batch plans of Q4_1 and Q5_0 over n >= 4096 rows, where it gained on
  // the H200 (alternating processes, the same y bit for bit,
  // docs/perf/2026-12-03-session26-h200.md): 14336 x 4096 at batch 8 q4_1
  // 25.92-25.94 -> 24.62-24.68 us, q5_0 31.67-31.68 -> 31.03-31.07. It tied
  // for Q5_1 and for the plans with x pre-quantized (4096 x 14336), and lost
  // for Q4_0 (24.1 -> 26.7) and Q8_0 (27.0 -> 28.3) at batch 8.
  const uint32_t steps = (ui.kp / ui.unit + s.tpr * s.unroll - 1) / (s.tpr * s.unroll);
  const bool pairs_ok = (s.variant & kConstSteps) && steps % 2 == 0 && probe == 0;
  const bool sp_default = s.features.dot4 && !kind.onnx && batched && !few && !gx && n >= 4096 &&
                          (kind.format == Format::Q4_1 || kind.format == Format::Q5_0);
  if (opt.step_pairs.value_or(sp_default && pairs_ok)) {
    BQ_CHECK(pairs_ok, "matvec {}: two lane steps an iteration need a constant, even step count and no probe "
             "({} steps, constant: {}, probe {})", kind.name(), steps, (s.variant & kConstSteps) != 0, probe);
    s.variant |= kStepPairs;
  }
  hook_variants(s, opt, ui.kp, probe);  // kAccEarly, kRmsLate (plan_hooks.cpp)
  // The subgroup reduction's premises: a row's lanes within one subgroup,
  // whole subgroups in a workgroup.
  BQ_CHECK(!s.features.subgroups || (s.tpr <= lim.subgroup_min && s.wg >= lim.subgroup_max),
           "matvec: {} lanes a row and {} invocations do not fit subgroups of {} to {}", s.tpr, s.wg,
           lim.subgroup_min, lim.subgroup_max);
  BQ_CHECK(storage_bindings(s) <= lim.storage_buffers,
           "matvec {}: {} storage buffers past maxStorageBuffersPerShaderStage {}", kind.name(), storage_bindings(s),
           lim.storage_buffers);
  return s;
}

}  // namespace blockq::matvec
