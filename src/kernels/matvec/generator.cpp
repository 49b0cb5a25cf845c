// Planning and WGSL generation for the matvec family (see generator.hpp and
// matvec.wgsl for the kernel's structure).
#include "kernels/matvec/generator.hpp"

#include <algorithm>

#include "kernels/matvec/lane_step.hpp"
#include "kernels/matvec/layout.hpp"
#include "util/embedded_wgsl.hpp"
#include "util/error.hpp"
#include "util/template.hpp"

namespace blockq::matvec {

namespace {

uint32_t weights(const KernelSpec& s) { return s.hooks.epilogue == Epilogue::SiluGate ? 2 : 1; }
// The kernel reduces x's sum of squares itself (not the quantize kernel).
bool rms_in_kernel(const KernelSpec& s) { return s.hooks.prologue == Prologue::RmsNorm && !x_prequantized(s); }

// The format snippet's file: the traits' (float formats over 8-element units,
// layout.cpp, have their own: f16_u8.wgsl), or ONNX MatMulNBits'.
std::string fmt_file(const WeightKind& kind, uint32_t k) {
  if (kind.onnx) return kind.bits == 4 ? "onnx4.wgsl" : "onnx8.wgsl";
  std::string file(traits(kind.format).wgsl_decode);
  if (!traits(kind.format).quantized && unit_info(kind, k).unit == 8) file.insert(file.size() - 5, "_u8");
  return file;
}

bool iq4(const WeightKind& kind) {
  return !kind.onnx && (kind.format == Format::IQ4_NL || kind.format == Format::IQ4_XS);
}

}  // namespace

bool pipeline_supported(const WeightKind& kind) {
  if (kind.onnx) return false;
  switch (kind.format) {
    case Format::Q8_0: case Format::Q4_0: case Format::Q4_K: case Format::Q5_K: case Format::Q6_K: return true;
    default: return false;
  }
}

bool global_x_supported(const WeightKind& kind, uint32_t k, bool int8) {
  if (int8) return int8_supported(kind);
  const UnitInfo ui = unit_info(kind, k);
  return !ui.has_min && ui.unit <= 32;
}

std::string format_snippet(const KernelSpec& s, const std::string& w) {
  const std::string file = "kernels/matvec/fmt/" + fmt_file(s.weight, s.k);
  Template t(wgsl_file(file), file);
  t.set("W", w);
  if (!s.weight.onnx && (s.weight.format == Format::Q4_K || s.weight.format == Format::Q5_K)) {
    const std::string ks = "kernels/matvec/fmt/kscale.wgsl";
    t.set("KSCALE", Template(wgsl_file(ks), ks).set("W", w).render());
  }
  if (iq4(s.weight)) {
    const std::string iq = "kernels/matvec/fmt/iq4.wgsl";
    t.set("IQ4", Template(wgsl_file(iq), iq).set("W", w).render());
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
    // IQ4_XS's units are IQ4_NL's (fmt/iq4.wgsl), so it takes the same int8 chunks.
    const std::string file8 =
        "kernels/matvec/fmt/i8/" + (s.weight.format == Format::IQ4_XS ? "iq4_nl.wgsl" : fmt_file(s.weight, s.k));
    Template t8(wgsl_file(file8), file8);
    t8.set("W", w);
    if (s.weight.onnx) t8.set("BS", std::to_string(s.weight.block_size));
    out += "\n" + t8.render();
  }
  return out;
}

std::string decode_helpers(const WeightKind& kind, bool table) {
  std::string h(wgsl_file("kernels/matvec/fmt/helpers.wgsl"));
  if (iq4(kind) && table)
    h += "\n" + std::string(wgsl_file("kernels/common/iq4_bytes.wgsl")) + "\n" +
         std::string(wgsl_file("kernels/matvec/fmt/iq4_table.wgsl"));
  else if (iq4(kind))
    h += "\n" + std::string(wgsl_file("kernels/matvec/fmt/iq4_select.wgsl"));
  return h;
}

namespace detail {

std::vector<std::string> weight_names(const KernelSpec& s) {
  return s.hooks.epilogue == Epilogue::SiluGate ? std::vector<std::string>{"A", "B"} : std::vector<std::string>{"A"};
}

std::string acc(const std::string& w, uint32_t t, uint32_t i) {
  return i ? fmt::format("acc{}{}r{}", w, t, i) : fmt::format("acc{}{}", w, t);
}

std::string unit_name(uint32_t j, const std::string& w, uint32_t i) { return fmt::format("un{}{}r{}", j, w, i); }

std::string unit_loads(const KernelSpec& s) {
  std::string o;
  const bool pipe = (s.variant & kPipeline) != 0;
  for (uint32_t j = 0; j < s.unroll; ++j) {
    o += fmt::format("        let uu{0} = u + {0}u * TPR;\n", j);
    for (uint32_t i = 0; i < s.rpl; ++i)
      for (const auto& w : weight_names(s)) {
        o += fmt::format("        var {}: Unit{};\n", unit_name(j, w, i), w);
        // Pipelined: take the words fetched last step, fetch the next step's.
        if (pipe) {
          o += fmt::format("        let cur{0} = pf{0};\n", unit_name(j, w, i));
          o += fmt::format("        if (uu{0} + TPR * UNROLL < u1) {{ pf{1} = fetch{2}(row{3}, uu{0} + TPR * UNROLL); }}\n",
                           j, unit_name(j, w, i), w, i);
        }
      }
    o += fmt::format("        if (uu{0} < u1) {{\n", j);
    for (uint32_t i = 0; i < s.rpl; ++i)
      for (const auto& w : weight_names(s))
        o += pipe ? fmt::format("          {0} = decode{1}(cur{0}, row{2}, uu{3});\n", unit_name(j, w, i), w, i, j)
                  : fmt::format("          {} = load{}(row{}, uu{});\n", unit_name(j, w, i), w, i, j);
    o += "        }\n";
  }
  return o;
}

std::string pipeline_prefetch(const KernelSpec& s) {
  std::string o;
  if (!(s.variant & kPipeline)) return o;
  o += "      // The pipelined loop's first fetch (each step then fetches the next).\n";
  for (uint32_t j = 0; j < s.unroll; ++j)
    for (uint32_t i = 0; i < s.rpl; ++i)
      for (const auto& w : weight_names(s)) {
        o += fmt::format("      var pf{}: Raw{};\n", unit_name(j, w, i), w);
        o += fmt::format("      if (u0 + ln + {0}u * TPR < u1) {{ pf{1} = fetch{2}(row{3}, u0 + ln + {0}u * TPR); }}\n",
                         j, unit_name(j, w, i), w, i);
      }
  return o;
}

}  // namespace detail

namespace {

// One step of a lane: load UNROLL units of each weight for each of its rows,
// then decode them chunk by chunk (units in increasing order). Scaled formats
// sum the raw codes times x over each scale group, then add scale * sum (and
// min * sum(x), staged in the unit's padding vec4) to the token's accumulator;
// float formats add each chunk's products directly. (Loading the next step's
// units before computing, or before staging x, was slower on the H200 or no
// faster: docs/perf/2026-12-01-session7-h200.md.)
std::string unit_loop(const KernelSpec& s, const UnitInfo& ui) {
  const std::vector<std::string> ws = detail::weight_names(s);
  const uint32_t gch = ui.group ? ui.group / 8 : 1;  // chunks per group
  const auto& un = detail::unit_name;
  using detail::acc;
  const bool gx = (s.variant & kGlobalX) != 0;
  std::string o = detail::unit_loads(s);
  // x from global memory: for one-chunk units (the float formats' 8-element
  // units), every x read of the step right after its weight loads, before
  // any is used (read inside each unit's block, they waited on the unit
  // before: 47.7 us against 37.5 for f16 4096 x 14336 on the H200). xg_at is
  // branch-free, so units past u1 read harmlessly. Larger units read x in
  // their block: hoisted, 32-element units at 2 units a step took
  // SwiftShader's shader compiler minutes and gigabytes.
  const bool hoist = gx && ui.chunks == 1;
  if (hoist)
    for (uint32_t j = 0; j < s.unroll; ++j)
      for (uint32_t t = 0; t < s.tokens; ++t)
        for (uint32_t c = 0; c < ui.chunks; ++c) {
          o += fmt::format("        let xa{0}_{1}_{2} = xg_at({1}u, z * TOKENS + {1}u, uu{2} * UNIT + {3}u);\n", c, t,
                           j, 8 * c);
          o += fmt::format("        let xc{0}_{1}_{2} = xg_at({1}u, z * TOKENS + {1}u, uu{2} * UNIT + {3}u);\n", c, t,
                           j, 8 * c + 4);
        }
  for (uint32_t j = 0; j < s.unroll; ++j) {
    o += fmt::format("        if (uu{0} < u1) {{\n", j);
    if (!gx)
      o += fmt::format("          let xu = uu{0} - u0;  // the unit's index in the tile, xs[t * (TILE / UNIT) + xu]\n", j);
    if (ui.has_min)
      for (uint32_t t = 0; t < s.tokens; ++t)
        o += fmt::format("          let sx_{0} = xs[{0}u * (TILE / UNIT) + xu][UNIT / 4u];  // sum(x) per group\n", t);
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
          if (gx) {
            if (hoist) {
              o += fmt::format("          let xa{0}_{1} = xa{0}_{1}_{2};\n", c, t, j);
              o += fmt::format("          let xc{0}_{1} = xc{0}_{1}_{2};\n", c, t, j);
            } else {
              o += fmt::format("          let xa{0}_{1} = xg_at({1}u, z * TOKENS + {1}u, uu{2} * UNIT + {3}u);\n", c,
                               t, j, 8 * c);
              o += fmt::format("          let xc{0}_{1} = xg_at({1}u, z * TOKENS + {1}u, uu{2} * UNIT + {3}u);\n", c,
                               t, j, 8 * c + 4);
            }
            continue;
          }
          o += fmt::format("          let xa{0}_{1} = xs[{1}u * (TILE / UNIT) + xu][{2}u];\n", c, t, 2 * c);
          o += fmt::format("          let xc{0}_{1} = xs[{1}u * (TILE / UNIT) + xu][{2}u];\n", c, t, 2 * c + 1);
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

// Formats with a min: after staging, the sum of x over each scale group of
// each staged unit goes into the unit's padding vec4 (component g), added as
// s4 = v0 + v1 + ... (vec4s in order), then (s4.x + s4.y) + (s4.z + s4.w).
std::string sum_x(const UnitInfo& ui) {
  if (!ui.has_min) return "";
  BQ_ASSERT(ui.groups() <= 4, "{} groups per unit", ui.groups());
  std::string o =
      "    for (var i = li; i < TOKENS * (TILE / UNIT); i += WG) {\n"
      "      var sv = vec4<f32>(0.0);\n";
  for (uint32_t g = 0; g < ui.groups(); ++g) {
    o += fmt::format("      {{\n        var s4 = xs[i][{}u];\n", g * ui.group / 4);
    o += fmt::format("        for (var j = 1u; j < {}u; j++) {{ s4 = s4 + xs[i][{}u + j]; }}\n", ui.group / 4,
                     g * ui.group / 4);
    o += fmt::format("        sv[{}] = (s4.x + s4.y) + (s4.z + s4.w);\n      }}\n", g);
  }
  o += "      xs[i][UNIT / 4u] = sv;\n    }\n    workgroupBarrier();";
  return o;
}

}  // namespace

std::vector<Role> bindings(const KernelSpec& s) {
  const UnitInfo ui = unit_info(s.weight, s.k);
  std::vector<Role> r = {Role::Params, Role::X, Role::MainA};
  if (ui.has_side) r.push_back(Role::SideA);
  if (s.hooks.epilogue == Epilogue::SiluGate) {
    r.push_back(Role::MainB);
    if (ui.has_side) r.push_back(Role::SideB);
  }
  if (rms_in_kernel(s)) r.push_back(Role::NormW);
  if (s.hooks.bias && s.splits == 1) r.push_back(Role::Bias);  // split-k: split_sum adds it
  if (s.hooks.epilogue == Epilogue::Rope) r.push_back(Role::Pos);
  r.push_back(Role::Y);
  if (s.hooks.kv_n) {
    r.push_back(Role::KCache);
    r.push_back(Role::VCache);
  }
  return r;
}

uint32_t storage_bindings(const KernelSpec& s) {
  const std::vector<Role> r = bindings(s);
  return static_cast<uint32_t>(std::count_if(r.begin(), r.end(), [](Role x) { return x != Role::Params; }));
}

uint32_t shared_bytes(const KernelSpec& s) {
  const bool red = !s.features.subgroups || rms_in_kernel(s);
  const uint32_t unit = unit_info(s.weight, s.k).unit;
  // f32: one padding vec4 per unit; int8: 48 bytes per 32 elements (codes,
  // then a vec4 of scale and code sums).
  const uint32_t tile_bytes = (s.variant & kGlobalX)  ? 0
                              : s.features.dot4        ? s.tile * 3 / 2
                                                       : s.tile / unit * (unit + 4) * 4;
  // rms_scale.wgsl's min(WG, 32) sums of partials.
  const uint32_t rms_part = rms_in_kernel(s) ? std::min(s.wg, 32u) * 4 : 0;
  const uint32_t iq4_tables = iq4(s.weight) ? (16 + 64) * 4 : 0;  // fmt/iq4_table.wgsl
  return s.tokens * tile_bytes + (red ? s.wg * 4 : 0) + s.rpw() * s.tokens * weights(s) * 4 + s.tokens * 4 +
         (s.features.subgroups ? 4 : 0) + rms_part + iq4_tables;
}

gpu::Grid grid(const KernelSpec& s, uint32_t rows) {
  const uint64_t groups = (uint64_t{rows} + s.rpw() - 1) / s.rpw() * s.splits;
  const uint32_t chunks = (s.m + s.tokens - 1) / s.tokens;
  if (s.variant & kInterleaveChunks) return gpu::wrap_workgroups(groups * chunks, s.max_groups, 1);
  return gpu::wrap_workgroups(groups, s.max_groups, chunks);
}

std::string wgsl(const KernelSpec& s) {
  const UnitInfo ui = unit_info(s.weight, s.k);
  const std::string label = s.key();
  Template t(wgsl_file("kernels/matvec/matvec.wgsl"), label);
  t.set("ENABLE", s.features.subgroups ? "enable subgroups;" : "");
  t.set_u("K", s.k).set_u("KP", ui.kp).set_u("N", s.n).set_u("M", s.m).set_u("WG", s.wg).set_u("TPR", s.tpr);
  t.set_u("RPL", s.rpl).set_u("SPLITS", s.splits);
  const bool inter = s.variant & kInterleaveChunks;
  t.set("Z_OF", inter ? "lin0 % ZC" : "wid.z").set("LIN_OF", inter ? "lin0 / ZC" : "lin0");
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
      case Role::KCache:
      case Role::VCache:
        b += fmt::format("@group(0) @binding({}) var<storage, read_write> {}: array<{}>;  // [KV_CTX, KV_N{}]\n", slot,
                         r == Role::KCache ? "kc" : "vc", s.hooks.kv_f16 ? "u32" : "f32",
                         s.hooks.kv_f16 ? " / 2] f16 pairs" : "");
        break;
    }
    ++slot;
  }
  t.set("BINDINGS", b);
  const bool need_red = !s.features.subgroups || rms_in_kernel(s);
  t.set("X_DECL", x_prequantized(s)
                      ? "@group(0) @binding(1) var<storage, read> xp: array<vec4<u32>>;  // x as int8 blocks (xquant.wgsl)"
                      : "@group(0) @binding(1) var<storage, read> x4: array<vec4<f32>>;  // [M * K / 4]");
  t.set("RED_DECL", need_red ? "var<workgroup> red: array<f32, WG>;                            // lane partials" : "");
  t.set("RS_DECL", detail::direct_store(s) ? ""
                                    : fmt::format("var<workgroup> rs: array<f32, {}>;  // row sums [weights][TOKENS][RPW]",
                                                  s.rpw() * s.tokens * weights(s)));
  t.set("SHARED_EXTRA", s.features.subgroups ? "var<workgroup> sg_count: atomic<u32>;" : "");
  std::string fmt_code = format_snippet(s, "A");
  if (weights(s) == 2) fmt_code += "\n" + format_snippet(s, "B");
  std::string helpers = decode_helpers(s.weight, true);
  t.set("FORMAT_INIT", iq4(s.weight) ? "  iq4_init(li);  // the IQ4 level tables (fmt/iq4_table.wgsl)\n  workgroupBarrier();" : "");
  if (s.features.dot4) {
    const std::string hf = "kernels/matvec/fmt/i8/helpers.wgsl";
    helpers += "\n" + Template(wgsl_file(hf), hf).set("TINY", wgsl_float(kInt8Tiny)).render();
    if (s.variant & kQuadStage) helpers += "\n" + std::string(wgsl_file("kernels/matvec/fmt/i8/quad.wgsl"));
  }
  if (rms_in_kernel(s)) helpers += "\n" + std::string(wgsl_file("kernels/matvec/rms_scale.wgsl"));
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
    if (s.hooks.kv_n)
      hooks += fmt::format(
          "// The KV store: rows [KV_K, KV_K + KV_N) and [KV_V, KV_V + KV_N) into kc and vc at row pos[t].\n"
          "const KV_N: u32 = {}u;\nconst KV_K: u32 = {}u;\nconst KV_V: u32 = {}u;\nconst KV_CTX: u32 = {}u;\n",
          s.hooks.kv_n, s.hooks.kv_k, s.hooks.kv_v, s.hooks.kv_ctx);
  }
  t.set("HOOK_FUNCS", hooks);
  t.set("SG_ARGS", s.features.subgroups
                       ? ",\n        @builtin(subgroup_invocation_id) sg_id: u32, @builtin(subgroup_size) sg_size: u32"
                       : "");
  if (s.features.subgroups && s.wg == s.tpr) {
    // One lane group a workgroup: WG >= the subgroup max and TPR <= the
    // subgroup min (plan), so the workgroup is exactly one subgroup.
    t.set("LANES", "  let sgs = 0u;  // the only subgroup\n  let lr = 0u;\n  let ln = sg_id;");
  } else if (s.features.subgroups) {
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
  rows += "  let row_first = " + detail::row_map(s, "lr") + ";\n";
  for (uint32_t i = 0; i < s.rpl; ++i)
    rows += fmt::format("  let row{} = min({}, params.rows - 1u);\n", i, detail::row_map(s, fmt::format("lr + {}u * LPW", i)));
  t.set("ROWS", rows);
  std::string stage_hook, fold;
  if (s.variant & kRmsLate) {
    // kRmsLate: one token and one tile; the partial now, the fold after the
    // staging's barrier, the scale (rms_total) on the row sums (rows_sum.cpp).
    t.set("PROLOGUE", "  rms_partial(z * TOKENS, li);  // the RMSNorm's sum of squares, step 1 (kRmsLate)");
    stage_hook = "          v[q] = v[q] * nw4[e / 4u];";
    fold = "    if (li < RL) { rms_fold(li); }  // step 2: red's partials, ordered by the staging's barrier\n";
  } else if (rms_in_kernel(s)) {
    t.set("PROLOGUE",
          "  for (var t = 0u; t < TOKENS; t++) {\n"
          "    let ns = rms_scale(z * TOKENS + t, li);\n"
          "    if (li == 0u) { nscale[t] = ns; }\n"
          "  }\n"
          "  workgroupBarrier();");
    stage_hook = "          v[q] = (v[q] * nscale[t]) * nw4[e / 4u];";
  } else {
    t.set("PROLOGUE", "");
  }
  std::string accs;
  for (uint32_t tk = 0; tk < s.tokens; ++tk)
    for (uint32_t i = 0; i < s.rpl; ++i) {
      for (const auto& w : detail::weight_names(s)) accs += "  var " + detail::acc(w, tk, i) + " = 0.0;\n";
    }
  accs += detail::acc_early_reads(s);  // kAccEarly (rows_sum.cpp)
  t.set("ACC_DECL", accs);
  std::string body;  // one lane step: UNROLL units of each of the lane group's rows
  if (x_prequantized(s)) {
    // x's codes and meta (scale, code sums) as xquant.wgsl wrote them, for
    // ZC * TOKENS token rows of KP elements: every read is in range.
    t.set("XS_DECL",
          "const XQS: u32 = KP / 16u;                // code vec4s a token\n"
          "const XMETA: u32 = ZC * TOKENS * XQS;     // first meta vec4\n"
          "fn xpq(tg: u32, i: u32) -> vec4<u32> { return xp[tg * XQS + i]; }\n"
          "fn xpm(tg: u32, b: u32) -> vec4<u32> { return xp[XMETA + tg * (KP / 32u) + b]; }");
    t.set("STAGE", "");
    body = detail::unit_loop_i8(s, ui);
    t.set("SUMX", "");
  } else if (s.features.dot4) {
    t.set("XS_DECL",
          "const TB: u32 = TILE / 32u;  // int8 blocks per token tile\n"
          "// x as int8 blocks of 32, token-major [TOKENS][TB]: codes 0..15, codes\n"
          "// 16..31 (four a u32), then meta (f32 bits of the scale, the code sums of\n"
          "// 0..15 and 16..31, 0), the layout of xquant.wgsl's output. A lane reads a\n"
          "// block by one index, so robustness clamps one index, not five.\n"
          "var<workgroup> xblk: array<array<vec4<u32>, 3>, TOKENS * TB>;");
    const std::string sf = s.variant & kQuadStage ? "kernels/matvec/stage_i8_sg.wgsl" : "kernels/matvec/stage_i8.wgsl";
    t.set("STAGE", Template(wgsl_file(sf), sf).set("STAGE_HOOK", stage_hook).set("INV127", wgsl_float(kInv127)).render() +
                       fold);
    body = detail::unit_loop_i8(s, ui);
    t.set("SUMX", "");
  } else if (s.variant & kGlobalX) {
    // No staging: the lane loop reads x (and applies the prologue) itself.
    // Where every read is in range (no padding past K, no token past M, and
    // the hoisted reads of a constant step count that divides evenly), x is
    // read as is: the guarded read cost 4 us of 34 for f16 4096 x 14336 on
    // the H200 (docs/perf/2026-12-02-session13-h200.md).
    const uint32_t upr = ui.kp / ui.unit;
    const bool even_steps = (s.variant & kConstSteps) && upr % (s.tpr * s.unroll) == 0 && s.splits == 1;
    const bool in_range = ui.kp == s.k && s.m % s.tokens == 0 && (ui.chunks > 1 || even_steps);
    const bool rms = s.hooks.prologue == Prologue::RmsNorm;
    std::string xg =
        "// x[tg, e .. e + 3] of token t of this workgroup's chunk, read from global memory\n"
        "// (zeros past K and M), scaled as the staging would (no staging: kGlobalX).\n";
    if (in_range) {
      xg += "// Every read of this kernel is in range (the generator checked).\n"
            "fn xg_at(t: u32, tg: u32, e: u32) -> vec4<f32> {\n"
            "  var v = x4[(tg * K + e) / 4u];\n";
      if (rms) xg += "  v = (v * nscale[t]) * nw4[e / 4u];\n";
      xg += "  return v;\n}";
    } else {
      xg += "// Branch-free: an element out of range reads word 0 and is replaced by 0.\n"
            "fn xg_at(t: u32, tg: u32, e: u32) -> vec4<f32> {\n"
            "  let ok = tg < M && e < K;\n"
            "  var v = x4[select(0u, (tg * K + e) / 4u, ok)];\n";
      if (rms) xg += "  v = (v * nscale[t]) * nw4[select(0u, e / 4u, ok)];\n";
      xg += "  return select(vec4<f32>(0.0), v, ok);\n}";
    }
    t.set("XS_DECL", xg);
    t.set("STAGE", "");
    body = unit_loop(s, ui);
    t.set("SUMX", "");
  } else {
    t.set("XS_DECL",
          "// The staged x tile, token-major, a unit of UNIT / 4 vec4s and its padding\n"
          "// vec4 an entry: a lane's reads of a unit share one index, which Dawn's\n"
          "// robustness clamps once (the vec4 index is a constant).\n"
          "var<workgroup> xs: array<array<vec4<f32>, UNIT4P>, TOKENS * (TILE / UNIT)>;");
    const std::string sf = "kernels/matvec/stage_f32.wgsl";
    t.set("STAGE", Template(wgsl_file(sf), sf).set("STAGE_HOOK", stage_hook).render() + fold);
    body = unit_loop(s, ui);
    t.set("SUMX", sum_x(ui));
  }
  const std::string late =
      s.variant & kRmsLate ? "  let nsl = rms_total();  // the RMSNorm scale, step 3 (kRmsLate): it multiplies the row sums\n" : "";
  if (detail::direct_store(s)) {
    t.set("REDUCE", late + detail::reduce_direct(s));
    t.set("STORE", "");
  } else {
    Template st(wgsl_file("kernels/matvec/store_rows.wgsl"), label);
    st.set("ROW_MAP_SLOT", detail::row_map(s, "slot"));
    st.set("EPILOGUE", detail::epilogue(s, "rs[(TOKENS + t) * RPW + slot]"));
    t.set("REDUCE", late + detail::reduce(s));
    t.set("STORE", st.render());
  }
  const uint32_t upr = ui.kp / ui.unit, per_step = s.tpr * s.unroll, steps = (upr + per_step - 1) / per_step;
  if (s.variant & kStepPairs) {
    // Two steps an iteration, each in a block of its own (kStepPairs): the
    // same steps in the same order.
    BQ_ASSERT((s.variant & kConstSteps) && steps % 2 == 0, "step pairs need an even constant step count ({})", steps);
    t.set("LANE_LOOP", detail::pipeline_prefetch(s) +
                           fmt::format("      for (var st2 = 0u; st2 < {}u; st2++) {{  // steps of every lane, two at a time",
                                       steps / 2));
    const auto step = [&](const char* st) {
      return fmt::format("      {{\n        let st = {};\n        let u = u0 + ln + st * (TPR * UNROLL);\n{}      }}\n", st,
                         body);
    };
    t.set("UNIT_LOOP", step("2u * st2") + step("2u * st2 + 1u"));
  } else if (s.variant & kConstSteps) {
    // One tile, no split: u0 = 0 and u1 = UPR for every lane.
    t.set("LANE_LOOP", detail::pipeline_prefetch(s) +
                           fmt::format("      for (var st = 0u; st < {}u; st++) {{  // steps of every lane\n"
                                       "        let u = u0 + ln + st * (TPR * UNROLL);",
                                       steps));
    t.set("UNIT_LOOP", body);
  } else {
    t.set("LANE_LOOP", detail::pipeline_prefetch(s) + "      for (var u = u0 + ln; u < u1; u += TPR * UNROLL) {");
    t.set("UNIT_LOOP", body);
  }
  if (probe_of(s) != Probe::None) detail::apply_probe(s, ui, t);
  std::string out = t.render();
  if ((s.variant & kConstSteps) && upr % per_step == 0)  // every unit of every step exists
    for (uint32_t j = 0; j < s.unroll; ++j) out = detail::replace_all(out, fmt::format("if (uu{} < u1)", j), "if (true)");
  return out;
}

}  // namespace blockq::matvec
