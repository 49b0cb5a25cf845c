// Deterministic tokenizers for synthetic models: BPE merges (or SentencePiece
// pieces) learned from synth_corpus(), laid out like the real vocabularies of
// Llama 3, Qwen2, SmolLM2 and Llama 2.
#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "model/pretokenize.hpp"
#include "model/synth.hpp"
#include "model/unicode.hpp"
#include "util/error.hpp"

namespace blockq::model {

namespace {

constexpr std::string_view kSpmSpace = "\xe2\x96\x81";

const char* kChatMlTemplate =
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
    "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|im_start|>assistant\\n' }}{% endif %}";
const char* kLlama3Template =
    "{{ bos_token }}{% for message in messages %}{{ '<|start_header_id|>' + message['role'] + "
    "'<|end_header_id|>\\n\\n' + message['content'] | trim + '<|eot_id|>' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}"
    "{% endif %}";
const char* kZephyrTemplate =
    "{% for message in messages %}{{ '<|' + message['role'] + '|>\\n' + message['content'] + "
    "eos_token + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\\n' }}"
    "{% endif %}";

using Pair = std::pair<std::string, std::string>;

// Classic BPE training: repeatedly merge the most frequent adjacent pair
// (ties: the smallest pair in byte order) until no pair occurs twice or
// max_merges is reached. words: symbol sequences with their counts.
std::vector<Pair> learn_merges(std::map<std::vector<std::string>, int64_t> words,
                               size_t max_merges) {
  std::vector<Pair> merges;
  while (merges.size() < max_merges) {
    std::unordered_map<std::string, std::pair<Pair, int64_t>> counts;
    for (const auto& [sym, n] : words)
      for (size_t i = 0; i + 1 < sym.size(); ++i) {
        auto& e = counts[sym[i] + '\x01' + sym[i + 1]];
        e.first = {sym[i], sym[i + 1]};
        e.second += n;
      }
    const std::pair<Pair, int64_t>* best = nullptr;
    for (const auto& [key, e] : counts)
      if (!best || e.second > best->second || (e.second == best->second && e.first < best->first))
        best = &e;
    if (!best || best->second < 2) break;
    const Pair m = best->first;
    merges.push_back(m);
    std::map<std::vector<std::string>, int64_t> next;
    for (const auto& [sym, n] : words) {
      std::vector<std::string> out;
      for (size_t i = 0; i < sym.size(); ++i) {
        if (i + 1 < sym.size() && sym[i] == m.first && sym[i + 1] == m.second) {
          out.push_back(m.first + m.second);
          ++i;
        } else {
          out.push_back(sym[i]);
        }
      }
      next[out] += n;
    }
    words.swap(next);
  }
  return merges;
}

struct Vocab {
  TokenizerData d;
  std::set<std::string> seen;
  void add(const std::string& text, TokenType type, float score = 0.0f) {
    BQ_ASSERT(seen.insert(text).second, "duplicate synthetic token {}", text);
    d.tokens.push_back(text);
    d.token_types.push_back(int32_t(type));
    d.scores.push_back(score);
  }
  TokenId id(const std::string& text) const {
    return TokenId(std::find(d.tokens.begin(), d.tokens.end(), text) - d.tokens.begin());
  }
};

TokenizerData byte_level(TokenizerStyle style, uint32_t n_vocab) {
  const PreType pre = style == TokenizerStyle::Llama3  ? PreType::Llama3
                      : style == TokenizerStyle::Qwen2 ? PreType::Qwen2
                                                       : PreType::Smollm;
  std::vector<std::string> specials;
  if (style == TokenizerStyle::Llama3)
    specials = {"<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>",
                "<|end_header_id|>", "<|eot_id|>",      "<|eom_id|>",
                "<|finetune_right_pad_id|>", "<|python_tag|>"};
  else
    specials = {"<|endoftext|>", "<|im_start|>", "<|im_end|>"};
  BQ_CHECK(n_vocab >= 256 + specials.size(), "a byte-level vocabulary needs at least {} tokens, "
           "not {}", 256 + specials.size(), n_vocab);

  std::map<std::vector<std::string>, int64_t> words;
  for (const std::string& w : pre_tokenize(pre, synth_corpus())) {
    std::vector<std::string> sym;
    for (unsigned char b : w) sym.push_back(byte_to_token_text(b));
    ++words[sym];
  }
  const std::vector<Pair> merges = learn_merges(words, n_vocab - 256 - specials.size());

  Vocab v;
  v.d.model = "gpt2";
  v.d.pre = std::string(pre_type_name(pre));
  if (style == TokenizerStyle::Smollm)
    for (const auto& s : specials) v.add(s, TokenType::Control);
  for (int b = 0; b < 256; ++b) v.add(byte_to_token_text(uint8_t(b)), TokenType::Normal);
  for (const auto& [a, b] : merges) {
    v.d.merges.push_back(a + " " + b);
    if (!v.seen.count(a + b)) v.add(a + b, TokenType::Normal);
  }
  const size_t tail = style == TokenizerStyle::Smollm ? 0 : specials.size();
  for (size_t i = 0; v.d.tokens.size() + tail < n_vocab; ++i)
    v.add("<unused_" + std::to_string(i) + ">", TokenType::Unused);
  if (style != TokenizerStyle::Smollm)
    for (const auto& s : specials) v.add(s, TokenType::Control);
  v.d.scores.clear();  // byte-level BPE vocabularies carry no scores

  switch (style) {
    case TokenizerStyle::Llama3:
      v.d.bos = v.id("<|begin_of_text|>");
      v.d.eos = v.id("<|end_of_text|>");
      v.d.add_bos = true;
      v.d.chat_template = kLlama3Template;
      break;
    case TokenizerStyle::Qwen2:
      v.d.bos = v.d.pad = v.id("<|endoftext|>");
      v.d.eos = v.id("<|im_end|>");
      v.d.add_bos = false;
      v.d.chat_template = kChatMlTemplate;
      break;
    default:  // Smollm
      v.d.unk = v.id("<|endoftext|>");
      v.d.bos = v.id("<|im_start|>");
      v.d.eos = v.d.pad = v.id("<|im_end|>");
      v.d.add_bos = false;
      v.d.chat_template = kChatMlTemplate;
      break;
  }
  return std::move(v.d);
}

TokenizerData sentencepiece(uint32_t n_vocab) {
  // Words of the text with the SentencePiece space in front, split into code points.
  std::map<std::vector<std::string>, int64_t> words;
  std::set<std::string> chars = {std::string(kSpmSpace)};
  const std::string_view text = synth_corpus();
  size_t pos = 0;
  while (pos < text.size()) {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\n')) ++pos;
    size_t end = pos;
    while (end < text.size() && text[end] != ' ' && text[end] != '\n') ++end;
    if (end == pos) break;
    std::vector<std::string> sym = {std::string(kSpmSpace)};
    const std::vector<uint32_t> cps = utf8_to_cps(text.substr(pos, end - pos));
    for (uint32_t cp : cps) {
      std::string s;
      utf8_append(s, cp);
      chars.insert(s);
      sym.push_back(s);
    }
    ++words[sym];
    pos = end;
  }
  BQ_CHECK(n_vocab >= 3 + 256 + chars.size(), "a SentencePiece vocabulary needs at least {} "
           "tokens, not {}", 3 + 256 + chars.size(), n_vocab);
  const std::vector<Pair> merges = learn_merges(words, n_vocab - 3 - 256 - chars.size());

  Vocab v;
  v.d.model = "llama";
  v.add("<unk>", TokenType::Unknown);
  v.add("<s>", TokenType::Control);
  v.add("</s>", TokenType::Control);
  for (int b = 0; b < 256; ++b) v.add(fmt::format("<0x{:02X}>", b), TokenType::Byte);
  // Pieces score by merge order (earlier merges win); characters below all.
  float score = 0.0f;
  for (const auto& [a, b] : merges)
    if (!v.seen.count(a + b)) v.add(a + b, TokenType::Normal, score -= 1.0f);
  for (const std::string& c : chars) v.add(c, TokenType::Normal, -1e4f);
  for (size_t i = 0; v.d.tokens.size() < n_vocab; ++i)
    v.add("<unused_" + std::to_string(i) + ">", TokenType::Unused, -1e9f);
  v.d.unk = 0, v.d.bos = 1, v.d.eos = 2;
  v.d.add_bos = true;
  v.d.add_eos = false;
  v.d.add_space_prefix = true;
  v.d.chat_template = kZephyrTemplate;
  return std::move(v.d);
}

}  // namespace

std::string_view tokenizer_style_name(TokenizerStyle s) {
  switch (s) {
    case TokenizerStyle::Llama3: return "llama3";
    case TokenizerStyle::Qwen2: return "qwen2";
    case TokenizerStyle::Smollm: return "smollm";
    case TokenizerStyle::Spm: return "spm";
  }
  return "?";
}

TokenizerData synth_tokenizer(TokenizerStyle style, uint32_t n_vocab) {
  return style == TokenizerStyle::Spm ? sentencepiece(n_vocab) : byte_level(style, n_vocab);
}

}  // namespace blockq::model
