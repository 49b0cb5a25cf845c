// The CPU reference forward pass: one template over the value type (float for
// ForwardMode::F32 and Ggml, double for F64), plain loops, row-at-a-time
// weight decode, and an f32/f64 KV cache.
#include "model/cpu_forward.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <thread>

#include "quant/half.hpp"
#include "util/error.hpp"

namespace blockq::model {

namespace {

// A weight matrix as stored: `rows` rows of `cols` elements in `fmt`.
// Shape [rows, cols] (ggml: ne0 = cols, ne1 = rows).
struct Weight {
  Format fmt = Format::F32;
  uint64_t cols = 0, rows = 0;
  const uint8_t* data = nullptr;
  size_t row_bytes = 0;
  void row(uint64_t r, float* out) const { traits(fmt).dequantize(data + r * row_bytes, out, cols); }
};

struct Layer {
  Weight attn_norm, wq, wk, wv, bq, bk, bv, wo, ffn_norm, w_gate, w_up, w_down;
};

Weight bind(const gguf::GgufFile& f, const std::string& name) {
  const gguf::TensorInfo& t = f.tensor(name);
  Weight w;
  w.fmt = t.format;
  w.cols = t.shape[0];
  w.rows = t.rows();
  w.data = f.tensor_data(t).data();
  w.row_bytes = row_bytes(t.format, w.cols);
  return w;
}

// All of a 1-D tensor as floats.
std::vector<float> load_vector(const Weight& w) {
  std::vector<float> v(w.cols * w.rows);
  for (uint64_t r = 0; r < w.rows; ++r) w.row(r, v.data() + r * w.cols);
  return v;
}

// ggml's CPU backend multiplies a weight of format f with activations first
// converted to f's "vec_dot_type". Returns x rounded the same way.
void ggml_round_input(Format f, const double* x, double* out, size_t n) {
  switch (f) {
    case Format::F32:
      for (size_t i = 0; i < n; ++i) out[i] = float(x[i]);
      return;
    case Format::F16:
      for (size_t i = 0; i < n; ++i) out[i] = f16_to_f32(f32_to_f16(float(x[i])));
      return;
    case Format::BF16:
      for (size_t i = 0; i < n; ++i) out[i] = bf16_to_f32(f32_to_bf16(float(x[i])));
      return;
    case Format::Q2_K: case Format::Q3_K: case Format::Q4_K: case Format::Q5_K: case Format::Q6_K:
    case Format::IQ4_XS:
      // q8_K: 256 per block, scale from the signed value of largest magnitude.
      for (size_t b = 0; b < n; b += 256) {
        float amax = 0.0f, mx = 0.0f;
        for (size_t i = b; i < b + 256; ++i)
          if (std::fabs(float(x[i])) > amax) amax = std::fabs(float(x[i])), mx = float(x[i]);
        const float iscale = amax ? -127.0f / mx : 0.0f;
        const float d = amax ? 1.0f / iscale : 0.0f;
        for (size_t i = b; i < b + 256; ++i) {
          const float q = std::min(127.0f, std::nearbyint(iscale * float(x[i])));
          out[i] = double(d) * q;
        }
      }
      return;
    default:
      // q8_0 (and q8_1, whose values are the same; iq4_nl's): 32 per block, f16 scale.
      for (size_t b = 0; b < n; b += 32) {
        float amax = 0.0f;
        for (size_t i = b; i < b + 32; ++i) amax = std::max(amax, std::fabs(float(x[i])));
        const float id = amax ? 127.0f / amax : 0.0f;
        const double d = f16_to_f32(f32_to_f16(amax / 127.0f));
        for (size_t i = b; i < b + 32; ++i) out[i] = d * std::nearbyint(float(x[i]) * id);
      }
      return;
  }
}

template <typename F>
void parallel_rows(uint64_t rows, uint64_t work, unsigned threads, F&& fn) {
  const unsigned n = (work < (1u << 20) || threads <= 1) ? 1u : unsigned(std::min<uint64_t>(threads, rows));
  if (n == 1) {
    fn(0, rows);
    return;
  }
  std::vector<std::thread> pool;
  const uint64_t step = (rows + n - 1) / n;
  for (unsigned t = 1; t < n; ++t) {
    const uint64_t b = t * step, e = std::min(rows, b + step);
    if (b < e) pool.emplace_back([&fn, b, e] { fn(b, e); });
  }
  fn(0, std::min(rows, step));
  for (auto& th : pool) th.join();
}

}  // namespace

struct CpuModel::Impl {
  gguf::GgufFile file;
  ModelConfig cfg;
  ForwardOptions opt;
  Weight token_embd, output;
  std::vector<float> output_norm, rope_ff;
  std::vector<Layer> layers;
  std::vector<std::vector<float>> attn_norm, ffn_norm, bq, bk, bv;  // per layer
  uint32_t n_past = 0;
  std::vector<float> logits32;
  std::vector<double> logits64;

