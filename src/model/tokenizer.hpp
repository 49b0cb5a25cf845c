// Tokenizers of GGUF models, with llama.cpp's behaviour: byte-level BPE
// ("gpt2": GPT-2 byte mapping, merges, pre-tokenizer regexes) and SentencePiece
// BPE ("llama": scores, <0xXX> byte fallback, the U+2581 space, space prefix),
// special tokens split out of the text, and decoding back to bytes. Built
// from a TokenizerData, which from_gguf() reads and to_gguf() writes.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/pretokenize.hpp"

namespace blockq::gguf {
class GgufFile;
class GgufWriter;
}  // namespace blockq::gguf

namespace blockq::model {

using TokenId = int32_t;
inline constexpr TokenId kNoToken = -1;

// GGUF tokenizer.ggml.token_type values.
enum class TokenType : int32_t {
  Undefined = 0, Normal = 1, Unknown = 2, Control = 3, UserDefined = 4, Unused = 5, Byte = 6,
};

// Everything a tokenizer is built from: the tokenizer.ggml.* metadata. Empty
// vectors and unset optionals mean "absent" (llama.cpp's defaults apply).
struct TokenizerData {
  std::string model;                 // tokenizer.ggml.model: "gpt2" or "llama"
  std::string pre;                   // tokenizer.ggml.pre ("" when absent)
  std::vector<std::string> tokens;   // tokenizer.ggml.tokens
  std::vector<float> scores;         // tokenizer.ggml.scores
  std::vector<int32_t> token_types;  // tokenizer.ggml.token_type (TokenType values)
  std::vector<std::string> merges;   // tokenizer.ggml.merges: "left right"
  std::optional<TokenId> bos, eos, unk, pad, eot;  // tokenizer.ggml.*_token_id
  std::optional<bool> add_bos, add_eos, add_space_prefix;
  std::string chat_template;         // tokenizer.chat_template
};

// Reads tokenizer.ggml.* and tokenizer.chat_template. Throws blockq::Error
// naming the file and key when a required key is missing or mistyped.
TokenizerData from_gguf(const gguf::GgufFile& file);
// Writes the same keys (only those that are set).
void to_gguf(const TokenizerData& data, gguf::GgufWriter& writer);

class Tokenizer {
 public:
  // Validates the data (unknown model or pre-tokenizer, duplicate tokens,
  // array lengths, malformed merges, out-of-range ids) and throws
  // blockq::Error saying what was wrong.
  explicit Tokenizer(TokenizerData data);

  // llama_tokenize semantics: add_special adds BOS (and EOS) as the
  // vocabulary says; parse_special turns control-token text (e.g.
  // "<|im_start|>") into those tokens, while user-defined tokens are always
  // split out.
  std::vector<TokenId> tokenize(std::string_view text, bool add_special = true,
                                bool parse_special = false) const;

  // The bytes of one token: byte-level BPE tokens are mapped back to bytes,
  // SentencePiece's U+2581 becomes a space and <0xXX> its byte. Control and
  // unknown tokens give their text when `special` is set, else nothing.
  std::string token_to_piece(TokenId id, bool special = true) const;
  // llama_detokenize semantics: the SPM leading space is dropped, BOS/EOS
  // removed when remove_special, and BPE "clean up spaces" applied when the
  // vocabulary asks for it.
  std::string detokenize(std::span<const TokenId> ids, bool remove_special = false,
                         bool unparse_special = false) const;

  size_t n_vocab() const { return tokens_.size(); }
  bool is_spm() const { return spm_; }
  PreType pre_type() const { return pre_; }
  TokenId bos() const { return bos_; }
  TokenId eos() const { return eos_; }
  TokenId eot() const { return eot_; }
  TokenId unk() const { return unk_; }
  bool add_bos() const { return add_bos_; }
  bool add_eos() const { return add_eos_; }
  // End of generation: EOS, EOT, and the end-of-turn tokens llama.cpp
  // recognises by their text (<|eot_id|>, <|im_end|>, <|endoftext|>, </s>, ...).
  bool is_eog(TokenId id) const;
  TokenType type(TokenId id) const;
  const std::string& text(TokenId id) const;
  std::optional<TokenId> find(std::string_view text) const;
  const TokenizerData& data() const { return data_; }

 private:
  struct Fragment {
    TokenId token;           // kNoToken for raw text
    std::string_view text;   // raw text (into the caller's string)
  };
  std::vector<Fragment> split_special(std::string_view text, bool parse_special) const;
  void tokenize_bpe(std::string_view text, std::vector<TokenId>& out) const;
  void tokenize_spm(const std::string& text, std::vector<TokenId>& out) const;
  TokenId byte_token_spm(uint8_t b) const;
  int merge_rank(std::string_view left, std::string_view right) const;

  TokenizerData data_;
  bool spm_ = false;
  PreType pre_ = PreType::Default;
  std::vector<std::string> tokens_;
  std::vector<float> scores_;
  std::vector<TokenType> types_;
  std::unordered_map<std::string, TokenId> index_;
  std::unordered_map<std::string, int> ranks_;  // "left\x01right" -> merge rank
  std::vector<TokenId> specials_;               // control/user-defined/unknown, longest first
  std::vector<TokenId> eog_;
  TokenId bos_ = kNoToken, eos_ = kNoToken, eot_ = kNoToken, unk_ = kNoToken;
  bool add_bos_ = false, add_eos_ = false, add_space_prefix_ = false;
  bool ignore_merges_ = false, clean_spaces_ = false;
};

}  // namespace blockq::model
