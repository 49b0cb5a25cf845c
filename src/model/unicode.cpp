// Unicode helpers for the tokenizers: UTF-8, code point classes, White_Space
// and the GPT-2 byte mapping.
#include "model/unicode.hpp"

#include <algorithm>
#include <array>

namespace blockq::model {

namespace detail {
extern const uint32_t kCpClassRanges[];
extern const size_t kCpClassRangeCount;
extern const char kUnicodeVersion[];
}  // namespace detail

CpClass cp_class(uint32_t cp) {
  if (cp >= 0x110000) return CpClass::Undefined;
  if (cp < 0x80) {  // fast path for ASCII
    if ((cp | 0x20) >= 'a' && (cp | 0x20) <= 'z') return CpClass::Letter;
    if (cp >= '0' && cp <= '9') return CpClass::Number;
  }
  const uint32_t* first = detail::kCpClassRanges;
  const uint32_t* last = first + detail::kCpClassRangeCount;
  // The last range whose start is <= cp.
  const uint32_t key = (cp << 3) | 7u;
  const uint32_t* it = std::upper_bound(first, last, key) - 1;
  return CpClass(*it & 7u);
}

bool is_whitespace(uint32_t cp) {
  if (cp <= 0x20) return cp == 0x20 || (cp >= 0x09 && cp <= 0x0d);
  switch (cp) {
    case 0x85: case 0xa0: case 0x1680: case 0x2028: case 0x2029: case 0x202f: case 0x205f:
    case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200a;
  }
}

std::string_view unicode_version() { return detail::kUnicodeVersion; }

size_t utf8_len(uint8_t c) {
  static constexpr uint8_t lookup[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return lookup[c >> 4];
}

uint32_t utf8_decode(std::string_view s, size_t& pos) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(s[i]); };
  const uint8_t c = byte(pos);
  const auto cont = [&](size_t i) { return i < s.size() && (byte(i) & 0xc0) == 0x80; };
  if (c < 0x80) {
    pos += 1;
    return c;
  }
  // Same acceptance as llama.cpp: lead byte pattern and continuation bytes only
  // (overlong forms and surrogates pass through unchanged).
  if ((c & 0xe0) == 0xc0 && cont(pos + 1)) {
    const uint32_t cp = (uint32_t(c & 0x1f) << 6) | (byte(pos + 1) & 0x3f);
    pos += 2;
    return cp;
  }
  if ((c & 0xf0) == 0xe0 && cont(pos + 1) && cont(pos + 2)) {
    const uint32_t cp =
        (uint32_t(c & 0x0f) << 12) | (uint32_t(byte(pos + 1) & 0x3f) << 6) | (byte(pos + 2) & 0x3f);
    pos += 3;
    return cp;
  }
  if ((c & 0xf8) == 0xf0 && cont(pos + 1) && cont(pos + 2) && cont(pos + 3)) {
    const uint32_t cp = (uint32_t(c & 0x07) << 18) | (uint32_t(byte(pos + 1) & 0x3f) << 12) |
                        (uint32_t(byte(pos + 2) & 0x3f) << 6) | (byte(pos + 3) & 0x3f);
    pos += 4;
    return cp;
  }
  pos += 1;
  return 0xfffd;
}

std::vector<uint32_t> utf8_to_cps(std::string_view text) {
  std::vector<uint32_t> cps;
  cps.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) cps.push_back(utf8_decode(text, pos));
  return cps;
}

void utf8_append(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(char(cp));
  } else if (cp < 0x800) {
    out.push_back(char(0xc0 | (cp >> 6)));
    out.push_back(char(0x80 | (cp & 0x3f)));
  } else if (cp < 0x10000) {
    out.push_back(char(0xe0 | (cp >> 12)));
    out.push_back(char(0x80 | ((cp >> 6) & 0x3f)));
    out.push_back(char(0x80 | (cp & 0x3f)));
  } else {
    out.push_back(char(0xf0 | ((cp >> 18) & 0x07)));
    out.push_back(char(0x80 | ((cp >> 12) & 0x3f)));
    out.push_back(char(0x80 | ((cp >> 6) & 0x3f)));
    out.push_back(char(0x80 | (cp & 0x3f)));
  }
}

std::string cps_to_utf8(const std::vector<uint32_t>& cps, size_t begin, size_t end) {
  std::string out;
  for (size_t i = begin; i < end; ++i) utf8_append(out, cps[i]);
  return out;
}

namespace {

struct ByteMap {
  std::array<uint32_t, 256> to_cp{};
  std::array<std::string, 256> to_text;
};

const ByteMap& byte_map() {
  static const ByteMap map = [] {
    ByteMap m;
    const auto printable = [](int b) {
      return (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
    };
    uint32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      m.to_cp[b] = printable(b) ? uint32_t(b) : next++;
      utf8_append(m.to_text[b], m.to_cp[b]);
    }
    return m;
  }();
  return map;
}

}  // namespace

uint32_t byte_to_cp(uint8_t b) { return byte_map().to_cp[b]; }
const std::string& byte_to_token_text(uint8_t b) { return byte_map().to_text[b]; }

int cp_to_byte(uint32_t cp) {
  if (cp < 256) {
    const bool printable =
        (cp >= 0x21 && cp <= 0x7e) || (cp >= 0xa1 && cp <= 0xac) || (cp >= 0xae && cp <= 0xff);
    return printable ? int(cp) : -1;
  }
  if (cp < 256 + 68) {  // 68 bytes are not printable: they map to U+0100..U+0143
    const auto& m = byte_map().to_cp;
    for (int b = 0; b < 256; ++b)
      if (m[b] == cp) return b;
  }
  return -1;
}

}  // namespace blockq::model