  Impl(gguf::GgufFile f, ForwardOptions o) : file(std::move(f)), opt(o) {}
  virtual ~Impl() = default;
  virtual void step(TokenId token) = 0;
  virtual void clear() = 0;
};

namespace {

template <typename T>
struct Engine final : CpuModel::Impl {
  using Impl::Impl;
  std::vector<T> x, h, q, k, v, att, scores, g, u, hq;
  std::vector<T> kcache, vcache;  // [n_layer, n_ctx, n_embd_kv]
  std::vector<double> xin;        // rounded product input (Ggml)
  std::vector<float> row;

  void setup() {
    const ModelConfig& c = cfg;
    x.resize(c.n_embd), h.resize(c.n_embd), q.resize(c.n_embd_q());
    k.resize(c.n_embd_kv()), v.resize(c.n_embd_kv()), att.resize(c.n_embd_q());
    scores.resize(opt.n_ctx), g.resize(c.n_ff), u.resize(c.n_ff);
    kcache.assign(size_t(c.n_layer) * opt.n_ctx * c.n_embd_kv(), T(0));
    vcache.assign(kcache.size(), T(0));
    row.resize(std::max<uint64_t>(c.n_embd, c.n_ff));
  }
  void clear() override { n_past = 0; }

  static T round_f16(T v) { return T(f16_to_f32(f32_to_f16(float(v)))); }

  // y[rows] = W x[cols]
  void matvec(const Weight& w, const T* xv, T* y) {
    const T* in = xv;
    std::vector<T> rounded;
    if (opt.mode == ForwardMode::Ggml) {
      xin.resize(w.cols);
      std::vector<double> tmp(xv, xv + w.cols);
      ggml_round_input(w.fmt, tmp.data(), xin.data(), w.cols);
      rounded.assign(xin.begin(), xin.end());
      in = rounded.data();
    }
    parallel_rows(w.rows, w.rows * w.cols, opt.threads, [&](uint64_t b, uint64_t e) {
      std::vector<float> buf(w.cols);
      for (uint64_t r = b; r < e; ++r) {
        w.row(r, buf.data());
        T acc = 0;
        for (uint64_t i = 0; i < w.cols; ++i) acc += T(buf[i]) * in[i];
        y[r] = acc;
      }
    });
  }

  void rmsnorm(const T* in, const std::vector<float>& w, T* out) {
    const size_t n = w.size();
    T ss = 0;
    for (size_t i = 0; i < n; ++i) ss += in[i] * in[i];
    T scale;
    if constexpr (std::is_same_v<T, float>)
      scale = 1.0f / std::sqrt(ss / float(n) + cfg.rms_eps);
    else
      scale = 1.0 / std::sqrt(ss / double(n) + double(cfg.rms_eps));
    for (size_t i = 0; i < n; ++i) out[i] = (in[i] * scale) * T(w[i]);
  }

  // Rotates n_heads heads of head_dim values at position pos.
  void rope(T* vec, uint32_t n_heads, uint32_t pos) {
    const uint32_t hd = cfg.head_dim, half = cfg.n_rot / 2;
    std::vector<T> cs(half), sn(half);
    if (opt.mode == ForwardMode::Ggml) {  // ggml: float angles by repeated multiplication
      const float theta_scale = std::pow(cfg.rope_freq_base, -2.0f / float(cfg.n_rot));
      float th = float(pos);
      for (uint32_t i = 0; i < half; ++i) {
        const float ff = rope_ff.empty() ? 1.0f : rope_ff[i];
        const float t = cfg.rope_freq_scale * (th / ff);
        cs[i] = std::cos(t), sn[i] = std::sin(t);
        th *= theta_scale;
      }
    } else {
      for (uint32_t i = 0; i < half; ++i) {
        const T ff = rope_ff.empty() ? T(1) : T(rope_ff[i]);
        const T inv = std::pow(T(cfg.rope_freq_base), T(-2) * T(i) / T(cfg.n_rot));
        const T t = T(cfg.rope_freq_scale) * ((T(pos) * inv) / ff);
        cs[i] = std::cos(t), sn[i] = std::sin(t);
      }
    }
    for (uint32_t hh = 0; hh < n_heads; ++hh) {
      T* p = vec + size_t(hh) * hd;
      for (uint32_t i = 0; i < half; ++i) {
        const uint32_t i0 = cfg.rope_mode == RopeMode::Normal ? 2 * i : i;
        const uint32_t i1 = cfg.rope_mode == RopeMode::Normal ? 2 * i + 1 : i + half;
        const T a = p[i0], b = p[i1];
        p[i0] = a * cs[i] - b * sn[i];
        p[i1] = a * sn[i] + b * cs[i];
      }
    }
  }

