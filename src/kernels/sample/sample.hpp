// Next-token sampling on the GPU, from the logits [n_vocab] f32 where the
// lm_head left them, so that a decode step can feed its token to the next
// step without the host (model/gpu_model.hpp's generation):
//   bias (bias.wgsl, when a bias table is planned): logits += bias at up to
//     B distinct ids (llama.cpp's logit_bias);
//   penalties (penalty.wgsl, when a window is planned): llama.cpp's
//     repetition penalties in place on the logits, for the ids of a window
//     [W] of recent tokens that the caller keeps on the GPU;
//   rounds (topk.wgsl): the input cut into chunks of CHUNK, each cut to its
//     best K (key, id) pairs in rank order by bitonic networks in workgroup
//     memory (bitonic.wgsl), until at most CHUNK candidates are left
//     (128256 logits, K 40: 126 chunks -> 5040 candidates -> 5 chunks -> 200);
//   pick (pick.wgsl): one workgroup selects the best K of those likewise and
//     picks as the host sampler does (top-p, min-p, temperature, a draw u),
//     in f32 (twin.hpp).
// Rank order is the host sampler's (model/sampler.hpp): the higher logit
// first, the lower id on a tie, -0 as +0, NaN last. K is the sampler's top-k
// (1 for greedy); the top-k selection is exact, the draw may differ from the
// host's double sums only where u lies within float rounding of a boundary.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "gpu/context.hpp"
#include "gpu/recorder.hpp"
#include "kernels/common/spec.hpp"

namespace blockq::sample {

inline constexpr uint32_t kMaxTopK = 256;   // the largest K (<= CHUNK / 4, so each round shrinks 4x)
// The largest penalty window W (its hash table of 2W slots takes 16 KiB of
// workgroup storage, WebGPU's least).
inline constexpr uint32_t kMaxPenaltyWindow = 1024;
// An empty slot of the window (any id >= n_vocab is skipped).
inline constexpr uint32_t kNoToken = 0xffffffffu;

// The largest chunk and workgroup to plan (the adapter's workgroup storage
// and invocation limits may cut them; a chunk below 4 K grows to it).
struct Options {
  uint32_t max_chunk = 1024;
  uint32_t max_wg = 512;
  // Greedy (K = 1) rounds: elements each invocation reduces on its own
  // before the workgroup's tree (a power of two; the chunk is wg times it),
  // and their largest workgroup. On the H200 (docs/perf/2026-12-04-session30-h200.md)
  // 4 and 256 took 12.8 us for 128256 logits, rounds and pick; larger chunks
  // or workgroups took 14 to 25.
  uint32_t greedy_per_invocation = 4;
  uint32_t greedy_max_wg = 256;
  // The penalties' window W of recent ids (1..kMaxPenaltyWindow); 0: no
  // penalty dispatch.
  uint32_t penalty_window = 0;
  // The logit bias table's slots B (up to n_vocab); 0: no bias dispatch.
  uint32_t bias_slots = 0;
};

// The key whose unsigned order is rank order: -0 as +0, NaN below -inf (0).
uint32_t rank_key(float logit);

// What the pick reads besides the candidates: [4] f32.
struct Params {
  float temperature = 0;  // <= 0: the first candidate (greedy)
  float top_p = 1;        // >= 1: off
  float min_p = 0;        // <= 0: off
  float u = 0;            // the draw, uniform in [0, 1)
};

// What the penalty dispatch reads besides the window: [3] f32.
struct Penalties {
  float repeat = 1;     // a seen id's logit divided by it when positive, multiplied when not
  float frequency = 0;  // subtracted once per occurrence in the window
  float presence = 0;   // subtracted once if the id occurs
};

// Round specs: op SampleTopK, n = input elements, k = K, tile = CHUNK (K 1:
// wg x greedy_per_invocation), wg,
// variant 0: the input is the logits (f32 bits), 1: (key, id) pairs. The pick:
// op SamplePick, n = candidates (<= CHUNK), the same k, wg and variant
// meaning, tile = the power of two >= n it selects from. CHUNK and WG come from the
// adapter's workgroup storage and invocation limits. The penalties: op
// SamplePenalty, n = n_vocab, k = W, tile = the hash table's slots (a power
// of two >= W), wg (k 0: none), one workgroup. The bias: op SampleBias,
// n = n_vocab, k = B, wg (k 0: none), ceil(B / wg) workgroups.
struct Plan {
  KernelSpec bias;
  KernelSpec penalty;
  std::vector<KernelSpec> rounds;
  KernelSpec pick;
  uint32_t groups(size_t r) const;  // workgroups of round r: ceil(n / CHUNK)
};
// Throws blockq::Error for top_k outside 1..min(kMaxTopK, n_vocab), a
// penalty window above kMaxPenaltyWindow, or more bias slots than n_vocab.
Plan plan(const gpu::Context& ctx, uint32_t n_vocab, uint32_t top_k, const Options& o = {});
std::string wgsl(const KernelSpec& spec);  // a round's, the pick's, the penalties' or the bias'
// Bytes of each of the two candidate buffers the rounds alternate between.
uint64_t candidate_bytes(const Plan& p);

// A bound sampler over one logits buffer: pipelines, scratch and bind
// groups made once; record() adds its dispatches (the rounds and the pick) to
// a step, set() writes the next draw's params (queue-ordered, so a step
// submitted before keeps the ones it was given).
class GpuSampler {
 public:
  GpuSampler() = default;
  GpuSampler(const gpu::Context& ctx, uint32_t n_vocab, uint32_t top_k, const gpu::Buffer& logits,
             const Options& o = {});
  void set(const gpu::Context& ctx, const Params& p) const;
  // With a penalty window: the penalties, and the window's ids [W] (in any
  // order; kNoToken or any id >= n_vocab for an empty slot). The caller may
  // also copy ids into recent() on the queue (the model copies each drawn
  // token over the oldest slot).
  void set_penalties(const gpu::Context& ctx, const Penalties& p) const;
  void set_recent(const gpu::Context& ctx, std::span<const uint32_t> ids) const;
  // With bias slots: the table, ids [<= B] distinct (checked), each with its
  // bias; the slots past them are emptied.
  void set_bias(const gpu::Context& ctx, std::span<const uint32_t> ids, std::span<const float> bias) const;
  // Every dispatch, or only dispatch `only` (for benchmarks): 0 .. rounds - 1
  // the rounds, rounds the pick, rounds + 1 the penalties, rounds + 2 the
  // bias. The order run: the bias, the penalties, the rounds, the pick.
  void record(gpu::Recorder& rec, int only = -1) const;
  // [K + 2] u32: the token, the top-K ids in rank order, the token's probability (f32 bits).
  const gpu::Buffer& result() const { return result_; }
  const gpu::Buffer& recent() const { return recent_; }  // [W] u32 (empty without a window)
  const Plan& plan() const { return plan_; }
  explicit operator bool() const { return bool(result_); }

 private:
  Plan plan_;
  std::vector<const gpu::Kernel*> kernels_;  // the rounds', then the pick's
  std::vector<gpu::BindGroup> groups_;
  gpu::Buffer cand_[2], params_, result_;
  const gpu::Kernel* penalty_ = nullptr;  // with a window
  gpu::BindGroup penalty_group_;
  gpu::Buffer recent_, penalty_params_;
  const gpu::Kernel* bias_ = nullptr;  // with bias slots
  gpu::BindGroup bias_group_;
  gpu::Buffer bias_ids_, bias_values_;
};

}  // namespace blockq::sample
