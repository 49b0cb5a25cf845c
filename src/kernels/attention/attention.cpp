// Planning, generation and binding of the split attention kernel
// (attention.wgsl) and its combine (combine.wgsl).
#include "kernels/attention/attention.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "kernels/attention/twin.hpp"
#include "util/embedded_wgsl.hpp"
#include "util/error.hpp"
#include "util/template.hpp"

namespace blockq::attention {

namespace {

// The reductions' top partials: min(wg, 32).
uint32_t top_partials(uint32_t wg) { return std::min(wg, 32u); }

}  // namespace

// Workgroup memory of the kernel: qs [HG * HD], es [HG * CHUNK], red [HG * WG], top [HG * min(WG, 32)] (f32).
uint64_t shared_bytes(uint32_t hg, uint32_t hd, uint32_t chunk, uint32_t wg) {
  return uint64_t{hg} * (hd + chunk + wg + top_partials(wg)) * 4;
}

std::string detail::kv_funcs(bool f16) {
  if (!f16) return "fn k_quad(i: u32) -> vec4f { return kc[i / 4u]; }\nfn v_quad(i: u32) -> vec4f { return vc[i / 4u]; }";
  return "fn kv4(w: vec2<u32>) -> vec4f { return vec4f(unpack2x16float(w.x), unpack2x16float(w.y)); }\n"
         "fn k_quad(i: u32) -> vec4f { return kv4(kc[i / 4u]); }\nfn v_quad(i: u32) -> vec4f { return kv4(vc[i / 4u]); }";
}

namespace {

// A WGSL function `name`(b) -> f32 folding count leaves arr[b + i * stride]
// (stride "": 1; count a power of two) in reduce_twin.hpp's tree order: for
// s = count / 2, ..., 1, leaf i = op(leaf i, leaf i + s). Written out, each
// level in registers.
std::string tree_fn(const std::string& name, const char* arr, const std::string& stride, uint32_t count,
                    const char* op) {
  BQ_ASSERT(count >= 1 && (count & (count - 1)) == 0, "tree of {} leaves", count);
  std::string s = fmt::format("fn {}(b: u32) -> f32 {{\n", name);
  for (uint32_t i = 0; i < count; ++i)
    s += !i              ? fmt::format("  let a0_0 = {}[b];\n", arr)
         : stride.empty() ? fmt::format("  let a0_{} = {}[b + {}u];\n", i, arr, i)
                          : fmt::format("  let a0_{} = {}[b + {}u * {}];\n", i, arr, i, stride);
  uint32_t level = 0;
  for (uint32_t n = count; n > 1; n /= 2, ++level)
    for (uint32_t i = 0; i < n / 2; ++i) {
      const std::string a = fmt::format("a{}_{}", level, i), b = fmt::format("a{}_{}", level, i + n / 2);
      const std::string v = std::string(op) == "+" ? a + " + " + b : fmt::format("{}({}, {})", op, a, b);
      s += fmt::format("  let a{}_{} = {};\n", level + 1, i, v);
    }
  return s + fmt::format("  return a{}_0;\n}}\n", level);
}

// The scores' inner block: KB quads of the k row loaded, then summed into
// each of the HG heads' acc in d order, written out per head (a loop over the
// heads around this body was left rolled by NVIDIA's compiler, acc then in
// local memory).
std::string k_block(uint32_t kb, uint32_t hg) {
  std::string s;
  for (uint32_t i = 0; i < kb; ++i) s += fmt::format("      let k{} = k_quad(kb + d + {}u);\n", i, 4 * i);
  for (uint32_t g = 0; g < hg; ++g)
    for (uint32_t i = 0; i < kb; ++i) {
      s += fmt::format("      let q{}_{} = qs[{}u * HQ + d / 4u + {}u];\n", g, i, g, i);
      for (const char* c : {"x", "y", "z", "w"})
        s += fmt::format("      acc[{}] = acc[{}] + q{}_{}.{} * k{}.{};\n", g, g, g, i, c, i, c);
    }
  s.pop_back();
  return s;
}

// Quads of a k row in flight: the largest power of two <= most dividing head_dim / 4.
uint32_t k_quads(uint32_t head_dim, uint32_t most) {
  uint32_t kb = 1;
  while (kb * 2 <= most && (head_dim / 4) % (kb * 2) == 0) kb *= 2;
  return kb;
}

// The V loop's body (attention.wgsl's V_BLOCK): VU positions j + u * R of
// the group, each loaded where it is < jn, then added in order. (Loads of a
// clamped position instead of the branches took 13-32% longer on the H200.)
std::string v_block(uint32_t vu) {
  std::string s;
  for (uint32_t u = 0; u < vu; ++u)
    s += fmt::format(
        "        var v{0} = vec4f(0.0);\n        if (j + {0}u * R < jn) {{ v{0} = v_quad(vb + (j + {0}u * R) * N_KV * HD); }}\n",
        u);
  for (uint32_t u = 0; u < vu; ++u)
    s += fmt::format(
        "        if (j + {0}u * R < jn) {{\n"
        "          for (var g = 0u; g < HG; g++) {{ o[g] = o[g] + es[g * CHUNK + j + {0}u * R] * v{0}; }}\n        }}\n",
        u);
  s.pop_back();
  return s;
}

// attention.wgsl's TREES: the max and sum trees over WG partials in two
// steps (T lanes fold WG / T each, every lane the T results) and the V
// groups' tree over R partials.
std::string trees(const KernelSpec& s) {
  const uint32_t t = top_partials(s.wg);
  return tree_fn("red_max_top", "red", "T", s.wg / t, "max") + tree_fn("red_sum_top", "red", "T", s.wg / t, "+") +
         tree_fn("top_max", "top", "", t, "max") + tree_fn("top_sum", "top", "", t, "+") +
         tree_fn("groups_sum", "red", "DW", twin::attention_v_groups(s.wg, s.k), "+");
}

// The partials [m, n_head, chunks, 2 + head_dim] f32.
uint64_t part_bytes(const KernelSpec& s) { return uint64_t{s.m} * s.n * chunks(s) * (2 + s.k) * 4; }

}  // namespace

uint32_t chunks(const KernelSpec& s) { return (s.tile + s.tile_n - 1) / s.tile_n; }

uint64_t scratch_bytes(const KernelSpec& s) { return chunks(s) > 1 ? part_bytes(s) : 16; }

KernelSpec detail::shape_spec(Op op, const Shape& s, const WGPULimits& lim) {
  BQ_CHECK(s.n_head > 0 && s.n_kv_head > 0 && s.n_head % s.n_kv_head == 0 && s.n_ctx > 0,
           "attention: n_head {} must be a multiple of n_kv_head {}, and n_ctx {} non-zero", s.n_head, s.n_kv_head,
           s.n_ctx);
  BQ_CHECK(s.head_dim > 0 && s.head_dim % 4 == 0, "attention: head_dim {} must be a non-zero multiple of 4",
           s.head_dim);
  BQ_CHECK(s.kv == Format::F32 || s.kv == Format::F16, "attention: KV cache type {} is not supported (f32 or f16)",
           traits(s.kv).name);
  BQ_CHECK(s.q_stride == 0 || s.q_stride >= s.n_head * s.head_dim,
           "attention: q rows of stride {} cannot hold {} heads of {}", s.q_stride, s.n_head, s.head_dim);
  KernelSpec k;
  k.op = op;
  k.n = s.n_head;
  k.k = s.head_dim;
  k.m = s.m;
  k.tile = s.n_ctx;
  k.variant = s.n_kv_head;
  k.weight.format = s.kv;
  k.offsets.q = s.q_off;
  k.offsets.row = s.q_stride;
  k.max_groups = lim.maxComputeWorkgroupsPerDimension;
  return k;
}

KernelSpec plan(const gpu::Context& ctx, const Shape& s, const Options& o) {
  const auto& lim = ctx.limits();
  KernelSpec k = detail::shape_spec(Op::Attention, s, lim);
  uint32_t wg = 1;
  while (wg * 2 <= std::min({o.max_wg, lim.maxComputeInvocationsPerWorkgroup, lim.maxComputeWorkgroupSizeX}))
    wg *= 2;
  const uint32_t gqa = s.n_head / s.n_kv_head;
  uint32_t hg = 1;  // the largest divisor of the group <= max_heads
  for (uint32_t d = 1; d <= std::min(gqa, std::max(o.max_heads, 1u)); ++d)
    if (gqa % d == 0) hg = d;
  const uint64_t storage = lim.maxComputeWorkgroupStorageSize;
  auto chunk_of = [&](uint32_t w) { return o.chunk ? std::max(w, o.chunk / w * w) : w; };
  // Shrink the heads a workgroup takes, then the workgroup, until it fits.
  while (shared_bytes(hg, s.head_dim, chunk_of(wg), wg) > storage) {
    if (hg > 1) {
      uint32_t d = hg - 1;
      while (gqa % d) --d;
      hg = d;
    } else if (wg > 1) {
      wg /= 2;
    } else {
      break;
    }
  }
  BQ_CHECK(shared_bytes(hg, s.head_dim, chunk_of(wg), wg) <= storage,
           "attention: head_dim {} does not fit {} bytes of workgroup memory", s.head_dim, storage);
  k.wg = wg;
  k.tile_m = hg;
  k.tile_n = chunk_of(wg);
  k.unroll = k_quads(s.head_dim, std::max(o.k_quads, 1u));
  k.rpl = std::max(o.v_loads, 1u);
  // Longer chunks (while they fit) where the partials would pass the binding limit.
  while (chunks(k) > 1 && part_bytes(k) > lim.maxStorageBufferBindingSize &&
         shared_bytes(hg, s.head_dim, k.tile_n + wg, wg) <= storage)
    k.tile_n += wg;
  BQ_CHECK(chunks(k) == 1 || part_bytes(k) <= lim.maxStorageBufferBindingSize,
           "attention: the partials of {} tokens x {} heads x {} chunks ({} bytes) pass the binding limit of {}", s.m,
           s.n_head, chunks(k), part_bytes(k), lim.maxStorageBufferBindingSize);
  BQ_CHECK(s.n_head / hg <= k.max_groups && s.m <= k.max_groups && chunks(k) <= k.max_groups,
           "attention: a grid of {} x {} x {} passes {} workgroups per dimension", s.n_head / hg, s.m, chunks(k),
           k.max_groups);
  return k;
}

std::string wgsl(const KernelSpec& spec) {
  const bool f16 = spec.weight.format == Format::F16;
  const uint32_t dw = std::min(spec.k / 4, spec.wg);
  return Template(wgsl_file("kernels/attention/attention.wgsl"), spec.key())
      .set_u("WG", spec.wg)
      .set_u("HG", spec.tile_m)
      .set_u("N_HEAD", spec.n)
      .set_u("HD", spec.k)
      .set_u("N_KV", spec.variant)
      .set_u("GQA", spec.n / spec.variant)
      .set_u("CTX", spec.tile)
      .set_u("CHUNK", spec.tile_n)
      .set_u("S", chunks(spec))
      .set_u("DW", dw)
      .set_u("R", twin::attention_v_groups(spec.wg, spec.k))
      .set_u("T", top_partials(spec.wg))
      .set_u("KB", spec.unroll)
      .set_u("VU", spec.rpl)
      .set("K_BLOCK", k_block(spec.unroll, spec.tile_m))
      .set("V_BLOCK", v_block(spec.rpl))
      .set("TREES", trees(spec))
      .set("SCALE", wgsl_float(1.0f / std::sqrt(float(spec.k))))
      .set_u("Q_OFF", spec.offsets.q)
      .set_u("Q_ROW", spec.offsets.row ? spec.offsets.row : spec.n * spec.k)
      .set("KV_Q", f16 ? "vec2<u32>" : "vec4f")
      .set("KV_FUNCS", detail::kv_funcs(f16))
      .render();
}

KernelSpec combine_spec(const gpu::Context& ctx, const KernelSpec& spec) {
  KernelSpec c = spec;
  c.op = Op::AttentionCombine;
  c.weight = {};
  c.variant = 0;
  c.offsets = {};
  c.tile_m = 0;
  const uint32_t most = std::min(ctx.limits().maxComputeInvocationsPerWorkgroup, ctx.limits().maxComputeWorkgroupSizeX);
  c.wg = 1;
  while (c.wg < spec.k && c.wg * 2 <= most) c.wg *= 2;
  return c;
}

std::string combine_wgsl(const KernelSpec& spec) {
  return Template(wgsl_file("kernels/attention/combine.wgsl"), spec.key())
      .set_u("WG", spec.wg)
      .set_u("N_HEAD", spec.n)
      .set_u("HD", spec.k)
      .set_u("CTX", spec.tile)
      .set_u("CHUNK", spec.tile_n)
      .set_u("S", chunks(spec))
      .render();
}

namespace {

void check_tiers(const Options& o) {
  for (size_t i = 0; i < o.tiers.size(); ++i)
    BQ_CHECK(o.tiers[i].positions > 0 && (i == 0 || o.tiers[i].positions > o.tiers[i - 1].positions),
             "attention: tier {} covers {} positions; tiers need ascending, non-zero positions", i,
             o.tiers[i].positions);
}

}  // namespace

KernelSpec plan_for(const gpu::Context& ctx, const Shape& s, const Options& o, uint32_t visible) {
  if (uses_rows(s, o) || (uses_rows_far(s, o) && visible > o.rows.far_positions)) return plan_rows(ctx, s, o.rows);
  check_tiers(o);
  for (const Tier& t : o.tiers)
    if (visible <= t.positions) return plan(ctx, s, o.tier_plan(t));
  return plan(ctx, s, o);
}

uint32_t dispatched_chunks(const KernelSpec& sp, uint32_t visible) {
  return std::clamp<uint32_t>((std::min(visible, sp.tile) + sp.tile_n - 1) / sp.tile_n, 1, chunks(sp));
}

uint64_t scratch_bytes(const gpu::Context& ctx, const Shape& s, const Options& o) {
  if (uses_rows(s, o)) return scratch_bytes(plan_rows(ctx, s, o.rows));
  uint64_t b = scratch_bytes(plan(ctx, s, o));
  for (const Tier& t : o.tiers) b = std::max(b, scratch_bytes(plan(ctx, s, o.tier_plan(t))));
  if (uses_rows_far(s, o)) b = std::max(b, scratch_bytes(plan_rows(ctx, s, o.rows)));
  return b;
}

void Attention::bind(const gpu::Context& ctx, Plan& p, const Args& a, const gpu::Buffer& part) {
  const std::string key = p.spec.key();
  p.kernel = &ctx.kernel(key, key, [&] { return p.spec.op == Op::AttentionRows ? rows_wgsl(p.spec) : wgsl(p.spec); });
  p.group = ctx.bind(*p.kernel, {{a.q}, {a.k}, {a.v}, {a.pos}, {a.out}, {&part}});
  if (chunks(p.spec) > 1) {
    p.comb = combine_spec(ctx, p.spec);
    const std::string ck = p.comb.key();
    p.combine = &ctx.kernel(ck, ck, [&] { return combine_wgsl(p.comb); });
    p.comb_group = ctx.bind(*p.combine, {{&part}, {a.pos}, {a.out}});
  }
}

Attention::Attention(const gpu::Context& ctx, const Shape& s, const Args& a, const Options& o) {
  BQ_CHECK(a.q && a.k && a.v && a.pos && a.out, "attention: a buffer is missing");
  // Shapes of many tokens run the prompt kernel alone; others the per-token plans.
  long_.spec = uses_rows(s, o) ? plan_rows(ctx, s, o.rows) : plan(ctx, s, o);
  const uint64_t q_bytes = uint64_t{s.m} * s.n_head * s.head_dim * 4;
  const uint64_t q_in = (s.q_off + uint64_t{s.m - 1} * s.q_row() + s.n_head * s.head_dim) * 4;
  const uint64_t kv_bytes = uint64_t{s.n_ctx} * s.n_kv_head * s.head_dim * (s.kv == Format::F16 ? 2 : 4);
  BQ_CHECK(a.q->size() >= q_in && a.out->size() >= q_bytes, "attention: q needs {} bytes and out {}", q_in, q_bytes);
  BQ_CHECK(a.k->size() >= kv_bytes && a.v->size() >= kv_bytes, "attention: the k/v cache needs {} bytes", kv_bytes);
  BQ_CHECK(a.pos->size() >= uint64_t{s.m} * 4, "attention: pos needs {} bytes", uint64_t{s.m} * 4);
  check_tiers(o);
  for (const Tier& t : uses_rows(s, o) ? std::vector<Tier>{} : o.tiers) {
    tiers_.emplace_back(t.positions, Plan{});
    tiers_.back().second.spec = plan(ctx, s, o.tier_plan(t));
  }
  if (uses_rows_far(s, o)) {
    far_.spec = plan_rows(ctx, s, o.rows);
    far_positions_ = o.rows.far_positions;
  }
  const uint64_t need = scratch_bytes(ctx, s, o);
  const gpu::Buffer* part = a.part;
  if (!part) {
    part_ = ctx.create_buffer(need, gpu::kStorage, "attention.partials");
    part = &part_;
  }
  BQ_CHECK(part->size() >= need, "attention: the partials need {} bytes, the scratch has {}", need, part->size());
  bind(ctx, long_, a, *part);
  for (auto& [positions, p] : tiers_) bind(ctx, p, a, *part);
  if (far_positions_) bind(ctx, far_, a, *part);
}

const Attention::Plan& Attention::pick(uint32_t visible) const {
  if (far_positions_ && visible > far_positions_) return far_;
  for (const auto& [positions, p] : tiers_)
    if (visible <= positions) return p;
  return long_;
}

void Attention::record(gpu::Recorder& rec, uint32_t visible) const {
  const Plan& p = pick(visible);
  BQ_ASSERT(p.kernel, "attention: recorded before it was made");
  const KernelSpec& sp = p.spec;
  const uint32_t z = dispatched_chunks(sp, visible);
  const uint32_t y = sp.op == Op::AttentionRows ? (sp.m + sp.reg_m - 1) / sp.reg_m : sp.m;  // token tiles or tokens
  rec.dispatch(*p.kernel, p.group, {sp.n / sp.tile_m, y, z});
  if (z > 1) rec.dispatch(*p.combine, p.comb_group, {p.comb.n, p.comb.m, z});
}

}  // namespace blockq::attention
