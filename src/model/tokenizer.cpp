// Tokenizer construction, special-token splitting, byte-level BPE and
// SentencePiece BPE encoding, and decoding, following llama.cpp's vocabulary
// code (llama-vocab.cpp) in behaviour.
#include "model/tokenizer.hpp"

#include <algorithm>
#include <array>
#include <queue>

#include "model/unicode.hpp"
#include "util/error.hpp"

namespace blockq::model {

namespace {

constexpr std::string_view kSpmSpace = "\xe2\x96\x81";  // U+2581

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  std::string out;
  out.reserve(s.size());
  size_t pos = 0;
  for (size_t hit; (hit = s.find(from, pos)) != std::string::npos; pos = hit + from.size()) {
    out.append(s, pos, hit - pos);
    out.append(to);
  }
  out.append(s, pos, std::string::npos);
  s.swap(out);
}

std::string rank_key(std::string_view l, std::string_view r) {
  std::string k;
  k.reserve(l.size() + r.size() + 1);
  k.append(l);
  k.push_back('\x01');
  k.append(r);
  return k;
}

// A symbol of the merge loops: a byte range of the word, linked to neighbours.
struct Symbol {
  int prev, next;
  size_t begin, len;
};

// The texts llama.cpp treats as end-of-generation (and forces to control type).
constexpr std::array<std::string_view, 9> kEogTexts = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
    "</s>",       "<|eom_id|>", "<EOT>",   "<|end_of_text|>"};

// llama.cpp's "clean up tokenization spaces", in place and in its three
// passes: " ?" " !" " ." " ," lose the space; " ' " loses both spaces;
// " 's" " 'm" " 're" " 've" lose the space.
void clean_up_spaces(std::string& t) {
  size_t n = t.size();
  if (n == 0) return;
  size_t total = 1;
  for (size_t i = 1; i < n; ++i) {
    const char x = t[i];
    if (t[i - 1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ',')) --total;
    t[total++] = x;
  }
  n = total, total = 1;
  for (size_t i = 1; i < n; ++i) {
    const char x = t[i];
    if (x == '\'' && i + 1 < n && t[i - 1] == ' ' && t[i + 1] == ' ') {
      --total;
      t[++i] = '\0';
    }
    t[total++] = x;
  }
  n = total, total = 1;
  for (size_t i = 1; i < n; ++i) {
    const char x = t[i];
    if (t[i - 1] == ' ' && x == '\'' && i + 1 < n) {
      const char x1 = t[i + 1];
      if (x1 == 's' || x1 == 'm') {
        --total;
      } else if (i + 2 < n && ((x1 == 'r' && t[i + 2] == 'e') || (x1 == 'v' && t[i + 2] == 'e'))) {
        --total;
      }
    }
    t[total++] = x;
  }
  t.resize(total);
}

}  // namespace

