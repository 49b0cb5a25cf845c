// GpuModel's state, shared by its loading (gpu_model.cpp) and its passes
// (gpu_model_pass.cpp): the uploaded weights, the buffers, and the prepared
// dispatches of a single token and of a prompt batch.
#pragma once
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "gpu/arena.hpp"
#include "kernels/gemm/matmul.hpp"
#include "kernels/matvec/op.hpp"
#include "kernels/matvec/rows.hpp"
#include "kernels/attention/attention.hpp"
#include "kernels/sample/sample.hpp"
#include "model/gpu_kv_store.hpp"
#include "model/gpu_model.hpp"
#include "model/gpu_rows.hpp"

namespace blockq::model {

class Progress;

inline constexpr uint32_t kMaxBatch = 512;        // prompt tokens per command buffer, at most
inline constexpr uint32_t kPadPos = 0xffffffffu;  // the position of a batch's padding tokens

// One projection: a matvec with fused hooks (single tokens) or a matmul
// (prompt batches: matvec or gemm by m).
struct Proj {
  std::variant<std::monostate, matvec::Prepared, gemm::Matmul> p;
  void record(gpu::Recorder& r) const {
    if (auto* a = std::get_if<matvec::Prepared>(&p)) a->record(r);
    if (auto* b = std::get_if<gemm::Matmul>(&p)) b->record(r);
  }
  bool uses_gemm() const {
    auto* b = std::get_if<gemm::Matmul>(&p);
    return b && b->uses_gemm();
  }
};

// The dispatches of one layer for 1 token (fused matvecs) or a prompt batch
// (norms, matmuls, bias + RoPE apart). A fused layer has only pq (the QKV
// projection into qkv); pk and pv stay empty.
struct LayerPass {
  Proj pq, pk, pv, po, pffn, pdown;
  bool norms = false;       // the rmsnorms run apart (prompt batch)
  GpuRmsNorm n_attn, n_ffn;
  std::vector<GpuRope> ropes;  // bias and/or RoPE after the projections (prompt batch, or rope_freqs)
  GpuKvStore store;
  attention::Attention att;
};

struct Layer {
  // fused: attn_q, attn_k and attn_v share a format, and their rows are
  // stacked into one weight wqkv [n_q + 2 n_kv, n_embd] (and bqkv
  // [n_q + 2 n_kv]) whose projection writes rows [q | k | v] into qkv;
  // else wq, wk, wv (bq, bk, bv) write q, k, v apart.
  bool fused = false;
  // Each uploaded once, in the matvec layout, which the gemm reads too.
  matvec::Weights wqkv, wq, wk, wv, wo, wg, wu, wd;
  gpu::Slice attn_norm, ffn_norm, bqkv, bq, bk, bv;  // [n_embd] x2, [n_q + 2 n_kv], [n_q], [n_kv] x2
  gpu::Buffer kc, vc;                              // [n_ctx, n_kv, hd] f16 (packed) or f32
  std::vector<LayerPass> pass;                     // [passes]: [0] one token, [i >= 1] prompt batches
};

struct GpuModel::Impl {
  explicit Impl(gguf::GgufFile f) : file(std::move(f)) {}
  const gpu::Context* ctx = nullptr;
  gguf::GgufFile file;
  ModelConfig cfg;
  GpuModelOptions opt;
  // The matvec options of a token projection: int8 activations unless asked
  // not to, where matvec::int8_by_default allows them (the format, the
  // adapter, and at least opt.int8_min_elements elements, unset: the
  // format's matvec::int8_min_elements; on smaller weights quantizing x costs
  // about what it saves: records of sessions 5, 27 and 44 in docs/perf).
  matvec::Options mv_options(const matvec::Weights& w) const {
    matvec::Options o;
    if (opt.int8_activations &&
        matvec::int8_by_default(matvec::limits_of(*ctx), w.kind, w.n, w.k, opt.int8_min_elements))
      o.int8 = true;
    return o;
  }
  uint32_t n_ctx = 0, n_past = 0;
  uint32_t batch = 1;              // prompt tokens per command buffer (the matmul m)
  // The rows of each pass: [0] 1 (a token), then the prompt batches from
  // `batch` down, halving, to the smallest at least opt.min_batch (one batch
  // pass when batch < 2 min_batch). A step of m > 1 tokens takes the smallest
  // batch pass that holds them, so a short prompt computes fewer padded rows.
  std::vector<uint32_t> pass_rows;
  int pass_for(size_t tokens) const {
    int vi = 0;
    for (size_t i = 1; tokens > 1 && i < pass_rows.size() && pass_rows[i] >= tokens; ++i) vi = int(i);
    return vi;
  }
  uint32_t m = 1;                  // real tokens of the current inputs (1 to pass_rows[vi])
  int vi = 0;                      // the pass of the current inputs: 0 one token, else a batch
  std::vector<TokenId> cur;        // [batch] their ids (padding: 0)
  std::vector<uint32_t> host_ids, host_pos;  // [batch] staging for ids and pos
  GpuMemory mem;
  std::vector<Layer> layers;
  // Every tensor, uploaded once into slices of this arena's buffers.
  std::unique_ptr<gpu::Arena> arena;
  // Embedding lookup: rows of token_embd gathered from its matvec layout
  // (w_out when tied, else w_embed), one dispatch per row chunk holding a
  // current token.
  matvec::Weights w_embed;  // token_embd when not tied, else empty
  const matvec::Weights& embed_weights() const { return cfg.tied_embeddings ? w_out : w_embed; }
  std::vector<matvec::PreparedRows> embed_rows;  // [passes]
  // lm_head.
  matvec::Weights w_out;  // output.weight, or token_embd when tied
  gpu::Slice out_norm;    // [n_embd]
  gpu::Slice rope_ff;     // [n_rot / 2] freq factors (rope_freqs.weight), or empty
  std::vector<matvec::Prepared> plm;  // [passes]: [0] from x, [i >= 1] from x_last
  // Activations, for up to `batch` tokens.
  gpu::Buffer ids, pos;                  // [batch] u32 each
  gpu::Buffer x, h, att, ff;             // [batch, n_embd | n_embd | n_q | n_ff]
  gpu::Buffer qkv;                       // [batch, n_q + 2 n_kv] rows [q | k | v] of fused layers, or empty
  gpu::Buffer q, k, v;                   // [batch, n_q | n_kv | n_kv] of unfused layers, or empty
  gpu::Buffer x_last;                    // [n_embd] the batch's last real token
  gpu::Buffer logits, readback;          // [n_vocab], [n_vocab] mappable
  gpu::Buffer att_part;                  // the attentions' partials, shared (attention::scratch_bytes)
  // Split-k partials of the prompt gemms, shared (they run one after
  // another). Grown when a projection needs more; a replaced buffer lives on
  // in the bind groups of the projections prepared before.
  gpu::Buffer gemm_part;
  gpu::Buffer gemm_xq;  // the int8 gemms' quantized x, shared likewise (gemm_int8)
  // Every row's logits (GpuModel::eval_all), prepared on its first call:
  // per batch pass, the final norm of its first `rows` rows into h, the
  // lm_head over them into logits [rows, n_vocab], copied into readback
  // (mapped as `mapped` after a step that asked for them). rows of pass 1 is
  // the most (its batch, or fewer where the logits pass kAllRowsBytes or a
  // binding); the smaller passes take min(their rows, that).
  struct AllRows {
    uint32_t rows = 0;  // of pass 1; 0: not prepared
    struct Pass {
      uint32_t rows = 0;
      GpuRmsNorm norm;
      Proj lm;
    };
    std::vector<Pass> pass;  // [passes] ([0] unused)
    gpu::Buffer logits, readback;
    std::span<const float> mapped;
  } all;
  static constexpr uint64_t kAllRowsBytes = uint64_t{64} << 20;
  void prepare_all_rows();  // gpu_model_pass.cpp
  // A prompt projection over m rows through gemm::matmul (the gemm's
  // partials in gemm_part, grown as needed).
  Proj matmul(const matvec::Weights& w, const Hooks& hk, const gpu::Buffer& in, const gpu::Buffer& out, uint32_t m,
              const matvec::Weights* w_b = nullptr);
  // The logits of the last step: the readback buffer's mapped range, kept
  // mapped until the next step submits (or record() asks for the copy), or
  // zeros before the first step.
  std::vector<float> zero_logits;
  std::span<const float> last_logits;
  bool logits_mapped = false;
  void unmap_logits() {
    if (!logits_mapped) return;
    wgpuBufferUnmap(readback.get());
    logits_mapped = false;
    last_logits = zero_logits;
  }
  std::unique_ptr<gpu::Recorder> rec;
  // The command buffer of one token at position ahead_pos, encoded while the
  // GPU ran the step before (GpuModelOptions::encode_ahead), or empty.
  std::vector<gpu::Handle<WGPUCommandBuffer>> ahead;
  uint32_t ahead_pos = 0;
  StepTimes times;  // of the last eval_step
  // Generation with the GPU sampler (GpuModel::begin_generation). Step 0
  // samples the logits of the eval before; step s >= 1 evaluates token s - 1
  // (its id copied into ids by step s - 1) at position p0 + s - 1 and samples
  // token s. Each step copies its token into tokens[s % 2], which the host
  // maps once the step after it is queued. With penalties, each step also
  // copies its token into slot (slot0 + s) % W of the sampler's window.
  struct Generation {
    bool on = false;
    SamplerConfig cfg;
    std::mt19937_64 rng;
    sample::GpuSampler sampler;  // kept after the end (record() times it)
    gpu::Buffer tokens[2];       // [1] u32 each, mappable
    uint32_t p0 = 0, max_tokens = 0, submitted = 0, taken = 0;
    uint32_t slot0 = 0;  // the window's slot of token 0: history tokens % W
    // with_logits: step s copies the logits it samples into logits[s % 2]
    // before the penalties; next_token maps the taken token's (`mapped`)
    // and unmaps it at the next call, before step s + 2 reuses the buffer.
    bool with_logits = false;
    gpu::Buffer logits[2];  // [n_vocab] f32 each, mappable
    int mapped_slot = -1;
    std::span<const float> mapped;
    void unmap_logits() {
      if (mapped_slot >= 0) wgpuBufferUnmap(logits[mapped_slot].get());
      mapped_slot = -1;
      mapped = {};
    }
  } gen;
  void submit_generation_step();

