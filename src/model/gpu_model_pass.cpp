// GpuModel's passes: preparing the dispatches of a single token (fused
// matvecs) and of a prompt batch (rmsnorm, gemm::matmul, bias + RoPE apart,
// the lm_head on the last token only), and recording them into a command
// buffer (see gpu_model.hpp for the shapes and the order).
#include <fmt/format.h>

#include <algorithm>

#include "model/gpu_model_impl.hpp"
#include "util/error.hpp"

namespace blockq::model {

namespace {

Format kv_format(KvType t) { return t == KvType::F16 ? Format::F16 : Format::F32; }

}  // namespace

void GpuModel::Impl::prepare() {
  const uint32_t nq = cfg.n_embd_q(), kv = cfg.n_embd_kv();
  const uint64_t B = batch;
  ids = ctx->create_buffer(B * 4, gpu::kStorage, "ids");
  pos = ctx->create_buffer(B * 4, gpu::kStorage, "pos");
  x = act(B * cfg.n_embd, "x");
  bool any_fused = false, any_apart = false;
  for (const Layer& L : layers) (L.fused ? any_fused : any_apart) = true;
  if (any_fused) qkv = act(B * (nq + 2 * kv), "qkv");
  if (any_apart) {
    q = act(B * nq, "q");
    k = act(B * kv, "k");
    v = act(B * kv, "v");
  }
  att = act(B * nq, "attn");
  ff = act(B * cfg.n_ff, "ffn");
  {  // one scratch for every layer's attention partials, sized for the largest of the passes' (B, B / 2, ..., 1 rows)
    attention::Shape as{cfg.n_head, cfg.n_head_kv, cfg.head_dim, n_ctx, 1, kv_format(opt.kv_type)};
    uint64_t bytes = 0;
    for (uint32_t r = uint32_t(B); r >= 1; r /= 2) {
      as.m = r;
      bytes = std::max(bytes, attention::scratch_bytes(*ctx, as));
    }
    att_part = act((bytes + 3) / 4, "attention.partials");
  }
  logits = act(cfg.n_vocab, "logits");
  if (batch > 1) {
    h = act(B * cfg.n_embd, "h");
    x_last = act(cfg.n_embd, "x.last");
  }
  readback = ctx->create_buffer(uint64_t{cfg.n_vocab} * 4, gpu::kReadback, "logits.readback");
  mem.activations += readback.size() + 8 * B;
  zero_logits.assign(cfg.n_vocab, 0.0f);
  last_logits = zero_logits;
  cur.assign(B, 0);
  host_ids.assign(B, 0);
  host_pos.assign(B, 0);
  pass_rows = {1};
  if (batch > 1) {
    const uint32_t least = std::max(opt.min_batch, 2u);
    for (uint32_t r = batch; r >= 2; r /= 2) {
      pass_rows.push_back(r);
      if (r % 2 || r / 2 < least) break;
    }
  }
  const size_t passes = pass_rows.size();
  for (Layer& L : layers) L.pass.resize(passes);
  embed_rows.resize(passes);
  plm.resize(passes);
  const matvec::Weights& we = embed_weights();
  for (size_t vi = 0; vi < passes; ++vi)
    embed_rows[vi] = matvec::prepare_rows(*ctx, matvec::plan_rows(*ctx, we.kind, we.n, we.k, pass_rows[vi]), we,
                                          ids, x);
  prepare_single();
  for (size_t vi = 1; vi < passes; ++vi) prepare_batch(int(vi));
  rec = std::make_unique<gpu::Recorder>(*ctx, "forward");
}

// One token: q, k with the RMSNorm prologue and the RoPE epilogue (or, with
// rope_freqs, a Store epilogue and GpuRope), v with the prologue, o and down
// accumulated into x, gate/up with the SiLU-gate epilogue. A fused layer runs
// q, k and v as one matvec over Wqkv whose RoPE epilogue rotates rows below
// rope_rows = n_q + n_kv (the q and k heads) and stores the v rows as they
// are; the KV store and attention read k, v and q at element offsets of qkv.
void GpuModel::Impl::prepare_single() {
  const uint32_t nq = cfg.n_embd_q(), kv = cfg.n_embd_kv(), nqkv = nq + 2 * kv;
  Hooks norm;  // rmsnorm prologue
  norm.prologue = Prologue::RmsNorm;
  norm.eps = cfg.rms_eps;
  Hooks rope = norm;
  rope.bias = cfg.qkv_bias;
  if (!cfg.rope_freqs) {
    rope.epilogue = Epilogue::Rope;
    rope.rope_mode = cfg.rope_mode == model::RopeMode::Neox ? blockq::RopeMode::Neox : blockq::RopeMode::Normal;
    rope.head_dim = cfg.head_dim;
    rope.n_rot = cfg.n_rot;
    rope.rope_base = cfg.rope_freq_base;
    rope.rope_scale = cfg.rope_freq_scale;
  }
  Hooks rope_qkv = rope;
  if (!cfg.rope_freqs) rope_qkv.rope_rows = nq + kv;
  Hooks vh = norm;
  vh.bias = cfg.qkv_bias;
  Hooks acc;
  acc.epilogue = Epilogue::Acc;
  Hooks silu = norm;
  silu.epilogue = Epilogue::SiluGate;
  auto mv = [&](const matvec::Weights& w, const Hooks& hk, matvec::Args a) {
    a.a = &w;
    return Proj{matvec::prepare(*ctx, matvec::plan(*ctx, w.kind, w.n, w.k, 1, hk, mv_options(w)), a)};
  };
  const attention::Shape shape{cfg.n_head, cfg.n_head_kv, cfg.head_dim, n_ctx, 1, kv_format(opt.kv_type)};
  attention::Shape shape_qkv = shape;
  shape_qkv.q_stride = nqkv;
  const GpuRopeShape rs{1, cfg.n_head, cfg.head_dim, cfg.n_rot, cfg.rope_freq_base, cfg.rope_freq_scale,
                        cfg.rope_mode == model::RopeMode::Neox ? blockq::RopeMode::Neox : blockq::RopeMode::Normal};
  GpuRopeShape rsk = rs;
  rsk.heads = cfg.n_head_kv;
  GpuRopeShape rsqk = rs;  // the q and k heads at the start of qkv's one row
  rsqk.heads = cfg.n_head + cfg.n_head_kv;
  const gpu::Buffer* posb = cfg.rope_freqs ? nullptr : &pos;
  // The fused QKV matvec with the KV store, where its plan allows it (the
  // layers share one shape and format when they fuse).
  Hooks rope_kv = rope_qkv;
  rope_kv.kv_n = kv;
  rope_kv.kv_k = nq;
  rope_kv.kv_v = nq + kv;
  rope_kv.kv_ctx = n_ctx;
  rope_kv.kv_f16 = opt.kv_type == KvType::F16;
  auto kv_fusable = [&](const matvec::Weights& w) {
    if (!opt.fuse_kv_store || cfg.rope_freqs || (rope_kv.kv_f16 && rope_kv.rope_mode != blockq::RopeMode::Normal))
      return false;
    const KernelSpec sp = matvec::plan(*ctx, w.kind, w.n, w.k, 1, rope_qkv, mv_options(w));
    return matvec::storage_bindings(sp) + 2 <= matvec::limits_of(*ctx).storage_buffers;
  };
  for (Layer& Ly : layers) {
    LayerPass& L = Ly.pass[0];
    if (Ly.fused && kv_fusable(Ly.wqkv)) {
      L.pq = mv(Ly.wqkv, rope_kv,
                {.x = &x, .y = &qkv, .norm_w = Ly.attn_norm, .bias = Ly.bqkv, .pos = &pos, .k_cache = &Ly.kc,
                 .v_cache = &Ly.vc});
      L.att = attention::Attention(*ctx, shape_qkv, {&qkv, &Ly.kc, &Ly.vc, &pos, &att, &att_part});
    } else if (Ly.fused) {
      L.pq = mv(Ly.wqkv, rope_qkv, {.x = &x, .y = &qkv, .norm_w = Ly.attn_norm, .bias = Ly.bqkv, .pos = posb});
      if (cfg.rope_freqs) L.ropes.emplace_back(*ctx, rsqk, GpuRopeArgs{&qkv, &pos, {}, rope_ff});
      L.store = GpuKvStore(*ctx, kv, n_ctx, 1, qkv, qkv, pos, Ly.kc, Ly.vc, kv_format(opt.kv_type), {nq, nq + kv, nqkv});
      L.att = attention::Attention(*ctx, shape_qkv, {&qkv, &Ly.kc, &Ly.vc, &pos, &att, &att_part});
    } else {
      // (the bias slices are empty without qkv_bias)
      L.pq = mv(Ly.wq, rope, {.x = &x, .y = &q, .norm_w = Ly.attn_norm, .bias = Ly.bq, .pos = posb});
      L.pk = mv(Ly.wk, rope, {.x = &x, .y = &k, .norm_w = Ly.attn_norm, .bias = Ly.bk, .pos = posb});
      L.pv = mv(Ly.wv, vh, {.x = &x, .y = &v, .norm_w = Ly.attn_norm, .bias = Ly.bv});
      if (cfg.rope_freqs) {
        L.ropes.emplace_back(*ctx, rs, GpuRopeArgs{&q, &pos, {}, rope_ff});
        L.ropes.emplace_back(*ctx, rsk, GpuRopeArgs{&k, &pos, {}, rope_ff});
      }
      L.store = GpuKvStore(*ctx, kv, n_ctx, 1, k, v, pos, Ly.kc, Ly.vc, kv_format(opt.kv_type));
      L.att = attention::Attention(*ctx, shape, {&q, &Ly.kc, &Ly.vc, &pos, &att, &att_part});
    }
    L.po = mv(Ly.wo, acc, {.x = &att, .y = &x});
    L.pffn = mv(Ly.wg, silu, {.b = &Ly.wu, .x = &x, .y = &ff, .norm_w = Ly.ffn_norm});
    L.pdown = mv(Ly.wd, acc, {.x = &ff, .y = &x});
  }
  plm[0] = matvec::prepare(*ctx, matvec::plan(*ctx, w_out.kind, w_out.n, w_out.k, 1, norm, mv_options(w_out)),
                           {.a = &w_out, .x = &x, .y = &logits, .norm_w = out_norm});
}

// A prompt batch of B = pass_rows[vi] rows (the activations' first B rows):
// the norms into h, the projections through gemm::matmul (gemm above the
// crossover, matvec below or for a format without a gemm; both read the one
// matvec upload), bias and RoPE by GpuRope, the lm_head from x_last. A fused
// layer's one matmul writes rows [q | k | v] into qkv [B, n_q + 2 n_kv], and
// one GpuRope over its n_head + 2 n_kv heads adds the bias and rotates the
// first n_head + n_kv.
void GpuModel::Impl::prepare_batch(int vi) {
  const uint32_t nq = cfg.n_embd_q(), kv = cfg.n_embd_kv(), nqkv = nq + 2 * kv;
  const uint32_t rows = pass_rows[size_t(vi)];
  Hooks store, acc, silu;
  acc.epilogue = Epilogue::Acc;
  silu.epilogue = Epilogue::SiluGate;
  auto mm = [&](const matvec::Weights& mw, const Hooks& hk, const gpu::Buffer& in, const gpu::Buffer& out,
                const matvec::Weights* mw_b = nullptr) { return matmul(mw, hk, in, out, rows, mw_b); };
  const blockq::RopeMode mode =
      cfg.rope_mode == model::RopeMode::Neox ? blockq::RopeMode::Neox : blockq::RopeMode::Normal;
  const GpuRopeShape rs{rows, cfg.n_head, cfg.head_dim, cfg.n_rot, cfg.rope_freq_base, cfg.rope_freq_scale, mode};
  GpuRopeShape rsk = rs;
  rsk.heads = cfg.n_head_kv;
  GpuRopeShape rsv = rsk;
  rsv.rope = false;
  GpuRopeShape rsqkv = rs;
  rsqkv.heads = cfg.n_head + 2 * cfg.n_head_kv;
  rsqkv.rope_heads = cfg.n_head + cfg.n_head_kv;
  const attention::Shape shape{cfg.n_head, cfg.n_head_kv, cfg.head_dim, n_ctx, rows, kv_format(opt.kv_type)};
  attention::Shape shape_qkv = shape;
  shape_qkv.q_stride = nqkv;
  for (Layer& Ly : layers) {
    LayerPass& L = Ly.pass[size_t(vi)];
    L.norms = true;
    L.n_attn = GpuRmsNorm(*ctx, cfg.n_embd, rows, cfg.rms_eps, x, Ly.attn_norm, h);
    L.n_ffn = GpuRmsNorm(*ctx, cfg.n_embd, rows, cfg.rms_eps, x, Ly.ffn_norm, h);
    if (Ly.fused) {
      L.pq = mm(Ly.wqkv, store, h, qkv);
      L.ropes.emplace_back(*ctx, rsqkv, GpuRopeArgs{&qkv, &pos, Ly.bqkv, rope_ff});
      L.store = GpuKvStore(*ctx, kv, n_ctx, rows, qkv, qkv, pos, Ly.kc, Ly.vc, kv_format(opt.kv_type),
                           {nq, nq + kv, nqkv});
      L.att = attention::Attention(*ctx, shape_qkv, {&qkv, &Ly.kc, &Ly.vc, &pos, &att, &att_part});
    } else {
      L.pq = mm(Ly.wq, store, h, q);
      L.pk = mm(Ly.wk, store, h, k);
      L.pv = mm(Ly.wv, store, h, v);
      L.ropes.emplace_back(*ctx, rs, GpuRopeArgs{&q, &pos, Ly.bq, rope_ff});
      L.ropes.emplace_back(*ctx, rsk, GpuRopeArgs{&k, &pos, Ly.bk, rope_ff});
      if (cfg.qkv_bias) L.ropes.emplace_back(*ctx, rsv, GpuRopeArgs{&v, &pos, Ly.bv, {}});
      L.store = GpuKvStore(*ctx, kv, n_ctx, rows, k, v, pos, Ly.kc, Ly.vc, kv_format(opt.kv_type));
      L.att = attention::Attention(*ctx, shape, {&q, &Ly.kc, &Ly.vc, &pos, &att, &att_part});
    }
    L.po = mm(Ly.wo, acc, att, x);
    L.pffn = mm(Ly.wg, silu, h, ff, &Ly.wu);
    L.pdown = mm(Ly.wd, acc, ff, x);
  }
  Hooks norm;
  norm.prologue = Prologue::RmsNorm;
  norm.eps = cfg.rms_eps;
  plm[size_t(vi)] =
      matvec::prepare(*ctx, matvec::plan(*ctx, w_out.kind, w_out.n, w_out.k, 1, norm, mv_options(w_out)),
                      {.a = &w_out, .x = &x_last, .y = &logits, .norm_w = out_norm});
}

Proj GpuModel::Impl::matmul(const matvec::Weights& w, const Hooks& hk, const gpu::Buffer& in,
                            const gpu::Buffer& out, uint32_t m, const matvec::Weights* w_b) {
  gemm::MatmulArgs a;
  a.mv_a = &w;
  a.mv_b = w_b;
  a.x = &in;
  a.y = &out;
  a.m = m;
  a.hooks = hk;
  a.crossover = opt.crossover;
  a.crossover_own_shape = opt.crossover_per_weight;
  a.tuned = opt.gemm_tuned;
  // int8 x in the matvec (m <= the crossover) where the token matvec of
  // this weight takes it; in the gemm (unless --f32-gemm) wherever int8
  // activations are on, whatever the weight's size: at m > 64 quantizing x
  // costs little (H100, session 39: q4_0 960x2560 at m = 128 31 us int8, 47
  // f32 at best)
  a.mv_int8 = mv_options(w).int8.value_or(false);
  a.int8 = opt.gemm_int8 && opt.int8_activations;
  try {
    if (const uint64_t need = gemm::partial_bytes(*ctx, a)) {
      if (!gemm_part || gemm_part.size() < need) gemm_part = act(need / 4, "gemm.partials");
      a.part = &gemm_part;
    }
    if (const uint64_t need = gemm::xq_bytes(*ctx, a)) {
      if (!gemm_xq || gemm_xq.size() < need) gemm_xq = act((need + 3) / 4, "gemm.xq");
      a.xq = &gemm_xq;
    }
    return Proj{gemm::matmul(*ctx, a)};
  } catch (const Error& e) {
    fail("{}: the prompt matmul of '{}' (m = {}) cannot be prepared: {}", file.name(), w.label, m, e.what());
  }
}

// eval_all's lm_head over a batch pass's first R rows: R = its rows, or
// fewer where R rows of logits pass kAllRowsBytes or a binding (the same cap
// for every pass). x [B, n_embd] -> h [R, n_embd] (out_norm) -> all.logits
// [R, n_vocab].
void GpuModel::Impl::prepare_all_rows() {
  if (all.rows || batch < 2) return;
  const uint64_t row = uint64_t{cfg.n_vocab} * 4;
  const uint64_t most = std::min<uint64_t>(kAllRowsBytes, ctx->limits().maxStorageBufferBindingSize) / row;
  const uint32_t r = uint32_t(std::clamp<uint64_t>(most, 1, batch));
  if (r < 2) {
    all.rows = 1;  // token by token
    return;
  }
  all.logits = act(uint64_t{r} * cfg.n_vocab, "logits.rows");
  all.readback = ctx->create_buffer(r * row, gpu::kReadback, "logits.rows.readback");
  mem.activations += all.readback.size();
  all.pass.resize(pass_rows.size());
  for (size_t vi = 1; vi < pass_rows.size(); ++vi) {
    AllRows::Pass& p = all.pass[vi];
    p.rows = std::min(r, pass_rows[vi]);
    p.norm = GpuRmsNorm(*ctx, cfg.n_embd, p.rows, cfg.rms_eps, x, out_norm, h);
    p.lm = matmul(w_out, Hooks{}, h, all.logits, p.rows);
  }
  all.rows = r;
}

uint32_t GpuModel::Impl::visible_now() const {
  uint32_t visible = 0;  // the most positions a token of the step sees (padding sees none)
  for (uint32_t t = 0; t < pass_rows[size_t(vi)]; ++t)
    if (host_pos[t] != kPadPos) visible = std::max(visible, std::min(host_pos[t] + 1, n_ctx));
  return visible;
}

void GpuModel::record(gpu::Recorder& r, std::optional<KernelFamily> only, bool readback) const {
  if (readback && (!only || *only == KernelFamily::Readback)) impl_->unmap_logits();  // its copy is recorded
  const Impl& m = *impl_;
  m.record_step(r, {.vi = m.vi, .visible = m.visible_now(), .only = only, .readback = readback,
                    .sample = bool(m.gen.sampler)});
}

std::vector<uint32_t> submit_piece_ends(uint32_t n, uint32_t pieces) {
  std::vector<uint32_t> ends;
  if (pieces == 0) {  // 1, 2, 4, ... layers, the last one longer rather than shorter
    for (uint32_t e = 1, len = 1; e < n && n - e >= 2 * len; len *= 2, e += len) ends.push_back(e);
  } else {
    const uint32_t p = std::clamp<uint32_t>(pieces, 1, std::max(n, 1u));
    for (uint32_t i = 1; i < p; ++i) ends.push_back(n * i / p);
  }
  ends.push_back(n);
  return ends;
}

std::vector<gpu::Handle<WGPUCommandBuffer>> GpuModel::Impl::encode_step(StepSel sel) const {
  std::vector<gpu::Handle<WGPUCommandBuffer>> out;
  sel.layer0 = 0;
  for (const uint32_t end : submit_piece_ends(uint32_t(layers.size()), opt.submit_pieces)) {
    sel.layer1 = end;
    record_step(*rec, sel);
    out.push_back(rec->finish());
    sel.layer0 = end;
  }
  return out;
}

void GpuModel::Impl::record_step(gpu::Recorder& r, const StepSel& sel) const {
  const Impl& m = *this;
  const int vi = sel.vi;
  const uint32_t rows = m.pass_rows[size_t(vi)];
  const uint32_t l1 = std::min<uint32_t>(sel.layer1, uint32_t(m.layers.size()));
  auto on = [&](KernelFamily f) { return !sel.only || *sel.only == f; };
  if (sel.layer0 == 0 && on(KernelFamily::Embed)) {
    const auto& chunks = m.embed_weights().chunks;
    for (size_t c = 0; c < chunks.size(); ++c) {
      bool needed = sel.every_embed_chunk;
      for (uint32_t t = 0; t < rows && !needed; ++t) {
        const uint32_t id = uint32_t(m.cur[t]);  // checked < n_vocab by set_inputs
        needed |= id >= chunks[c].row0 && id - chunks[c].row0 < chunks[c].rows;
      }
      if (needed) m.embed_rows[size_t(vi)].record_chunk(r, c);
    }
  }
  for (uint32_t l = sel.layer0; l < l1; ++l) {
    const LayerPass& L = m.layers[l].pass[size_t(vi)];
    if (on(KernelFamily::Qkv)) {
      if (L.norms) L.n_attn.record(r);
      L.pq.record(r);
      L.pk.record(r);
      L.pv.record(r);
      for (const GpuRope& rp : L.ropes) rp.record(r);
    }
    if (on(KernelFamily::KvCopy) && L.store) L.store.record(r);  // else the QKV matvec stores k and v
    if (on(KernelFamily::Attention)) L.att.record(r, sel.visible);
    if (on(KernelFamily::AttnOut)) L.po.record(r);
    if (on(KernelFamily::Ffn)) {
      if (L.norms) L.n_ffn.record(r);
      L.pffn.record(r);
    }
    if (on(KernelFamily::FfnDown)) L.pdown.record(r);
  }
  if (l1 < m.layers.size()) return;
  if (on(KernelFamily::LmHead)) {
    const uint64_t row = uint64_t{m.cfg.n_embd} * 4;
    if (vi) r.copy(m.x, (m.m - 1) * row, m.x_last, 0, row);
    m.plm[size_t(vi)].record(r);
    if (sel.all_rows) {
      BQ_ASSERT(vi && m.all.pass[size_t(vi)].rows >= m.m);
      m.all.pass[size_t(vi)].norm.record(r);
      m.all.pass[size_t(vi)].lm.record(r);
    }
  }
  if (sel.sample && m.gen.sampler && on(KernelFamily::Sample)) {
    if (sel.logits_slot >= 0) r.copy(m.logits, 0, m.gen.logits[sel.logits_slot], 0, uint64_t{m.cfg.n_vocab} * 4);
    m.gen.sampler.record(r);
    r.copy(m.gen.sampler.result(), 0, m.ids, 0, 4);  // the next step's token
    r.copy(m.gen.sampler.result(), 0, m.gen.tokens[sel.token_slot], 0, 4);
    if (m.gen.sampler.recent()) r.copy(m.gen.sampler.result(), 0, m.gen.sampler.recent(), 4 * sel.recent_slot, 4);
  }
  if (sel.readback && on(KernelFamily::Readback)) {
    r.copy(m.logits, 0, m.readback, 0, uint64_t{m.cfg.n_vocab} * 4);
    if (sel.all_rows) r.copy(m.all.logits, 0, m.all.readback, 0, uint64_t{m.m} * m.cfg.n_vocab * 4);
  }
}

uint32_t GpuModel::submits_per_step() const {
  return uint32_t(submit_piece_ends(uint32_t(impl_->layers.size()), impl_->opt.submit_pieces).size());
}

uint32_t GpuModel::dispatches_per_token() const {
  gpu::Recorder r(*impl_->ctx, "count");
  record(r);
  return r.dispatches();  // recorded only, never submitted
}

}  // namespace blockq::model
