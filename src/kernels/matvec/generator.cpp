// Planning and WGSL generation for the matvec family (see generator.hpp and
// matvec.wgsl for the kernel's structure).
#include "kernels/matvec/generator.hpp"

#include <algorithm>

#include "kernels/matvec/int8.hpp"
#include "kernels/matvec/layout.hpp"
#include "util/embedded_wgsl.hpp"
#include "util/error.hpp"
#include "util/template.hpp"

namespace blockq::matvec {

namespace {

uint32_t pow2_floor(uint32_t v) {
  uint32_t p = 1;
  while (p * 2 <= v) p *= 2;
  return p;
}

uint32_t weights(const KernelSpec& s) { return s.hooks.epilogue == Epilogue::SiluGate ? 2 : 1; }

std::string fmt_file(const WeightKind& kind) {
  if (kind.onnx) return kind.bits == 4 ? "onnx4.wgsl" : "onnx8.wgsl";
  switch (kind.format) {
    case Format::Q8_0: return "q8_0.wgsl";
    case Format::Q4_0: return "q4_0.wgsl";
    case Format::Q4_1: return "q4_1.wgsl";
    case Format::Q5_0: return "q5_0.wgsl";
    case Format::Q5_1: return "q5_1.wgsl";
    case Format::Q4_K: return "q4_k.wgsl";
    case Format::Q5_K: return "q5_k.wgsl";
    case Format::Q6_K: return "q6_k.wgsl";
    case Format::F32: return "f32.wgsl";
    case Format::F16: return "f16.wgsl";
    case Format::BF16: return "bf16.wgsl";
  }
  return "";
}

}  // namespace

std::string format_snippet(const KernelSpec& s, const std::string& w) {
  const std::string file = "kernels/matvec/fmt/" + fmt_file(s.weight);
  Template t(wgsl_file(file), file);
  t.set("W", w);
  if (!s.weight.onnx && (s.weight.format == Format::Q4_K || s.weight.format == Format::Q5_K)) {
    const std::string ks = "kernels/matvec/fmt/kscale.wgsl";
    t.set("KSCALE", Template(wgsl_file(ks), ks).set("W", w).render());
  }
  if (s.weight.onnx) {
    const uint32_t nb = (s.k + s.weight.block_size - 1) / s.weight.block_size;
    t.set("NB", std::to_string(nb)).set("BS", std::to_string(s.weight.block_size));
    std::string code, doc;
    if (!s.weight.zero_points) {
      code = fmt::format("  return {}.0;", 1u << (s.weight.bits - 1));
      doc = fmt::format("none (the default {})", 1u << (s.weight.bits - 1));
    } else if (s.weight.bits == 4) {
      const uint32_t zpr = (nb + 1) / 2;
      code = fmt::format(
          "  let byte = r * {}u + b / 2u;\n"
          "  return f32((side{}[params.side_off + byte / 4u] >> (8u * (byte % 4u) + 4u * (b % 2u))) & 15u);",
          zpr, w);
      doc = "4-bit, two per byte, low nibble first, ceil(NB / 2) bytes per row";
    } else {
      code = fmt::format(
          "  let byte = r * {}u + b;\n"
          "  return f32((side{}[params.side_off + byte / 4u] >> (8u * (byte % 4u))) & 255u);",
          nb, w);
      doc = "8-bit, one byte per block";
    }
    t.set("ZP_CODE", code).set("ZP_DOC", doc);
  }
  std::string out = t.render();
  if (s.features.dot4) {
    const std::string file8 = "kernels/matvec/fmt/i8/" + fmt_file(s.weight);
    out += "\n" + Template(wgsl_file(file8), file8).set("W", w).render();
  }
  return out;
}

std::string decode_helpers() { return std::string(wgsl_file("kernels/matvec/fmt/helpers.wgsl")); }

namespace {

// Accumulator of weight w, token t: one scalar each, so nothing is indexed
// at run time.
std::string acc(const std::string& w, uint32_t t, uint32_t i = 0) {
  return i ? fmt::format("acc{}{}r{}", w, t, i) : fmt::format("acc{}{}", w, t);
}

// One step of a lane: load UNROLL units of each weight for each of its rows,
// then decode them chunk by chunk (units in increasing order). Scaled formats
// sum the raw codes times x over each scale group, then add scale * sum (and
// min * sum(x), staged in the unit's padding vec4) to the token's accumulator;
// float formats add each chunk's products directly. (Loading the next step's
// units before computing, or before staging x, was slower on the H200: the
// doubled unit registers spilled at 1024 invocations.)
std::string unit_loop(const KernelSpec& s, const UnitInfo& ui) {
  const std::vector<std::string> ws = weights(s) == 2 ? std::vector<std::string>{"A", "B"}
                                                      : std::vector<std::string>{"A"};
  const uint32_t gch = ui.group ? ui.group / 8 : 1;  // chunks per group
  // Name of weight w's unit j of the lane group's row i.
  auto un = [](uint32_t j, const std::string& w, uint32_t i) { return fmt::format("un{}{}r{}", j, w, i); };
  std::string o;
  for (uint32_t j = 0; j < s.unroll; ++j) {
    o += fmt::format("        let uu{0} = u + {0}u * TPR;\n", j);
    for (uint32_t i = 0; i < s.rpl; ++i)
      for (const auto& w : ws) o += fmt::format("        var {}: Unit{};\n", un(j, w, i), w);
    o += fmt::format("        if (uu{0} < u1) {{\n", j);
    for (uint32_t i = 0; i < s.rpl; ++i)
      for (const auto& w : ws) o += fmt::format("          {} = load{}(row{}, uu{});\n", un(j, w, i), w, i, j);
    o += "        }\n";
  }
  for (uint32_t j = 0; j < s.unroll; ++j) {
    o += fmt::format("        if (uu{0} < u1) {{\n", j);
    o += fmt::format("          let xb = (uu{0} - u0) * UNIT4P;  // the unit's first vec4 in xs\n", j);
    if (ui.has_min)
      for (uint32_t t = 0; t < s.tokens; ++t)
        o += fmt::format("          let sx_{0} = xs[{0}u * TILE4P + xb + UNIT / 4u];  // sum(x) per group\n", t);
    for (uint32_t c0 = 0; c0 < ui.chunks; c0 += gch) {
      const uint32_t g = c0 / gch;
      for (uint32_t c = c0; c < c0 + gch; ++c)
        for (uint32_t i = 0; i < s.rpl; ++i)
          for (const auto& w : ws)
            o += fmt::format("          let w{0}{1}r{2} = chunk{1}({3}, {0}u);\n", c, w, i, un(j, w, i));
      if (ui.group)
        for (uint32_t i = 0; i < s.rpl; ++i)
          for (const auto& w : ws) {
            o += fmt::format("          let sc{0}{1}r{2} = scale{1}({3}, {0}u);\n", g, w, i, un(j, w, i));
            if (ui.has_min)
              o += fmt::format("          let mn{0}{1}r{2} = min{1}({3}, {0}u);\n", g, w, i, un(j, w, i));
          }
      for (uint32_t t = 0; t < s.tokens; ++t) {
        for (uint32_t c = c0; c < c0 + gch; ++c) {
          o += fmt::format("          let xa{0}_{1} = xs[{1}u * TILE4P + xb + {2}u];\n", c, t, 2 * c);
          o += fmt::format("          let xc{0}_{1} = xs[{1}u * TILE4P + xb + {2}u];\n", c, t, 2 * c + 1);
        }
        for (uint32_t i = 0; i < s.rpl; ++i)
          for (const auto& w : ws) {
            const std::string wr = w + "r" + std::to_string(i);
            auto d = [&](uint32_t c) {
              return fmt::format("(dot(w{0}{1}.a, xa{0}_{2}) + dot(w{0}{1}.b, xc{0}_{2}))", c, wr, t);
            };
            if (!ui.group) {
              o += fmt::format("          {0} = {0} + {1};\n", acc(w, t, i), d(c0));
              continue;
            }
            const std::string pv = fmt::format("p{}{}_{}", wr, g, t);
            o += fmt::format("          var {} = {};\n", pv, d(c0));
            for (uint32_t c = c0 + 1; c < c0 + gch; ++c) o += fmt::format("          {0} = {0} + {1};\n", pv, d(c));
            o += fmt::format("          {0} = {0} + sc{1}{2} * {3};\n", acc(w, t, i), g, wr, pv);
            if (ui.has_min)
              o += fmt::format("          {0} = {0} + mn{1}{2} * sx_{3}[{1}];\n", acc(w, t, i), g, wr, t);
          }
      }
    }
    o += "        }\n";
  }
  return o;
}

// Adds the TPR lane sums of each row into rs[(w * TOKENS + t) * RPW + row slot].
std::string reduce(const KernelSpec& s) {
  const std::vector<std::string> ws = weights(s) == 2 ? std::vector<std::string>{"A", "B"}
                                                      : std::vector<std::string>{"A"};
  std::string o;
  for (size_t wi = 0; wi < ws.size(); ++wi)
    for (uint32_t t = 0; t < s.tokens; ++t)
      for (uint32_t i = 0; i < s.rpl; ++i) {
        const uint32_t slot = static_cast<uint32_t>(wi) * s.tokens + t;
        const std::string dst = fmt::format("rs[{}u * RPW + lr + {}u * LPW]", slot, i);
        if (s.features.subgroups) {
          // Butterfly over the TPR lanes of a row (consecutive subgroup invocations).
          o += fmt::format("  {{\n    var v = {};\n", acc(ws[wi], t, i));
          o += "    for (var msk = TPR / 2u; msk > 0u; msk = msk / 2u) { v = v + subgroupShuffleXor(v, msk); }\n";
          o += fmt::format("    if (ln == 0u && lr < LPW) {{ {} = v; }}\n  }}\n", dst);
        } else {
          o += fmt::format("  red[li] = {};\n  workgroupBarrier();\n", acc(ws[wi], t, i));
          o += "  for (var s = TPR / 2u; s > 0u; s = s / 2u) {\n";
          o += "    if (ln < s) { red[li] = red[li] + red[li + s]; }\n    workgroupBarrier();\n  }\n";
          o += fmt::format("  if (ln == 0u) {{ {} = red[li]; }}\n  workgroupBarrier();\n", dst);
        }
      }
  return o;
}

// Formats with a min: after staging, the sum of x over each scale group of
// each staged unit goes into the unit's padding vec4 (component g), added as
// s4 = v0 + v1 + ... (vec4s in order), then (s4.x + s4.y) + (s4.z + s4.w).
std::string sum_x(const UnitInfo& ui) {
  if (!ui.has_min) return "";
  BQ_ASSERT(ui.groups() <= 4, "{} groups per unit", ui.groups());
  std::string o =
      "    for (var i = li; i < TOKENS * (TILE / UNIT); i += WG) {\n"
      "      let base = (i / (TILE / UNIT)) * TILE4P + (i % (TILE / UNIT)) * UNIT4P;\n"
      "      var sv = vec4<f32>(0.0);\n";
  for (uint32_t g = 0; g < ui.groups(); ++g) {
    o += fmt::format("      {{\n        var s4 = xs[base + {}u];\n", g * ui.group / 4);
    o += fmt::format("        for (var j = 1u; j < {}u; j++) {{ s4 = s4 + xs[base + {}u + j]; }}\n", ui.group / 4,
                     g * ui.group / 4);
    o += fmt::format("        sv[{}] = (s4.x + s4.y) + (s4.z + s4.w);\n      }}\n", g);
  }
  o += "      xs[base + UNIT / 4u] = sv;\n    }\n    workgroupBarrier();";
  return o;
}

std::string row_map(const KernelSpec& s, const std::string& slot) {
  const std::string g = "(wg * RPW + " + slot + ")";
  if (s.hooks.epilogue == Epilogue::Rope && s.hooks.rope_mode == RopeMode::Neox)
    return "neox_row(" + g + ")";
  return g;
}

std::string epilogue(const KernelSpec& s) {
  std::string o;
  const auto& h = s.hooks;
  if (s.splits > 1) {  // partial sums [SPLITS][weights][M][N]; bias and epilogue in split_sum
    const uint32_t w = weights(s);
    o += fmt::format("      y[((slice * {}u) * M + tg) * N + gr] = v;\n", w);
    if (w == 2) o += "      y[((slice * 2u + 1u) * M + tg) * N + gr] = rs[(TOKENS + t) * RPW + slot];\n";
    return o;
  }
  if (h.bias) o += "      v = v + bias[gr];\n";
  switch (h.epilogue) {
    case Epilogue::Store: o += "      y[tg * N + gr] = v;\n"; break;
    case Epilogue::Acc: o += "      y[tg * N + gr] = y[tg * N + gr] + v;\n"; break;
    case Epilogue::SiluGate:
      o += "      let up = rs[(TOKENS + t) * RPW + slot];\n";
      o += "      y[tg * N + gr] = (v / (1.0 + exp(-v))) * up;\n";
      break;
    case Epilogue::Rope:
      o += "      let ps = slot ^ 1u;\n";
      o += "      var p = rs[t * RPW + ps];\n";
      if (h.bias) o += "      p = p + bias[params.row0 + " + row_map(s, "ps") + "];\n";
      o += "      y[tg * N + gr] = select(v, rope(v, p, (wg * RPW + slot) % HD, pos[tg]), gr < ROPE_ROWS);\n";
      break;
  }
  return o;
}

}  // namespace

Limits limits_of(const gpu::Context& ctx) {
  Limits l;
  l.invocations = ctx.limits().maxComputeInvocationsPerWorkgroup;
  l.shared = ctx.limits().maxComputeWorkgroupStorageSize;
  l.max_groups = ctx.limits().maxComputeWorkgroupsPerDimension;
  l.dot4 = ctx.features().packed_dot4;
  if (ctx.features().subgroups) {
    l.subgroup_min = ctx.adapter().subgroup_min;
    l.subgroup_max = ctx.adapter().subgroup_max;
  }
  return l;
}

KernelSpec plan(const gpu::Context& ctx, const WeightKind& kind, uint32_t n, uint32_t k, uint32_t m,
                const Hooks& hooks, const Options& opt) {
  return plan(limits_of(ctx), kind, n, k, m, hooks, opt);
}

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
  const bool short_batch = batched && !big_unit && upr <= 128 && n >= 12288;
  s.tpr = opt.tpr.value_or(
      std::min<uint32_t>(short_batch ? 8 : batched || big_unit ? 16 : long_k_tpr, pow2_floor(upr)));
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
  s.tokens = std::min(opt.tokens.value_or(short_batch ? 8 : 4), m);
  s.unroll = opt.unroll.value_or(1);
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
  if (!batched && !opt.tpr && !opt.rpl && n >= kManyRows) {
    const uint32_t lane_tpr = std::max<uint32_t>(4, pow2_floor(std::max<uint32_t>(1, upr / 8)));
    if (lane_tpr < s.tpr) {
      s.tpr = lane_tpr;
      s.rpl = 2;
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
  //    q4_1 40.5 -> 35.8). Longer rows of Q4_K/Q5_K units (no choice won for
  //    both: q4_K 71.3 us at 32 lanes and 4 tokens, 78.9 with the f32 plan;
  //    q5_K 83.5 and 77.2) and Q6_K (not swept) keep the f32 batch plan.
  if (s.features.dot4) {
    const uint32_t sg_tpr = s.features.subgroups ? pow2_floor(lim.subgroup_min) : 1u << 30;
    const uint32_t sg_wg = s.features.subgroups ? pow2_floor(lim.subgroup_max) *
                                                      (lim.subgroup_max > pow2_floor(lim.subgroup_max) ? 2 : 1)
                                                : 1u;
    const bool long_rows = ui.kp >= 8192;
    if (!batched && big_unit) {
      if (!opt.tpr) s.tpr = std::min({n <= 4096 ? 16u : 8u, pow2_floor(upr), sg_tpr});
      if (!opt.rpl) s.rpl = 2;
      if (!opt.wg) s.wg = std::max({std::min<uint32_t>(256, max_inv), s.tpr * (rope ? 2 : 1), sg_wg});
    } else if (!batched && !opt.rpl && !opt.tpr && n >= 12288 && s.rpl == 1) {
      s.rpl = 2;
    } else if (batched && !big_unit && n >= 4096 && !(long_rows && ui.unit > 32)) {
      const uint32_t tpr = opt.tpr.value_or(std::min({long_rows ? 16u : 8u, pow2_floor(upr), sg_tpr}));
      const uint32_t rpl = opt.rpl.value_or(4), tokens = std::min(opt.tokens.value_or(long_rows ? 2 : 4), m);
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
  // Batches keep their width: there each workgroup stages TOKENS rows of x,
  // and narrower ones were slower (960 x 2560 at batch 8: 19.6 us at 64
  // invocations).
  if (!opt.wg && !batched)
    while (s.wg / 2 >= min_wg && grid_groups(s.wg) < kMinGroups) s.wg /= 2;
  const uint32_t splits = opt.splits.value_or(1);
  BQ_CHECK(splits >= 1 && (splits == 1 || !rope), "matvec: split-k ({} slices) does not support the rope epilogue",
           splits);
  const uint32_t ups = (upr + splits - 1) / splits;  // units per slice
  s.splits = (upr + ups - 1) / ups;                  // no empty slice
  while (true) {
    s.tile = 0;
    const int64_t avail = int64_t{lim.shared} - shared_bytes(s);
    const int64_t unit_bytes = s.features.dot4 ? ui.unit * 11 / 8 : (ui.unit + 4) * 4;
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
  return s;
}

std::vector<Role> bindings(const KernelSpec& s) {
  const UnitInfo ui = unit_info(s.weight, s.k);
  std::vector<Role> r = {Role::Params, Role::X, Role::MainA};
  if (ui.has_side) r.push_back(Role::SideA);
  if (s.hooks.epilogue == Epilogue::SiluGate) {
    r.push_back(Role::MainB);
    if (ui.has_side) r.push_back(Role::SideB);
  }
  if (s.hooks.prologue == Prologue::RmsNorm) r.push_back(Role::NormW);
  if (s.hooks.bias && s.splits == 1) r.push_back(Role::Bias);  // split-k: split_sum adds it
  if (s.hooks.epilogue == Epilogue::Rope) r.push_back(Role::Pos);
  r.push_back(Role::Y);
  return r;
}

uint32_t shared_bytes(const KernelSpec& s) {
  const bool red = !s.features.subgroups || s.hooks.prologue == Prologue::RmsNorm;
  const uint32_t unit = unit_info(s.weight, s.k).unit;
  // f32: one padding vec4 per unit; int8: a code byte per element, an f32
  // scale per 32 and an i32 code sum per 16.
  const uint32_t tile_bytes = s.features.dot4 ? s.tile * 11 / 8 : s.tile / unit * (unit + 4) * 4;
  return s.tokens * tile_bytes + (red ? s.wg * 4 : 0) + s.rpw() * s.tokens * weights(s) * 4 + s.tokens * 4 +
         (s.features.subgroups ? 4 : 0);
}

gpu::Grid grid(const KernelSpec& s, uint32_t rows) {
  const uint64_t groups = (uint64_t{rows} + s.rpw() - 1) / s.rpw() * s.splits;
  return gpu::wrap_workgroups(groups, s.max_groups, (s.m + s.tokens - 1) / s.tokens);
}

std::string wgsl(const KernelSpec& s) {
  const UnitInfo ui = unit_info(s.weight, s.k);
  const std::string label = s.key();
  Template t(wgsl_file("kernels/matvec/matvec.wgsl"), label);
  t.set("ENABLE", s.features.subgroups ? "enable subgroups;" : "");
  t.set_u("K", s.k).set_u("KP", ui.kp).set_u("N", s.n).set_u("M", s.m).set_u("WG", s.wg).set_u("TPR", s.tpr);
  t.set_u("RPL", s.rpl).set_u("SPLITS", s.splits);
  t.set_u("TOKENS", s.tokens).set_u("TILE", s.tile).set_u("UNROLL", s.unroll).set_u("UNIT", ui.unit);
  t.set_u("GROUP", ui.group ? ui.group : 8);
  t.set_f("EPS", s.hooks.eps);
  t.set("REDUCE_KIND", s.features.subgroups ? "a subgroup butterfly (subgroupShuffleXor)"
                                            : "a tree reduction in workgroup memory");
  // Bindings after params (0) and x (1), in bindings() order.
  std::string b;
  uint32_t slot = 2;
  for (Role r : bindings(s)) {
    switch (r) {
      case Role::Params: case Role::X: continue;
      case Role::MainA: b += fmt::format("@group(0) @binding({}) var<storage, read> mainA: array<vec4<u32>>;\n", slot); break;
      case Role::SideA: b += fmt::format("@group(0) @binding({}) var<storage, read> sideA: array<u32>;\n", slot); break;
      case Role::MainB: b += fmt::format("@group(0) @binding({}) var<storage, read> mainB: array<vec4<u32>>;\n", slot); break;
      case Role::SideB: b += fmt::format("@group(0) @binding({}) var<storage, read> sideB: array<u32>;\n", slot); break;
      case Role::NormW: b += fmt::format("@group(0) @binding({}) var<storage, read> nw4: array<vec4<f32>>;  // [K / 4]\n", slot); break;
      case Role::Bias: b += fmt::format("@group(0) @binding({}) var<storage, read> bias: array<f32>;  // [N]\n", slot); break;
      case Role::Pos: b += fmt::format("@group(0) @binding({}) var<storage, read> pos: array<u32>;  // [M]\n", slot); break;
      case Role::Y:
        b += fmt::format("@group(0) @binding({}) var<storage, read_write> y: array<f32>;  // {}\n", slot,
                         s.splits > 1 ? "[SPLITS * weights * M * N] partial sums" : "[M * N]");
        break;
    }
    ++slot;
  }
  t.set("BINDINGS", b);
  const bool need_red = !s.features.subgroups || s.hooks.prologue == Prologue::RmsNorm;
  t.set("RED_DECL", need_red ? "var<workgroup> red: array<f32, WG>;                            // lane partials" : "");
  t.set_u("RS_SIZE", s.rpw() * s.tokens * weights(s));
  t.set("SHARED_EXTRA", s.features.subgroups ? "var<workgroup> sg_count: atomic<u32>;" : "");
  std::string fmt_code = format_snippet(s, "A");
  if (weights(s) == 2) fmt_code += "\n" + format_snippet(s, "B");
  std::string helpers = decode_helpers();
  if (s.features.dot4) {
    const std::string hf = "kernels/matvec/fmt/i8/helpers.wgsl";
    helpers += "\n" + Template(wgsl_file(hf), hf).set("TINY", wgsl_float(kInt8Tiny)).render();
  }
  t.set("HELPERS", helpers);
  t.set("FORMAT", fmt_code);

  std::string hooks;
  if (s.hooks.epilogue == Epilogue::Rope) {
    hooks += fmt::format("const HD: u32 = {}u;\nconst NROT: u32 = {}u;\n", s.hooks.head_dim, s.hooks.n_rot);
    hooks += fmt::format("const ROPE_ROWS: u32 = {}u;  // rows from here on are not rotated\n",
                         s.hooks.rope_rows ? s.hooks.rope_rows : s.n);
    hooks += "const ROPE_BASE: f32 = " + wgsl_float(s.hooks.rope_base) + ";\n";
    hooks += "const ROPE_SCALE: f32 = " + wgsl_float(s.hooks.rope_scale) + ";\n";
    hooks +=
        "// Slot g of the pair order -> row. Within a head, slots 2i and 2i+1 hold the pair i:\n"
        "// dims (i, i + NROT/2) (NeoX); dims past NROT keep their place.\n"
        "fn neox_row(g: u32) -> u32 {\n"
        "  if (params.row0 + g >= ROPE_ROWS) { return g; }  // unrotated rows keep their place\n"
        "  let s = g % HD;\n"
        "  let d = select(s, select(s / 2u + NROT / 2u, s / 2u, (s & 1u) == 0u), s < NROT);\n"
        "  return g - s + d;\n"
        "}\n"
        "// Rotation of the value v of slot s by its pair partner p at position ps.\n"
        "fn rope(v: f32, p: f32, s: u32, ps: u32) -> f32 {\n"
        "  if (s >= NROT) { return v; }\n"
        "  let theta = f32(ps) * ROPE_SCALE * pow(ROPE_BASE, -2.0 * f32(s / 2u) / f32(NROT));\n"
        "  let c = cos(theta);\n"
        "  let sn = sin(theta);\n"
        "  if ((s & 1u) == 0u) { return v * c - p * sn; }\n"
        "  return p * sn + v * c;\n"
        "}\n";
  }
  t.set("HOOK_FUNCS", hooks);
  t.set("SG_ARGS", s.features.subgroups
                       ? ",\n        @builtin(subgroup_invocation_id) sg_id: u32, @builtin(subgroup_size) sg_size: u32"
                       : "");
  if (s.features.subgroups) {
    t.set("LANES",
          "  // Rows go to subgroups by a dense slot taken atomically, so the lanes of a row\n"
          "  // are TPR consecutive invocations of one subgroup, whatever its size.\n"
          "  if (li == 0u) { atomicStore(&sg_count, 0u); }\n"
          "  workgroupBarrier();\n"
          "  var sgs = 0u;\n"
          "  if (sg_id == 0u) { sgs = atomicAdd(&sg_count, 1u); }\n"
          "  sgs = subgroupBroadcast(sgs, 0u);\n"
          "  let lr = sgs * (sg_size / TPR) + sg_id / TPR;\n"
          "  let ln = sg_id % TPR;");
  } else {
    t.set("LANES", "  let lr = li / TPR;\n  let ln = li % TPR;");
  }
  std::string rows = "  // The lane group's rows in this chunk's weights; past the end, reads of the\n"
                     "  // last row stand in (their sums are never stored).\n";
  rows += "  let row_first = " + row_map(s, "lr") + ";\n";
  for (uint32_t i = 0; i < s.rpl; ++i)
    rows += fmt::format("  let row{} = min({}, params.rows - 1u);\n", i, row_map(s, fmt::format("lr + {}u * LPW", i)));
  t.set("ROWS", rows);
  t.set("ROW_MAP_SLOT", row_map(s, "slot"));
  std::string stage_hook;
  if (s.hooks.prologue == Prologue::RmsNorm) {
    t.set("PROLOGUE",
          "  for (var t = 0u; t < TOKENS; t++) {\n"
          "    let tg = z * TOKENS + t;\n"
          "    var ss = 0.0;\n"
          "    if (tg < M) {\n"
          "      for (var i = li; i < K; i += WG) { let v = x4[(tg * K + i) / 4u][i % 4u]; ss = ss + v * v; }\n"
          "    }\n"
          "    red[li] = ss;\n"
          "    workgroupBarrier();\n"
          "    for (var s = WG / 2u; s > 0u; s = s / 2u) {\n"
          "      if (li < s) { red[li] = red[li] + red[li + s]; }\n"
          "      workgroupBarrier();\n"
          "    }\n"
          "    if (li == 0u) { nscale[t] = 1.0 / sqrt(red[0] / f32(K) + EPS); }\n"
          "    workgroupBarrier();\n"
          "  }");
    stage_hook = "          v[q] = (v[q] * nscale[t]) * nw4[e / 4u];";
  } else {
    t.set("PROLOGUE", "");
  }
  std::string accs;
  for (uint32_t tk = 0; tk < s.tokens; ++tk)
    for (uint32_t i = 0; i < s.rpl; ++i) {
      accs += "  var " + acc("A", tk, i) + " = 0.0;\n";
      if (weights(s) == 2) accs += "  var " + acc("B", tk, i) + " = 0.0;\n";
    }
  t.set("ACC_DECL", accs);
  if (s.features.dot4) {
    t.set("XS_DECL",
          "const TB: u32 = TILE / 32u;                                    // int8 blocks per token tile\n"
          "var<workgroup> xq: array<vec4<u32>, TOKENS * TB * 2u>;         // x codes, 16 a vec4, token-major\n"
          "var<workgroup> xd: array<f32, TOKENS * TB>;                    // x scale per block of 32\n"
          "var<workgroup> xsum: array<i32, TOKENS * TB * 2u>;             // x code sum per 16");
    const std::string sf = "kernels/matvec/stage_i8.wgsl";
    t.set("STAGE", Template(wgsl_file(sf), sf).set("STAGE_HOOK", stage_hook).set("INV127", wgsl_float(kInv127)).render());
    t.set("UNIT_LOOP", detail::unit_loop_i8(s, ui));
    t.set("SUMX", "");
  } else {
    t.set("XS_DECL",
          "var<workgroup> xs: array<vec4<f32>, TOKENS * TILE4P>;          // staged x tile, token-major, padded");
    const std::string sf = "kernels/matvec/stage_f32.wgsl";
    t.set("STAGE", Template(wgsl_file(sf), sf).set("STAGE_HOOK", stage_hook).render());
    t.set("UNIT_LOOP", unit_loop(s, ui));
    t.set("SUMX", sum_x(ui));
  }
  t.set("REDUCE", reduce(s));
  t.set("EPILOGUE", epilogue(s));
  return t.render();
}

}  // namespace blockq::matvec
