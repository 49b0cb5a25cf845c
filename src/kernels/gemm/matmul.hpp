// One entry point for y = x·Wᵀ over m tokens (x [m, k] f32, W [n, k], y [m, n]
// f32): the matvec kernel for m <= the adapter's crossover, the gemm above.
// The crossover is measured per adapter (both kernels timed at m in {1, 2, 4,
// 8, 16, 32, 64} on a representative shape; the largest m where matvec is
// faster), with f32 or int8 activations on either side as the caller runs
// them, and cached with the tuner's results (tune.hpp).
//
// The gemm family reads matvec's weight layout, so blockq_k_gemm links
// blockq_k_matvec (CMakeLists.txt).
#pragma once
#include <cstdint>
#include <variant>

#include "gpu/context.hpp"
#include "gpu/recorder.hpp"
#include "kernels/gemm/op.hpp"
#include "kernels/gemm/tune.hpp"
#include "kernels/matvec/op.hpp"

namespace blockq::gemm {

struct CrossoverOptions {
  uint32_t n = 4096, k = 4096;  // the representative shape
  int samples = 5;
  bool use_cache = true, force = false, verbose = false;
  // The kernels compared take int8 x: the matvec (MatmulArgs::mv_int8) and
  // the gemm (MatmulArgs::int8), each where the format and adapter allow.
  bool mv_int8 = false, gemm_int8 = false;
};

// The largest m in {1, 2, 4, 8, 16, 32, 64} where matvec beats the (default)
// gemm on (kind, n, k); 0 when the gemm is faster even at m = 1.
uint32_t crossover(const gpu::Context& ctx, const WeightKind& kind, const CrossoverOptions& opt = {});

// Whether the gemm reads this weight (a supported ggml format, k a multiple
// of its block and of 32); matmul() runs matvec for any other weight.
bool gemm_reads(const WeightKind& kind, uint32_t k);

// One weight (and the up weight for SiluGate), uploaded once by
// matvec::upload: both kernels read that layout.
struct MatmulArgs {
  const matvec::Weights* mv_a = nullptr;
  const matvec::Weights* mv_b = nullptr;
  const gpu::Buffer* x = nullptr;  // [m, k] f32
  const gpu::Buffer* y = nullptr;  // [m, n] f32
  uint32_t m = 0;
  Hooks hooks;                       // Store, Acc or SiluGate
  std::optional<uint32_t> crossover;  // unset: crossover(ctx, kind) (cached)
  // The measured crossover on this weight's own n x k, not the
  // representative 4096 x 4096 (cached per shape). Also taken, unasked,
  // where the gemm takes int8 x and the matvec f32 x.
  bool crossover_own_shape = false;
  bool tuned = true;                  // gemm: the tuner's tiling (cached), else the default
  // A split-k gemm's or matvec's partials: a scratch of at least
  // partial_bytes(ctx, args), which matmuls recorded one after another may
  // share. Null: the kernel allocates its own.
  const gpu::Buffer* part = nullptr;
  // The int8 gemm (plan_int8) for Q8_0, Q4_x, Q5_x and K-quants above the crossover, where
  // the instance has packed dot4 (else the f32 gemm); its x quantized into
  // xq, a scratch of at least int8_x_bytes(m, k) that matmuls recorded one
  // after another may share (null: the kernel allocates its own).
  bool int8 = false;
  // The matvec (m <= the crossover) with int8 x (matvec::Options::int8),
  // where the format has matvec's int8 path and the adapter packed dot4 (the
  // token matvec's rule, matvec::int8_by_default, is the caller's to apply);
  // its x, where pre-quantized, also goes into xq.
  bool mv_int8 = false;
  const gpu::Buffer* xq = nullptr;
};

class Matmul {
 public:
  bool uses_gemm() const { return std::holds_alternative<Prepared>(p_); }
  const KernelSpec& spec() const;
  void record(gpu::Recorder& rec) const;

 private:
  friend Matmul matmul(const gpu::Context&, const MatmulArgs&);
  std::variant<matvec::Prepared, Prepared> p_;
};

// Chooses, plans and prepares the kernel (not a hot-path call: it may time
// kernels once per adapter when the cache is cold). Throws blockq::Error on
// missing or mismatched arguments.
Matmul matmul(const gpu::Context& ctx, const MatmulArgs& args);

// Bytes of split-k partials the kernel matmul(ctx, args) picks needs (0 when
// it is not split), so callers can size one shared scratch.
uint64_t partial_bytes(const gpu::Context& ctx, const MatmulArgs& args);
// Bytes of xq the kernel matmul(ctx, args) picks needs (0 unless the int8
// gemm or a matvec with x pre-quantized).
uint64_t xq_bytes(const gpu::Context& ctx, const MatmulArgs& args);

}  // namespace blockq::gemm
