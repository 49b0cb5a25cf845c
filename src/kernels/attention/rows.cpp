// Planning and generation of the prompt attention kernel (rows.wgsl): tiles
// of tokens x query heads against tiles of keys, sized from the adapter's
// limits; its chunks reuse combine.wgsl.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "kernels/attention/attention.hpp"
#include "util/embedded_wgsl.hpp"
#include "util/error.hpp"
#include "util/template.hpp"

namespace blockq::attention {

namespace {

uint32_t ceil_div(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

// The largest power of two <= v (v >= 1).
uint32_t floor_pow2(uint32_t v) {
  uint32_t p = 1;
  while (p * 2 <= v) p *= 2;
  return p;
}

// The largest divisor of n <= most (at least 1).
uint32_t divisor_at_most(uint32_t n, uint32_t most) {
  uint32_t d = 1;
  for (uint32_t i = 1; i <= std::min(n, most); ++i)
    if (n % i == 0) d = i;
  return d;
}

// Per lane: value quads (PR), tile quads loaded (LR); lanes of a row (L):
// the largest power of two <= wg / qr and <= bk.
struct Lanes {
  uint32_t pr, lr, l;
};
Lanes lanes(uint32_t wg, uint32_t qr, uint32_t bk, uint32_t hq) {
  return {ceil_div(qr * hq, wg), ceil_div(bk * hq, wg), std::min(bk, floor_pow2(std::max(1u, wg / qr)))};
}

// The value quads a lane keeps in registers, at most (a vec4 each).
constexpr uint32_t kMaxValueQuads = 8;

}  // namespace

uint64_t rows_shared_bytes(uint32_t qr, uint32_t bk, uint32_t hd, uint32_t wg) {
  const uint64_t hq = hd / 4, l = lanes(wg, qr, bk, hd / 4).l;
  // qs [QR][HQ + 1], kvs [BK][HQ + 1] and ps [QR][BK / 4 + 1] vec4; al, ns, red [QR][L] 4 bytes each.
  return uint64_t{qr} * (hq + 1) * 16 + uint64_t{bk} * (hq + 1) * 16 + uint64_t{qr} * (bk / 4 + 1) * 16 +
         uint64_t{qr} * (2 + l) * 4;
}

uint32_t rows_lanes(const KernelSpec& sp) { return lanes(sp.wg, sp.reg_m * sp.tile_m, sp.reg_n, sp.k / 4).l; }

bool uses_rows(const Shape& s, const Options& o) { return o.rows.min_rows > 0 && s.m >= o.rows.min_rows; }

bool uses_rows_far(const Shape& s, const Options& o) {
  return !uses_rows(s, o) && o.rows.min_rows_far > 0 && s.m >= o.rows.min_rows_far && s.n_ctx > o.rows.far_positions;
}

KernelSpec plan_rows(const gpu::Context& ctx, const Shape& s, const RowsOptions& o) {
  BQ_CHECK(s.m > 0, "attention: a prompt kernel needs tokens (m = 0)");
  const auto& lim = ctx.limits();
  KernelSpec k = detail::shape_spec(Op::AttentionRows, s, lim);
  const uint32_t gqa = s.n_head / s.n_kv_head, hq = s.head_dim / 4;
  const uint32_t wg =
      floor_pow2(std::max(1u, std::min({o.max_wg, lim.maxComputeInvocationsPerWorkgroup, lim.maxComputeWorkgroupSizeX})));
  uint32_t hg = divisor_at_most(gqa, std::max(1u, std::min(o.max_heads, o.rows)));
  uint32_t tq = std::clamp(std::max(1u, o.rows) / hg, 1u, s.m);
  uint32_t bk = floor_pow2(std::clamp(o.keys, 4u, std::max(4u, wg)));  // a multiple of 4 (ps holds vec4s)
  // Fewer rows while a lane would keep too many value quads; then fewer keys,
  // rows and heads until the workgroup memory fits.
  while ((lanes(wg, tq * hg, bk, hq).pr > kMaxValueQuads || tq * hg > wg) && (tq > 1 || hg > 1)) {
    if (tq > 1) tq = tq / 2;
    else hg = divisor_at_most(gqa, hg - 1);
  }
  const uint64_t storage = lim.maxComputeWorkgroupStorageSize;
  while (rows_shared_bytes(tq * hg, bk, s.head_dim, wg) > storage) {
    if (bk > 8) bk /= 2;
    else if (tq > 1) tq /= 2;
    else if (hg > 1) hg = divisor_at_most(gqa, hg - 1);
    else break;
  }
  BQ_CHECK(rows_shared_bytes(tq * hg, bk, s.head_dim, wg) <= storage,
           "attention: head_dim {} does not fit {} bytes of workgroup memory", s.head_dim, storage);
  k.wg = wg;
  k.tile_m = hg;
  k.reg_m = tq;
  k.reg_n = bk;
  // Chunks of positions where the grid of tokens x heads is small and the
  // cache long; each chunk keeps min_chunk positions (a multiple of bk).
  const uint32_t groups = s.n_head / hg * ceil_div(s.m, tq);
  const uint32_t most = std::max(1u, s.n_ctx / std::max(o.min_chunk, bk));
  const uint32_t want = std::clamp(ceil_div(std::max(o.min_groups, 1u), groups), 1u, most);
  k.tile_n = ceil_div(ceil_div(s.n_ctx, want), bk) * bk;
  // Longer chunks where the partials would pass the binding limit.
  while (chunks(k) > 1 && scratch_bytes(k) > lim.maxStorageBufferBindingSize) k.tile_n *= 2;
  BQ_CHECK(s.n_head / hg <= k.max_groups && ceil_div(s.m, tq) <= k.max_groups && chunks(k) <= k.max_groups,
           "attention: a grid of {} x {} x {} passes {} workgroups per dimension", s.n_head / hg, ceil_div(s.m, tq),
           chunks(k), k.max_groups);
  return k;
}

namespace {

// rows.wgsl's O_INIT: the value quads zeroed, and each item's row pr_i and quad pq_i.
std::string o_init(const KernelSpec& sp, const Lanes& ln) {
  const uint32_t hq = sp.k / 4;
  const bool shared_quad = sp.wg % hq == 0;  // every item of a lane has the same quad
  std::string s;
  for (uint32_t i = 0; i < ln.pr; ++i) {
    s += fmt::format("  o[{0}] = vec4f(0.0);\n  let pr{0} = min((li + {0}u * WG) / HQ, QR - 1u);\n", i);
    s += shared_quad && i ? fmt::format("  let pq{} = pq0;\n", i) : fmt::format("  let pq{0} = (li + {0}u * WG) % HQ;\n", i);
  }
  s.pop_back();
  return s;
}

// Loads of the tile at key `at` into registers `reg`0.. (LR quads a lane), or their stores into kvs.
std::string load_tile(const Lanes& ln, const char* fn, const char* at, const char* reg) {
  std::string s;
  for (uint32_t i = 0; i < ln.lr; ++i)
    s += fmt::format("    let {2}{0} = {3}({1}, kend, kh, li + {0}u * WG);\n", i, at, reg, fn);
  s.pop_back();
  return s;
}
std::string store_tile(const Lanes& ln, const char* reg) {
  std::string s;
  for (uint32_t i = 0; i < ln.lr; ++i) s += fmt::format("    tile_store(li + {0}u * WG, {1}{0});\n", i, reg);
  s.pop_back();
  return s;
}

// The lane's scores s_u of keys e + L * u (u < KL), each a sum over d in
// order, scaled; pm = the max of the visible ones.
std::string scores(uint32_t kl) {
  std::string s = "    var pm = NEG_MAX;\n";
  for (uint32_t u = 0; u < kl; ++u) s += fmt::format("    var s{} = 0.0f;\n", u);
  s += "    if (live) {\n      for (var qd = 0u; qd < HQ; qd++) {\n        let qv = qs[rs * QP + qd];\n";
  for (uint32_t u = 0; u < kl; ++u) {
    s += fmt::format("        let k{0} = kvs[(e + {0}u * L) * KP + qd];\n", u);
    for (const char* c : {"x", "y", "z", "w"}) s += fmt::format("        s{0} = s{0} + qv.{1} * k{0}.{1};\n", u, c);
  }
  s += "      }\n";
  for (uint32_t u = 0; u < kl; ++u)
    s += fmt::format("      s{0} = s{0} * SCALE;\n      if (e + {0}u * L < nv) {{ pm = max(pm, s{0}); }}\n", u);
  return s + "    }";
}

// The lane's probabilities into ps (zeros where not visible), summed in u order.
std::string probs(uint32_t kl) {
  std::string s;
  for (uint32_t u = 0; u < kl; ++u)
    s += fmt::format(
        "      var p{0} = 0.0f;\n      if (e + {0}u * L < nv) {{ p{0} = exp(s{0} - mn); }}\n"
        "      ps[rs * PQ + (e + {0}u * L) / 4u][(e + {0}u * L) % 4u] = p{0};\n      psum = psum + p{0};\n",
        u);
  s.pop_back();
  return s;
}

// The lane's value quads over the tile's keys in order.
std::string values(const KernelSpec& sp, const Lanes& ln) {
  const uint32_t hq = sp.k / 4;
  const bool shared_quad = sp.wg % hq == 0;
  std::string s;
  for (uint32_t i = 0; i < ln.pr; ++i) s += fmt::format("    o[{0}] = o[{0}] * al[pr{0}];\n", i);
  // Four keys a step (p of keys past jt is 0, their value rows 0: o unchanged).
  s += "    for (var j4 = 0u; j4 < (jt + 3u) / 4u; j4++) {\n";
  for (uint32_t i = 0; i < (shared_quad ? 1 : ln.pr); ++i)
    for (uint32_t c = 0; c < 4; ++c)
      s += fmt::format("      let v{0}_{1} = kvs[(4u * j4 + {1}u) * KP + pq{0}];\n", i, c);
  for (uint32_t i = 0; i < ln.pr; ++i) {
    const uint32_t v = shared_quad ? 0 : i;
    s += fmt::format("      let p{0} = ps[pr{0} * PQ + j4];\n", i);
    for (uint32_t c = 0; c < 4; ++c)
      s += fmt::format("      o[{0}] = o[{0}] + p{0}.{2} * v{1}_{3};\n", i, v, "xyzw"[c], c);
  }
  return s + "    }";
}

// Each item's quad: out = o / l (zeros for a row that sees nothing) with
// one chunk, else the partial's o.
std::string write(const Lanes& ln) {
  std::string s;
  for (uint32_t i = 0; i < ln.pr; ++i)
    s += fmt::format(
        "  if (li + {0}u * WG < QR * HQ) {{\n"
        "    let t = t0 + pr{0} / HG;\n"
        "    if (t < M) {{\n"
        "      let hd = (h0 + pr{0} % HG) * HD + 4u * pq{0};\n"
        "      if (direct) {{\n"
        "        var y = vec4f(0.0);\n"
        "        if (ns[pr{0}] > 0u) {{ y = o[{0}] / al[pr{0}]; }}\n"
        "        let b = t * N_HEAD * HD + hd;\n"
        "        out[b] = y.x; out[b + 1u] = y.y; out[b + 2u] = y.z; out[b + 3u] = y.w;\n"
        "      }} else if (min(ns[pr{0}], cend) > j0) {{\n"
        "        let b = ((t * N_HEAD + h0 + pr{0} % HG) * S + c) * (2u + HD) + 2u + 4u * pq{0};\n"
        "        part[b] = o[{0}].x; part[b + 1u] = o[{0}].y; part[b + 2u] = o[{0}].z; part[b + 3u] = o[{0}].w;\n"
        "      }}\n"
        "    }}\n"
        "  }}\n",
        i);
  s.pop_back();
  return s;
}

}  // namespace

std::string rows_wgsl(const KernelSpec& sp) {
  BQ_ASSERT(sp.op == Op::AttentionRows && sp.reg_n % 4 == 0 && sp.reg_n && sp.tile_n % sp.reg_n == 0,
            "attention rows: {}", sp.key());
  const bool f16 = sp.weight.format == Format::F16;
  const Lanes ln = lanes(sp.wg, sp.reg_m * sp.tile_m, sp.reg_n, sp.k / 4);
  return Template(wgsl_file("kernels/attention/rows.wgsl"), sp.key())
      .set_u("WG", sp.wg)
      .set_u("M", sp.m)
      .set_u("TQ", sp.reg_m)
      .set_u("HG", sp.tile_m)
      .set_u("BK", sp.reg_n)
      .set_u("N_HEAD", sp.n)
      .set_u("HD", sp.k)
      .set_u("N_KV", sp.variant)
      .set_u("GQA", sp.n / sp.variant)
      .set_u("CTX", sp.tile)
      .set_u("CHUNK", sp.tile_n)
      .set_u("S", chunks(sp))
      .set_u("L", ln.l)
      .set_u("PR", ln.pr)
      .set_u("LR", ln.lr)
      .set("SCALE", wgsl_float(1.0f / std::sqrt(float(sp.k))))
      .set_u("Q_OFF", sp.offsets.q)
      .set_u("Q_ROW", sp.offsets.row ? sp.offsets.row : sp.n * sp.k)
      .set("KV_Q", f16 ? "vec2<u32>" : "vec4f")
      .set("KV_FUNCS", detail::kv_funcs(f16))
      .set("O_INIT", o_init(sp, ln))
      .set("LOAD_K", load_tile(ln, "tile_k", "j0", "kq"))
      .set("STORE_K", store_tile(ln, "kq"))
      .set("SCORES", scores(sp.reg_n / ln.l))
      .set("LOAD_V", load_tile(ln, "tile_v", "k0", "vq"))
      .set("PROBS", probs(sp.reg_n / ln.l))
      .set("STORE_V", store_tile(ln, "vq"))
      .set("LOAD_NEXT_K", load_tile(ln, "tile_k", "kn", "nk"))
      .set("STORE_NEXT_K", store_tile(ln, "nk"))
      .set("VALUES", values(sp, ln))
      .set("WRITE", write(ln))
      .render();
}

}  // namespace blockq::attention
