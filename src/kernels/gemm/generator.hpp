// The gemm kernel generator: Y = X·Wᵀ for prompts (X [m, k] f32, W [n, k] in
// the matvec layout, Y [m, n] f32). plan() sizes a register-tiled KernelSpec
// (tile_m x tile_n outputs per workgroup, reg_m x reg_n per invocation, tile
// k staged per step) from the device's limits; wgsl() renders gemm.wgsl.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "gpu/context.hpp"
#include "gpu/recorder.hpp"
#include "kernels/common/spec.hpp"

namespace blockq::gemm {

// Formats the gemm reads (from their matvec layout, kernels/matvec/layout.hpp).
bool supported(Format f);

// The kernel structure a tiling runs (KernelSpec::variant):
//  kClassic: stage, barrier, compute, barrier; contiguous register blocks.
//  kPipelined: the next step's x and W words are loaded into registers
//    before the current step is computed from the other half of a double
//    buffer (one barrier per step); register blocks are RM/4 x RN/4 vec4s
//    strided by TM/RM and TN/RN vec4s (conflict-free vec4 reads); loads
//    clamp ragged rows and tokens, only edge stores check bounds. Needs
//    RM, RN multiples of 4.
//  kPipelinedUnrolled: kPipelined with the TK loop written out.
//  kPipelinedPaired: kPipelinedUnrolled with the step loop written out in
//    pairs, so each step's buffer half is a constant: the staged tiles are
//    2-D arrays [2 TK][TM / 4 + 1] indexed by constant k rows, and the
//    column index (an invocation's constant) is the only one bounds-clamped.
enum Algo : uint32_t { kClassic = 0, kPipelined = 1, kPipelinedUnrolled = 2, kPipelinedPaired = 3 };

// A tile shape a caller (test, bench, autotuner) may force. splits > 1 (a
// pipelined algo only) cuts k into that many slices of whole TK steps, summed
// by their own workgroups (the grid's z) into partials that split_sum adds:
// more workgroups when the output has few tiles.
struct Tiling {
  uint32_t tile_m = 0, tile_n = 0, reg_m = 0, reg_n = 0, tile_k = 0;
  uint32_t algo = kClassic;
  uint32_t splits = 1;
  bool operator==(const Tiling&) const = default;
};
inline constexpr uint32_t kMaxSplits = 16;
// "128x128 r8x8 tk16 pipe sk2" (the bench's and tuner's label).
std::string label(const Tiling& t);

// The device facts plan() uses.
struct Limits {
  uint32_t invocations = 256, shared = 16384, max_groups = 65535;
  bool subgroup_matrix = false;  // reported, but no path uses it (docs/KERNELS_GEMM.md)
  uint64_t max_binding = 128ull << 20;  // maxStorageBufferBindingSize (split-k partials must fit)
};
Limits limits_of(const gpu::Context& ctx);

// Size classes of m the planner and the tuner key on: 0: m <= 32, 1: <= 128,
// 2: <= 512, 3: more.
uint32_t m_class(uint32_t m);

// The default tiling of an m class, before fitting to the limits.
Tiling default_tiling(uint32_t mclass);
// Output tiles below which a default tiling splits k.
inline constexpr uint64_t kSplitBelowTiles = 512;
// The fewest k elements a default split-k slice sums: the int8 gemm's, and
// the f32 gemm's (its steps are shorter; on the H100, 960 x 960 at m = 128
// took 36 us in 4 slices of 240 and 38 us in 2, int8 30 us in 2 and 36 in 4).
inline constexpr uint32_t kMinSliceK = 256, kMinSliceKF32 = 128;
// The slices of a default split-k for a grid of `tiles` output tiles and k
// in `steps` steps of tile_k elements: 1, doubled while tiles x slices stays
// below kSplitBelowTiles, each slice keeps min_k elements (and a step), and
// the slices stay at most `most`. The same on every adapter: the adapter does
// not report its compute units, and on a small GPU a few more workgroups than
// it holds at once cost only the partials' sum.
uint32_t default_splits(uint64_t tiles, uint32_t steps, uint32_t tile_k, uint32_t most, uint32_t min_k);
// The default for one problem: default_tiling(m_class(m)) fitted to the
// limits, with k split (default_splits, kMinSliceKF32) where the partials fit
// one binding: for m of 33 to 128, the 64x64 pipelined tiles in up to 8
// slices when that splits; for m > 128, in up to 2. nullopt when nothing
// fits.
std::optional<Tiling> default_for(const Limits& lim, uint32_t n, uint32_t k, uint32_t m, const Hooks& hooks);
// Candidate tilings the autotuner times (all fitted to the limits, deduplicated).
std::vector<Tiling> candidates(const Limits& lim, const WeightKind& kind, const Hooks& hooks, uint32_t mclass);

// spec.m is 0: m is a run-time parameter, one pipeline serves every prompt
// length. Throws blockq::Error on an unsupported format, hook or k.
KernelSpec plan(const gpu::Context& ctx, const WeightKind& kind, uint32_t n, uint32_t k, uint32_t m,
                const Hooks& hooks = {}, std::optional<Tiling> tiling = {});
KernelSpec plan(const Limits& lim, const WeightKind& kind, uint32_t n, uint32_t k, uint32_t m,
                const Hooks& hooks, std::optional<Tiling> tiling = {});

// Fits t to the limits (halving tile k, then register blocks, then tiles);
// nullopt when nothing fits.
std::optional<Tiling> fit(const Limits& lim, Tiling t, const Hooks& hooks);

Tiling tiling_of(const KernelSpec& s);       // the tiling a gemm spec was planned with
uint32_t threads(const KernelSpec& s);       // invocations per workgroup
uint32_t shared_bytes(const KernelSpec& s);  // workgroup memory declared
uint32_t shared_bytes(const Tiling& t, const Hooks& hooks);

std::string wgsl(const KernelSpec& s);
// The pipeline cache key: the spec without n (n and m are run-time values).
std::string pipeline_key(const KernelSpec& s);

// Workgroups for `rows` rows of a chunk and m tokens (x: n tiles, y: m tiles).
gpu::Grid grid(const KernelSpec& s, uint32_t rows, uint32_t m);

// The int8 gemm (features.dot4, gemm_i8.wgsl and gemm_i8_pipe.wgsl;
// int8.cpp): x quantized per block of 32 by matvec's xquant kernel (ggml's
// q8 activations), products summed exactly by dot4I8Packed, per output and
// block in k order
//   acc = acc + (dw * dx) * f32(sum of qw * qx - OFF * sum of qx)
// (OFF 8 for Q4_0, 16 for Q5_0, 32 for Q6_K, 4 for Q3_K, else 0; Q6_K's and
// Q3_K's halves of 16 each with its scale; Q2_K, a min per half, has no
// int8 form), then for Q4_1, Q5_1, Q4_K and
// Q5_K acc = acc + mw * (dx * f32(sum of qx)) (their min). f32(i) is formed
// without a conversion (the sum starts at MAGIC, gemm_i8_head.wgsl). Classic
// or pipelined kernel, steps of 1 to 4
// blocks, register blocks RM x RN of multiples of 4, split-k. Where the
// instance has packed dot4, MatmulArgs::int8 asks for it.
bool int8_reads(Format f);  // Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS
Tiling default_tiling_int8(uint32_t mclass);
// Without a tiling: default_tiling_int8(m_class(m)) fitted to the limits,
// k split by default_splits (at most kMaxSplits) where the partials fit one
// binding. Throws blockq::Error on another format, k not a multiple of 32,
// an unsupported hook or a tiling that does not fit.
KernelSpec plan_int8(const Limits& lim, const WeightKind& kind, uint32_t n, uint32_t k, uint32_t m,
                     const Hooks& hooks = {}, std::optional<Tiling> tiling = {});
// The int8 gemm's tilings the tuner and `bench gemm --sweep` time (classic
// and pipelined, steps of 1 to 4 blocks, split-k), fitted to the limits and
// deduplicated (plan_int8 may still shorten a step to divide k); a format's
// values per block (Q2_K: 4) take workgroup memory too.
std::vector<Tiling> candidates_int8(const Limits& lim, const Hooks& hooks, Format f);
// The QuantX spec (kernels/matvec/xquant.hpp) that fills the int8 gemm's xq
// for m tokens: codes [m][k / 16] vec4<u32>, then meta [m][k / 32] vec4<u32>.
KernelSpec quant_spec(const KernelSpec& s, uint32_t m);
uint64_t int8_x_bytes(uint32_t m, uint32_t k);  // of that xq

}  // namespace blockq::gemm
