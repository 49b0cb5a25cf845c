// GpuModel: loading a llama/qwen2 GGUF onto the GPU (with progress) and the
// per-token forward pass (see gpu_model.hpp for the shapes and the order).
#include "model/gpu_model.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <numeric>

#include <fmt/format.h>

#include "kernels/gather/gather.hpp"
#include "kernels/matvec/op.hpp"
#include "model/gpu_attention.hpp"
#include "quant/half.hpp"
#include "util/error.hpp"

namespace blockq::model {

std::string_view family_name(KernelFamily f) {
  switch (f) {
    case KernelFamily::Embed: return "embed";
    case KernelFamily::Qkv: return "qkv+rope";
    case KernelFamily::KvCopy: return "kv-store";
    case KernelFamily::Attention: return "attention";
    case KernelFamily::AttnOut: return "attn-out";
    case KernelFamily::Ffn: return "ffn-gate-up";
    case KernelFamily::FfnDown: return "ffn-down";
    case KernelFamily::LmHead: return "lm-head";
    case KernelFamily::Readback: return "readback";
  }
  return "?";
}

namespace {

// Loading progress on stderr: a redrawn bar on a terminal, else a plain line
// at every quarter.
class Progress {
 public:
  Progress(bool on, uint64_t total, std::string name)
      : on_(on), tty_(on && isatty(2)), total_(std::max<uint64_t>(total, 1)), name_(std::move(name)) {}
  void add(uint64_t bytes) {
    if (!on_) return;
    done_ += bytes;
    const int pct = int(100 * done_ / total_);
    if (tty_) {
      const int w = 30, fill = w * pct / 100;
      std::fprintf(stderr, "\rloading %s [%s%s] %3d%% %.1f/%.1f MiB", name_.c_str(), std::string(fill, '#').c_str(),
                   std::string(w - fill, ' ').c_str(), pct, double(done_) / (1 << 20), double(total_) / (1 << 20));
      if (done_ >= total_) std::fprintf(stderr, "\n");
    } else {
      while (next_ <= pct && next_ <= 100) {
        std::fprintf(stderr, "loading %s: %d%% (%.1f MiB)\n", name_.c_str(), next_, double(done_) / (1 << 20));
        next_ += 25;
      }
    }
    std::fflush(stderr);
  }

 private:
  bool on_, tty_;
  uint64_t total_, done_ = 0;
  int next_ = 25;
  std::string name_;
};

// The dispatches of one layer for a number of tokens (1, or the prompt batch).
struct LayerPass {
  matvec::Prepared pq, pk, pv, po, pffn, pdown;
  GpuKvStore store;
  GpuAttention att;
};

struct Layer {
  matvec::Weights wq, wk, wv, wo, wg, wu, wd;
  gpu::Buffer attn_norm, ffn_norm, bq, bk, bv;  // [n_embd] x2, [n_q], [n_kv] x2
  gpu::Buffer kc, vc;                            // [n_ctx, n_kv, hd]
  LayerPass pass[2];                             // [0]: one token, [1]: `batch` tokens
};

}  // namespace

struct GpuModel::Impl {
  explicit Impl(gguf::GgufFile f) : file(std::move(f)) {}
  const gpu::Context* ctx = nullptr;
  gguf::GgufFile file;
  ModelConfig cfg;
  GpuModelOptions opt;
  uint32_t n_ctx = 0, n_past = 0;
  uint32_t batch = 1;              // prompt tokens per dispatch (matvec m)
  uint32_t m = 1;                  // tokens of the current inputs (1 or batch)
  std::vector<TokenId> cur;        // [batch] their ids
  GpuMemory mem;
  std::vector<Layer> layers;
  // Embedding gather: one table chunk per binding-sized row range.
  gather::EmbedLayout embed;
  const gpu::Kernel* embed_kernel = nullptr;
  std::vector<gpu::Buffer> embed_table, embed_params[2];
  std::vector<gpu::BindGroup> embed_groups[2];
  uint64_t rows_per_chunk = 0;
  // lm_head.
  matvec::Weights w_out;  // output.weight, or token_embd when tied
  gpu::Buffer out_norm;   // [n_embd]
  matvec::Prepared plm[2];
  // Activations, for up to `batch` tokens.
  gpu::Buffer ids, pos;                  // [batch] u32 each
  gpu::Buffer x, q, k, v, att, ff;       // [batch, n_embd | n_q | n_kv | n_kv | n_q | n_ff]
  gpu::Buffer scores, logits, readback;  // [batch, n_head, n_ctx], [batch, n_vocab], [n_vocab] mappable
  std::vector<float> host_logits;
  std::unique_ptr<gpu::Recorder> rec;

