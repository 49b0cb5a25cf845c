// The matvec kernel's row sums and row store (the REDUCE and STORE parts of
// matvec.wgsl): the lanes of a row add their partial sums (a subgroup
// butterfly, or a tree in workgroup memory), then the bias and the epilogue
// run once per (token, row): y [M, N], or split-k partial sums
// [SPLITS][weights][M][N].
#include <fmt/format.h>

#include "kernels/matvec/generator.hpp"
#include "kernels/matvec/lane_step.hpp"

namespace blockq::matvec::detail {

namespace {

// The butterfly sum of v over TPR consecutive subgroup lanes (masks TPR / 2
// down to 1, the order the twin adds in), written out rather than looped.
// With robustness on, Dawn guards every loop against running forever; as
// loops, the 16 butterflies of the H200's Q4_0 4096 x 14336 batch-8 plan
// took it to 26.4-26.6 us, written out 23.2-23.4
// (docs/perf/2026-12-02-session18-h200.md).
std::string butterfly(const std::string& v, uint32_t tpr, const std::string& ind) {
  std::string o;
  for (uint32_t msk = tpr / 2; msk > 0; msk /= 2)
    o += fmt::format("{0}{1} = {1} + subgroupShuffleXor({1}, {2}u);\n", ind, v, msk);
  return o;
}

}  // namespace

std::string acc_early_reads(const KernelSpec& s) {
  if (!(s.variant & kAccEarly)) return "";
  std::string o = "  // Acc: lane 0 of the lane group reads its rows' old y before the lane loop (kAccEarly).\n";
  for (uint32_t i = 0; i < s.rpl; ++i) {
    o += fmt::format("  var yo0_{} = 0.0;\n", i);
    o += fmt::format("  {{\n    let r = {};\n", row_map(s, fmt::format("lr + {}u * LPW", i)));
    o += "    if (ln == 0u && lr < LPW && live && z * TOKENS < M && r < params.rows) {\n";
    o += fmt::format("      yo0_{} = y[(z * TOKENS) * N + params.row0 + r];\n    }}\n  }}\n", i);
  }
  return o;
}

// Adds the TPR lane sums of each row into rs[(w * TOKENS + t) * RPW + row slot]
// (times the RMSNorm scale nsl with kRmsLate).
std::string reduce(const KernelSpec& s) {
  const std::vector<std::string> ws = weight_names(s);
  const std::string late = s.variant & kRmsLate ? " * nsl" : "";  // the RMSNorm scale (kRmsLate)
  std::string o;
  for (size_t wi = 0; wi < ws.size(); ++wi)
    for (uint32_t t = 0; t < s.tokens; ++t)
      for (uint32_t i = 0; i < s.rpl; ++i) {
        const uint32_t slot = static_cast<uint32_t>(wi) * s.tokens + t;
        const std::string dst = fmt::format("rs[{}u * RPW + lr + {}u * LPW]", slot, i);
        if (s.features.subgroups) {
          // Butterfly over the TPR lanes of a row (consecutive subgroup invocations).
          o += fmt::format("  {{\n    var v = {};\n", acc(ws[wi], t, i));
          o += butterfly("v", s.tpr, "    ");
          o += fmt::format("    if (ln == 0u && lr < LPW) {{ {} = v{}; }}\n  }}\n", dst, late);
        } else {
          o += fmt::format("  red[li] = {};\n  workgroupBarrier();\n", acc(ws[wi], t, i));
          o += "  for (var s = TPR / 2u; s > 0u; s = s / 2u) {\n";
          o += "    if (ln < s) { red[li] = red[li] + red[li + s]; }\n    workgroupBarrier();\n  }\n";
          o += fmt::format("  if (ln == 0u) {{ {} = red[li]{}; }}\n  workgroupBarrier();\n", dst, late);
        }
      }
  return o;
}

std::string row_map(const KernelSpec& s, const std::string& slot) {
  const std::string g = "(wg * RPW + " + slot + ")";
  if (s.hooks.epilogue == Epilogue::Rope && s.hooks.rope_mode == RopeMode::Neox)
    return "neox_row(" + g + ")";
  return g;
}

// The KV store after the rope epilogue (Hooks::kv_n): row gr of token tg,
// rotated (rv), into its cache row pos[tg]; f16 pairs are packed by the
// even row with its pair partner, the next row (rotated the same way).
std::string kv_store(const KernelSpec& s) {
  std::string o = "      let kp = pos[tg];\n      if (kp < KV_CTX) {\n";
  if (!s.hooks.kv_f16) {
    o += "        if (gr >= KV_K && gr < KV_K + KV_N) { kc[kp * KV_N + gr - KV_K] = rv; }\n";
    o += "        if (gr >= KV_V && gr < KV_V + KV_N) { vc[kp * KV_N + gr - KV_V] = rv; }\n";
  } else {
    o += "        if ((gr & 1u) == 0u) {\n";
    o += "          let rp = select(p, rope(p, v, d ^ 1u, kp), gr < ROPE_ROWS);\n";
    o += "          let w = pack2x16float(vec2f(rv, rp));\n";
    o += "          if (gr >= KV_K && gr < KV_K + KV_N) { kc[(kp * KV_N + gr - KV_K) / 2u] = w; }\n";
    o += "          if (gr >= KV_V && gr < KV_V + KV_N) { vc[(kp * KV_N + gr - KV_V) / 2u] = w; }\n";
    o += "        }\n";
  }
  return o + "      }\n";
}

std::string epilogue(const KernelSpec& s, const std::string& up, const std::string& yold) {
  std::string o;
  const auto& h = s.hooks;
  if (s.splits > 1) {  // partial sums [SPLITS][weights][M][N]; bias and epilogue in split_sum
    const uint32_t w = static_cast<uint32_t>(weight_names(s).size());
    o += fmt::format("      y[((slice * {}u) * M + tg) * N + gr] = v;\n", w);
    if (w == 2) o += "      y[((slice * 2u + 1u) * M + tg) * N + gr] = rs[(TOKENS + t) * RPW + slot];\n";
    return o;
  }
  if (h.bias) o += "      v = v + bias[gr];\n";
  switch (h.epilogue) {
    case Epilogue::Store: o += "      y[tg * N + gr] = v;\n"; break;
    case Epilogue::Acc:
      o += "      y[tg * N + gr] = " + (yold.empty() ? "y[tg * N + gr]" : yold) + " + v;\n";
      break;
    case Epilogue::SiluGate:
      o += "      let up = " + up + ";\n";
      o += "      y[tg * N + gr] = (v / (1.0 + exp(-v))) * up;\n";
      break;
    case Epilogue::Rope:
      o += "      let ps = slot ^ 1u;\n";
      o += "      var p = rs[t * RPW + ps];\n";
      if (h.bias) o += "      p = p + bias[params.row0 + " + row_map(s, "ps") + "];\n";
      o += "      let d = (wg * RPW + slot) % HD;\n";
      o += "      let rv = select(v, rope(v, p, d, pos[tg]), gr < ROPE_ROWS);\n";
      o += "      y[tg * N + gr] = rv;\n";
      if (h.kv_n) o += kv_store(s);
      break;
  }
  return o;
}

// With subgroups, no split-k and an epilogue that reads no other row (not
// RoPE), every lane of a row holds the row's sum after the butterfly and its
// lane 0 runs the epilogue: no row sums in workgroup memory, no barrier.
// H200, batch 1, 4096 x 14336, int8 x, the plans' 1024-invocation staged
// kernels: Q4_0 15.14-15.22 -> 13.57-13.62 us, Q4_K 19.08-19.19 -> 18.02-18.11,
// Q5_K 19.82-19.93 -> 19.68-19.69; Q8_0's 32-invocation kernel within the
// spread (docs/perf/2026-12-02-session15-h200.md).
bool direct_store(const KernelSpec& s) {
  return s.features.subgroups && s.splits == 1 && s.hooks.epilogue != Epilogue::Rope;
}

// direct_store: the butterfly of each (weight, token, row) into s<w><t>_<i>,
// then lane 0 of each lane group stores its rows.
std::string reduce_direct(const KernelSpec& s) {
  const std::vector<std::string> ws = weight_names(s);
  const std::string late = s.variant & kRmsLate ? " * nsl" : "";  // the RMSNorm scale (kRmsLate)
  std::string o;
  for (const std::string& w : ws)
    for (uint32_t t = 0; t < s.tokens; ++t)
      for (uint32_t i = 0; i < s.rpl; ++i) {
        const std::string v = fmt::format("s{}{}_{}", w, t, i);
        o += fmt::format("  var {} = {};\n", v, acc(w, t, i));
        o += butterfly(v, s.tpr, "  ");
      }
  o += "  if (ln == 0u && lr < LPW) {\n";
  for (uint32_t t = 0; t < s.tokens; ++t)
    for (uint32_t i = 0; i < s.rpl; ++i) {
      o += fmt::format("    {{\n      let t = {}u;\n      let slot = lr + {}u * LPW;\n", t, i);
      o += "      let tg = z * TOKENS + t;\n";
      o += "      let r = " + row_map(s, "slot") + ";\n";
      o += "      if (live && tg < M && r < params.rows) {\n        let gr = params.row0 + r;  // row of the whole output\n";
      o += fmt::format("        var v = sA{}_{}{};\n", t, i, late);
      // kAccEarly: the old y was read before the lane loop (acc_early_reads).
      const std::string yold = s.variant & kAccEarly ? fmt::format("yo{}_{}", t, i) : "";
      o += epilogue(s, fmt::format("sB{}_{}{}", t, i, late), yold) + "      }\n    }\n";
    }
  o += "  }\n";
  return o;
}

}  // namespace blockq::matvec::detail
