// Synthetic models: GGUF files with random weights, real llama/qwen2 shapes
// and a working tokenizer (byte-level BPE or SentencePiece, its merges learned
// from a small embedded English text), for tests and benchmarks without
// downloading a model. llama.cpp loads them (tests/model/oracle_test.cpp).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/config.hpp"
#include "model/tokenizer.hpp"
#include "quant/format.hpp"

namespace blockq::model {

enum class TokenizerStyle {
  Llama3,  // byte-level BPE, pre "llama-bpe", <|begin_of_text|> ... <|eot_id|>, adds BOS
  Qwen2,   // byte-level BPE, pre "qwen2", <|endoftext|> <|im_start|> <|im_end|>, no BOS
  Smollm,  // byte-level BPE, pre "smollm", specials first (SmolLM2's layout), no BOS
  Spm,     // SentencePiece: <unk> <s> </s>, <0xXX> bytes, scored pieces, adds BOS
};

std::string_view tokenizer_style_name(TokenizerStyle s);

struct SynthPreset {
  std::string name;
  uint32_t n_embd, n_layer, n_head, n_head_kv, n_ff, n_vocab, n_ctx;
  float rope_base, rms_eps;
  bool tied;                  // for arch llama; qwen2 "tiny" is tied, the rest follow this
  TokenizerStyle tokenizer;   // for arch llama (qwen2 uses TokenizerStyle::Qwen2)
};

// "tiny" (n_embd 256, 2 layers, 4 heads of 64, 2 kv heads, n_ff 512, vocab
// 1024), "smollm2-360m", "llama-3.2-1b", "llama-3-8b". Throws blockq::Error
// listing the names for an unknown one.
const SynthPreset& synth_preset(std::string_view name);
std::vector<std::string> synth_preset_names();

// The embedded English text the merges are learned from.
std::string_view synth_corpus();

// A deterministic tokenizer of exactly n_vocab tokens: byte tokens, learned
// merges (BPE) or pieces (SPM), the style's special tokens, and unused
// filler tokens when the text supports fewer merges than there is room for.
TokenizerData synth_tokenizer(TokenizerStyle style, uint32_t n_vocab);

// The format a weight is stored in: `requested` if its rows (row_len
// elements) fit the block size, else llama.cpp's fallback (q4_K -> q5_0,
// q5_K -> q5_1, q6_K -> q8_0, q2_K, q3_K and iq4_xs -> iq4_nl, and f16 when
// even that does not fit).
Format synth_weight_format(Format requested, uint64_t row_len);

struct SynthOptions {
  Arch arch = Arch::Llama;
  std::string preset = "tiny";
  Format type = Format::Q8_0;                 // of the 2-D weights; 1-D tensors are F32
  uint64_t seed = 1;
  std::optional<TokenizerStyle> tokenizer;    // default: the preset's (qwen2: Qwen2)
  unsigned threads = 0;                       // 0: hardware concurrency
  // Llama 3.1-style rope scaling: a rope_freqs.weight tensor [head_dim / 2]
  // of llama3_rope_factors(head_dim, the preset's rope base) (llama only).
  bool rope_freqs = false;
};

// The freq factors [n_rot / 2] of Llama 3.1's "llama3" rope scaling, as
// llama.cpp's converter computes them: for pair i with frequency
// f = base^(-2i/n_rot) and wavelength w = 2 pi / f, 1 when w < orig_ctx /
// high, `factor` when w > orig_ctx / low, else 1 / ((1 - s) / factor + s)
// with s = (orig_ctx / w - low) / (high - low).
std::vector<float> llama3_rope_factors(uint32_t n_rot, float base, float factor = 8.0f, float low = 1.0f,
                                       float high = 4.0f, uint32_t orig_ctx = 8192);

struct SynthReport {
  ModelConfig config;
  uint64_t n_params = 0;
  uint64_t file_bytes = 0;
  // Weights stored in another format than requested, and the format used.
  std::vector<std::pair<std::string, Format>> fallbacks;
};

// Writes the model to `path`. Weights: token_embd and output ~ N(0, (2.5 /
// sqrt(n_embd))^2) (so logits have a spread of a few units), projections ~
// N(0, 1/fan_in), norms ~ 1 + N(0, 0.05^2), qwen2 biases ~ N(0, 0.1^2).
// The same options give the same bytes (each block of rows has its own
// seeded generator, whatever the thread count).
SynthReport synth_model(const SynthOptions& opt, const std::string& path);

}  // namespace blockq::model
