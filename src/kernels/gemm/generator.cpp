// Planning and WGSL generation for the gemm family (see generator.hpp and
// gemm.wgsl for the kernel's structure).
#include "kernels/gemm/generator.hpp"

#include <algorithm>
#include <cstdio>

#include "kernels/common/split_sum.hpp"
#include "kernels/gemm/parts.hpp"
#include "kernels/matvec/layout.hpp"
#include "util/embedded_wgsl.hpp"
#include "util/error.hpp"
#include "util/template.hpp"

namespace blockq::gemm {

namespace detail {

uint32_t weights(const Hooks& h) { return h.epilogue == Epilogue::SiluGate ? 2 : 1; }

namespace {

// The format snippet's file (the traits'); "" for F32, which gemm does not read.
std::string fmt_file(Format f) { return f == Format::F32 ? "" : std::string(traits(f).wgsl_decode); }

}  // namespace

std::string acc(const std::string& w, uint32_t i, uint32_t j) { return fmt::format("acc{}_{}_{}", w, i, j); }

std::string epilogue(const KernelSpec& s, const std::string& idx, uint32_t i, uint32_t j) {
  const std::string v = acc("A", i, j);
  if (s.splits > 1) {  // raw sums into the partials [SPLITS][weights][M][N] (pbase: this slice's)
    std::string o = fmt::format("y[pbase + {}] = {};", idx, v);
    if (weights(s.hooks) == 2) o += fmt::format(" y[pbase + params.m * params.n + {}] = {};", idx, acc("B", i, j));
    return o;
  }
  switch (s.hooks.epilogue) {
    case Epilogue::Acc: return fmt::format("y[{0}] = y[{0}] + {1};", idx, v);
    case Epilogue::SiluGate: return fmt::format("y[{0}] = ({1} / (1.0 + exp(-{1}))) * {2};", idx, v, acc("B", i, j));
    default: return fmt::format("y[{}] = {};", idx, v);
  }
}

bool has_side(const KernelSpec& s) { return matvec::unit_info(s.weight, s.k).has_side; }

std::string bindings(const KernelSpec& s) {
  // The matvec layout's arrays (kernels/matvec/layout.hpp), read as u32 words.
  const bool side = has_side(s);
  uint32_t i = 2;
  std::string b;
  for (const std::string w : {"A", "B"}) {
    if (w == "B" && weights(s.hooks) == 1) break;
    b += fmt::format("@group(0) @binding({}) var<storage, read> main{}: array<u32>;  // the chunk's {} main array\n",
                     i++, w, w == "A" ? "weight's" : "up weight's");
    if (side) b += fmt::format("@group(0) @binding({}) var<storage, read> side{}: array<u32>;  // its side array\n", i++, w);
  }
  b += fmt::format("@group(0) @binding({}) var<storage, read_write> y: array<f32>;  // [M * N]", i);
  return b;
}

// fmt/kscale.wgsl, the scale and min decode of the Q4_K and Q5_K snippets,
// and fmt/iq4_levels.wgsl, the IQ4 formats' levels (both gemms).
std::string kscale_code(Format f) {
  if (f == Format::Q4_K || f == Format::Q5_K) return std::string(wgsl_file("kernels/gemm/fmt/kscale.wgsl")) + "\n";
  if (f == Format::IQ4_NL || f == Format::IQ4_XS) return std::string(wgsl_file("kernels/gemm/fmt/iq4_levels.wgsl")) + "\n";
  return "";
}

std::string format_code(const KernelSpec& s) {
  const std::string file = "kernels/gemm/fmt/" + fmt_file(s.weight.format);
  std::string c = kscale_code(s.weight.format) + Template(wgsl_file(file), file).set("W", "A").render();
  if (weights(s.hooks) == 2) {
    c += "\n";
    c += Template(wgsl_file(file), file).set("W", "B").render();
  }
  return c;
}

std::string store_classic(const KernelSpec& s, bool checked, bool interleaved) {
  std::string o;
  for (uint32_t i = 0; i < s.reg_m; ++i)
    for (uint32_t j = 0; j < s.reg_n; ++j) {
      const std::string t = interleaved ? fmt::format("(m0 + 4u * ({}u * TMT + ty) + {}u)", i / 4, i % 4)
                                        : fmt::format("(m0 + ty * RM + {}u)", i);
      const std::string r = interleaved ? fmt::format("(n0 + 4u * ({}u * TNT + tx) + {}u)", j / 4, j % 4)
                                        : fmt::format("(n0 + tx * RN + {}u)", j);
      const std::string idx = fmt::format("{} * params.n + params.row0 + {}", t, r);
      const std::string body = epilogue(s, idx, i, j);
      if (checked)
        o += fmt::format("    if ({} < params.m && {} < params.rows) {{ {} }}\n", t, r, body);
      else
        o += "    " + body + "\n";
    }
  if (!o.empty()) o.pop_back();
  return o;
}

KernelSpec spec_of(const Limits& lim, const WeightKind& kind, uint32_t n, uint32_t k, const Hooks& hooks,
                   const Tiling& t) {
  KernelSpec s;
  s.op = Op::Gemm;
  s.weight = kind;
  s.n = n;
  s.k = k;
  s.m = 0;  // run-time
  s.tile_m = t.tile_m;
  s.tile_n = t.tile_n;
  s.reg_m = t.reg_m;
  s.reg_n = t.reg_n;
  s.tile = t.tile_k;
  s.variant = t.algo;
  s.splits = std::min(t.splits, k / t.tile_k);  // whole steps per slice, at least one
  s.wg = (t.tile_m / t.reg_m) * (t.tile_n / t.reg_n);
  s.tpr = 1;
  s.tokens = 1;
  s.hooks = hooks;
  s.max_groups = lim.max_groups;
  return s;
}

std::string acc_decl(const KernelSpec& s) {
  std::string accs;
  for (uint32_t w = 0; w < weights(s.hooks); ++w)
    for (uint32_t i = 0; i < s.reg_m; ++i)
      for (uint32_t j = 0; j < s.reg_n; ++j) accs += "  var " + acc(w ? "B" : "A", i, j) + " = 0.0;\n";
  return accs;
}

}  // namespace detail

namespace {

using detail::acc;
using detail::weights;

// Staging of one k step: x [TM, TK] and each weight's [TN, TK] decoded tile.
std::string stage(const KernelSpec& s, bool checked) {
  std::string o;
  o += "      for (var i = li; i < TM * TK4; i += WG) {\n";
  o += "        let r = i / TK4;\n        let c = i % TK4;\n";
  if (checked) {
    o += "        var v = vec4<f32>(0.0);\n";
    o += "        if (m0 + r < params.m) { v = x4[(m0 + r) * K4 + k0 / 4u + c]; }\n";
  } else {
    o += "        let v = x4[(m0 + r) * K4 + k0 / 4u + c];\n";
  }
  o += "        xs[4u * c * XP4 + r / 4u][r % 4u] = v.x;\n        xs[(4u * c + 1u) * XP4 + r / 4u][r % 4u] = v.y;\n";
  o += "        xs[(4u * c + 2u) * XP4 + r / 4u][r % 4u] = v.z;\n        xs[(4u * c + 3u) * XP4 + r / 4u][r % 4u] = v.w;\n";
  o += "      }\n";
  o += "      for (var i = li; i < TN * TK4; i += WG) {\n";
  o += "        let r = i / TK4;\n        let c = i % TK4;\n";
  for (const std::string w : {"A", "B"}) {
    if (w == "B" && weights(s.hooks) == 1) break;
    if (checked) {
      o += fmt::format("        var v{} = vec4<f32>(0.0);\n", w);
      o += fmt::format("        if (n0 + r < params.rows) {{ v{0} = dq4{0}(n0 + r, k0 + 4u * c); }}\n", w);
    } else {
      o += fmt::format("        let v{0} = dq4{0}(n0 + r, k0 + 4u * c);\n", w);
    }
    for (uint32_t q = 0; q < 4; ++q)
      o += fmt::format("        ws{0}[(4u * c + {1}u) * WP4 + r / 4u][r % 4u] = v{0}.{2};\n", w, q, "xyzw"[q]);
  }
  o += "      }";
  return o;
}

std::string inner(const KernelSpec& s) {
  std::string o;
  // Operand i of a register block: a vec4 component when the block is whole vec4s.
  auto operands = [&](const std::string& name, const std::string& arr, const std::string& stride,
                      const std::string& id, uint32_t reg) {
    std::string r;
    if (reg % 4 == 0) {
      for (uint32_t g = 0; g < reg / 4; ++g)
        r += fmt::format("      let {0}v{1} = {2}[kk * {3} + {4} * {5}u + {1}u];\n", name, g, arr, stride, id, reg / 4);
      for (uint32_t i = 0; i < reg; ++i) r += fmt::format("      let {0}{1} = {0}v{2}.{3};\n", name, i, i / 4, "xyzw"[i % 4]);
    } else {
      for (uint32_t i = 0; i < reg; ++i)
        r += fmt::format("      let {0}{1} = {2}[kk * {3} + ({4} * {5}u + {1}u) / 4u][({4} * {5}u + {1}u) % 4u];\n", name, i,
                         arr, stride, id, reg);
    }
    return r;
  };
  o += operands("a", "xs", "XP4", "ty", s.reg_m);
  for (const std::string w : {"A", "B"}) {
    if (w == "B" && weights(s.hooks) == 1) break;
    o += operands("b" + w, "ws" + w, "WP4", "tx", s.reg_n);
    for (uint32_t i = 0; i < s.reg_m; ++i)
      for (uint32_t j = 0; j < s.reg_n; ++j) o += fmt::format("      {0} = {0} + a{1} * b{2}{3};\n", acc(w, i, j), i, w, j);
  }
  return o;
}

bool pipelined(const Tiling& t) { return t.algo != kClassic; }

}  // namespace

bool supported(Format f) { return !detail::fmt_file(f).empty(); }

Limits limits_of(const gpu::Context& ctx) {
  Limits l;
  l.invocations = ctx.limits().maxComputeInvocationsPerWorkgroup;
  l.shared = ctx.limits().maxComputeWorkgroupStorageSize;
  l.max_groups = ctx.limits().maxComputeWorkgroupsPerDimension;
  l.subgroup_matrix = ctx.features().subgroup_matrix;
  l.max_binding = ctx.limits().maxStorageBufferBindingSize;
  return l;
}

uint32_t m_class(uint32_t m) { return m <= 32 ? 0 : m <= 128 ? 1 : m <= 512 ? 2 : 3; }

// Defaults per m class, from the H200 sweeps of every candidate (docs/perf).
// Prompts of more than 128 tokens: 128x128 tiles of 8x8 blocks, 8-element k
// steps in the paired loop (constant buffer halves, so the inner loop's tile
// reads need no run-time clamp under Dawn's robustness). At m = 2048 that
// took 54% of the FMA rate, against 46% for 16-element steps in the plain
// unrolled loop. At m = 512 the grid is a few waves of workgroups, and
// splitting k in two took q8_0 4096x14336 from 47.7% to 52.8% and 14336x4096
// from 46.9% to 51.9% (default_for); at m = 2048 it cost 0.5-1.5 points.
Tiling default_tiling(uint32_t mclass) {
  switch (mclass) {
    case 0: return {32, 64, 2, 4, 32};
    case 1: return {64, 64, 4, 4, 16};
    default: return {128, 128, 8, 8, 8, kPipelinedPaired};
  }
}

uint32_t default_splits(uint64_t tiles, uint32_t steps, uint32_t tile_k, uint32_t most, uint32_t min_k) {
  uint32_t s = 1;
  while (s * 2 <= most && tiles * s < kSplitBelowTiles && steps / (s * 2) >= 1 &&
         uint64_t{steps} * tile_k / (s * 2) >= min_k)
    s *= 2;
  return s;
}

namespace {

uint64_t tiles_of(const Tiling& t, uint32_t n, uint32_t m) {
  return (uint64_t{m} + t.tile_m - 1) / t.tile_m * ((uint64_t{n} + t.tile_n - 1) / t.tile_n);
}

}  // namespace

// m of 33 to 128 (H100, q8_0 at m = 128, session 39): where the 64x64
// classic default has few tiles, the pipelined 64x64 tiles split: 960x2560
// 176 -> 47 us (8 slices), 1600x960 71 -> 36 (4), 2560x960 71 -> 50 (4).
std::optional<Tiling> default_for(const Limits& lim, uint32_t n, uint32_t k, uint32_t m, const Hooks& hooks) {
  const uint32_t mc = m_class(m);
  auto t = fit(lim, default_tiling(mc), hooks);
  if (!t || mc == 0) return t;
  auto split = [&](Tiling c, uint32_t most) -> std::optional<Tiling> {
    c.splits = default_splits(tiles_of(c, n, m), k / c.tile_k, c.tile_k, most, kMinSliceKF32);
    if (c.splits < 2 || split_sum::partial_bytes(c.splits, hooks, m, n) > lim.max_binding) return std::nullopt;
    return c;
  };
  if (mc >= 2) return split(*t, 2).value_or(*t);
  const auto p = fit(lim, Tiling{64, 64, 4, 4, 16, kPipelined}, hooks);
  if (!p) return t;
  return split(*p, 8).value_or(*t);
}

uint32_t shared_bytes(const Tiling& t, const Hooks& h) {
  const uint32_t one = t.tile_k * (t.tile_m + 4) * 4 + weights(h) * t.tile_k * (t.tile_n + 4) * 4;
  return pipelined(t) ? 2 * one : one;  // the pipelined kernel double-buffers
}

std::string label(const Tiling& t) {
  const char* algo[] = {"", " pipe", " pipe-unroll", " pipe-pair"};
  return fmt::format("{}x{} r{}x{} tk{}{}{}", t.tile_m, t.tile_n, t.reg_m, t.reg_n, t.tile_k,
                     t.algo <= kPipelinedPaired ? algo[t.algo] : " ?",
                     t.splits > 1 ? fmt::format(" sk{}", t.splits) : std::string());
}

std::optional<Tiling> fit(const Limits& lim, Tiling t, const Hooks& h) {
  if (!t.tile_m || !t.tile_n || !t.reg_m || !t.reg_n || !t.tile_k) return std::nullopt;
  if (t.tile_m % t.reg_m || t.tile_n % t.reg_n || t.tile_m % 4 || t.tile_n % 4 || t.tile_k % 4 || 32 % t.tile_k)
    return std::nullopt;
  if (t.algo > kPipelinedPaired || (pipelined(t) && (t.reg_m % 4 || t.reg_n % 4))) return std::nullopt;
  if (t.splits < 1 || t.splits > kMaxSplits || (t.splits > 1 && !pipelined(t))) return std::nullopt;
  auto inv = [&] { return (t.tile_m / t.reg_m) * (t.tile_n / t.reg_n); };
  while (inv() > lim.invocations) {
    if (t.reg_m < 8 && t.reg_m * 2 <= t.tile_m) t.reg_m *= 2;
    else if (t.reg_n < 8 && t.reg_n * 2 <= t.tile_n) t.reg_n *= 2;
    else if (t.tile_m > t.reg_m) t.tile_m /= 2;
    else if (t.tile_n > t.reg_n) t.tile_n /= 2;
    else return std::nullopt;
  }
  while (shared_bytes(t, h) > lim.shared) {
    if (t.tile_k > 8) t.tile_k /= 2;
    else if (t.tile_n > 16 && (t.tile_n / 2) % t.reg_n == 0 && (t.tile_n / 2) % 4 == 0) t.tile_n /= 2;
    else if (t.tile_m > 8 && (t.tile_m / 2) % t.reg_m == 0 && (t.tile_m / 2) % 4 == 0) t.tile_m /= 2;
    else return std::nullopt;
  }
  if (t.tile_m % 4 || t.tile_n % 4) return std::nullopt;  // xs and ws rows are vec4s
  return t;
}

std::vector<Tiling> candidates(const Limits& lim, const WeightKind&, const Hooks& h, uint32_t mclass) {
  const uint32_t P = kPipelined, U = kPipelinedUnrolled, D = kPipelinedPaired;
  std::vector<Tiling> base = {default_tiling(mclass), {32, 64, 2, 4, 32}, {64, 64, 4, 4, 32},
                              {128, 64, 8, 4, 32},   {64, 128, 4, 8, 32}, {128, 128, 8, 8, 16},
                              {32, 32, 2, 2, 32},    {64, 64, 4, 4, 16},  {16, 128, 1, 8, 32},
                              // pipelined: 256 invocations of 8x8, 8x4, 4x8 blocks; 128 and 64 of 8x8; 512 of 8x8
                              {128, 128, 8, 8, 16, P}, {128, 128, 8, 8, 8, P}, {128, 64, 8, 4, 16, P},
                              {64, 128, 4, 8, 16, P},  {128, 64, 8, 8, 16, P}, {64, 128, 8, 8, 16, P},
                              {64, 64, 4, 4, 16, P},   {32, 64, 4, 4, 32, P},  {128, 256, 8, 8, 8, P},
                              {256, 128, 8, 8, 8, P},  {64, 64, 8, 8, 16, P},
                              // the same with the k loop written out
                              {128, 128, 8, 8, 16, U}, {128, 64, 8, 4, 16, U}, {64, 128, 8, 8, 16, U},
                              // steps in pairs (constant buffer halves); split-k for grids of few tiles
                              {128, 128, 8, 8, 16, D}, {128, 64, 8, 4, 16, D}, {128, 128, 8, 8, 16, U, 2},
                              {128, 128, 8, 8, 16, D, 2}, {128, 128, 8, 4, 16, D}, {128, 128, 8, 4, 16, U},
                              // 8- and 4-element steps
                              {128, 128, 8, 8, 8, D}, {128, 128, 8, 8, 8, D, 2}, {128, 128, 8, 8, 8, D, 4},
                              {128, 128, 8, 8, 8, U}, {128, 128, 8, 8, 4, D}, {128, 128, 8, 4, 8, D},
                              // split-k of the smaller tiles (m <= 128: grids of few tiles)
                              {64, 64, 4, 4, 16, P, 2}, {64, 64, 4, 4, 16, P, 4}, {64, 64, 4, 4, 16, P, 8},
                              {32, 64, 4, 4, 32, P, 4}};
  std::vector<Tiling> out;
  for (const auto& b : base) {
    auto f = fit(lim, b, h);
    if (f && std::find(out.begin(), out.end(), *f) == out.end()) out.push_back(*f);
  }
  return out;
}

KernelSpec plan(const gpu::Context& ctx, const WeightKind& kind, uint32_t n, uint32_t k, uint32_t m,
                const Hooks& hooks, std::optional<Tiling> tiling) {
  const Limits lim = limits_of(ctx);
  static bool logged = false;
  if (lim.subgroup_matrix && !logged) {
    logged = true;
    std::fprintf(stderr,
                 "[blockq] gemm: the device offers subgroup matrices; they are unused (no tested path, "
                 "docs/KERNELS_GEMM.md)\n");
  }
  return plan(lim, kind, n, k, m, hooks, tiling);
}

KernelSpec plan(const Limits& lim, const WeightKind& kind, uint32_t n, uint32_t k, uint32_t m,
                const Hooks& hooks, std::optional<Tiling> tiling) {
  BQ_CHECK(!kind.onnx && supported(kind.format), "gemm: weight format {} is not supported", kind.name());
  BQ_CHECK(n > 0 && k > 0 && m > 0, "gemm {}: empty problem n={} k={} m={}", kind.name(), n, k, m);
  const uint32_t be = std::max<uint32_t>(32, traits(kind.format).block_elems);
  BQ_CHECK(k % be == 0, "gemm {}: k = {} must be a multiple of {}", kind.name(), k, be);
  BQ_CHECK(hooks.prologue == Prologue::None && !hooks.bias && hooks.epilogue != Epilogue::Rope,
           "gemm {}: only the Store, Acc and SiluGate epilogues are supported", kind.name());
  const Tiling want = tiling.value_or(default_tiling(m_class(m)));
  auto t = tiling ? fit(lim, want, hooks) : default_for(lim, n, k, m, hooks);
  BQ_CHECK(t.has_value(), "gemm {}: tiling {}x{} reg {}x{} tk {} does not fit {} invocations / {} bytes",
           kind.name(), want.tile_m, want.tile_n, want.reg_m, want.reg_n, want.tile_k, lim.invocations,
           lim.shared);
  return detail::spec_of(lim, kind, n, k, hooks, *t);
}

Tiling tiling_of(const KernelSpec& s) { return {s.tile_m, s.tile_n, s.reg_m, s.reg_n, s.tile, s.variant, s.splits}; }

uint32_t threads(const KernelSpec& s) { return (s.tile_m / s.reg_m) * (s.tile_n / s.reg_n); }
uint32_t shared_bytes(const KernelSpec& s) {
  return s.features.dot4 ? detail::shared_bytes_int8(tiling_of(s), s.hooks, s.weight.format) : shared_bytes(tiling_of(s), s.hooks);
}

std::string wgsl(const KernelSpec& s) {
  if (s.features.dot4) return detail::wgsl_int8(s);
  if (pipelined(tiling_of(s))) return detail::wgsl_pipelined(s);
  Template t(wgsl_file("kernels/gemm/gemm.wgsl"), s.key());
  t.set("DECODE_HELPERS", std::string(wgsl_file("kernels/gemm/decode_helpers.wgsl")));
  const uint32_t nw = weights(s.hooks);
  t.set_u("K", s.k);
  t.set_u("TM", s.tile_m).set_u("TN", s.tile_n).set_u("RM", s.reg_m).set_u("RN", s.reg_n).set_u("TK", s.tile);
  std::string ws = "var<workgroup> wsA: array<vec4<f32>, TK * WP4>;  // [TK][TN / 4] dequantized W, k-major\n";
  if (nw == 2) ws += "var<workgroup> wsB: array<vec4<f32>, TK * WP4>;\n";
  t.set("BINDINGS", detail::bindings(s)).set("WS_DECL", ws).set("FORMAT", detail::format_code(s));
  t.set("ACC_DECL", detail::acc_decl(s));
  t.set("STAGE_FAST", stage(s, false)).set("STAGE_EDGE", stage(s, true));
  t.set("INNER", inner(s));
  t.set("STORE_FAST", detail::store_classic(s, false)).set("STORE_EDGE", detail::store_classic(s, true));
  return t.render();
}

std::string pipeline_key(const KernelSpec& s) {
  KernelSpec k = s;
  k.n = 0;  // n and m are run-time parameters
  return k.key();
}

gpu::Grid grid(const KernelSpec& s, uint32_t rows, uint32_t m) {
  const uint64_t gx = (uint64_t{rows} + s.tile_n - 1) / s.tile_n, gy = (uint64_t{m} + s.tile_m - 1) / s.tile_m;
  BQ_CHECK(gx <= s.max_groups && gy <= s.max_groups, "gemm {}: {}x{} workgroups past the limit {}", s.key(), gx,
           gy, s.max_groups);
  return {static_cast<uint32_t>(gx), static_cast<uint32_t>(gy), s.splits};
}

}  // namespace blockq::gemm
