// The device's f32 FMA throughput, measured with a plain WGSL kernel of
// independent fma chains (fma_peak.wgsl), timed by timestamp queries (median).
// Compute-bound benchmarks (the gemm) report their TFLOP/s against it.
#pragma once
#include <cstdint>

#include "gpu/context.hpp"

namespace blockq {

struct FmaPeak {
  double tflops = 0;   // 1e12 flops per second (an FMA counts as 2)
  double flops = 0;    // flops per dispatch
  int samples = 0;     // timed passes
  bool gpu_timestamps = false;
};

// groups: workgroups per dispatch (wrapped past the per-dimension limit);
// iters: rounds per invocation. The defaults fill a large GPU; a CPU adapter
// wants far less (e.g. 32 groups, 64 rounds).
FmaPeak measure_fma_peak(const gpu::Context& ctx, uint32_t groups = 8192, uint32_t iters = 1024);

// The same for packed int8 dot products (WGSL dot4I8Packed): tflops counts
// 8 integer ops (4 multiply-adds) per dot. It tells a native instruction
// (above the f32 FMA rate) from a polyfill (far below it).
FmaPeak measure_dot4_peak(const gpu::Context& ctx, uint32_t groups = 8192, uint32_t iters = 1024);

}  // namespace blockq
