// The matvec kernel generator: plans a KernelSpec from the device's limits
// (workgroup size, invocations per row, staged tile, tokens per workgroup,
// subgroup use) and renders its WGSL. The host binds buffers in the order
// bindings(spec) gives, and dispatches grid(spec, rows).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "gpu/context.hpp"
#include "gpu/recorder.hpp"
#include "kernels/common/spec.hpp"

namespace blockq::matvec {

// Choices a caller (a test, the bench, the autotuner) may force; unset ones
// are derived from the limits.
struct Options {
  std::optional<bool> subgroups;  // default: on where the device has them
  std::optional<uint32_t> wg, tpr, unroll, tokens, rpl;
  // Split-k slices (capped so no slice is empty). Default 1, except batches
  // over long rows of some formats (plan.cpp says which).
  std::optional<uint32_t> splits;
  std::optional<uint32_t> max_tile;  // cap the staged tile (tests of tiling)
  // int8 activations (features.dot4): x quantized per block of 32 to int8
  // codes and a scale, summed by dot4I8Packed. Default off (f32 activations;
  // int8_by_default says where the model and the bench turn it on); on needs
  // int8_supported(kind) and the WGSL language feature.
  std::optional<bool> int8;
  // Token chunks (batches past TOKENS) of a row group as adjacent workgroups
  // of one grid axis (spec.variant kInterleaveChunks) instead of the grid's
  // z: the chunks of a row group run together and share its weight reads in
  // L2. Default off.
  std::optional<bool> interleave;
  // A timing probe (bench only; the kernel's output is then meaningless):
  // the kernel with its x staging, its lane loop, or both cut out; the lane
  // loop reduced to the weight loads; x read from global memory at the
  // staged indices instead of staged (int8 only: what a pre-quantized x
  // would cost); or the loads of the same bytes as if each workgroup's rows
  // were stored step by step; or the weight loads alone with no staging at
  // all (Probe). Default none.
  std::optional<uint32_t> probe;
  // The lane loop as a constant number of steps (spec.variant
  // kConstSteps): where one staged tile holds the whole row and k is not
  // split, each lane runs ceil(UPR / (TPR * UNROLL)) steps, with the per-unit
  // bound checks dropped when that divides evenly. Same sums in the same
  // order. Default: on with int8 activations over 32-element units (Q8_0,
  // Q4_0, Q4_1, Q5_0, Q5_1, 4-bit MatMulNBits of block 32), off otherwise.
  std::optional<bool> const_steps;
  // The int8 staging by quads of subgroup lanes (spec.variant kQuadStage):
  // four lanes share each block of 32, so neighbouring lanes read
  // neighbouring bytes of x, and exchange the block's max and code sums by
  // subgroup shuffles. Same codes, scales and sums. Only with subgroups and
  // int8 activations; default on for Q8_0, Q4_K and Q5_K, and for Q4_0,
  // Q4_1, Q5_0 and Q5_1 in batches or over k >= 8192 (plan.cpp says why).
  std::optional<bool> quad_stage;
  // The pipelined lane loop (spec.variant kPipeline): each lane fetches its
  // next step's weight words (loads only, no decode) before it decodes and
  // sums the current step's, so the loads of one step are in flight while
  // the previous one is computed. Same sums in the same order. Only for the
  // formats with a fetch/decode split (pipeline_supported). Default: on
  // where it measured faster (plan.cpp: Q4_K split batches and Q8_0 at
  // batch 1 with 2 rows a lane group, int8 x; Q4_0 short batches, f32 x).
  std::optional<bool> pipeline;
  // x read from global memory where the lane loop uses it, with no staging
  // (spec.variant kGlobalX): no workgroup memory for x, so workgroups can be
  // as small as one lane group, and one tile spans the row (or slice). Same
  // sums in the same order. With f32 activations the lane loop reads x
  // itself (the RMSNorm prologue's scaling applied at the read); only for
  // formats without a min and with units of at most 32 elements (the float
  // formats, Q8_0, Q4_0, Q5_0, MatMulNBits). With int8 activations a
  // quantize kernel (xquant.hpp) writes x's codes, scales and code sums to a
  // scratch buffer once per call, applying the prologue, and the lane loop
  // reads them (x_prequantized); every int8 format. Default: plan.cpp says
  // where.
  std::optional<bool> global_x;
  // Int8 activations: each scale group's integer sum starts at 0x4B400000
  // (the bits of 1.5 * 2^23) less the offset term, so the sum's bits read as
  // the float 12582912 + sum, and one subtraction gives f32(sum) exactly
  // (spec.variant kBiasedSum): no int-to-float conversion per group and
  // token. The same y bit for bit. Default: plan.cpp says where it gained.
  std::optional<bool> biased_sum;
  // The constant-step lane loop run two steps an iteration (spec.variant
  // kStepPairs; the step count must be even): the same steps in the same
  // order, so the same sums; the shader compiler may then overlap one step's
  // loads with the other's arithmetic. Default: plan.cpp says where it gained.
  std::optional<bool> step_pairs;
  // The Acc epilogue's old y read at the kernel's start (spec.variant
  // kAccEarly): lane 0 of each lane group loads its rows' y before the lane
  // loop, so the read's latency overlaps the loop instead of following the
  // row sums. The same y bit for bit. Only with the direct row store
  // (subgroups, no split-k) and one token a workgroup. Default: plan.cpp.
  std::optional<bool> acc_early;
  // The RMSNorm prologue's scale applied to the row sums (spec.variant
  // kRmsLate): x is staged as x * nw, each invocation's partial sum of
  // squares is taken before the staging, folded after it, and the scale
  // (a factor of every product of the token) multiplies each row's sum
  // before the bias and epilogue, so no barrier or second read of x comes
  // before the staging. Other roundings than the scale first (twin.hpp).
  // Only for staged x, one token a workgroup, one tile and no split-k.
  // Default: plan_hooks.cpp (on where it applies, but Q4_0 SiLU-gate over
  // rows of k < 4096).
  std::optional<bool> rms_late;
};
enum class Probe : uint32_t { None = 0, NoStage = 1, NoLoop = 2, Base = 3, Loads = 4, GlobalX = 5, LoadsInterleaved = 6,
                             LoadsNoStage = 7 };
// KernelSpec::variant bits of the matvec family.
inline constexpr uint32_t kInterleaveChunks = 1;
inline constexpr uint32_t kProbeShift = 1;  // bits 1..3: the Probe
inline constexpr uint32_t kConstSteps = 16;
inline constexpr uint32_t kQuadStage = 32;
inline constexpr uint32_t kPipeline = 64;
inline constexpr uint32_t kGlobalX = 128;
inline constexpr uint32_t kBiasedSum = 256;
inline constexpr uint32_t kStepPairs = 512;
inline constexpr uint32_t kAccEarly = 1024;
inline constexpr uint32_t kRmsLate = 2048;
inline Probe probe_of(const KernelSpec& s) { return static_cast<Probe>((s.variant >> kProbeShift) & 7u); }

// Formats the int8-activation path reads: the ggml integer formats and
// 4-bit MatMulNBits (units a multiple of 32 elements).
bool int8_supported(const WeightKind& kind);
// Formats whose fmt snippet splits load into fetch and decode (kPipeline):
// Q8_0, Q4_0, Q4_K, Q5_K, Q6_K. (The float formats' units are their words
// already; a pipelined F16/BF16/F32 loop, tried with load as fetch, was
// slower in every case on the H200: docs/perf/2026-12-01-session12-h200.md.)
bool pipeline_supported(const WeightKind& kind);
// Whether the lane loop can read x from global memory (kGlobalX): f32
// activations over a format without a min whose units hold at most 32
// elements (Q6_K's 128, whose step reads 32 vec4s of x a token, took
// SwiftShader's shader compiler 8 minutes and 24 GB), or int8 activations
// (pre-quantized x) over any format of the int8 path.
bool global_x_supported(const WeightKind& kind, uint32_t k, bool int8);
// The kernel reads x pre-quantized by xquant's kernel (int8 activations with
// kGlobalX): its binding X is then that kernel's output, and the RMSNorm
// prologue (and its norm-weight binding) belongs to the quantize kernel.
inline bool x_prequantized(const KernelSpec& s) { return s.features.dot4 && (s.variant & kGlobalX) != 0; }
// Constants of the int8 quantization of x, shared by the WGSL and the twin:
// a block's scale is amax * kInv127, and a block with amax < kInt8Tiny has
// all codes 0.
constexpr float kInv127 = 1.0f / 127.0f;
constexpr float kInt8Tiny = 1e-30f;

KernelSpec plan(const gpu::Context& ctx, const WeightKind& kind, uint32_t n, uint32_t k, uint32_t m,
                const Hooks& hooks = {}, const Options& opt = {});

// The same planning against explicit limits (for tests of the sizing).
struct Limits {
  uint32_t invocations = 256, shared = 16384, max_groups = 65535;
  uint32_t subgroup_min = 0, subgroup_max = 0;  // 0: no subgroups
  bool dot4 = false;                            // WGSL packed_4x8_integer_dot_product
  uint64_t binding = 128ull << 20;              // maxStorageBufferBindingSize (split-k partials)
  uint32_t storage_buffers = 8;                 // maxStorageBuffersPerShaderStage
};
Limits limits_of(const gpu::Context& ctx);

// Whether a matvec over an n x k weight takes int8 activations by default
// (the model's token projections and `bench matvec`): the format has an int8
// path, the adapter WGSL's packed dot4, and the weight at least min_elements
// elements (unset: int8_min_elements(kind)). Smaller weights ran as fast or
// faster with f32 x; on the H200 the synthetic llama-3-8b decoded a token in
// 28-33% less GPU time with int8 x for Q4_0, Q4_K and Q5_0, 25% for Q6_K and
// 9% for Q8_0 (docs/perf/2026-12-03-session27-h200.md).
inline constexpr uint64_t kInt8MinElements = uint64_t{1} << 24;
// Formats whose batch-1 plans stage x in quads at these sizes (Q4_0, Q4_1,
// Q5_0, Q5_1, Q4_K, Q5_K, Q8_0, Q2_K, Q3_K, Q6_K) take int8 x from 2^22
// elements (a 1B model's 2048 x 2048 and 3072 x 2048): H100, the decoder's
// hooks, one pass
// (docs/perf/2026-12-06-session44-h100.md), µs with f32 x against int8 x,
// 2048 x 2048 Acc and 3072 x 2048 RMSNorm+RoPE: q4_0 5.24 -> 4.59 and 6.64
// -> 5.88; q4_1 5.49 -> 4.74, 6.67 -> 6.04; q5_0 5.71 -> 4.98, 7.51 ->
// 6.54; q5_1 6.07 -> 5.03, 7.78 -> 6.64; q4_K 5.76 -> 4.76, 7.20 -> 6.17;
// q5_K 6.54 -> 5.30, 8.34 -> 7.17; q8_0 5.71 -> 5.63, 7.20 -> 7.04. Session
// 45 (docs/perf/2026-12-06-session45-h100.md): q2_K 5.39 -> 4.52 and 7.06
// -> 6.10, q3_K 5.73 -> 5.52 and 8.24 -> 7.05 (one pass); q6_K, now staged
// in quads there, 6.32-6.34 -> 6.33-6.37 and 8.93-8.99 -> 8.01 (two
// passes). IQ4_NL and IQ4_XS keep 2^24: with quads, 2048 x 2048 Acc gained
// (iq4_nl 6.37 -> 5.82) but 3072 x 2048 RoPE lost (7.43 -> 7.60).
inline constexpr uint64_t kInt8MinElementsQuad = uint64_t{1} << 22;
uint64_t int8_min_elements(const WeightKind& kind);
bool int8_by_default(const Limits& lim, const WeightKind& kind, uint32_t n, uint32_t k,
                     std::optional<uint64_t> min_elements = std::nullopt);
KernelSpec plan(const Limits& lim, const WeightKind& kind, uint32_t n, uint32_t k, uint32_t m,
                const Hooks& hooks, const Options& opt);

// What each binding of the kernel is, in binding order.
// X is x [m, k] f32, or (x_prequantized) the quantize kernel's output.
enum class Role { Params, X, MainA, SideA, MainB, SideB, NormW, Bias, Pos, Y, KCache, VCache };
std::vector<Role> bindings(const KernelSpec& spec);
uint32_t storage_bindings(const KernelSpec& spec);  // the storage buffers of bindings(spec)

// Workgroup memory the kernel declares, in bytes.
uint32_t shared_bytes(const KernelSpec& spec);

std::string wgsl(const KernelSpec& spec);

// The WGSL every reader of the matvec layout shares: the decode helpers
// (W8, mag4, ...) and the format snippet of spec.weight (load{w}, chunk{w},
// scale{w}, min{w}) over bindings main{w} / side{w}; uses the constants UPR
// and GROUP and the uniform params.side_off. With `table`, the IQ4 formats'
// levels come from workgroup memory (fmt/iq4_table.wgsl: the kernel calls
// iq4_init(li) and a barrier before its first decode), else by selects.
std::string decode_helpers(const WeightKind& kind, bool table);
std::string format_snippet(const KernelSpec& spec, const std::string& w);

// Workgroups for a chunk of `rows` rows (z = token chunks).
gpu::Grid grid(const KernelSpec& spec, uint32_t rows);

}  // namespace blockq::matvec
