// Synthetic GGUF models: presets, random weights quantized with the format
// traits, llama.cpp's K-quant fallback, the tokenizer, and the metadata.
#include "model/synth.hpp"

#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gguf/gguf.hpp"
#include "util/error.hpp"

namespace blockq::model {

namespace {

const std::vector<SynthPreset>& presets() {
  static const std::vector<SynthPreset> p = {
      {"tiny", 256, 2, 4, 2, 512, 1024, 2048, 10000.0f, 1e-5f, false, TokenizerStyle::Llama3},
      {"smollm2-360m", 960, 32, 15, 5, 2560, 49152, 8192, 100000.0f, 1e-5f, true,
       TokenizerStyle::Smollm},
      {"llama-3.2-1b", 2048, 16, 32, 8, 8192, 128256, 131072, 500000.0f, 1e-5f, true,
       TokenizerStyle::Llama3},
      {"llama-3-8b", 4096, 32, 32, 8, 14336, 128256, 8192, 500000.0f, 1e-5f, false,
       TokenizerStyle::Llama3},
  };
  return p;
}

uint64_t splitmix64(uint64_t& s) {
  uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t hash_name(std::string_view s) {  // FNV-1a
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// Normal samples from a counter-based stream (Box-Muller on splitmix64).
struct Normal {
  uint64_t state;
  bool have = false;
  double spare = 0.0;
  double next() {
    if (have) {
      have = false;
      return spare;
    }
    const double u1 = (double(splitmix64(state) >> 11) + 0.5) * 0x1.0p-53;
    const double u2 = double(splitmix64(state) >> 11) * 0x1.0p-53;
    const double r = std::sqrt(-2.0 * std::log(u1));
    spare = r * std::sin(6.283185307179586 * u2);
    have = true;
    return r * std::cos(6.283185307179586 * u2);
  }
};

// ggml's llama_ftype of a model whose weights are mostly `f` (informational).
uint32_t file_type(Format f) {
  switch (f) {
    case Format::F32: return 0;
    case Format::F16: return 1;
    case Format::Q4_0: return 2;
    case Format::Q4_1: return 3;
    case Format::Q8_0: return 7;
    case Format::Q5_0: return 8;
    case Format::Q5_1: return 9;
    case Format::Q4_K: return 14;  // Q4_K_S
    case Format::Q5_K: return 16;  // Q5_K_S
    case Format::Q6_K: return 18;
    case Format::Q2_K: return 10;
    case Format::Q3_K: return 11;  // Q3_K_S
    case Format::IQ4_NL: return 25;
    case Format::IQ4_XS: return 30;
    case Format::BF16: return 32;
  }
  return 0;
}

constexpr uint64_t kRowsPerBlock = 64;  // rows drawn from one seeded stream

// Random tensor of `shape` (ggml order) in `fmt`: value = mean + std * N(0,1),
// row blocks generated and quantized in parallel.
std::vector<uint8_t> random_tensor(const std::string& name, const std::vector<uint64_t>& shape,
                                   Format fmt, double mean, double stddev, uint64_t seed,
                                   unsigned threads) {
  const uint64_t cols = shape[0];
  const uint64_t rows = shape.size() > 1 ? shape[1] : 1;
  const size_t rb = row_bytes(fmt, cols);
  std::vector<uint8_t> out(rb * rows);
  const uint64_t n_blocks = (rows + kRowsPerBlock - 1) / kRowsPerBlock;
  const uint64_t base = seed ^ hash_name(name);
  std::atomic<uint64_t> next{0};
  const auto work = [&] {
    std::vector<float> buf(cols * kRowsPerBlock);
    for (uint64_t b; (b = next.fetch_add(1)) < n_blocks;) {
      uint64_t s = base + b * 0x632be59bd9b4e019ull;
      Normal g{splitmix64(s)};
      const uint64_t r0 = b * kRowsPerBlock, nr = std::min(kRowsPerBlock, rows - r0);
      for (uint64_t i = 0; i < nr * cols; ++i) buf[i] = float(mean + stddev * g.next());
      traits(fmt).quantize(buf.data(), out.data() + r0 * rb, nr * cols);
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads && t < n_blocks; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  return out;
}

}  // namespace

const SynthPreset& synth_preset(std::string_view name) {
  for (const auto& p : presets())
    if (p.name == name) return p;
  fail("unknown synth preset '{}' (known: {})", name, fmt::join(synth_preset_names(), ", "));
}

std::vector<std::string> synth_preset_names() {
  std::vector<std::string> n;
  for (const auto& p : presets()) n.push_back(p.name);
  return n;
}

Format synth_weight_format(Format requested, uint64_t row_len) {
  const auto fits = [&](Format f) { return row_len % traits(f).block_elems == 0; };
  if (fits(requested)) return requested;
  Format fb = requested;
  switch (requested) {
    case Format::Q4_K: fb = Format::Q5_0; break;
    case Format::Q5_K: fb = Format::Q5_1; break;
    case Format::Q6_K: fb = Format::Q8_0; break;
    case Format::Q2_K: case Format::Q3_K: case Format::IQ4_XS: fb = Format::IQ4_NL; break;
    default: break;
  }
  return fits(fb) ? fb : Format::F16;
}

std::vector<float> llama3_rope_factors(uint32_t n_rot, float base, float factor, float low, float high,
                                       uint32_t orig_ctx) {
  BQ_CHECK(n_rot >= 2 && n_rot % 2 == 0 && factor > 0 && low > 0 && high > low && orig_ctx > 0,
           "llama3 rope factors: n_rot {} (even), factor {}, low {} < high {}, orig_ctx {}", n_rot, factor, low, high,
           orig_ctx);
  const double lo_wave = double(orig_ctx) / low, hi_wave = double(orig_ctx) / high;
  std::vector<float> out(n_rot / 2);
  for (uint32_t i = 0; i < n_rot / 2; ++i) {
    const double freq = std::pow(double(base), -2.0 * i / double(n_rot));
    const double wave = 2.0 * M_PI / freq;
    if (wave < hi_wave) {
      out[i] = 1.0f;
    } else if (wave > lo_wave) {
      out[i] = factor;
    } else {
      const double smooth = (double(orig_ctx) / wave - low) / (high - low);
      out[i] = float(1.0 / ((1.0 - smooth) / factor + smooth));
    }
  }
  return out;
}

SynthReport synth_model(const SynthOptions& opt, const std::string& path) {
  const SynthPreset& p = synth_preset(opt.preset);
  const bool qwen = opt.arch == Arch::Qwen2;
  const TokenizerStyle style =
      opt.tokenizer ? *opt.tokenizer : (qwen ? TokenizerStyle::Qwen2 : p.tokenizer);
  BQ_CHECK(!(qwen && style == TokenizerStyle::Spm),
           "synth: a SentencePiece tokenizer is only offered for --arch llama");
  const unsigned threads = opt.threads ? opt.threads : std::max(1u, std::thread::hardware_concurrency());

  SynthReport rep;
  ModelConfig& c = rep.config;
  c.arch = opt.arch;
  c.arch_name = qwen ? "qwen2" : "llama";
  c.n_vocab = p.n_vocab, c.n_embd = p.n_embd, c.n_layer = p.n_layer, c.n_head = p.n_head;
  c.n_head_kv = p.n_head_kv, c.n_ff = p.n_ff, c.n_ctx_train = p.n_ctx;
  c.head_dim = c.n_rot = p.n_embd / p.n_head;
  c.rope_freq_base = p.rope_base, c.rms_eps = p.rms_eps;
  c.rope_mode = qwen ? RopeMode::Neox : RopeMode::Normal;
  c.tied_embeddings = (qwen && p.name == "tiny") ? true : p.tied;
  c.qkv_bias = qwen;
  BQ_CHECK(!(qwen && opt.rope_freqs), "synth: rope_freqs (Llama 3.1 rope scaling) is only offered for --arch llama");
  c.rope_freqs = opt.rope_freqs;

  gguf::GgufWriter w;
  const std::string a = c.arch_name + ".";
  w.set_string("general.architecture", c.arch_name);
  w.set_string("general.name", fmt::format("blockq synth {} {} {}", p.name, c.arch_name,
                                            traits(opt.type).name));
  w.set_u32("general.file_type", file_type(opt.type));
  w.set_u32(a + "context_length", c.n_ctx_train);
  w.set_u32(a + "embedding_length", c.n_embd);
  w.set_u32(a + "block_count", c.n_layer);
  w.set_u32(a + "feed_forward_length", c.n_ff);
  w.set_u32(a + "attention.head_count", c.n_head);
  w.set_u32(a + "attention.head_count_kv", c.n_head_kv);
  w.set_f32(a + "rope.freq_base", c.rope_freq_base);
  w.set_f32(a + "attention.layer_norm_rms_epsilon", c.rms_eps);
  w.set_u32(a + "rope.dimension_count", c.n_rot);
  w.set_u32(a + "vocab_size", c.n_vocab);
  to_gguf(synth_tokenizer(style, c.n_vocab), w);

  const double embd_std = 2.5 / std::sqrt(double(c.n_embd));
  for (const TensorSpec& t : expected_tensors(c)) {
    Format f = Format::F32;
    double mean = 0.0, stddev = 0.0;
    if (t.is_norm_or_bias) {
      const bool bias = t.name.ends_with(".bias");
      mean = bias ? 0.0 : 1.0;
      stddev = bias ? 0.1 : 0.05;
    } else {
      f = synth_weight_format(opt.type, t.shape[0]);
      if (f != opt.type) rep.fallbacks.emplace_back(t.name, f);
      const bool embed = t.name == "token_embd.weight" || t.name == "output.weight";
      stddev = embed ? embd_std : 1.0 / std::sqrt(double(t.shape[0]));
    }
    uint64_t n = 1;
    for (uint64_t d : t.shape) n *= d;
    rep.n_params += n;
    if (t.name == "rope_freqs.weight") {
      const std::vector<float> ff = llama3_rope_factors(c.n_rot, c.rope_freq_base);
      std::vector<uint8_t> bytes(ff.size() * 4);
      std::memcpy(bytes.data(), ff.data(), bytes.size());
      w.add_tensor(t.name, t.shape, Format::F32, std::move(bytes));
      continue;
    }
    w.add_tensor(t.name, t.shape, f, random_tensor(t.name, t.shape, f, mean, stddev, opt.seed, threads));
  }
  w.write(path);
  rep.file_bytes = std::filesystem::file_size(path);
  return rep;
}

}  // namespace blockq::model