  void step(TokenId token) override {
    const ModelConfig& c = cfg;
    BQ_CHECK(token >= 0 && uint32_t(token) < c.n_vocab, "token id {} outside the vocabulary of {}",
             token, c.n_vocab);
    BQ_CHECK(n_past < opt.n_ctx, "the KV cache is full ({} positions)", opt.n_ctx);
    const uint32_t pos = n_past, kvd = c.n_embd_kv(), hd = c.head_dim;
    token_embd.row(uint64_t(token), row.data());
    for (uint32_t i = 0; i < c.n_embd; ++i) x[i] = T(row[i]);
    const T scale = T(1) / std::sqrt(T(hd));

    for (uint32_t l = 0; l < c.n_layer; ++l) {
      const Layer& L = layers[l];
      rmsnorm(x.data(), attn_norm[l], h.data());
      matvec(L.wq, h.data(), q.data());
      matvec(L.wk, h.data(), k.data());
      matvec(L.wv, h.data(), v.data());
      if (c.qkv_bias) {
        for (uint32_t i = 0; i < q.size(); ++i) q[i] += T(bq[l][i]);
        for (uint32_t i = 0; i < kvd; ++i) k[i] += T(bk[l][i]), v[i] += T(bv[l][i]);
      }
      rope(q.data(), c.n_head, pos);
      rope(k.data(), c.n_head_kv, pos);
      T* kc = kcache.data() + size_t(l) * opt.n_ctx * kvd;
      T* vc = vcache.data() + size_t(l) * opt.n_ctx * kvd;
      std::copy(k.begin(), k.end(), kc + size_t(pos) * kvd);
      std::copy(v.begin(), v.end(), vc + size_t(pos) * kvd);
      const bool f16 = opt.kv == KvType::F16, ggml16 = f16 && opt.mode == ForwardMode::Ggml;
      if (f16) {
        for (uint32_t i = 0; i < kvd; ++i) kc[size_t(pos) * kvd + i] = round_f16(kc[size_t(pos) * kvd + i]);
        for (uint32_t i = 0; i < kvd; ++i) vc[size_t(pos) * kvd + i] = round_f16(vc[size_t(pos) * kvd + i]);
      }
      if (ggml16)
        for (T& e : q) e = round_f16(e);

      for (uint32_t hh = 0; hh < c.n_head; ++hh) {
        const uint32_t kh = hh / c.n_gqa();
        const T* qh = q.data() + size_t(hh) * hd;
        T mx = -std::numeric_limits<T>::infinity();
        for (uint32_t j = 0; j <= pos; ++j) {
          const T* kj = kc + size_t(j) * kvd + size_t(kh) * hd;
          T dot = 0;
          for (uint32_t d = 0; d < hd; ++d) dot += qh[d] * kj[d];
          scores[j] = dot * scale;
          mx = std::max(mx, scores[j]);
        }
        T sum = 0;
        for (uint32_t j = 0; j <= pos; ++j) sum += (scores[j] = std::exp(scores[j] - mx));
        T* out = att.data() + size_t(hh) * hd;
        std::fill(out, out + hd, T(0));
        for (uint32_t j = 0; j <= pos; ++j) {
          const T p = ggml16 ? round_f16(scores[j] / sum) : scores[j] / sum;
          const T* vj = vc + size_t(j) * kvd + size_t(kh) * hd;
          for (uint32_t d = 0; d < hd; ++d) out[d] += p * vj[d];
        }
      }
      matvec(L.wo, att.data(), h.data());
      for (uint32_t i = 0; i < c.n_embd; ++i) x[i] += h[i];

      rmsnorm(x.data(), ffn_norm[l], h.data());
      matvec(L.w_gate, h.data(), g.data());
      matvec(L.w_up, h.data(), u.data());
      for (uint32_t i = 0; i < c.n_ff; ++i) g[i] = g[i] / (T(1) + std::exp(-g[i])) * u[i];
      matvec(L.w_down, g.data(), h.data());
      for (uint32_t i = 0; i < c.n_embd; ++i) x[i] += h[i];
    }
    rmsnorm(x.data(), output_norm, h.data());
    std::vector<T> out(c.n_vocab);
    matvec(output, h.data(), out.data());
    for (uint32_t i = 0; i < c.n_vocab; ++i) logits32[i] = float(out[i]), logits64[i] = double(out[i]);
    ++n_past;
  }
};

}  // namespace

CpuModel::CpuModel(gguf::GgufFile file, ForwardOptions opt) {
  std::unique_ptr<Impl> p;
  // Ggml mode keeps f32 activations like ggml: its q8 roundings depend on the
  // exact f32 inputs, and one flipped rounding can move a probability by 1e-2.
  const bool use_float = opt.mode != ForwardMode::F64;
  if (use_float)
    p = std::make_unique<Engine<float>>(std::move(file), opt);
  else
    p = std::make_unique<Engine<double>>(std::move(file), opt);
  Impl& m = *p;
  m.cfg = config_from_gguf(m.file);
  const ModelConfig& c = m.cfg;
  if (m.opt.n_ctx == 0) m.opt.n_ctx = std::min<uint32_t>(c.n_ctx_train ? c.n_ctx_train : 4096, 4096);
  if (m.opt.threads == 0) m.opt.threads = std::max(1u, std::thread::hardware_concurrency());
  m.token_embd = bind(m.file, "token_embd.weight");
  m.output = c.tied_embeddings ? m.token_embd : bind(m.file, "output.weight");
  m.output_norm = load_vector(bind(m.file, "output_norm.weight"));
  if (c.rope_freqs) m.rope_ff = load_vector(bind(m.file, "rope_freqs.weight"));
  for (uint32_t l = 0; l < c.n_layer; ++l) {
    Layer L;
    const auto w = [&](const char* n) { return bind(m.file, layer_tensor_name(l, n)); };
    L.wq = w("attn_q"), L.wk = w("attn_k"), L.wv = w("attn_v"), L.wo = w("attn_output");
    L.w_gate = w("ffn_gate"), L.w_up = w("ffn_up"), L.w_down = w("ffn_down");
    m.attn_norm.push_back(load_vector(w("attn_norm")));
    m.ffn_norm.push_back(load_vector(w("ffn_norm")));
    if (c.qkv_bias) {
      const auto b = [&](const char* n) { return load_vector(bind(m.file, layer_tensor_name(l, n, "bias"))); };
      m.bq.push_back(b("attn_q")), m.bk.push_back(b("attn_k")), m.bv.push_back(b("attn_v"));
    }
    m.layers.push_back(L);
  }
  m.logits32.assign(c.n_vocab, 0.0f);
  m.logits64.assign(c.n_vocab, 0.0);
  if (use_float)
    static_cast<Engine<float>&>(m).setup();
  else
    static_cast<Engine<double>&>(m).setup();
  impl_ = std::move(p);
}

CpuModel::~CpuModel() = default;
CpuModel::CpuModel(CpuModel&&) noexcept = default;
CpuModel& CpuModel::operator=(CpuModel&&) noexcept = default;

const ModelConfig& CpuModel::config() const { return impl_->cfg; }
const ForwardOptions& CpuModel::options() const { return impl_->opt; }
uint32_t CpuModel::n_past() const { return impl_->n_past; }
void CpuModel::reset() { impl_->clear(); }
std::span<const double> CpuModel::logits_f64() const { return impl_->logits64; }

std::span<const float> CpuModel::eval(TokenId token) {
  impl_->step(token);
  return impl_->logits32;
}

std::span<const float> CpuModel::eval(std::span<const TokenId> tokens) {
  BQ_CHECK(!tokens.empty(), "eval of an empty token list");
  for (TokenId t : tokens) impl_->step(t);
  return impl_->logits32;
}

std::vector<TokenId> generate_greedy(CpuModel& m, std::span<const TokenId> prompt, size_t n) {
  std::vector<TokenId> out;
  if (n == 0) return out;
  m.eval(prompt);
  for (size_t i = 0; i < n; ++i) {
    const auto lg = m.logits_f64();
    const TokenId best = TokenId(std::max_element(lg.begin(), lg.end()) - lg.begin());
    out.push_back(best);
    if (i + 1 < n) m.eval(best);
  }
  return out;
}

std::vector<double> softmax(std::span<const double> logits) {
  std::vector<double> p(logits.begin(), logits.end());
  if (p.empty()) return p;
  const double mx = *std::max_element(p.begin(), p.end());
  double sum = 0.0;
  for (double& v : p) sum += (v = std::exp(v - mx));
  for (double& v : p) v /= sum;
  return p;
}

}  // namespace blockq::model
