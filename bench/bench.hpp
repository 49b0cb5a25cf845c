// Benchmarks behind `blockq bench`: option sets and result rows.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "gpu/context.hpp"
#include "kernels/attention/attention.hpp"
#include "kernels/common/bandwidth.hpp"
#include "kernels/matvec/generator.hpp"

namespace blockq::bench {

struct MatvecBenchOptions {
  std::vector<WeightKind> kinds;
  std::vector<std::pair<uint32_t, uint32_t>> shapes;  // (n rows, k)
  std::vector<uint32_t> batches = {1, 8};
  std::vector<matvec::Options> variants = {{}};      // kernel choices to time
  uint64_t rotate_bytes = 512ull << 20;               // weight copies to cycle through
  size_t max_copies = 64;
  int samples = 15;          // timed passes (median)
  int calls_per_sample = 4;  // each pass calls every copy this many times
  bool progress = true;
  uint64_t max_chunk_bytes = 0;  // upload row chunks of at most this (0: the binding limit)
  bool same_size_read = true;  // also time a plain read of each case's weight bytes
  bool rows = false;  // also time the row gather (embedding lookup) of `batch` rows of each weight
  // Hooks to time each case with, as the decoder uses them (matvec_hooks).
  std::vector<std::string> hooks = {"store"};
};

// A named hook set for `bench matvec --hooks`, as the decoder's projections
// use them: store (none), acc (y += W x: o and down), rms (the RMSNorm
// prologue alone), rope (RMSNorm, RoPE on every row: the fused QKV, heads of
// 128 rows where n allows, else 64), silu (RMSNorm, SiLU(gate x) * (up x):
// gate and up, two weights). Throws on an unknown name or a shape it cannot take.
Hooks matvec_hooks(const std::string& name, uint32_t n);

struct MatvecRow {
  std::string kind, spec, error, hooks = "store";
  uint32_t n = 0, k = 0, m = 0;
  double us = 0, bytes = 0, gbps = 0, ratio = 0;
  // A plain streaming read of the same weight bytes from as many rotated
  // copies, one dispatch per call (0 when not measured).
  double read_us = 0;
  bool gpu_timestamps = false;
  bool rows = false;  // a row gather: bytes are the gathered rows' weight bytes and y
};

std::vector<MatvecRow> bench_matvec(const gpu::Context& ctx, const MatvecBenchOptions& o,
                                    const Bandwidth& bw);

struct AttentionHeads {
  uint32_t n_head = 32, n_kv = 8, head_dim = 128;
};

struct AttentionBenchOptions {
  std::vector<AttentionHeads> heads;
  std::vector<uint32_t> positions = {40, 1024, 4095};  // the (last) token's position (it sees position + 1)
  std::vector<uint32_t> tokens = {1};  // tokens a call: a pass of T at positions position - T + 1 .. position
  uint32_t n_ctx = 0;                                  // cache positions (at least the largest position + 1)
  Format kv = Format::F16;
  attention::Options options;
  uint64_t rotate_bytes = 256ull << 20;  // k and v copies to cycle through
  size_t max_copies = 32;
  int samples = 15;
  int calls_per_sample = 4;
};

struct AttentionRow {
  AttentionHeads heads;
  uint32_t position = 0, tokens = 1, chunks = 0, copies = 0;
  std::string spec;
  double us = 0, bytes = 0, gbps = 0, ratio = 0;  // bytes: k and v of the visible positions, q and out
  double gflops = 0;  // 4 head_dim flops a (query head, visible position) pair: scores and values
};

std::vector<AttentionRow> bench_attention(const gpu::Context& ctx, const AttentionBenchOptions& o,
                                          const Bandwidth& bw);

}  // namespace blockq::bench