  Progress* progress = nullptr;

  gpu::Buffer vec_buffer(const std::string& name) {
    const gguf::TensorInfo& t = file.tensor(name);
    const std::vector<float> v = dequantize(t.format, file.tensor_data(t), t.n_elems());
    gpu::Buffer b = ctx->storage<float>(v, name);
    mem.weights += b.size();
    progress->add(t.nbytes);
    return b;
  }

  matvec::Weights weight(const std::string& name, uint32_t granularity = 256) {
    const gguf::TensorInfo& t = file.tensor(name);
    matvec::HostWeight hw;
    hw.kind.format = t.format;
    hw.k = uint32_t(t.shape[0]);
    hw.n = uint32_t(t.rows());
    hw.ggml = file.tensor_data(t);
    matvec::UploadOptions uo;
    uo.row_granularity = granularity;
    matvec::Weights w;
    try {
      w = matvec::upload(*ctx, hw, name, uo);
    } catch (const Error& e) {
      fail("{}: tensor '{}' ({} [{} x {}]) cannot be uploaded for the GPU matvec: {}", file.name(), name,
           traits(t.format).name, hw.n, hw.k, e.what());
    }
    mem.weights += w.bytes();
    progress->add(t.nbytes);
    return w;
  }

  gpu::Buffer act(uint64_t floats, const char* name) {
    gpu::Buffer b = ctx->create_buffer(floats * 4, gpu::kStorage, name);
    mem.activations += b.size();
    return b;
  }

