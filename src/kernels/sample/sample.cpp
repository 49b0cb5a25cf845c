// Planning, generation and binding of the GPU sampler (bias.wgsl with bias
// slots, penalty.wgsl with a window, topk.wgsl rounds, then pick.wgsl;
// sample.hpp gives the steps).
#include "kernels/sample/sample.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

#include <fmt/format.h>

#include "util/embedded_wgsl.hpp"
#include "util/error.hpp"
#include "util/template.hpp"

namespace blockq::sample {

namespace {

// load(i) -> (key, id) of element i of src: a logit's f32 bits keyed as
// rank_key does, or a pair as it is.
std::string load_fn(uint32_t variant) {
  if (variant == 1) return "fn load(i: u32) -> vec2u { return src[i]; }\n";
  return "fn load(i: u32) -> vec2u {\n"
         "  var b = src[i];\n"
         "  if (b == 0x80000000u) { b = 0u; }                         // -0 as +0\n"
         "  if ((b & 0x7fffffffu) > 0x7f800000u) { return vec2u(0u, i); }  // NaN: below -inf\n"
         "  return vec2u(select(b | 0x80000000u, ~b, (b & 0x80000000u) != 0u), i);\n"
         "}\n";
}

}  // namespace

uint32_t rank_key(float logit) {
  uint32_t b = std::bit_cast<uint32_t>(logit);
  if (b == 0x80000000u) b = 0;
  if ((b & 0x7fffffffu) > 0x7f800000u) return 0;
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

uint32_t Plan::groups(size_t r) const { return (rounds[r].n + rounds[r].tile - 1) / rounds[r].tile; }

Plan plan(const gpu::Context& ctx, uint32_t n_vocab, uint32_t top_k, const Options& o) {
  BQ_CHECK(n_vocab > 0, "sampler: an empty vocabulary");
  BQ_CHECK(top_k >= 1 && top_k <= std::min(kMaxTopK, n_vocab),
           "sampler: top-k {} on the GPU must lie in 1..{} (the vocabulary has {} tokens)", top_k,
           std::min(kMaxTopK, n_vocab), n_vocab);
  const auto& lim = ctx.limits();
  // CHUNK: a power of two of (key, id) pairs in workgroup memory, >= 4 K
  // (above o.max_chunk where K needs it), with room beside it for the pick's
  // [2, KP] f32 (which selects from at most CHUNK candidates).
  const uint64_t most = std::max<uint64_t>(o.max_chunk, 4 * std::bit_ceil(top_k));
  const uint64_t room = lim.maxComputeWorkgroupStorageSize / 8 - std::bit_ceil(top_k);
  uint32_t chunk = 1;
  while (chunk * 2 <= std::min(most, room)) chunk *= 2;
  BQ_CHECK(chunk >= 4 * top_k, "sampler: top-k {} needs chunks of {} candidates; {} bytes of workgroup memory hold {}",
           top_k, 4 * top_k, lim.maxComputeWorkgroupStorageSize, chunk);
  const uint32_t max_wg = top_k == 1 ? std::min(o.max_wg, o.greedy_max_wg) : o.max_wg;
  uint32_t wg = 1;
  while (wg * 2 <= std::min({chunk / 2, max_wg, lim.maxComputeInvocationsPerWorkgroup, lim.maxComputeWorkgroupSizeX}))
    wg *= 2;
  // Greedy rounds keep one pair per invocation in workgroup memory (each
  // invocation's best of its elements), so their chunk is not bound by it.
  const uint32_t round_chunk = top_k == 1 ? wg * std::bit_ceil(std::max(o.greedy_per_invocation, 2u)) : chunk;
  KernelSpec base;
  base.weight.format = Format::F32;
  base.k = top_k;
  base.tile = chunk;
  base.wg = wg;
  base.max_groups = lim.maxComputeWorkgroupsPerDimension;
  Plan p;
  uint32_t count = n_vocab, variant = 0;
  while (count > chunk) {
    KernelSpec r = base;
    r.op = Op::SampleTopK;
    r.n = count;
    r.tile = round_chunk;
    r.variant = variant;
    p.rounds.push_back(r);
    const uint32_t g = p.groups(p.rounds.size() - 1);
    BQ_CHECK(g <= base.max_groups, "sampler: {} chunks of {} logits pass {} workgroups per dimension", g,
             round_chunk, base.max_groups);
    count = g * top_k;
    variant = 1;
  }
  p.pick = base;
  p.pick.op = Op::SamplePick;
  p.pick.n = count;
  p.pick.variant = variant;
  p.pick.tile = 2;  // the pairs it selects from: a power of two >= max(n, 2)
  while (p.pick.tile < count) p.pick.tile *= 2;
  p.pick.wg = std::min(p.pick.wg, p.pick.tile / 2);
  const uint32_t w = o.penalty_window;
  BQ_CHECK(w <= kMaxPenaltyWindow, "sampler: a penalty window of {} tokens; the GPU sampler takes at most {}", w,
           kMaxPenaltyWindow);
  if (w > 0) {
    p.penalty = base;
    p.penalty.op = Op::SamplePenalty;
    p.penalty.n = n_vocab;
    p.penalty.k = w;
    // The hash table: 2W slots (a power of two, at least 2) where the
    // workgroup storage holds them (8 bytes a slot), else down to W's.
    p.penalty.tile = std::max(2u, std::bit_ceil(2 * w));
    while (p.penalty.tile > std::max(2u, std::bit_ceil(w)) &&
           uint64_t{p.penalty.tile} * 8 > lim.maxComputeWorkgroupStorageSize)
      p.penalty.tile /= 2;
    BQ_CHECK(uint64_t{p.penalty.tile} * 8 <= lim.maxComputeWorkgroupStorageSize,
             "sampler: a penalty window of {} tokens needs {} bytes of workgroup storage; the adapter has {}", w,
             uint64_t{p.penalty.tile} * 8, lim.maxComputeWorkgroupStorageSize);
    p.penalty.wg = 1;  // a power of two, at most the window's
    while (p.penalty.wg * 2 <= std::min({std::bit_ceil(w), o.max_wg, lim.maxComputeInvocationsPerWorkgroup,
                                         lim.maxComputeWorkgroupSizeX}))
      p.penalty.wg *= 2;
  }
  BQ_CHECK(o.bias_slots <= n_vocab, "sampler: {} logit bias slots for a vocabulary of {}", o.bias_slots, n_vocab);
  if (o.bias_slots > 0) {
    p.bias = base;
    p.bias.op = Op::SampleBias;
    p.bias.n = n_vocab;
    p.bias.k = o.bias_slots;
    p.bias.wg = std::min({std::bit_ceil(o.bias_slots), 64u, lim.maxComputeInvocationsPerWorkgroup,
                          lim.maxComputeWorkgroupSizeX});
    BQ_CHECK((o.bias_slots + p.bias.wg - 1) / p.bias.wg <= base.max_groups,
             "sampler: {} logit bias slots pass {} workgroups per dimension", o.bias_slots, base.max_groups);
  }
  return p;
}

std::string wgsl(const KernelSpec& spec) {
  BQ_CHECK(spec.op == Op::SampleTopK || spec.op == Op::SamplePick || spec.op == Op::SamplePenalty ||
               spec.op == Op::SampleBias,
           "sampler: spec {} is not a sampler's", spec.key());
  if (spec.op == Op::SampleBias)
    return Template(wgsl_file("kernels/sample/bias.wgsl"), spec.key())
        .set_u("N", spec.n)
        .set_u("B", spec.k)
        .set_u("WG", spec.wg)
        .render();
  if (spec.op == Op::SamplePenalty)
    return Template(wgsl_file("kernels/sample/penalty.wgsl"), spec.key())
        .set_u("N", spec.n)
        .set_u("R", spec.k)
        .set_u("H", spec.tile)
        .set_u("SHIFT", 32 - std::countr_zero(spec.tile))
        .set_u("WG", spec.wg)
        .render();
  const bool pick = spec.op == Op::SamplePick;
  return Template(wgsl_file(pick ? "kernels/sample/pick.wgsl" : "kernels/sample/topk.wgsl"), spec.key())
      .set("SRC_T", spec.variant ? "vec2<u32>" : "u32")
      .set_u("N", spec.n)
      .set_u("CHUNK", spec.tile)
      .set_u("K", spec.k)
      .set_u("KP", std::bit_ceil(spec.k))
      .set_u("WG", spec.wg)
      .set("LOAD", load_fn(spec.variant))
      .set("SELECT", std::string(wgsl_file("kernels/sample/bitonic.wgsl")))
      .render();
}

uint64_t candidate_bytes(const Plan& p) {
  uint64_t most = 8;  // the largest round's output pairs
  for (size_t r = 0; r < p.rounds.size(); ++r) most = std::max<uint64_t>(most, uint64_t{p.groups(r)} * p.pick.k * 8);
  return most;
}

GpuSampler::GpuSampler(const gpu::Context& ctx, uint32_t n_vocab, uint32_t top_k, const gpu::Buffer& logits,
                       const Options& o)
    : plan_(sample::plan(ctx, n_vocab, top_k, o)) {
  BQ_CHECK(logits.size() >= uint64_t{n_vocab} * 4, "sampler: {} logits need {} bytes, the buffer has {}", n_vocab,
           uint64_t{n_vocab} * 4, logits.size());
  for (int i = 0; i < 2; ++i)
    cand_[i] = ctx.create_buffer(candidate_bytes(plan_), gpu::kStorage, fmt::format("sampler.candidates{}", i));
  params_ = ctx.create_buffer(sizeof(Params), gpu::kStorage, "sampler.params");
  result_ = ctx.create_buffer(uint64_t{top_k + 2} * 4, gpu::kStorage, "sampler.result");
  set(ctx, {});
  const gpu::Buffer* src = &logits;
  auto compile = [&](const KernelSpec& s) {
    const std::string key = s.key();
    return &ctx.kernel(key, key, [&] { return wgsl(s); });
  };
  for (size_t r = 0; r < plan_.rounds.size(); ++r) {
    kernels_.push_back(compile(plan_.rounds[r]));
    groups_.push_back(ctx.bind(*kernels_.back(), {{src}, {&cand_[r % 2]}}));
    src = &cand_[r % 2];
  }
  kernels_.push_back(compile(plan_.pick));
  groups_.push_back(ctx.bind(*kernels_.back(), {{src}, {&params_}, {&result_}}));
  if (plan_.penalty.k > 0) {
    recent_ = ctx.create_buffer(uint64_t{plan_.penalty.k} * 4, gpu::kStorage, "sampler.recent");
    penalty_params_ = ctx.create_buffer(sizeof(Penalties), gpu::kStorage, "sampler.penalties");
    penalty_ = compile(plan_.penalty);
    penalty_group_ = ctx.bind(*penalty_, {{&logits}, {&recent_}, {&penalty_params_}});
    set_recent(ctx, std::vector<uint32_t>(plan_.penalty.k, kNoToken));
    set_penalties(ctx, {});
  }
  if (plan_.bias.k > 0) {
    bias_ids_ = ctx.create_buffer(uint64_t{plan_.bias.k} * 4, gpu::kStorage, "sampler.bias_ids");
    bias_values_ = ctx.create_buffer(uint64_t{plan_.bias.k} * 4, gpu::kStorage, "sampler.bias");
    bias_ = compile(plan_.bias);
    bias_group_ = ctx.bind(*bias_, {{&logits}, {&bias_ids_}, {&bias_values_}});
    set_bias(ctx, {}, {});
  }
}

void GpuSampler::set_bias(const gpu::Context& ctx, std::span<const uint32_t> ids, std::span<const float> bias) const {
  BQ_ASSERT(bias_, "sampler: a logit bias set on a sampler planned without bias slots");
  BQ_CHECK(ids.size() == bias.size() && ids.size() <= plan_.bias.k,
           "sampler: {} bias ids and {} values for a table of {} slots", ids.size(), bias.size(), plan_.bias.k);
  std::vector<uint32_t> sorted(ids.begin(), ids.end());
  std::sort(sorted.begin(), sorted.end());
  BQ_CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(),
           "sampler: the logit bias ids must be distinct (merge repeated ids first)");
  std::vector<uint32_t> i(plan_.bias.k, kNoToken);
  std::vector<float> v(plan_.bias.k, 0.0f);
  std::copy(ids.begin(), ids.end(), i.begin());
  std::copy(bias.begin(), bias.end(), v.begin());
  ctx.upload<uint32_t>(bias_ids_, i);
  ctx.upload<float>(bias_values_, v);
}

void GpuSampler::set_penalties(const gpu::Context& ctx, const Penalties& p) const {
  BQ_ASSERT(penalty_, "sampler: penalties set on a sampler planned without a window");
  const float v[3] = {p.repeat, p.frequency, p.presence};
  ctx.upload<float>(penalty_params_, std::span<const float>(v, 3));
}

void GpuSampler::set_recent(const gpu::Context& ctx, std::span<const uint32_t> ids) const {
  BQ_ASSERT(penalty_, "sampler: a window set on a sampler planned without one");
  BQ_CHECK(ids.size() == plan_.penalty.k, "sampler: a window of {} ids for a sampler planned with {}", ids.size(),
           plan_.penalty.k);
  ctx.upload<uint32_t>(recent_, ids);
}

void GpuSampler::set(const gpu::Context& ctx, const Params& p) const {
  const float v[4] = {p.temperature, p.top_p, p.min_p, p.u};
  ctx.upload<float>(params_, std::span<const float>(v, 4));
}

void GpuSampler::record(gpu::Recorder& rec, int only) const {
  BQ_ASSERT(!kernels_.empty(), "sampler: recorded before it was made");
  const int n = int(plan_.rounds.size());
  if (bias_ && (only < 0 || only == n + 2))
    rec.dispatch(*bias_, bias_group_, {(plan_.bias.k + plan_.bias.wg - 1) / plan_.bias.wg, 1, 1});
  if (penalty_ && (only < 0 || only == n + 1)) rec.dispatch(*penalty_, penalty_group_, {1, 1, 1});
  for (int r = 0; r < n; ++r)
    if (only < 0 || only == r) rec.dispatch(*kernels_[r], groups_[r], {plan_.groups(r), 1, 1});
  if (only < 0 || only == n) rec.dispatch(*kernels_.back(), groups_.back(), {1, 1, 1});
}

}  // namespace blockq::sample
