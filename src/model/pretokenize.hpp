// Byte-level BPE pre-tokenizers: the regex word splitting of GPT-2, Llama 3,
// Qwen2, SmolLM and llama.cpp's "default", written as hand scanners over code
// points with the same results as llama.cpp's splitter.
//
// What is approximated: code point classes come from Python's unicodedata
// (unicode_version()), not from the Unicode version llama.cpp was generated
// from, so letters and numbers assigned after it are classed as unassigned.
// Everything else follows llama.cpp, including its quirks: GPT-2 and Llama 3
// use its hand-written splitters (an unassigned code point is never part of a
// punctuation run), the other patterns its std::regex path (non-ASCII text is
// collapsed to one byte per class, so an unassigned code point counts as
// punctuation there).
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace blockq::model {

enum class PreType {
  Default,  // "default" or missing: punctuation runs, GPT-2 regex, numbers, digit triples
  Gpt2,     // "gpt-2": 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)
  Llama3,   // "llama-bpe", "llama3", "llama-v3": contractions, letters, \p{N}{1,3}, ...
  Qwen2,    // "qwen2": the Llama 3 pattern with single digits
  Smollm,   // "smollm": single digits, then the GPT-2 pattern
};

// Maps tokenizer.ggml.pre to a PreType; throws blockq::Error naming the
// value for a pre-tokenizer blockq does not implement.
PreType pre_type_from_name(std::string_view name);
std::string_view pre_type_name(PreType t);

// Splits UTF-8 text into the words that BPE merges run on (each returned as
// its UTF-8 bytes; the GPT-2 byte mapping is applied later).
std::vector<std::string> pre_tokenize(PreType type, std::string_view text);

}  // namespace blockq::model