Tokenizer::Tokenizer(TokenizerData data) : data_(std::move(data)) {
  const auto& d = data_;
  if (d.model == "llama") {
    spm_ = true;
  } else if (d.model == "gpt2") {
    spm_ = false;
    pre_ = pre_type_from_name(d.pre);
  } else {
    fail("tokenizer.ggml.model = '{}' is not supported (blockq reads 'gpt2' and 'llama')", d.model);
  }
  const size_t n = d.tokens.size();
  BQ_CHECK(n > 0, "tokenizer.ggml.tokens is empty");
  BQ_CHECK(d.scores.empty() || d.scores.size() >= n,
           "tokenizer.ggml.scores has {} entries for {} tokens", d.scores.size(), n);
  BQ_CHECK(d.token_types.empty() || d.token_types.size() >= n,
           "tokenizer.ggml.token_type has {} entries for {} tokens", d.token_types.size(), n);

  tokens_ = d.tokens;
  scores_.assign(n, 0.0f);
  types_.assign(n, TokenType::Normal);
  index_.reserve(n * 2);
  for (size_t i = 0; i < n; ++i) {
    if (tokens_[i].empty()) tokens_[i] = "[EMPTY_" + std::to_string(i) + "]";  // as llama.cpp
    const auto [it, fresh] = index_.emplace(tokens_[i], TokenId(i));
    BQ_CHECK(fresh, "duplicate token in vocabulary: '{}' has ids {} and {}", tokens_[i],
             it->second, i);
    if (!d.scores.empty()) scores_[i] = d.scores[i];
    if (!d.token_types.empty()) {
      const int32_t t = d.token_types[i];
      types_[i] = (t >= 1 && t <= 6) ? TokenType(t) : TokenType::Undefined;
    }
  }

  if (!spm_) {
    BQ_CHECK(!d.merges.empty(), "tokenizer.ggml.merges is missing: a 'gpt2' tokenizer needs it");
    ranks_.reserve(d.merges.size() * 2);
    for (size_t i = 0; i < d.merges.size(); ++i) {
      const std::string& m = d.merges[i];
      const size_t sp = m.find(' ', 1);
      BQ_CHECK(sp != std::string::npos, "tokenizer.ggml.merges[{}] = '{}' has no space", i, m);
      ranks_.emplace(rank_key(std::string_view(m).substr(0, sp),
                              std::string_view(m).substr(sp + 1)),
                     int(i));
    }
  }

  // llama.cpp's defaults per model, then the metadata.
  const auto in_range = [&](TokenId id) { return id >= 0 && size_t(id) < n; };
  if (spm_) {
    bos_ = 1, eos_ = 2, unk_ = 0;
    add_space_prefix_ = true, add_bos_ = true, add_eos_ = false, clean_spaces_ = false;
  } else {
    bos_ = 11, eos_ = 11, unk_ = kNoToken;
    add_space_prefix_ = false, add_eos_ = false, clean_spaces_ = true;
    add_bos_ = pre_ == PreType::Llama3;
    ignore_merges_ = pre_ == PreType::Llama3;
    if (pre_ == PreType::Qwen2 || pre_ == PreType::Smollm) clean_spaces_ = false;
  }
  for (TokenId* id : {&bos_, &eos_, &unk_})
    if (!in_range(*id)) *id = kNoToken;
  const auto take = [&](const std::optional<TokenId>& v, TokenId& dst, const char* key) {
    if (!v) return;
    BQ_CHECK(in_range(*v), "tokenizer.ggml.{} = {} is outside the vocabulary of {} tokens", key,
             *v, n);
    dst = *v;
  };
  take(d.bos, bos_, "bos_token_id");
  take(d.eos, eos_, "eos_token_id");
  take(d.unk, unk_, "unknown_token_id");
  take(d.eot, eot_, "eot_token_id");
  if (d.add_bos) add_bos_ = *d.add_bos;
  if (d.add_eos) add_eos_ = *d.add_eos;
  if (d.add_space_prefix) add_space_prefix_ = *d.add_space_prefix;
  BQ_CHECK(!add_bos_ || bos_ != kNoToken, "add_bos_token is true, but bos_token_id is not set");
  BQ_CHECK(!add_eos_ || eos_ != kNoToken, "add_eos_token is true, but eos_token_id is not set");

  // End-of-generation tokens by text; llama.cpp also makes them control tokens.
  for (std::string_view t : kEogTexts) {
    if (const auto id = find(t)) {
      if (eot_ == kNoToken && t != "</s>" && t != "<|eom_id|>") eot_ = *id;
      eog_.push_back(*id);
      if (types_[*id] != TokenType::Control) types_[*id] = TokenType::Control;
    }
  }
  for (TokenId id : {eos_, eot_})
    if (id != kNoToken) eog_.push_back(id);

  for (size_t i = 0; i < n; ++i) {
    const TokenType t = types_[i];
    if (t == TokenType::Control || t == TokenType::UserDefined || t == TokenType::Unknown)
      specials_.push_back(TokenId(i));
  }
  std::stable_sort(specials_.begin(), specials_.end(), [&](TokenId a, TokenId b) {
    return tokens_[a].size() > tokens_[b].size();
  });
}

