// Hand-written scanners equivalent to the pre-tokenizer regexes llama.cpp
// uses for byte-level BPE vocabularies. Each stage splits every piece of the
// previous stage; a regex stage keeps the unmatched gaps as pieces too.
#include "model/pretokenize.hpp"

#include <cstdint>

#include "model/unicode.hpp"
#include "util/error.hpp"

namespace blockq::model {

namespace {

struct Span {
  size_t begin, end;  // code point indices, [begin, end)
};

constexpr uint32_t kOutOfRange = 0xffffffffu;

// Class flags of one code point as the scanners need them.
struct Flags {
  bool letter = false, number = false, space = false, defined = false;
};

// One piece being scanned: code point and flag access that reads "nothing"
// outside [begin, end) (so lookahead stops at the piece boundary).
struct Cursor {
  const std::vector<uint32_t>& cps;
  Span s;
  bool undefined_is_other;  // std::regex path: unassigned code points count as punctuation

  uint32_t cp(size_t i) const { return i >= s.begin && i < s.end ? cps[i] : kOutOfRange; }
  Flags flags(size_t i) const {
    Flags f;
    if (i < s.begin || i >= s.end) return f;
    const uint32_t c = cps[i];
    const CpClass k = cp_class(c);
    f.letter = k == CpClass::Letter;
    f.number = k == CpClass::Number;
    f.space = is_whitespace(c);
    f.defined = k != CpClass::Undefined || f.space || undefined_is_other;
    return f;
  }
  // [^\s\p{L}\p{N}] (and, on the hand-written path, an assigned code point).
  bool other(const Flags& f) const { return !(f.space || f.letter || f.number) && f.defined; }
};

uint32_t ascii_lower(uint32_t c) { return (c >= 'A' && c <= 'Z') ? c + 32 : c; }

// Length of a contraction at i ('s 't 're 've 'm 'll 'd), 0 if none.
size_t contraction(const Cursor& c, size_t i, bool any_case) {
  if (c.cp(i) != '\'' || i + 1 >= c.s.end) return 0;
  const auto low = [&](size_t k) { return any_case ? ascii_lower(c.cp(k)) : c.cp(k); };
  const uint32_t n1 = low(i + 1);
  if (n1 == 's' || n1 == 't' || n1 == 'm' || n1 == 'd') return 2;
  if (i + 2 < c.s.end) {
    const uint32_t n2 = low(i + 2);
    if ((n1 == 'r' && n2 == 'e') || (n1 == 'v' && n2 == 'e') || (n1 == 'l' && n2 == 'l')) return 3;
  }
  return 0;
}

// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)
void split_gpt2(const std::vector<uint32_t>& cps, Span s, std::vector<Span>& out) {
  const Cursor c{cps, s, false};
  size_t pos = s.begin;
  const auto emit = [&](size_t end) {
    if (end > pos) out.push_back({pos, end});
    pos = end;
  };
  while (pos < s.end) {
    if (size_t n = contraction(c, pos, false)) {
      emit(pos + n);
      continue;
    }
    const bool sp = c.cp(pos) == ' ';
    const Flags f = c.flags(sp ? pos + 1 : pos);
    size_t q = pos + (sp ? 1 : 0);
    if (f.letter || f.number) {
      const bool letters = f.letter;
      while (letters ? c.flags(q).letter : c.flags(q).number) ++q;
      emit(q);
      continue;
    }
    if (c.other(f)) {
      while (c.other(c.flags(q))) ++q;
      emit(q);
      continue;
    }
    size_t n_ws = 0;
    while (c.flags(pos + n_ws).space) ++n_ws;
    if (n_ws > 1 && c.cp(pos + n_ws) != kOutOfRange) {  // \s+(?!\S): leave the last one
      emit(pos + n_ws - 1);
      continue;
    }
    emit(pos + (n_ws > 0 ? n_ws : 1));  // \s+ at the end, or an unmatched code point
  }
}

// (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,max_digits}|
//  ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
void split_llama3(const std::vector<uint32_t>& cps, Span s, size_t max_digits,
                  bool undefined_is_other, std::vector<Span>& out) {
  const Cursor c{cps, s, undefined_is_other};
  size_t pos = s.begin;
  const auto emit = [&](size_t end) {
    if (end > pos) out.push_back({pos, end});
    pos = end;
  };
  while (pos < s.end) {
    const uint32_t cp = c.cp(pos);
    const Flags f = c.flags(pos);
    if (size_t n = contraction(c, pos, true)) {
      emit(pos + n);
      continue;
    }
    // [^\r\n\p{L}\p{N}]?\p{L}+
    if (!(cp == '\r' || cp == '\n' || f.number) && (f.letter || c.flags(pos + 1).letter)) {
      size_t q = pos + 1;
      while (c.flags(q).letter) ++q;
      emit(q);
      continue;
    }
    // \p{N}{1,max_digits}
    if (f.number) {
      size_t q = pos;
      while (q < pos + max_digits && c.flags(q).number) ++q;
      emit(q);
      continue;
    }
    //  ?[^\s\p{L}\p{N}]+[\r\n]*
    const bool sp = cp == ' ';
    if (c.other(c.flags(sp ? pos + 1 : pos)) && (undefined_is_other || f.defined)) {
      size_t q = pos + (sp ? 1 : 0);
      while (c.other(c.flags(q))) ++q;
      while (c.cp(q) == '\r' || c.cp(q) == '\n') ++q;
      emit(q);
      continue;
    }
    size_t n_ws = 0, last_nl = 0;
    while (c.flags(pos + n_ws).space) {
      const uint32_t w = c.cp(pos + n_ws);
      if (w == '\r' || w == '\n') last_nl = pos + n_ws + 1;
      ++n_ws;
    }
    if (last_nl > 0) {  // \s*[\r\n]+
      emit(last_nl);
      continue;
    }
    if (n_ws > 1 && c.cp(pos + n_ws) != kOutOfRange) {  // \s+(?!\S)
      emit(pos + n_ws - 1);
      continue;
    }
    emit(pos + (n_ws > 0 ? n_ws : 1));
  }
}

// A regex stage that matches runs (or fixed groups) of code points; the text
// between matches is kept as pieces too. group == 0 matches maximal runs.
template <typename Pred>
void split_matches(const std::vector<uint32_t>& cps, Span s, Pred in_class, size_t group,
                   std::vector<Span>& out) {
  size_t gap = s.begin, i = s.begin;
  while (i < s.end) {
    size_t q = i;
    if (group == 0) {
      while (q < s.end && in_class(cps[q])) ++q;
    } else {
      while (q < s.end && q < i + group && in_class(cps[q])) ++q;
      if (q - i < group) q = i;
    }
    if (q == i) {
      ++i;
      continue;
    }
    if (i > gap) out.push_back({gap, i});
    out.push_back({i, q});
    i = gap = q;
  }
  if (s.end > gap) out.push_back({gap, s.end});
}

// [\p{P}\$\+<=>\^~\|] (llama.cpp's "default" first stage).
bool default_punct(uint32_t cp) {
  if (cp < 0x80) {
    switch (cp) {
      case '$': case '+': case '<': case '=': case '>': case '^': case '~': case '|':
        return true;
      default:
        return cp_class(cp) == CpClass::Punctuation;
    }
  }
  return !is_whitespace(cp) && cp_class(cp) == CpClass::Punctuation;
}

// \p{N} as the collapsed std::regex sees it (non-ASCII whitespace collapses
// to a space first).
bool regex_number(uint32_t cp) { return !is_whitespace(cp) && cp_class(cp) == CpClass::Number; }

}  // namespace

PreType pre_type_from_name(std::string_view name) {
  if (name.empty() || name == "default") return PreType::Default;
  if (name == "gpt-2" || name == "gpt2") return PreType::Gpt2;
  if (name == "llama-bpe" || name == "llama3" || name == "llama-v3") return PreType::Llama3;
  if (name == "qwen2") return PreType::Qwen2;
  if (name == "smollm") return PreType::Smollm;
  fail("tokenizer.ggml.pre = '{}' is not supported (blockq implements default, gpt-2, "
       "llama-bpe, qwen2, smollm)",
       name);
}

std::string_view pre_type_name(PreType t) {
  switch (t) {
    case PreType::Default: return "default";
    case PreType::Gpt2: return "gpt-2";
    case PreType::Llama3: return "llama-bpe";
    case PreType::Qwen2: return "qwen2";
    case PreType::Smollm: return "smollm";
  }
  return "?";
}

std::vector<std::string> pre_tokenize(PreType type, std::string_view text) {
  const std::vector<uint32_t> cps = utf8_to_cps(text);
  std::vector<Span> pieces{{0, cps.size()}};
  if (cps.empty()) return {};
  const auto stage = [&](auto&& fn) {
    std::vector<Span> next;
    next.reserve(pieces.size() * 2);
    for (const Span& s : pieces) fn(s, next);
    pieces.swap(next);
  };
  const auto gpt2 = [&](Span s, std::vector<Span>& o) { split_gpt2(cps, s, o); };
  switch (type) {
    case PreType::Gpt2:
      stage(gpt2);
      break;
    case PreType::Llama3:
      stage([&](Span s, std::vector<Span>& o) { split_llama3(cps, s, 3, false, o); });
      break;
    case PreType::Qwen2:
      stage([&](Span s, std::vector<Span>& o) { split_llama3(cps, s, 1, true, o); });
      break;
    case PreType::Smollm:
      stage([&](Span s, std::vector<Span>& o) { split_matches(cps, s, regex_number, 1, o); });
      stage(gpt2);
      break;
    case PreType::Default:
      stage([&](Span s, std::vector<Span>& o) { split_matches(cps, s, default_punct, 0, o); });
      stage(gpt2);
      stage([&](Span s, std::vector<Span>& o) { split_matches(cps, s, regex_number, 0, o); });
      stage([&](Span s, std::vector<Span>& o) {
        split_matches(cps, s, [](uint32_t c) { return c >= '0' && c <= '9'; }, 3, o);
      });
      break;
  }
  std::vector<std::string> words;
  words.reserve(pieces.size());
  for (const Span& s : pieces) words.push_back(cps_to_utf8(cps, s.begin, s.end));
  return words;
}

}  // namespace blockq::model