  Progress* progress = nullptr;

  gpu::Slice vec_buffer(const std::string& name);  // a 1-D tensor, as f32
  matvec::Weights weight(const std::string& name, uint32_t granularity = 256);
  void load_qkv(uint32_t l, Layer& L);  // wqkv (fused) or wq, wk, wv, with their biases
  gpu::Buffer act(uint64_t floats, const char* name);

  void load();
  void prepare();                  // gpu_model_pass.cpp
  void prepare_single();           // pass[0]
  void prepare_batch(int vi);      // pass[vi], vi >= 1
  // What one step records: pass[vi]'s dispatches for tokens that see at
  // most `visible` positions, layers [layer0, layer1) (the embedding with
  // layer 0, the lm_head and the logits' copy after the last layer): all, or
  // one family's; the embedding chunks holding a current token, or every
  // chunk; the logits' copy only when `readback`.
  struct StepSel {
    int vi = 0;
    uint32_t visible = 0;
    bool every_embed_chunk = false;
    std::optional<KernelFamily> only;
    bool readback = true;
    uint32_t layer0 = 0, layer1 = UINT32_MAX;
    // The GPU sampler after the lm_head (when gen.sampler is made), its token
    // copied into ids, into gen.tokens[token_slot] and, with penalties, into
    // slot recent_slot of the sampler's window.
    bool sample = false;
    uint32_t token_slot = 0;
    uint32_t recent_slot = 0;
    // Also every real row's logits into all.readback (a batch; all prepared).
    bool all_rows = false;
    // >= 0: the logits copied into gen.logits[slot] before the sampler.
    int logits_slot = -1;
  };
  void record_step(gpu::Recorder& r, const StepSel& sel) const;
  // The whole step (sel's layer range ignored) as one command buffer per
  // piece of submit_piece_ends(n_layer, opt.submit_pieces), recorded into rec.
  std::vector<gpu::Handle<WGPUCommandBuffer>> encode_step(StepSel sel) const;
  uint32_t visible_now() const;  // `visible` of the current inputs
};

}  // namespace blockq::model