std::optional<TokenId> Tokenizer::find(std::string_view text) const {
  const auto it = index_.find(std::string(text));
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

TokenType Tokenizer::type(TokenId id) const {
  BQ_CHECK(id >= 0 && size_t(id) < tokens_.size(), "token id {} outside the vocabulary of {}", id,
           tokens_.size());
  return types_[id];
}

const std::string& Tokenizer::text(TokenId id) const {
  type(id);  // range check
  return tokens_[id];
}

bool Tokenizer::is_eog(TokenId id) const {
  return id != kNoToken && std::find(eog_.begin(), eog_.end(), id) != eog_.end();
}

int Tokenizer::merge_rank(std::string_view left, std::string_view right) const {
  const auto it = ranks_.find(rank_key(left, right));
  return it == ranks_.end() ? -1 : it->second;
}

// Splits the text at every occurrence of a special token, longest tokens
// first. Without parse_special only user-defined tokens are split out.
std::vector<Tokenizer::Fragment> Tokenizer::split_special(std::string_view text,
                                                          bool parse_special) const {
  std::vector<Fragment> frags;
  if (!text.empty()) frags.push_back({kNoToken, text});
  for (TokenId sid : specials_) {
    if (!parse_special && types_[sid] != TokenType::UserDefined) continue;
    const std::string& st = tokens_[sid];
    std::vector<Fragment> next;
    next.reserve(frags.size());
    for (const Fragment& f : frags) {
      if (f.token != kNoToken) {
        next.push_back(f);
        continue;
      }
      std::string_view rest = f.text;
      for (size_t hit; (hit = rest.find(st)) != std::string_view::npos;) {
        if (hit > 0) next.push_back({kNoToken, rest.substr(0, hit)});
        next.push_back({sid, {}});
        rest.remove_prefix(hit + st.size());
      }
      if (!rest.empty()) next.push_back({kNoToken, rest});
    }
    frags.swap(next);
  }
  return frags;
}

std::vector<TokenId> Tokenizer::tokenize(std::string_view text, bool add_special,
                                         bool parse_special) const {
  std::vector<TokenId> out;
  const std::vector<Fragment> frags = split_special(text, parse_special);
  if (add_special && add_bos_) out.push_back(bos_);
  if (spm_) {
    bool prev_special = true;  // a space prefix goes on the first text and after specials
    for (const Fragment& f : frags) {
      if (f.token != kNoToken) {
        out.push_back(f.token);
        prev_special = true;
        continue;
      }
      std::string t = (add_space_prefix_ && prev_special) ? " " : "";
      t.append(f.text);
      replace_all(t, " ", kSpmSpace);
      tokenize_spm(t, out);
      prev_special = false;
    }
  } else {
    for (const Fragment& f : frags) {
      if (f.token != kNoToken)
        out.push_back(f.token);
      else
        tokenize_bpe(f.text, out);
    }
  }
  if (add_special && add_eos_) out.push_back(eos_);
  return out;
}

// Byte-level BPE: pre-tokenize, map bytes to printable code points, then merge
// the lowest-ranked adjacent pair until none is left, per word.
void Tokenizer::tokenize_bpe(std::string_view text, std::vector<TokenId>& out) const {
  struct Bigram {
    int left, right, rank;
    std::string text;
  };
  const auto later = [](const Bigram& a, const Bigram& b) {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  };
  for (const std::string& raw : pre_tokenize(pre_, text)) {
    std::string word;
    for (unsigned char b : raw) word += byte_to_token_text(b);
    if (ignore_merges_) {
      if (const auto id = find(word)) {
        out.push_back(*id);
        continue;
      }
    }
    std::vector<Symbol> sym;
    for (size_t off = 0; off < word.size();) {
      const size_t len = std::min(word.size() - off, utf8_len(uint8_t(word[off])));
      sym.push_back({int(sym.size()) - 1, -1, off, len});
      off += len;
      if (off < word.size()) sym.back().next = int(sym.size());
    }
    std::priority_queue<Bigram, std::vector<Bigram>, decltype(later)> queue(later);
    const auto str = [&](int i) { return std::string_view(word).substr(sym[i].begin, sym[i].len); };
    const auto add = [&](int l, int r) {
      if (l < 0 || r < 0) return;
      const int rank = merge_rank(str(l), str(r));
      if (rank < 0) return;
      queue.push({l, r, rank, std::string(str(l)) + std::string(str(r))});
    };
    for (int i = 1; i < int(sym.size()); ++i) add(i - 1, i);
    while (!queue.empty()) {
      const Bigram bg = queue.top();
      queue.pop();
      Symbol& l = sym[bg.left];
      Symbol& r = sym[bg.right];
      if (l.len == 0 || r.len == 0) continue;
      if (std::string(str(bg.left)) + std::string(str(bg.right)) != bg.text) continue;  // stale
      l.len += r.len;
      r.len = 0;
      l.next = r.next;
      if (r.next >= 0) sym[r.next].prev = bg.left;
      add(l.prev, bg.left);
      add(bg.left, l.next);
    }
    for (int i = sym.empty() ? -1 : 0; i != -1; i = sym[i].next) {
      if (sym[i].len == 0) continue;
      if (const auto id = find(str(i))) {
        out.push_back(*id);
        continue;
      }
      // Not in the vocabulary: llama.cpp looks each byte of the mapped text up
      // as a one-byte token and drops those it cannot find.
      for (char ch : str(i))
        if (const auto id = find(std::string_view(&ch, 1))) out.push_back(*id);
    }
  }
}

// SentencePiece BPE: merge the adjacent pair whose concatenation is the
// highest-scoring token, then emit symbols, falling back to <0xXX> bytes.
void Tokenizer::tokenize_spm(const std::string& text, std::vector<TokenId>& out) const {
  struct Bigram {
    int left, right;
    float score;
    size_t size;
  };
  const auto lower = [](const Bigram& a, const Bigram& b) {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  };
  std::vector<Symbol> sym;
  for (size_t off = 0; off < text.size();) {
    const size_t len = std::min(text.size() - off, utf8_len(uint8_t(text[off])));
    sym.push_back({int(sym.size()) - 1, -1, off, len});
    off += len;
    if (off < text.size()) sym.back().next = int(sym.size());
  }
  std::priority_queue<Bigram, std::vector<Bigram>, decltype(lower)> queue(lower);
  const auto add = [&](int l, int r) {
    if (l < 0 || r < 0) return;
    const std::string s = text.substr(sym[l].begin, sym[l].len + sym[r].len);
    const auto id = find(s);
    if (!id) return;
    queue.push({l, r, scores_[*id], s.size()});
  };
  for (int i = 1; i < int(sym.size()); ++i) add(i - 1, i);
  while (!queue.empty()) {
    const Bigram bg = queue.top();
    queue.pop();
    Symbol& l = sym[bg.left];
    Symbol& r = sym[bg.right];
    if (l.len == 0 || r.len == 0 || l.len + r.len != bg.size) continue;
    l.len += r.len;
    r.len = 0;
    l.next = r.next;
    if (r.next >= 0) sym[r.next].prev = bg.left;
    add(l.prev, bg.left);
    add(bg.left, l.next);
  }
  // Every merged symbol is a token (a pair is queued only then); a single
  // character that is not a token falls back to its <0xXX> byte tokens.
  for (int i = sym.empty() ? -1 : 0; i != -1; i = sym[i].next) {
    const std::string_view s = std::string_view(text).substr(sym[i].begin, sym[i].len);
    if (const auto id = find(s))
      out.push_back(*id);
    else
      for (unsigned char b : s) out.push_back(byte_token_spm(b));
  }
}

TokenId Tokenizer::byte_token_spm(uint8_t b) const {
  static constexpr char hex[] = "0123456789ABCDEF";
  const char buf[6] = {'<', '0', 'x', hex[b >> 4], hex[b & 15], '>'};
  if (const auto id = find(std::string_view(buf, 6))) return *id;
  if (const auto id = find(std::string_view(reinterpret_cast<const char*>(&b), 1))) return *id;
  fail("SentencePiece vocabulary has no byte token <0x{:02X}> for byte fallback", b);
}

std::string Tokenizer::token_to_piece(TokenId id, bool special) const {
  const TokenType t = type(id);
  const std::string& text = tokens_[id];
  if (t == TokenType::Control || t == TokenType::Unknown) return special ? text : std::string();
  if (t == TokenType::UserDefined) return text;
  if (t == TokenType::Byte) {
    BQ_CHECK(text.size() == 6 && text.starts_with("<0x"), "byte token {} is '{}', not <0xXX>", id,
             text);
    return std::string(1, char(std::stoi(text.substr(3, 2), nullptr, 16)));
  }
  if (t != TokenType::Normal) return {};  // unused/undefined: as llama.cpp, nothing
  if (spm_) {
    std::string s = text;
    replace_all(s, kSpmSpace, " ");
    return s;
  }
  std::string s;
  for (size_t pos = 0; pos < text.size();) {
    const size_t start = pos;
    const int b = cp_to_byte(utf8_decode(text, pos));
    if (b >= 0)
      s.push_back(char(b));
    else
      s.append(text, start, pos - start);  // not a mapped byte: kept as UTF-8
  }
  return s;
}

std::string Tokenizer::detokenize(std::span<const TokenId> ids, bool remove_special,
                                  bool unparse_special) const {
  bool strip_space = add_space_prefix_;
  if (remove_special && add_bos_ && !ids.empty() && ids.front() == bos_) {
    strip_space = false;
    ids = ids.subspan(1);
  }
  if (remove_special && add_eos_ && !ids.empty() && ids.back() == eos_) ids = ids.first(ids.size() - 1);
  std::string s;
  for (TokenId id : ids) {
    std::string piece = token_to_piece(id, unparse_special);
    if (strip_space && !piece.empty() && piece[0] == ' ') piece.erase(0, 1);
    strip_space = false;
    s += piece;
  }
  if (clean_spaces_) clean_up_spaces(s);
  return s;
}

}  // namespace blockq::model
