// KernelSpec: the one hashable description of a generated kernel (op, weight
// format, dimensions, workgroup shape, tile, features, hooks). It keys the
// pipeline cache, labels the pipeline, and the host's dispatch math is
// derived from the same object the WGSL was generated from.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "quant/format.hpp"

namespace blockq {

enum class Op : uint8_t { Matvec, Gemm, Gather, Embed, RmsNorm, Rope, Attention, AttentionCombine, SiluGate, Softmax, Add, Copy, SplitSum, Rows, QuantX, SampleTopK, SamplePick, SamplePenalty, SampleBias, AttentionRows };

// The weight encoding a kernel reads: a ggml format, or ONNX's block-quantized
// layout (MatMulNBits / GatherBlockQuantized).
struct WeightKind {
  Format format = Format::F32;
  bool onnx = false;
  uint8_t bits = 0;          // ONNX: 4 or 8
  uint32_t block_size = 0;   // ONNX: a power of two >= 16
  bool zero_points = false;  // ONNX: explicit zero points
  bool operator==(const WeightKind&) const = default;
  std::string name() const;  // "q8_0", "onnx4b32zp"
};

enum class Prologue : uint8_t { None, RmsNorm };
enum class Epilogue : uint8_t { Store, Acc, SiluGate, Rope };
enum class RopeMode : uint8_t { Normal, Neox };

struct Hooks {
  Prologue prologue = Prologue::None;
  Epilogue epilogue = Epilogue::Store;
  bool bias = false;             // add a per-row bias before the epilogue
  RopeMode rope_mode = RopeMode::Normal;
  uint32_t head_dim = 0;         // rope: rows per head
  uint32_t n_rot = 0;            // rope: rotated dims per head (<= head_dim)
  float rope_base = 10000.f;
  float rope_scale = 1.f;        // linear position scaling (freq_scale)
  // rope: rows from rope_rows on (of the whole output, a multiple of head_dim)
  // are stored as they are, so one dispatch can produce Q and K rotated and V
  // not (weights concatenated [Q; K; V]). 0: every row is rotated.
  uint32_t rope_rows = 0;
  // rope: also store rows [kv_k, kv_k + kv_n) (k, rotated) and [kv_v, kv_v +
  // kv_n) (v) of each token t into caches [kv_ctx, kv_n] at row pos[t]
  // (positions >= kv_ctx skipped), as f32 or (kv_f16) f16 pairs packed by
  // pack2x16float, as the model's KV store does. kv_n 0: no store.
  uint32_t kv_n = 0, kv_k = 0, kv_v = 0, kv_ctx = 0;
  bool kv_f16 = false;
  float eps = 1e-5f;             // rmsnorm
  bool operator==(const Hooks&) const = default;
};

struct FeatureSet {
  bool subgroups = false;
  bool f16 = false;
  bool subgroup_matrix = false;
  // int8 activations: x quantized per block of 32 (ggml's q8 activations),
  // products summed by WGSL's dot4I8Packed (matvec).
  bool dot4 = false;
  bool operator==(const FeatureSet&) const = default;
};

struct KernelSpec {
  Op op = Op::Matvec;
  WeightKind weight;
  uint32_t n = 0;       // output rows (matvec/gemm), rows of the table (gather)
  uint32_t k = 0;       // reduction length / row length
  uint32_t m = 1;       // tokens (batch) the kernel is generated for
  uint32_t wg = 64;     // invocations per workgroup
  uint32_t tpr = 1;     // invocations per row (matvec)
  uint32_t tile = 0;    // staged input elements per token (matvec), tile k (gemm)
  uint32_t tokens = 1;  // tokens per workgroup (z chunk) (matvec)
  uint32_t unroll = 1;  // units a lane loads before it computes (matvec)
  uint32_t rpl = 1;     // rows each lane group computes, sharing its x reads (matvec)
  // Split-k: the reduction is cut into `splits` slices, each summed by its own
  // workgroups into a partial [splits][weights][m][n]; a split_sum kernel adds
  // the slices in order and runs the epilogue (matvec; the split count of a
  // SplitSum spec).
  uint32_t splits = 1;
  uint32_t tile_m = 0, tile_n = 0, reg_m = 0, reg_n = 0;  // gemm register tiling
  // Element offsets and row stride of q, k and v inside one shared activation
  // buffer (the model's attention and KV store read them from its qkv rows);
  // 0 where unused.
  struct Offsets {
    uint32_t q = 0, k = 0, v = 0, row = 0;
    bool operator==(const Offsets&) const = default;
  } offsets;
  uint32_t max_groups = 65535;  // the adapter's workgroups per dimension
  FeatureSet features;
  Hooks hooks;
  uint32_t variant = 0;  // family-specific switch (e.g. index dtype, output dtype)

  bool operator==(const KernelSpec&) const = default;
  uint32_t rpw() const { return wg / tpr * rpl; }  // rows per workgroup
  // Canonical text of every field: the cache key and the pipeline label.
  std::string key() const;
  size_t hash() const { return std::hash<std::string>{}(key()); }
};

std::string_view op_name(Op op);

}  // namespace blockq

template <>
struct std::hash<blockq::KernelSpec> {
  size_t operator()(const blockq::KernelSpec& s) const { return s.hash(); }
};
