// GpuModel: loading a llama/qwen2 GGUF onto the GPU (with progress), the
// inputs of a step and its submit and readback (the passes are in
// gpu_model_pass.cpp; gpu_model.hpp gives the shapes and the order).
#include "model/gpu_model.hpp"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <utility>

#include <fmt/format.h>

#include "model/gpu_model_impl.hpp"
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
    case KernelFamily::Sample: return "sample";
    case KernelFamily::Readback: return "readback";
  }
  return "?";
}

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

namespace {

double micros(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

}  // namespace

gpu::Slice GpuModel::Impl::vec_buffer(const std::string& name) {
  const gguf::TensorInfo& t = file.tensor(name);
  const std::vector<float> v = dequantize(t.format, file.tensor_data(t), t.n_elems());
  const gpu::Slice b = arena->put<float>(v, name);
  progress->add(t.nbytes);
  return b;
}

matvec::Weights GpuModel::Impl::weight(const std::string& name, uint32_t granularity) {
  const gguf::TensorInfo& t = file.tensor(name);
  matvec::HostWeight hw;
  hw.kind.format = t.format;
  hw.k = uint32_t(t.shape[0]);
  hw.n = uint32_t(t.rows());
  hw.ggml = file.tensor_data(t);
  matvec::UploadOptions uo;
  uo.row_granularity = granularity;
  uo.arena = arena.get();
  matvec::Weights w;
  try {
    w = matvec::upload(*ctx, hw, name, uo);
  } catch (const Error& e) {
    fail("{}: tensor '{}' ({} [{} x {}]) cannot be uploaded for the GPU matvec: {}", file.name(), name,
         traits(t.format).name, hw.n, hw.k, e.what());
  }
  progress->add(t.nbytes);
  return w;
}

// Q, K and V: stacked into one weight when they share a format (the rows of a
// ggml tensor are independent, so the raw row bytes concatenate), uploaded
// once with the RoPE hook's row granularity (chunks of whole heads; the gemm
// reads the same chunks); the qwen2 biases concatenated [n_q + 2 n_kv].
void GpuModel::Impl::load_qkv(uint32_t l, Layer& L) {
  const std::string names[3] = {layer_tensor_name(l, "attn_q"), layer_tensor_name(l, "attn_k"),
                                layer_tensor_name(l, "attn_v")};
  const gguf::TensorInfo* t[3] = {&file.tensor(names[0]), &file.tensor(names[1]), &file.tensor(names[2])};
  const uint32_t rope_gran = std::lcm<uint32_t>(256, cfg.head_dim);
  L.fused = opt.fuse_qkv && t[0]->format == t[1]->format && t[0]->format == t[2]->format;
  if (!L.fused) {
    L.wq = weight(names[0], rope_gran);
    L.wk = weight(names[1], rope_gran);
    L.wv = weight(names[2]);
    if (cfg.qkv_bias) {
      L.bq = vec_buffer(layer_tensor_name(l, "attn_q", "bias"));
      L.bk = vec_buffer(layer_tensor_name(l, "attn_k", "bias"));
      L.bv = vec_buffer(layer_tensor_name(l, "attn_v", "bias"));
    }
    return;
  }
  const Format f = t[0]->format;
  const std::string label = layer_tensor_name(l, "attn_qkv");
  std::vector<uint8_t> rows;  // [n_q + 2 n_kv rows] of row_bytes(f, n_embd)
  rows.reserve(t[0]->nbytes + t[1]->nbytes + t[2]->nbytes);
  uint32_t n = 0;
  for (const gguf::TensorInfo* ti : t) {
    const std::span<const uint8_t> d = file.tensor_data(*ti);
    rows.insert(rows.end(), d.begin(), d.end());
    n += uint32_t(ti->rows());
  }
  const uint32_t k = uint32_t(t[0]->shape[0]);
  matvec::HostWeight hw;
  hw.kind.format = f;
  hw.k = k;
  hw.n = n;
  hw.ggml = rows;
  try {
    L.wqkv = matvec::upload(*ctx, hw, label, {.row_granularity = rope_gran, .arena = arena.get()});
  } catch (const Error& e) {
    fail("{}: tensors '{}', '{}', '{}' ({} [{} x {}] stacked) cannot be uploaded for the GPU matvec: {}", file.name(),
         names[0], names[1], names[2], traits(f).name, n, k, e.what());
  }
  progress->add(rows.size());
  if (cfg.qkv_bias) {
    std::vector<float> b;  // [n_q + 2 n_kv]
    for (const char* w : {"attn_q", "attn_k", "attn_v"}) {
      const gguf::TensorInfo& bt = file.tensor(layer_tensor_name(l, w, "bias"));
      const std::vector<float> v = dequantize(bt.format, file.tensor_data(bt), bt.n_elems());
      b.insert(b.end(), v.begin(), v.end());
      progress->add(bt.nbytes);
    }
    L.bqkv = arena->put<float>(b, label + ".bias");
  }
}

gpu::Buffer GpuModel::Impl::act(uint64_t floats, const char* name) {
  gpu::Buffer b = ctx->create_buffer(floats * 4, gpu::kStorage, name);
  mem.activations += b.size();
  return b;
}

void GpuModel::Impl::load() {
  cfg = config_from_gguf(file);
  check_tensors(cfg, file);
  n_ctx = opt.n_ctx ? opt.n_ctx : std::min<uint32_t>(cfg.n_ctx_train ? cfg.n_ctx_train : 4096, 4096);
  uint64_t total = 0;
  for (const TensorSpec& s : expected_tensors(cfg)) total += file.tensor(s.name).nbytes;
  std::string short_name = file.name();
  if (auto p = short_name.find_last_of('/'); p != std::string::npos) short_name = short_name.substr(p + 1);
  Progress prog(opt.progress, total, short_name);
  progress = &prog;

  arena = std::make_unique<gpu::Arena>(*ctx, "weights");
  // token_embd: the lm_head's upload when tied (below), else its own, read
  // only by the embedding lookup.
  if (!cfg.tied_embeddings) w_embed = weight("token_embd.weight");
  const uint32_t kv = cfg.n_embd_kv();
  layers.resize(cfg.n_layer);
  for (uint32_t l = 0; l < cfg.n_layer; ++l) {
    Layer& L = layers[l];
    L.attn_norm = vec_buffer(layer_tensor_name(l, "attn_norm"));
    load_qkv(l, L);
    L.wo = weight(layer_tensor_name(l, "attn_output"));
    L.ffn_norm = vec_buffer(layer_tensor_name(l, "ffn_norm"));
    L.wg = weight(layer_tensor_name(l, "ffn_gate"));
    L.wu = weight(layer_tensor_name(l, "ffn_up"));
    L.wd = weight(layer_tensor_name(l, "ffn_down"));
    const uint64_t cache = kv_cache_bytes(opt.kv_type == KvType::F16 ? Format::F16 : Format::F32, uint64_t{n_ctx} * kv);
    L.kc = ctx->create_buffer(cache, gpu::kStorage, fmt::format("blk.{}.k_cache", l));
    L.vc = ctx->create_buffer(cache, gpu::kStorage, fmt::format("blk.{}.v_cache", l));
    mem.kv_cache += L.kc.size() + L.vc.size();
  }
  out_norm = vec_buffer("output_norm.weight");
  if (cfg.rope_freqs) rope_ff = vec_buffer("rope_freqs.weight");
  w_out = weight(cfg.tied_embeddings ? "token_embd.weight" : "output.weight");
  arena->flush();
  mem.weights = arena->reserved();
  mem.weight_buffers = static_cast<uint32_t>(arena->pages());
  progress = nullptr;
}

GpuModel::GpuModel(const gpu::Context& ctx, gguf::GgufFile file, GpuModelOptions opt)
    : impl_(std::make_unique<Impl>(std::move(file))) {
  impl_->ctx = &ctx;
  impl_->opt = opt;
  impl_->load();  // sets n_ctx
  impl_->batch = opt.batch ? std::clamp<uint32_t>(opt.batch, 1, kMaxBatch)
                           : auto_prompt_batch(ctx.adapter().type == WGPUAdapterType_CPU, impl_->n_ctx);
  impl_->prepare();
  ctx.check("loading " + impl_->file.name());
}

uint32_t auto_prompt_batch(bool cpu_adapter, uint32_t n_ctx) {
  if (cpu_adapter) return 1;
  uint32_t b = kMaxBatch;
  while (b > n_ctx && b > 1) b /= 2;
  return b;
}

GpuModel::~GpuModel() = default;
GpuModel::GpuModel(GpuModel&&) noexcept = default;
GpuModel& GpuModel::operator=(GpuModel&&) noexcept = default;

const ModelConfig& GpuModel::config() const { return impl_->cfg; }
const GpuMemory& GpuModel::memory() const { return impl_->mem; }
uint32_t GpuModel::n_ctx() const { return impl_->n_ctx; }
uint32_t GpuModel::n_past() const { return impl_->n_past; }
uint32_t GpuModel::batch() const { return impl_->batch; }
std::vector<uint32_t> GpuModel::prompt_passes() const {
  return {impl_->pass_rows.begin() + 1, impl_->pass_rows.end()};
}
KvType GpuModel::kv_type() const { return impl_->opt.kv_type; }
uint32_t GpuModel::prompt_gemm_count() const {
  uint32_t n = 0;
  if (impl_->batch > 1)
    for (const Layer& L : impl_->layers)
      for (const Proj* p : {&L.pass[1].pq, &L.pass[1].pk, &L.pass[1].pv, &L.pass[1].po, &L.pass[1].pffn, &L.pass[1].pdown})
        n += p->uses_gemm();
  return n;
}
uint32_t GpuModel::prompt_projection_count() const {
  uint32_t n = 0;
  for (const Layer& L : impl_->layers) n += L.fused ? 4 : 6;
  return n;
}
uint32_t GpuModel::fused_qkv_layers() const {
  uint32_t n = 0;
  for (const Layer& L : impl_->layers) n += L.fused;
  return n;
}
uint32_t GpuModel::kv_store_fused_layers() const {
  uint32_t n = 0;
  for (const Layer& L : impl_->layers) n += L.fused && !L.pass[0].store;
  return n;
}
void GpuModel::reset() {
  end_generation();
  impl_->n_past = 0;
  impl_->ahead.clear();
}
void GpuModel::truncate(uint32_t n) {
  end_generation();
  BQ_CHECK(n <= impl_->n_past, "cannot keep {} positions of a cache that holds {}", n, impl_->n_past);
  impl_->n_past = n;
  impl_->ahead.clear();  // encoded for the old position
}
const StepTimes& GpuModel::last_step() const { return impl_->times; }

void GpuModel::set_inputs(std::span<const TokenId> tokens) {
  Impl& m = *impl_;
  BQ_CHECK(!m.gen.on, "the model is generating with the GPU sampler: end_generation() before eval()");
  BQ_CHECK(!tokens.empty() && tokens.size() <= m.batch, "{} tokens at once: use 1 to the batch of {}", tokens.size(),
           m.batch);
  BQ_CHECK(m.n_past + tokens.size() <= m.n_ctx, "the KV cache is full ({} positions)", m.n_ctx);
  m.vi = m.pass_for(tokens.size());
  const size_t rows = m.pass_rows[size_t(m.vi)];
  std::vector<uint32_t>& id = m.host_ids;
  std::vector<uint32_t>& p = m.host_pos;
  for (size_t t = 0; t < rows; ++t) {
    const bool real = t < tokens.size();
    if (real)
      BQ_CHECK(tokens[t] >= 0 && uint32_t(tokens[t]) < m.cfg.n_vocab,
               "token id {} is outside the vocabulary [0, {})", tokens[t], m.cfg.n_vocab);
    m.cur[t] = real ? tokens[t] : 0;
    id[t] = uint32_t(m.cur[t]);
    p[t] = real ? m.n_past + uint32_t(t) : kPadPos;  // padding: not stored, not attended, not rotated
  }
  m.m = uint32_t(tokens.size());
  m.ctx->upload<uint32_t>(m.ids, std::span<const uint32_t>(id.data(), rows));
  m.ctx->upload<uint32_t>(m.pos, std::span<const uint32_t>(p.data(), rows));
}

void GpuModel::set_inputs(TokenId token) { set_inputs(std::span<const TokenId>(&token, 1)); }

std::span<const float> GpuModel::eval(TokenId token) { return eval_step(std::span<const TokenId>(&token, 1)); }

std::span<const float> GpuModel::eval_step(std::span<const TokenId> tokens) { return step(tokens, false); }

std::span<const float> GpuModel::step(std::span<const TokenId> tokens, bool all_rows) {
  using clock = std::chrono::steady_clock;
  const auto us = micros;
  Impl& m = *impl_;
  StepTimes& st = m.times;
  const auto t0 = clock::now();
  set_inputs(tokens);
  st.rows = m.pass_rows[size_t(m.vi)];
  const auto t1 = clock::now();
  std::vector<gpu::Handle<WGPUCommandBuffer>> cmds;
  st.encoded_ahead = m.vi == 0 && !m.ahead.empty() && m.ahead_pos == m.n_past;
  if (st.encoded_ahead) cmds = std::move(m.ahead);
  m.ahead.clear();
  BQ_ASSERT(!all_rows || (m.vi && m.all.pass[size_t(m.vi)].rows >= m.m));
  if (cmds.empty()) cmds = m.encode_step({.vi = m.vi, .visible = m.visible_now(), .all_rows = all_rows});
  const auto t2 = clock::now();
  m.unmap_logits();  // the step copies the new logits into the buffer
  for (auto& c : cmds) gpu::submit(*m.ctx, std::move(c), "forward");
  const auto t3 = clock::now();
  gpu::MapStatus map, map_rows;
  const uint64_t bytes = uint64_t{m.cfg.n_vocab} * 4;
  const WGPUFuture mapped = gpu::map_read(m.readback, bytes, map);
  const WGPUFuture mapped_rows = all_rows ? gpu::map_read(m.all.readback, bytes * m.m, map_rows) : WGPUFuture{};
  // While the GPU runs: the next single token's buffer (position n_past + m,
  // which sees n_past + m + 1 positions; any id).
  const uint32_t next = m.n_past + m.m;
  if (m.opt.encode_ahead && next < m.n_ctx) {
    m.ahead = m.encode_step({.vi = 0, .visible = next + 1, .every_embed_chunk = true});
    m.ahead_pos = next;
  }
  const auto t4 = clock::now();
  m.ctx->wait(mapped, "the logits");
  const auto t5 = clock::now();
  m.ctx->check("forward pass");
  BQ_CHECK(map.ok, "could not map the logits: {}", map.message);
  const void* p = wgpuBufferGetConstMappedRange(m.readback.get(), 0, (bytes + 3) & ~uint64_t{3});
  if (!p) wgpuBufferUnmap(m.readback.get());
  BQ_CHECK(p, "no mapped range for the logits");
  // The logits stay mapped until the next step (no copy): the caller reads
  // them where the GPU's copy left them.
  m.logits_mapped = true;
  m.last_logits = std::span<const float>(static_cast<const float*>(p), m.cfg.n_vocab);
  if (all_rows) {
    m.ctx->wait(mapped_rows, "every row's logits");
    BQ_CHECK(map_rows.ok, "could not map every row's logits: {}", map_rows.message);
    const void* pr = wgpuBufferGetConstMappedRange(m.all.readback.get(), 0, bytes * m.m);
    if (!pr) wgpuBufferUnmap(m.all.readback.get());
    BQ_CHECK(pr, "no mapped range for every row's logits");
    m.all.mapped = std::span<const float>(static_cast<const float*>(pr), size_t{m.m} * m.cfg.n_vocab);
  }
  m.n_past += m.m;
  const auto t6 = clock::now();
  st.inputs = us(t0, t1);
  st.encode = us(t1, t2);
  st.submit = us(t2, t3);
  st.ahead = us(t3, t4);
  st.wait = us(t4, t5);
  st.read = us(t5, t6);
  return m.last_logits;
}

bool GpuModel::generating() const { return impl_->gen.on; }

void GpuModel::prepare_generation(const SamplerConfig& cfg) {
  Impl& m = *impl_;
  BQ_CHECK(!m.gen.on, "prepare_generation() while generating: end_generation() first");
  const std::string why = gpu_sampling_unsupported(cfg);
  BQ_CHECK(why.empty(), "the GPU sampler cannot take these settings: {}", why);
  BQ_CHECK(cfg.repeat_penalty > 0.0f, "repeat_penalty {} must be positive", cfg.repeat_penalty);
  const uint32_t k = cfg.temperature <= 0.0f ? 1 : std::min<uint32_t>(uint32_t(cfg.top_k), m.cfg.n_vocab);
  sample::Options o;
  o.penalty_window = penalties_on(cfg) ? uint32_t(cfg.repeat_last_n) : 0;
  // The bias table's slots: a power of two >= the ids in the vocabulary (at
  // least 16, at most n_vocab), so that a few sizes serve every request.
  const size_t biased = size_t(std::count_if(cfg.logit_bias.begin(), cfg.logit_bias.end(), [&](const auto& e) {
    return e.first >= 0 && uint32_t(e.first) < m.cfg.n_vocab;
  }));
  o.bias_slots = biased ? uint32_t(std::min<size_t>(std::bit_ceil(std::max<size_t>(biased, 16)), m.cfg.n_vocab)) : 0;
  const sample::Plan& have = m.gen.sampler ? m.gen.sampler.plan() : sample::Plan{};
  if (!m.gen.sampler || have.pick.k != k || have.penalty.k != o.penalty_window || have.bias.k != o.bias_slots)
    m.gen.sampler = sample::GpuSampler(*m.ctx, m.cfg.n_vocab, k, m.logits, o);
  for (int i = 0; i < 2; ++i)
    if (!m.gen.tokens[i]) m.gen.tokens[i] = m.ctx->create_buffer(4, gpu::kReadback, fmt::format("generated token {}", i));
}

void GpuModel::begin_generation(const SamplerConfig& cfg, uint32_t max_tokens, std::span<const TokenId> history,
                                bool with_logits) {
  Impl& m = *impl_;
  BQ_CHECK(!m.gen.on, "begin_generation() while generating: end_generation() first");
  BQ_CHECK(m.n_past > 0, "begin_generation() samples the logits of an eval(): evaluate a prompt first");
  prepare_generation(cfg);  // checks cfg
  m.gen.unmap_logits();
  m.gen.with_logits = with_logits;
  for (int i = 0; i < 2 && with_logits; ++i)
    if (!m.gen.logits[i])
      m.gen.logits[i] = m.ctx->create_buffer(uint64_t{m.cfg.n_vocab} * 4, gpu::kReadback,
                                             fmt::format("generation logits {}", i));
  m.unmap_logits();
  m.ahead.clear();
  m.gen.sampler.set(*m.ctx, {});
  if (m.gen.sampler.plan().bias.k > 0) {  // the ids in the vocabulary (distinct: SamplerConfig's contract)
    std::vector<uint32_t> ids;
    std::vector<float> bias;
    for (const auto& [id, b] : cfg.logit_bias)
      if (id >= 0 && uint32_t(id) < m.cfg.n_vocab) {
        ids.push_back(uint32_t(id));
        bias.push_back(b);
      }
    m.gen.sampler.set_bias(*m.ctx, ids, bias);
  }
  // The penalties' window: history token j in slot j % w (its last w), the
  // generated token s copied by its step into slot (history + s) % w, over
  // the oldest (Impl::Generation).
  const uint32_t w = m.gen.sampler.plan().penalty.k;
  if (w > 0) {
    std::vector<uint32_t> ring(w, sample::kNoToken);
    for (size_t j = history.size() > w ? history.size() - w : 0; j < history.size(); ++j)
      ring[j % w] = history[j] < 0 ? sample::kNoToken : uint32_t(history[j]);  // ids past the vocabulary are skipped
    m.gen.sampler.set_recent(*m.ctx, ring);
    m.gen.sampler.set_penalties(*m.ctx, {cfg.repeat_penalty, cfg.frequency_penalty, cfg.presence_penalty});
    m.gen.slot0 = uint32_t(history.size() % w);
  }
  m.gen.cfg = cfg;
  m.gen.rng.seed(cfg.seed);
  m.gen.p0 = m.n_past;
  m.gen.max_tokens = max_tokens;
  m.gen.submitted = m.gen.taken = 0;
  m.gen.on = true;
  m.times = {};
}

void GpuModel::Impl::submit_generation_step() {
  const auto t0 = std::chrono::steady_clock::now();
  const uint32_t s = gen.submitted;
  if (gen.cfg.temperature > 0.0f)
    gen.sampler.set(*ctx, {gen.cfg.temperature, gen.cfg.top_p, gen.cfg.min_p, float(uniform_draw(gen.rng))});
  const uint32_t w = gen.sampler.plan().penalty.k;
  StepSel sel{.vi = 0, .readback = false, .sample = true, .token_slot = s % 2,
              .recent_slot = w ? (gen.slot0 + s) % w : 0, .logits_slot = gen.with_logits ? int(s % 2) : -1};
  if (s == 0) {  // the sampler alone, on the logits of the eval before
    sel.only = KernelFamily::Sample;
    sel.layer0 = uint32_t(layers.size());
  } else {  // token s - 1 (in ids, from the step before) at p0 + s - 1
    vi = 0;
    m = 1;
    host_pos[0] = gen.p0 + s - 1;
    ctx->upload<uint32_t>(pos, std::span<const uint32_t>(host_pos.data(), 1));
    sel.visible = host_pos[0] + 1;
    sel.every_embed_chunk = true;
  }
  record_step(*rec, sel);
  gpu::Handle<WGPUCommandBuffer> cmd = rec->finish();
  const auto t1 = std::chrono::steady_clock::now();
  gpu::submit(*ctx, std::move(cmd), "generation step");
  times.encode += micros(t0, t1);
  times.submit += micros(t1, std::chrono::steady_clock::now());
  ++gen.submitted;
}

TokenId GpuModel::next_token() {
  Impl& m = *impl_;
  Impl::Generation& g = m.gen;
  BQ_CHECK(g.on, "next_token() outside begin_generation() .. end_generation()");
  BQ_CHECK(g.taken < g.max_tokens, "all {} tokens of this generation were taken", g.max_tokens);
  m.times = {};
  g.unmap_logits();  // the previous token's: step taken + 1 copies into that buffer
  // The step that evaluates this token goes into the queue before the host
  // waits for the token (steps evaluate at p0 + s - 1 < n_ctx).
  while (g.submitted < g.max_tokens && g.submitted <= g.taken + 1 &&
         (g.submitted == 0 || g.p0 + g.submitted - 1 < m.n_ctx))
    m.submit_generation_step();
  BQ_CHECK(g.taken < g.submitted, "the KV cache is full ({} positions)", m.n_ctx);
  const auto t0 = std::chrono::steady_clock::now();
  const gpu::Buffer& b = g.tokens[g.taken % 2];
  gpu::MapStatus map;
  m.ctx->wait(gpu::map_read(b, 4, map), "the generated token");
  m.ctx->check("generation step");
  BQ_CHECK(map.ok, "could not map the generated token: {}", map.message);
  const void* p = wgpuBufferGetConstMappedRange(b.get(), 0, 4);
  uint32_t id = 0;
  if (p) std::memcpy(&id, p, 4);
  wgpuBufferUnmap(b.get());
  BQ_CHECK(p, "no mapped range for the generated token");
  BQ_CHECK(id < m.cfg.n_vocab, "the GPU sampler gave token {} outside the vocabulary [0, {})", id, m.cfg.n_vocab);
  if (g.with_logits) {  // step `taken` finished: its logits are in logits[taken % 2]
    const int slot = int(g.taken % 2);
    const uint64_t bytes = uint64_t{m.cfg.n_vocab} * 4;
    gpu::MapStatus lmap;
    m.ctx->wait(gpu::map_read(g.logits[slot], bytes, lmap), "the generated token's logits");
    BQ_CHECK(lmap.ok, "could not map the generated token's logits: {}", lmap.message);
    g.mapped_slot = slot;
    const void* lp = wgpuBufferGetConstMappedRange(g.logits[slot].get(), 0, bytes);
    BQ_CHECK(lp, "no mapped range for the generated token's logits");
    g.mapped = std::span<const float>(static_cast<const float*>(lp), m.cfg.n_vocab);
  }
  m.times.wait = micros(t0, std::chrono::steady_clock::now());
  ++g.taken;
  return TokenId(id);
}

std::span<const float> GpuModel::token_logits() const {
  const Impl::Generation& g = impl_->gen;
  BQ_CHECK(g.on && g.with_logits && g.mapped_slot >= 0,
           "token_logits() after next_token() of a generation begun with_logits");
  return g.mapped;
}

void GpuModel::end_generation() {
  Impl& m = *impl_;
  if (!m.gen.on) return;
  m.gen.unmap_logits();
  m.gen.on = false;
  m.ctx->finish();
  m.ctx->check("generation");
  m.n_past = m.gen.p0 + (m.gen.taken ? m.gen.taken - 1 : 0);
}

uint32_t GpuModel::all_rows_batch() const {
  impl_->prepare_all_rows();
  return std::max(impl_->all.rows, 1u);
}

std::span<const float> GpuModel::eval_all(std::span<const TokenId> tokens, const RowFn& on_row) {
  Impl& m = *impl_;
  const size_t b = all_rows_batch();
  const size_t n_vocab = m.cfg.n_vocab;
  std::span<const float> out = m.last_logits;
  for (size_t i = 0; i < tokens.size();) {
    const size_t n = std::min(b, tokens.size() - i);
    if (n == 1) {  // the single-token pass: its logits are the row
      out = step(tokens.subspan(i, 1), false);
      on_row(i++, out);
      continue;
    }
    try {  // the rows' buffer is unmapped after the rows, or on any error (a pending map is cancelled)
      out = step(tokens.subspan(i, n), true);
      const std::span<const float> rows = std::exchange(m.all.mapped, {});
      for (size_t j = 0; j < n; ++j) on_row(i + j, rows.subspan(j * n_vocab, n_vocab));
    } catch (...) {
      m.all.mapped = {};
      wgpuBufferUnmap(m.all.readback.get());
      throw;
    }
    wgpuBufferUnmap(m.all.readback.get());
    i += n;
  }
  return out;
}

std::span<const float> GpuModel::eval(std::span<const TokenId> tokens) {
  std::span<const float> out = impl_->last_logits;
  const size_t b = impl_->batch;
  for (size_t i = 0; i < tokens.size();) {
    const size_t n = std::min(b, tokens.size() - i);
    out = eval_step(tokens.subspan(i, n));
    i += n;
  }
  return out;
}

}  // namespace blockq::model
