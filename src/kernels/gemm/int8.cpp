// The int8 gemm (features.dot4; gemm_i8.wgsl, fmt/i8/*.wgsl): its planning,
// WGSL and the spec of the kernel that quantizes its x (matvec's xquant).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <vector>

#include "kernels/common/split_sum.hpp"
#include "kernels/gemm/generator.hpp"
#include "kernels/gemm/parts.hpp"
#include "util/embedded_wgsl.hpp"
#include "util/error.hpp"
#include "util/template.hpp"

namespace blockq::gemm {

using detail::acc;
using detail::weights;

bool int8_reads(Format f) {
  switch (f) {
    case Format::Q8_0: case Format::Q4_0: case Format::Q4_1: case Format::Q5_0: case Format::Q5_1:
    case Format::Q4_K: case Format::Q5_K: case Format::Q6_K: case Format::Q2_K: case Format::Q3_K:
    case Format::IQ4_NL: case Format::IQ4_XS: return true;
    default: return false;
  }
}

namespace {

int32_t offset(Format f) {
  return f == Format::Q4_0 ? 8 : f == Format::Q5_0 ? 16 : f == Format::Q6_K ? 32 : f == Format::Q3_K ? 4 : 0;
}
bool has_min(Format f) {
  return f == Format::Q4_1 || f == Format::Q5_1 || f == Format::Q4_K || f == Format::Q5_K || f == Format::Q2_K;
}
// Q6_K, Q3_K and Q2_K: a scale per half of 16 (dw: words 0..3, dh: words
// 4..7), their x code sums packed per half (the low and high 16 bits of xc);
// Q2_K also a min per half (mw, mh).
bool halves(Format f) { return f == Format::Q6_K || f == Format::Q3_K || f == Format::Q2_K; }
// IQ4_NL and IQ4_XS: their codes' int8 levels come from a table in
// workgroup memory (kernels/common/iq4_bytes.wgsl), filled before the first
// staging.
bool iq4(Format f) { return f == Format::IQ4_NL || f == Format::IQ4_XS; }

// A block's values besides its codes, staged per row of W: (the snippet's
// function, the workgroup array). The scale first; then the min, the high
// half's scale and the high half's min, where the format has them.
std::vector<std::pair<std::string, std::string>> block_values(Format f) {
  std::vector<std::pair<std::string, std::string>> v = {{"dw", "wd"}};
  if (has_min(f)) v.push_back({"mw", "wm"});
  if (halves(f)) v.push_back({"dh", "wh"});
  if (has_min(f) && halves(f)) v.push_back({"mh", "wn"});
  return v;
}

// The x code sum a block's meta word mt stages into xc.
std::string xc_of(const KernelSpec& s) {
  return halves(s.weight.format) ? "(bitcast<i32>(mt.y) & 0xffff) | (bitcast<i32>(mt.z) << 16u)"
                                 : "bitcast<i32>(mt.y) + bitcast<i32>(mt.z)";
}

std::string fmt_code(const KernelSpec& s) {
  std::string name = s.weight.name();  // q4_K -> q4_k.wgsl
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  const std::string file = "kernels/gemm/fmt/i8/" + name + ".wgsl";
  std::string c = detail::kscale_code(s.weight.format);
  if (iq4(s.weight.format)) c += std::string(wgsl_file("kernels/common/iq4_bytes.wgsl")) + "\n";  // iq4bytes
  c += Template(wgsl_file(file), file).set("W", "A").render();
  if (weights(s.hooks) == 2) {
    c += '\n';
    c += Template(wgsl_file(file), file).set("W", "B").render();
  }
  return c;
}

// A step's KS blocks of W: words [KS * 8][TN] (word w of the step is word
// w % 8 of block kb0 + w / 8) into wsW, and each of block_values [KS][TN]
// (scales into wdW, mins into wmW, ...); rows past the chunk's are zeros.
std::string stage_w(const KernelSpec& s) {
  const uint32_t nw = weights(s.hooks);
  std::string o = "    for (var i = li; i < TN * 8u * KS; i += WG) {\n      let r = i / (8u * KS);\n"
                  "      let w = i % (8u * KS);\n";
  for (uint32_t q = 0; q < nw; ++q) {
    const char* w = q ? "B" : "A";
    o += fmt::format("      var v{0} = 0u;\n      if (n0 + r < params.rows) {{ v{0} = qw{0}(n0 + r, kb0 + w / 8u, w % 8u); }}\n", w);
    o += fmt::format("      ws{0}[w * WP4 + r / 4u][r % 4u] = v{0};\n", w);
  }
  o += "    }\n    for (var i = li; i < TN * KS; i += WG) {\n      let r = i % TN;\n      let b = i / TN;\n";
  for (uint32_t q = 0; q < nw; ++q) {
    const char* w = q ? "B" : "A";
    for (const auto& [fn, arr] : block_values(s.weight.format))
      o += fmt::format("      var {1}{0} = 0.0;\n      if (n0 + r < params.rows) {{ {1}{0} = {2}{0}(n0 + r, kb0 + b); }}\n"
                       "      {3}{0}[i] = {1}{0};\n",
                       w, "v" + arr, fn, arr);
  }
  o += "    }";
  return o;
}

bool pipe(const KernelSpec& s) { return s.variant == kPipelined; }

// Where accumulator (i, j) of invocation (tx, ty) sits in the tile, and the
// vec4 (g) of its x and W words: contiguous (classic: token ty * RM + i) or
// interleaved by vec4 (pipelined: token 4 (i / 4 * TMT + ty) + i % 4).
std::string tok(const KernelSpec& s, uint32_t i) {
  return pipe(s) ? fmt::format("4u * ({}u * TMT + ty) + {}u", i / 4, i % 4) : fmt::format("ty * RM + {}u", i);
}
std::string row(const KernelSpec& s, uint32_t j) {
  return pipe(s) ? fmt::format("4u * ({}u * TNT + tx) + {}u", j / 4, j % 4) : fmt::format("tx * RN + {}u", j);
}
std::string xvec(const KernelSpec& s, uint32_t g) {
  return pipe(s) ? fmt::format("{}u * TMT + ty", g) : fmt::format("ty * {}u + {}u", s.reg_m / 4, g);
}
std::string wvec(const KernelSpec& s, uint32_t g) {
  return pipe(s) ? fmt::format("{}u * TNT + tx", g) : fmt::format("tx * {}u + {}u", s.reg_n / 4, g);
}

// The step's KS blocks in order (b), each as one block of an invocation's
// RM x RN outputs: the 8 words' products summed exactly (s = dot, then s = s
// + dot, words in order), then acc = acc + (dw * dx) * f32(s - OFF * code
// sum), and with a min acc = acc + mw * (dx * f32(code sum)). The pipelined
// kernel reads the buffer at xb, xdb, wb and wdb. f32(s - OFF * code sum) is
// formed exactly without a conversion instruction: the sum starts at MAGIC -
// OFF * code sum (the first dot's accumulator), and its bits as f32, less
// MAGIC_F, are the value (gemm_i8_head.wgsl).
std::string inner(const KernelSpec& s) {
  const uint32_t nw = weights(s.hooks), gm = s.reg_m / 4, gn = s.reg_n / 4;
  const bool off = offset(s.weight.format) != 0, mn = has_min(s.weight.format), hv = halves(s.weight.format);
  const std::string xo = pipe(s) ? "xb + " : "", xdo = pipe(s) ? "xdb + " : "";
  const std::string wo = pipe(s) ? "wb + " : "", wdo = pipe(s) ? "wdb + " : "";
  std::string o = "    for (var b = 0u; b < KS; b++) {\n";
  for (uint32_t i = 0; i < s.reg_m; ++i) {
    o += fmt::format("    let dx{0} = xd[{1}b * TM + {2}];\n", i, xdo, tok(s, i));
    if (hv)  // each half's sum starts at MAGIC - OFF * its code sum (xc: low and high 16 bits)
      o += fmt::format("    let c{0} = xc[{1}b * TM + {2}];\n"
                       "    let cx{0} = vec2<i32>(MAGIC - OFF * ((c{0} << 16u) >> 16u), MAGIC - OFF * (c{0} >> 16u));\n",
                       i, xdo, tok(s, i));
    else
      o += off ? fmt::format("    let cx{0} = MAGIC - OFF * xc[{1}b * TM + {2}];\n", i, xdo, tok(s, i))
               : fmt::format("    let cx{0} = MAGIC;\n", i);
    if (mn && hv)  // Q2_K: each half's min times dx times that half's code sum
      o += fmt::format("    let sx{0} = dx{0} * f32((c{0} << 16u) >> 16u);\n    let sy{0} = dx{0} * f32(c{0} >> 16u);\n", i);
    else if (mn)
      o += fmt::format("    let sx{0} = dx{0} * f32(xc[{1}b * TM + {2}]);\n", i, xdo, tok(s, i));
  }
  for (uint32_t q = 0; q < nw; ++q)
    for (uint32_t j = 0; j < s.reg_n; ++j) {
      o += fmt::format("    let d{0}{1} = wd{0}[{2}b * TN + {3}];\n", q ? "B" : "A", j, wdo, row(s, j));
      if (mn) o += fmt::format("    let m{0}{1} = wm{0}[{2}b * TN + {3}];\n", q ? "B" : "A", j, wdo, row(s, j));
      if (hv) o += fmt::format("    let h{0}{1} = wh{0}[{2}b * TN + {3}];\n", q ? "B" : "A", j, wdo, row(s, j));
      if (mn && hv) o += fmt::format("    let n{0}{1} = wn{0}[{2}b * TN + {3}];\n", q ? "B" : "A", j, wdo, row(s, j));
    }
  // acc = acc + (scale * dx) * f32(sum), f32(sum) the bits of the sum (which
  // started at MAGIC) less MAGIC_F; with a min, acc = acc + min * (dx * code
  // sum) (Q2_K: after each half, its min m or n and its sum sx or sy).
  auto fold = [&](const char* scale) {
    const bool high = std::string(scale) == "h";
    for (uint32_t q = 0; q < nw; ++q) {
      const char* W = q ? "B" : "A";
      for (uint32_t i = 0; i < s.reg_m; ++i)
        for (uint32_t j = 0; j < s.reg_n; ++j) {
          o += fmt::format("    {0} = {0} + ({1}{2}{3} * dx{4}) * (bitcast<f32>(s{2}_{4}_{3}) - MAGIC_F);\n",
                           acc(W, i, j), scale, W, j, i);
          if (mn)
            o += fmt::format("    {0} = {0} + {1}{2}{3} * s{4}{5};\n", acc(W, i, j), high ? "n" : "m", W, j,
                             high ? "y" : "x", i);
        }
    }
  };
  for (uint32_t w = 0; w < 8; ++w) {
    for (uint32_t g = 0; g < gm; ++g)
      o += fmt::format("    let x{0}_{1} = xs[{2}(b * 8u + {0}u) * XP4 + {3}];\n", w, g, xo, xvec(s, g));
    for (uint32_t q = 0; q < nw; ++q) {
      const char* W = q ? "B" : "A";
      for (uint32_t g = 0; g < gn; ++g)
        o += fmt::format("    let w{0}{1}_{2} = ws{0}[{3}(b * 8u + {1}u) * WP4 + {4}];\n", W, w, g, wo, wvec(s, g));
      for (uint32_t i = 0; i < s.reg_m; ++i)
        for (uint32_t j = 0; j < s.reg_n; ++j) {
          const std::string dot = fmt::format("dot4I8Packed(x{0}_{1}.{2}, w{3}{0}_{4}.{5})", w, i / 4, "xyzw"[i % 4], W,
                                              j / 4, "xyzw"[j % 4]);
          if (w == 0)  // the first dot's accumulator is the sum's start
            o += fmt::format("    var s{0}_{1}_{2} = cx{1}{3} + {4};\n", W, i, j, hv ? ".x" : "", dot);
          else if (hv && w == 4)
            o += fmt::format("    s{0}_{1}_{2} = cx{1}.y + {3};\n", W, i, j, dot);
          else
            o += fmt::format("    s{0}_{1}_{2} = s{0}_{1}_{2} + {3};\n", W, i, j, dot);
        }
    }
    if (hv && w == 3) fold("d");  // the first half, with its scale
  }
  fold(hv ? "h" : "d");
  return o + "    }";
}

// The pipelined kernel's staging (gemm_i8_pipe.wgsl): per kind of value, the
// slots an invocation holds (ceil(count / WG)), what LOAD reads into them
// for the step at block kl, and what PUT stores into the buffer at xb, xdb,
// wb and wdb. A slot past the count is guarded where WG does not divide it.
struct Kind {
  std::string name, type, count, load, put;
  uint32_t per_block;  // values a block of the step (count / KS)
};

std::vector<Kind> kinds(const KernelSpec& s) {
  std::vector<Kind> k = {
      {"rx", "u32", "TM * 8u * KS",
       "let r = i / (8u * KS);\n      let w = i % (8u * KS);\n      {0} = 0u;\n"
       "      if (m0 + r < params.m) {{ {0} = xq[(m0 + r) * K16 + 2u * kl + w / 4u][w % 4u]; }}",
       "let r = i / (8u * KS);\n      xs[xb + (i % (8u * KS)) * XP4 + r / 4u][r % 4u] = {0};", s.tile_m * 8},
      {"rxd", "vec2<i32>", "TM * KS",
       "let r = i % TM;\n      {0} = vec2<i32>(0, 0);\n      if (m0 + r < params.m) {{\n"
       "        let mt = xq[meta0 + (m0 + r) * KB + kl + i / TM];\n"
       "        {0} = vec2<i32>(bitcast<i32>(mt.x), " + xc_of(s) + ");\n      }}",
       "xd[xdb + i] = bitcast<f32>({0}.x);\n      xc[xdb + i] = {0}.y;", s.tile_m}};
  for (uint32_t q = 0; q < weights(s.hooks); ++q) {
    const std::string W = q ? "B" : "A";
    k.push_back({"rw" + W, "u32", "TN * 8u * KS",
                 "let r = i / (8u * KS);\n      let w = i % (8u * KS);\n      {0} = 0u;\n"
                 "      if (n0 + r < params.rows) {{ {0} = qw" + W + "(n0 + r, kl + w / 8u, w % 8u); }}",
                 "let r = i / (8u * KS);\n      ws" + W + "[wb + (i % (8u * KS)) * WP4 + r / 4u][r % 4u] = {0};",
                 s.tile_n * 8});
    // The block's values (block_values: 1, 2 or 4) in one f32, vec2 or vec4.
    const auto bv = block_values(s.weight.format);
    const size_t nv = bv.size();
    BQ_ASSERT(nv == 1 || nv == 2 || nv == 4);
    const std::string type = nv == 1 ? "f32" : fmt::format("vec{}<f32>", nv), zero = nv == 1 ? "0.0" : type + "()";
    std::string vals, put;
    for (size_t v = 0; v < nv; ++v) {
      vals += fmt::format("{}{}{}(n0 + r, kl + i / TN)", v ? ", " : "", bv[v].first, W);
      put += fmt::format("{}{}{}[wdb + i] = {{0}}{};", v ? "\n      " : "", bv[v].second, W,
                         nv == 1 ? std::string() : fmt::format(".{}", "xyzw"[v]));
    }
    k.push_back({"rd" + W, type, "TN * KS",
                 "let r = i % TN;\n      {0} = " + zero + ";\n      if (n0 + r < params.rows) {{ {0} = " +
                     (nv == 1 ? vals : type + "(" + vals + ")") + "; }}",
                 put, s.tile_n});
  }
  return k;
}

// Slots of a kind: ceil(count / WG), from the spec's tile.
uint32_t slots(const KernelSpec& s, const Kind& k) {
  const uint32_t wg = (s.tile_m / s.reg_m) * (s.tile_n / s.reg_n);
  return (k.per_block * (s.tile / 32) + wg - 1) / wg;
}

std::string staging(const KernelSpec& s, bool put) {
  std::string o;
  for (const Kind& k : kinds(s))
    for (uint32_t j = 0, n = slots(s, k); j < n; ++j) {
      const std::string slot = fmt::format("{}{}", k.name, j);
      o += fmt::format("    {{\n      let i = li + {}u * WG;\n", j);
      const std::string body = fmt::format(fmt::runtime(put ? k.put : k.load), slot);
      o += fmt::format("      if (i < {}) {{\n      {}\n      }}\n    }}\n", k.count, body);
    }
  o.pop_back();
  return o;
}

std::string slot_decl(const KernelSpec& s) {
  std::string o;
  for (const Kind& k : kinds(s))
    for (uint32_t j = 0, n = slots(s, k); j < n; ++j) o += fmt::format("  var {}{}: {};\n", k.name, j, k.type);
  o.pop_back();
  return o;
}

// The blocks [sb, se) this workgroup sums: all of them, or with split-k
// slice wid.z's SPS steps of KS blocks (the last slices may be short or
// empty) and pbase, the slice's partials.
std::string slice(const KernelSpec& s) {
  if (s.splits < 2) return "  let sb = 0u;\n  let se = KB;";
  return fmt::format(
      "  const SPS = ({0}u + KB / KS - 1u) / {0}u;  // steps a slice\n"
      "  let sb = min(wid.z * SPS * KS, KB);\n  let se = min(sb + SPS * KS, KB);\n"
      "  let pbase = wid.z * {1}u * params.m * params.n;  // this slice's partials [weights][M][N]",
      s.splits, weights(s.hooks));
}

// Halves the tiles (the larger first) until the invocations fit, then the
// blocks a step (tile_k, 32 to 128; 0 is 32) and then the tiles until the
// workgroup storage fits; nullopt for a register block that is not whole
// vec4s, an algorithm other than classic or pipelined, or splits outside
// 1..kMaxSplits.
std::optional<Tiling> fit_int8(const Limits& lim, Tiling t, const Hooks& h, Format f) {
  if (!t.tile_k) t.tile_k = 32;
  if (!t.reg_m || !t.reg_n || t.reg_m % 4 || t.reg_n % 4 || (t.algo != kClassic && t.algo != kPipelined))
    return std::nullopt;
  if (t.splits < 1 || t.splits > kMaxSplits) return std::nullopt;
  if (t.tile_k % 32 || t.tile_k > 128 || ((t.tile_k / 32) & (t.tile_k / 32 - 1))) return std::nullopt;
  auto ok = [&] {
    return t.tile_m >= t.reg_m && t.tile_n >= t.reg_n && t.tile_m % t.reg_m == 0 && t.tile_n % t.reg_n == 0;
  };
  if (!ok()) return std::nullopt;
  while ((t.tile_m / t.reg_m) * (t.tile_n / t.reg_n) > lim.invocations ||
         detail::shared_bytes_int8(t, h, f) > lim.shared) {
    const bool inv = (t.tile_m / t.reg_m) * (t.tile_n / t.reg_n) > lim.invocations;
    if (!inv && t.tile_k > 32) t.tile_k /= 2;
    else if (t.tile_m >= t.tile_n && t.tile_m > t.reg_m) t.tile_m /= 2;
    else if (t.tile_n > t.reg_n) t.tile_n /= 2;
    else return std::nullopt;
  }
  return ok() ? std::optional<Tiling>(t) : std::nullopt;
}

}  // namespace

namespace detail {

uint32_t shared_bytes_int8(const Tiling& t, const Hooks& h, Format f) {
  // per block of the step, twice for the pipelined kernel's two buffers; a
  // row of W stages its codes and its block_values: 8 bytes counted for every
  // format (a scale and a min, or two scales), 16 for Q2_K's four
  const uint32_t ks = std::max<uint32_t>(1, t.tile_k / 32) * (t.algo == kPipelined ? 2 : 1);
  const uint32_t values = std::max<uint32_t>(8, 4 * static_cast<uint32_t>(block_values(f).size()));
  const uint32_t table = iq4(f) ? 64 * 4 : 0;  // iq4_bytes.wgsl
  return ks * (8 * (t.tile_m / 4 + 1) * 16 + t.tile_m * 8 + weights(h) * (8 * (t.tile_n / 4 + 1) * 16 + t.tile_n * values)) +
         table;
}

std::string wgsl_int8(const KernelSpec& s) {
  const bool p = pipe(s);
  const char* file = p ? "kernels/gemm/gemm_i8_pipe.wgsl" : "kernels/gemm/gemm_i8.wgsl";
  Template h(wgsl_file("kernels/gemm/gemm_i8_head.wgsl"), s.key());
  h.set_u("K", s.k).set_u("KS", s.tile / 32).set_u("TM", s.tile_m).set_u("TN", s.tile_n).set_u("RM", s.reg_m).set_u("RN", s.reg_n);
  h.set("OFF", std::to_string(offset(s.weight.format))).set("BINDINGS", bindings(s));
  Template t(wgsl_file(file), s.key());
  t.set("HEAD", h.render()).set("FMT", s.weight.name());
  t.set("FORMAT_INIT", iq4(s.weight.format)
                           ? "  iq4_bytes_init(li);  // the IQ4 level table (kernels/common/iq4_bytes.wgsl)\n  workgroupBarrier();"
                           : "");
  if (!p) t.set("XC", xc_of(s));
  const std::string n = p ? "2u * " : "";
  std::string ws;
  for (uint32_t q = 0; q < weights(s.hooks); ++q) {
    ws += fmt::format("var<workgroup> ws{0}: array<vec4<u32>, {1}KS * 8u * WP4>;  // [{2}KS * 8 words][TN / 4] W codes\n"
                      "var<workgroup> wd{0}: array<f32, {1}KS * TN>;              // [{2}KS][TN] W scales\n",
                      q ? "B" : "A", n, p ? "2][" : "");
    if (has_min(s.weight.format))
      ws += fmt::format("var<workgroup> wm{0}: array<f32, {1}KS * TN>;              // [{2}KS][TN] W mins\n",
                        q ? "B" : "A", n, p ? "2][" : "");
    if (halves(s.weight.format))
      ws += fmt::format("var<workgroup> wh{0}: array<f32, {1}KS * TN>;              // [{2}KS][TN] W scales, high halves\n",
                        q ? "B" : "A", n, p ? "2][" : "");
    if (halves(s.weight.format) && has_min(s.weight.format))
      ws += fmt::format("var<workgroup> wn{0}: array<f32, {1}KS * TN>;              // [{2}KS][TN] W mins, high halves\n",
                        q ? "B" : "A", n, p ? "2][" : "");
  }
  ws.pop_back();
  t.set("WS_DECL", ws).set("FORMAT", fmt_code(s));
  t.set("ACC_DECL", acc_decl(s)).set("SLICE", slice(s)).set("INNER", inner(s));
  if (p) t.set("SLOTS", slot_decl(s)).set("LOAD", staging(s, false)).set("PUT", staging(s, true));
  else t.set("STAGE_W", stage_w(s));
  t.set("STORE_FAST", store_classic(s, false, p)).set("STORE_EDGE", store_classic(s, true, p));
  return t.render();
}

}  // namespace detail

// The pipelined kernel, two blocks a step. H200, q4_0 14336x4096 (session
// 37): m = 32 118 us (32x64 r4x4), m = 128 355 us (64x64 r4x4; 128x128 r8x8
// 309 us, but 4096-row weights would get 32 workgroups), m = 512 1166 us
// (64x64 r4x4), against 334, 712 and 1810 us for the f32 gemm's defaults
// and 274, 431 and 2241 us for the classic int8 kernel's.
// Beyond 512 (not measured) the 128x128 r8x8 tiles.
Tiling default_tiling_int8(uint32_t mclass) {
  switch (mclass) {
    case 0: return {32, 64, 4, 4, 64, kPipelined};
    case 1:
    case 2: return {64, 64, 4, 4, 64, kPipelined};
    default: return {128, 128, 8, 8, 64, kPipelined};
  }
}

KernelSpec plan_int8(const Limits& lim, const WeightKind& kind, uint32_t n, uint32_t k, uint32_t m,
                     const Hooks& hooks, std::optional<Tiling> tiling) {
  BQ_CHECK(!kind.onnx && int8_reads(kind.format),
           "gemm int8: weight format {} is not supported (q8_0, q4_0, q4_1, q5_0, q5_1, q2_K, q3_K, q4_K, q5_K, q6_K, iq4_nl, "
           "iq4_xs)", kind.name());
  BQ_CHECK(n > 0 && k > 0 && m > 0, "gemm int8 {}: empty problem n={} k={} m={}", kind.name(), n, k, m);
  const uint32_t be = std::max<uint32_t>(32, traits(kind.format).block_elems);
  BQ_CHECK(k % be == 0, "gemm int8 {}: k = {} must be a multiple of {}", kind.name(), k, be);
  BQ_CHECK(hooks.prologue == Prologue::None && !hooks.bias && hooks.epilogue != Epilogue::Rope,
           "gemm int8 {}: only the Store, Acc and SiluGate epilogues are supported", kind.name());
  const Tiling want = tiling.value_or(default_tiling_int8(m_class(m)));
  const auto t = fit_int8(lim, want, hooks, kind.format);
  BQ_CHECK(t.has_value(), "gemm int8 {}: tiling {} does not fit {} invocations / {} bytes", kind.name(), label(want),
           lim.invocations, lim.shared);
  Tiling one = *t;
  while ((k / 32) % (one.tile_k / 32)) one.tile_k /= 2;  // whole steps of blocks
  if (!tiling) {  // split-k for a grid of few tiles
    const uint64_t tiles = (uint64_t{m} + one.tile_m - 1) / one.tile_m * ((uint64_t{n} + one.tile_n - 1) / one.tile_n);
    one.splits = default_splits(tiles, k / one.tile_k, one.tile_k, kMaxSplits, kMinSliceK);
  }
  // split-k's partials must fit one binding at this m; else it runs unsplit
  if (one.splits > 1 && split_sum::partial_bytes(one.splits, hooks, m, n) > lim.max_binding) one.splits = 1;
  KernelSpec s = detail::spec_of(lim, kind, n, k, hooks, one);
  s.features.dot4 = true;
  return s;
}

std::vector<Tiling> candidates_int8(const Limits& lim, const Hooks& hooks, Format f) {
  const uint32_t C = kClassic, P = kPipelined;
  const Tiling base[] = {
      // classic: one block a step, then 2 and 4; split-k
      {32, 64, 4, 4, 32}, {64, 64, 4, 4, 32}, {64, 128, 4, 8, 32}, {128, 64, 8, 4, 32}, {128, 128, 8, 8, 32},
      {64, 64, 8, 8, 32}, {128, 128, 4, 8, 32}, {64, 128, 8, 8, 32}, {32, 64, 4, 4, 128}, {64, 64, 4, 4, 64},
      {64, 64, 4, 4, 128}, {64, 128, 4, 8, 64}, {128, 128, 8, 8, 64}, {128, 128, 8, 8, 128},
      {32, 64, 4, 4, 64, C, 2}, {32, 64, 4, 4, 64, C, 4}, {64, 64, 4, 4, 64, C, 2}, {128, 128, 8, 8, 64, C, 2},
      // pipelined (the defaults' kernel), then split-k
      {32, 64, 4, 4, 64, P}, {64, 64, 4, 4, 64, P}, {64, 128, 4, 8, 64, P}, {128, 128, 8, 8, 32, P},
      {128, 128, 8, 8, 64, P}, {32, 64, 4, 4, 64, P, 4}, {128, 128, 8, 8, 64, P, 2}, {64, 64, 4, 4, 64, P, 2},
      {64, 64, 4, 4, 64, P, 4}, {64, 64, 4, 4, 64, P, 8}, {32, 64, 4, 4, 64, P, 8}};
  std::vector<Tiling> out;
  for (const Tiling& b : base) {
    const auto t = fit_int8(lim, b, hooks, f);
    if (t && std::find(out.begin(), out.end(), *t) == out.end()) out.push_back(*t);
  }
  return out;
}

KernelSpec quant_spec(const KernelSpec& s, uint32_t m) {
  BQ_ASSERT(s.features.dot4 && s.k % 32 == 0, "gemm {}: no int8 x", s.key());
  KernelSpec q;
  q.op = Op::QuantX;
  q.k = s.k;
  q.n = s.k;  // KP: rows of whole blocks
  q.m = m;
  q.tokens = 1;
  q.wg = 64;  // one invocation a block (xquant_block.wgsl)
  q.max_groups = s.max_groups;
  return q;
}

uint64_t int8_x_bytes(uint32_t m, uint32_t k) { return uint64_t{m} * (k / 16 + k / 32) * 16; }

}  // namespace blockq::gemm