  void load_embedding();
  void load();
  void prepare();
};

void GpuModel::Impl::load_embedding() {
  const gguf::TensorInfo& t = file.tensor("token_embd.weight");
  twin::EmbedSpec es{t.format, cfg.n_vocab, cfg.n_embd};
  std::span<const uint8_t> table = file.tensor_data(t);
  std::vector<uint8_t> converted;
  const Format f = t.format;
  if (f != Format::Q8_0 && f != Format::Q4_0 && f != Format::Q4_1 && f != Format::Q6_K && f != Format::F16 &&
      f != Format::F32) {
    // No gather decode for this format: the table goes up dequantized, in f32
    // while it stays under 256 MiB (exact), else in f16.
    const std::vector<float> full = dequantize(f, table, t.n_elems());
    if (full.size() * 4 <= (uint64_t{256} << 20)) {
      es.format = Format::F32;
      converted.resize(full.size() * 4);
      std::memcpy(converted.data(), full.data(), converted.size());
    } else {
      es.format = Format::F16;
      converted.resize(full.size() * 2);
      for (size_t i = 0; i < full.size(); ++i) {
        const uint16_t h = f32_to_f16(full[i]);
        std::memcpy(converted.data() + 2 * i, &h, 2);
      }
    }
    table = converted;
  }
  embed = gather::embed_layout(*ctx, es, {});
  const std::string key = embed.spec.key();
  embed_kernel = &ctx->kernel(key, key, [&] { return gather::embed_wgsl(embed); });
  rows_per_chunk = embed.chunks[0].row_hi - embed.chunks[0].row_lo;
  for (size_t c = 0; c < embed.chunks.size(); ++c) {
    const gather::EmbedChunk& ch = embed.chunks[c];
    embed_table.push_back(ctx->create_buffer(ch.bytes, gpu::kStorage, fmt::format("token_embd.gather.{}", c)));
    ctx->upload(embed_table.back(), table.subspan(ch.byte_off, ch.bytes));
    mem.embed_table += embed_table.back().size();
    for (int vi = 0; vi < 2; ++vi) {
      const uint32_t prm[4] = {(vi ? batch : 1) * cfg.n_embd, uint32_t(ch.row_lo), uint32_t(ch.row_hi), 0};
      embed_params[vi].push_back(
          ctx->create_buffer(16, gpu::kUniform, fmt::format("token_embd.params.m{}.{}", vi ? batch : 1, c)));
      ctx->upload<uint32_t>(embed_params[vi].back(), prm);
    }
  }
  progress->add(t.nbytes);
}

void GpuModel::Impl::load() {
  cfg = config_from_gguf(file);
  check_tensors(cfg, file);
  BQ_CHECK(!cfg.rope_freqs, "{}: rope_freqs.weight (Llama 3.1-style rope scaling) is not supported on the GPU yet",
           file.name());
  n_ctx = opt.n_ctx ? opt.n_ctx : std::min<uint32_t>(cfg.n_ctx_train ? cfg.n_ctx_train : 4096, 4096);
  uint64_t total = 0;
  for (const TensorSpec& s : expected_tensors(cfg)) total += file.tensor(s.name).nbytes;
  if (cfg.tied_embeddings) total += file.tensor("token_embd.weight").nbytes;
  std::string short_name = file.name();
  if (auto p = short_name.find_last_of('/'); p != std::string::npos) short_name = short_name.substr(p + 1);
  Progress prog(opt.progress, total, short_name);
  progress = &prog;

  load_embedding();
  const uint32_t kv = cfg.n_embd_kv();
  const uint32_t rope_gran = std::lcm<uint32_t>(256, cfg.head_dim);
  layers.resize(cfg.n_layer);
  for (uint32_t l = 0; l < cfg.n_layer; ++l) {
    Layer& L = layers[l];
    L.attn_norm = vec_buffer(layer_tensor_name(l, "attn_norm"));
    L.wq = weight(layer_tensor_name(l, "attn_q"), rope_gran);
    L.wk = weight(layer_tensor_name(l, "attn_k"), rope_gran);
    L.wv = weight(layer_tensor_name(l, "attn_v"));
    if (cfg.qkv_bias) {
      L.bq = vec_buffer(layer_tensor_name(l, "attn_q", "bias"));
      L.bk = vec_buffer(layer_tensor_name(l, "attn_k", "bias"));
      L.bv = vec_buffer(layer_tensor_name(l, "attn_v", "bias"));
    }
    L.wo = weight(layer_tensor_name(l, "attn_output"));
    L.ffn_norm = vec_buffer(layer_tensor_name(l, "ffn_norm"));
    L.wg = weight(layer_tensor_name(l, "ffn_gate"));
    L.wu = weight(layer_tensor_name(l, "ffn_up"));
    L.wd = weight(layer_tensor_name(l, "ffn_down"));
    const uint64_t cache = uint64_t{n_ctx} * kv;
    L.kc = ctx->create_buffer(cache * 4, gpu::kStorage, fmt::format("blk.{}.k_cache", l));
    L.vc = ctx->create_buffer(cache * 4, gpu::kStorage, fmt::format("blk.{}.v_cache", l));
    mem.kv_cache += L.kc.size() + L.vc.size();
  }
  out_norm = vec_buffer("output_norm.weight");
  w_out = weight(cfg.tied_embeddings ? "token_embd.weight" : "output.weight");
  progress = nullptr;
}

void GpuModel::Impl::prepare() {
  const uint32_t nq = cfg.n_embd_q(), kv = cfg.n_embd_kv();
  const uint64_t B = batch;
  ids = ctx->create_buffer(B * 4, gpu::kStorage, "ids");
  pos = ctx->create_buffer(B * 4, gpu::kStorage, "pos");
  x = act(B * cfg.n_embd, "x");
  q = act(B * nq, "q");
  k = act(B * kv, "k");
  v = act(B * kv, "v");
  att = act(B * nq, "attn");
  ff = act(B * cfg.n_ff, "ffn");
  scores = act(B * cfg.n_head * n_ctx, "scores");
  logits = act(B * cfg.n_vocab, "logits");
  readback = ctx->create_buffer(uint64_t{cfg.n_vocab} * 4, gpu::kReadback, "logits.readback");
  mem.activations += readback.size() + 8 * B;
  host_logits.resize(cfg.n_vocab);
  cur.assign(B, 0);
  for (int vi = 0; vi < 2; ++vi)
    for (size_t c = 0; c < embed.chunks.size(); ++c) {
      const bool uni[4] = {true, false, false, false};
      embed_groups[vi].push_back(ctx->bind(
          *embed_kernel, std::vector<gpu::Binding>{{&embed_params[vi][c]}, {&ids}, {&embed_table[c]}, {&x}},
          std::span<const bool>(uni, 4)));
    }

  Hooks norm;  // rmsnorm prologue
  norm.prologue = Prologue::RmsNorm;
  norm.eps = cfg.rms_eps;
  Hooks rope = norm;
  rope.epilogue = Epilogue::Rope;
  rope.rope_mode = cfg.rope_mode == model::RopeMode::Neox ? blockq::RopeMode::Neox : blockq::RopeMode::Normal;
  rope.head_dim = cfg.head_dim;
  rope.n_rot = cfg.n_rot;
  rope.rope_base = cfg.rope_freq_base;
  rope.rope_scale = cfg.rope_freq_scale;
  rope.bias = cfg.qkv_bias;
  Hooks vh = norm;
  vh.bias = cfg.qkv_bias;
  Hooks acc;
  acc.epilogue = Epilogue::Acc;
  Hooks silu = norm;
  silu.epilogue = Epilogue::SiluGate;
  for (int vi = 0; vi < (batch > 1 ? 2 : 1); ++vi) {
    const uint32_t mt = vi ? batch : 1;
    auto mv = [&](const matvec::Weights& w, const Hooks& h, matvec::Args a) {
      a.a = &w;
      return matvec::prepare(*ctx, matvec::plan(*ctx, w.kind, w.n, w.k, mt, h), a);
    };
    const GpuAttentionShape shape{cfg.n_head, cfg.n_head_kv, cfg.head_dim, n_ctx, mt};
    for (Layer& Ly : layers) {
      LayerPass& L = Ly.pass[vi];
      const gpu::Buffer* bq = cfg.qkv_bias ? &Ly.bq : nullptr;
      const gpu::Buffer* bk = cfg.qkv_bias ? &Ly.bk : nullptr;
      const gpu::Buffer* bv = cfg.qkv_bias ? &Ly.bv : nullptr;
      L.pq = mv(Ly.wq, rope, {.x = &x, .y = &q, .norm_w = &Ly.attn_norm, .bias = bq, .pos = &pos});
      L.pk = mv(Ly.wk, rope, {.x = &x, .y = &k, .norm_w = &Ly.attn_norm, .bias = bk, .pos = &pos});
      L.pv = mv(Ly.wv, vh, {.x = &x, .y = &v, .norm_w = &Ly.attn_norm, .bias = bv});
      L.store = GpuKvStore(*ctx, kv, n_ctx, mt, k, v, pos, Ly.kc, Ly.vc);
      L.att = GpuAttention(*ctx, shape, {&q, &Ly.kc, &Ly.vc, &pos, &scores, &att});
      L.po = mv(Ly.wo, acc, {.x = &att, .y = &x});
      L.pffn = mv(Ly.wg, silu, {.b = &Ly.wu, .x = &x, .y = &ff, .norm_w = &Ly.ffn_norm});
      L.pdown = mv(Ly.wd, acc, {.x = &ff, .y = &x});
    }
    plm[vi] = mv(w_out, norm, {.x = &x, .y = &logits, .norm_w = &out_norm});
  }
  rec = std::make_unique<gpu::Recorder>(*ctx, "forward");
}

GpuModel::GpuModel(const gpu::Context& ctx, gguf::GgufFile file, GpuModelOptions opt)
    : impl_(std::make_unique<Impl>(std::move(file))) {
  impl_->ctx = &ctx;
  impl_->opt = opt;
  impl_->batch = opt.batch ? std::clamp<uint32_t>(opt.batch, 1, 8)
                           : ctx.adapter().type == WGPUAdapterType_CPU ? 1 : 8;
  impl_->load();
  impl_->prepare();
  ctx.check("loading " + impl_->file.name());
}

GpuModel::~GpuModel() = default;
GpuModel::GpuModel(GpuModel&&) noexcept = default;
GpuModel& GpuModel::operator=(GpuModel&&) noexcept = default;

const ModelConfig& GpuModel::config() const { return impl_->cfg; }
const GpuMemory& GpuModel::memory() const { return impl_->mem; }
uint32_t GpuModel::n_ctx() const { return impl_->n_ctx; }
uint32_t GpuModel::n_past() const { return impl_->n_past; }
uint32_t GpuModel::batch() const { return impl_->batch; }
void GpuModel::reset() { impl_->n_past = 0; }

void GpuModel::set_inputs(std::span<const TokenId> tokens) {
  Impl& m = *impl_;
  BQ_CHECK(tokens.size() == 1 || tokens.size() == m.batch, "{} tokens at once: use 1 or the batch of {}",
           tokens.size(), m.batch);
  BQ_CHECK(m.n_past + tokens.size() <= m.n_ctx, "the KV cache is full ({} positions)", m.n_ctx);
  uint32_t id[8], p[8];
  for (size_t t = 0; t < tokens.size(); ++t) {
    BQ_CHECK(tokens[t] >= 0 && uint32_t(tokens[t]) < m.cfg.n_vocab, "token id {} is outside the vocabulary [0, {})",
             tokens[t], m.cfg.n_vocab);
    m.cur[t] = tokens[t];
    id[t] = uint32_t(tokens[t]);
    p[t] = m.n_past + uint32_t(t);
  }
  m.m = uint32_t(tokens.size());
  m.ctx->upload<uint32_t>(m.ids, std::span<const uint32_t>(id, m.m));
  m.ctx->upload<uint32_t>(m.pos, std::span<const uint32_t>(p, m.m));
}

void GpuModel::set_inputs(TokenId token) { set_inputs(std::span<const TokenId>(&token, 1)); }

void GpuModel::record(gpu::Recorder& r, std::optional<KernelFamily> only, bool readback) const {
  const Impl& m = *impl_;
  const int vi = m.m == 1 ? 0 : 1;
  auto on = [&](KernelFamily f) { return !only || *only == f; };
  if (on(KernelFamily::Embed)) {
    const gpu::Grid g = gpu::wrap_workgroups((uint64_t{m.m} * m.cfg.n_embd + m.embed.spec.wg - 1) / m.embed.spec.wg,
                                             m.embed.spec.max_groups);
    for (size_t c = 0; c < m.embed.chunks.size(); ++c) {
      bool needed = false;
      for (uint32_t t = 0; t < m.m; ++t) needed |= uint64_t(m.cur[t]) / m.rows_per_chunk == c;
      if (needed) r.dispatch(*m.embed_kernel, m.embed_groups[vi][c], g);
    }
  }
  for (const Layer& Ly : m.layers) {
    const LayerPass& L = Ly.pass[vi];
    if (on(KernelFamily::Qkv)) {
      L.pq.record(r);
      L.pk.record(r);
      L.pv.record(r);
    }
    if (on(KernelFamily::KvCopy)) L.store.record(r);
    if (on(KernelFamily::Attention)) L.att.record(r);
    if (on(KernelFamily::AttnOut)) L.po.record(r);
    if (on(KernelFamily::Ffn)) L.pffn.record(r);
    if (on(KernelFamily::FfnDown)) L.pdown.record(r);
  }
  if (on(KernelFamily::LmHead)) m.plm[vi].record(r);
  const uint64_t row = uint64_t{m.cfg.n_vocab} * 4;
  if (readback && on(KernelFamily::Readback)) r.copy(m.logits, (m.m - 1) * row, m.readback, 0, row);
}

uint32_t GpuModel::dispatches_per_token() const {
  gpu::Recorder r(*impl_->ctx, "count");
  record(r);
  return r.dispatches();  // recorded only, never submitted
}

std::span<const float> GpuModel::eval(TokenId token) { return eval_step(std::span<const TokenId>(&token, 1)); }

std::span<const float> GpuModel::eval_step(std::span<const TokenId> tokens) {
  Impl& m = *impl_;
  set_inputs(tokens);
  record(*m.rec);
  m.rec->submit();
  struct Map {
    bool done = false, ok = false;
    std::string message;
  } map;
  WGPUBufferMapCallbackInfo cb{};
  cb.mode = WGPUCallbackMode_WaitAnyOnly;
  cb.callback = [](WGPUMapAsyncStatus status, WGPUStringView msg, void* u1, void*) {
    auto* mp = static_cast<Map*>(u1);
    mp->ok = status == WGPUMapAsyncStatus_Success;
    if (msg.data) mp->message = msg.length == WGPU_STRLEN ? std::string(msg.data) : std::string(msg.data, msg.length);
  };
  cb.userdata1 = &map;
  const uint64_t bytes = uint64_t{m.cfg.n_vocab} * 4;
  m.ctx->wait(wgpuBufferMapAsync(m.readback.get(), WGPUMapMode_Read, 0, (bytes + 3) & ~uint64_t{3}, cb),
              "the logits");
  m.ctx->check("forward pass");
  BQ_CHECK(map.ok, "could not map the logits: {}", map.message);
  const void* p = wgpuBufferGetConstMappedRange(m.readback.get(), 0, (bytes + 3) & ~uint64_t{3});
  BQ_CHECK(p, "no mapped range for the logits");
  std::memcpy(m.host_logits.data(), p, bytes);
  wgpuBufferUnmap(m.readback.get());
  m.n_past += m.m;
  return m.host_logits;
}

std::span<const float> GpuModel::eval(std::span<const TokenId> tokens) {
  std::span<const float> out = impl_->host_logits;
  const size_t b = impl_->batch;
  size_t i = 0;
  if (b > 1)
    for (; i + b <= tokens.size(); i += b) out = eval_step(tokens.subspan(i, b));
  for (; i < tokens.size(); ++i) out = eval(tokens[i]);
  return out;
}

}  // namespace blockq::model
