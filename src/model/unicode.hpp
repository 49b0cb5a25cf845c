// Unicode helpers for the tokenizers: UTF-8 decoding as llama.cpp does it
// (a bad byte becomes U+FFFD), general-category classes of code points, the
// White_Space property and GPT-2's byte <-> printable-code-point mapping.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace blockq::model {

// General-category class of a code point (the first letter of its category,
// with unassigned code points apart). Values are used by unicode_tables.cpp.
enum class CpClass : uint8_t {
  Undefined = 0,    // Cn
  Letter = 1,       // L*
  Number = 2,       // N*
  Punctuation = 3,  // P*
  Mark = 4,         // M*
  Symbol = 5,       // S*
  Separator = 6,    // Z*
  Other = 7,        // Cc, Cf, Co, Cs
};

CpClass cp_class(uint32_t cp);
inline bool is_letter(uint32_t cp) { return cp_class(cp) == CpClass::Letter; }
inline bool is_number(uint32_t cp) { return cp_class(cp) == CpClass::Number; }
// Unicode White_Space (as llama.cpp's \s): 9-13, space, U+0085, U+00A0,
// U+1680, U+2000-200A, U+2028, U+2029, U+202F, U+205F, U+3000.
bool is_whitespace(uint32_t cp);
// The Unicode version the class table was generated from.
std::string_view unicode_version();

// Byte length of the UTF-8 sequence that starts with byte c (1 for a stray
// continuation byte), as llama.cpp's unicode_len_utf8.
size_t utf8_len(uint8_t c);
// Decodes one code point at text[pos], advancing pos. A malformed sequence
// yields U+FFFD and advances one byte.
uint32_t utf8_decode(std::string_view text, size_t& pos);
std::vector<uint32_t> utf8_to_cps(std::string_view text);
void utf8_append(std::string& out, uint32_t cp);
std::string cps_to_utf8(const std::vector<uint32_t>& cps, size_t begin, size_t end);

// GPT-2 byte-level BPE: each byte maps to one printable code point (printable
// Latin-1 bytes map to themselves, the rest to U+0100 upwards).
uint32_t byte_to_cp(uint8_t b);
// The UTF-8 text of byte b's code point ("Ġ" for a space).
const std::string& byte_to_token_text(uint8_t b);
// Inverse of byte_to_cp; -1 for a code point no byte maps to.
int cp_to_byte(uint32_t cp);

}  // namespace blockq::model
