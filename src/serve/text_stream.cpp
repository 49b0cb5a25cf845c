// TextStream: stop strings and UTF-8 boundaries for streamed text.
#include "serve/text_stream.hpp"

#include <algorithm>
#include <cstdint>

namespace blockq::serve {

size_t complete_utf8_prefix(std::string_view s, size_t n) {
  size_t i = n, cont = 0;
  while (i > 0 && cont < 3 && (uint8_t(s[i - 1]) & 0xC0) == 0x80) --i, ++cont;
  if (i == 0) return n;  // continuation bytes only: nothing to wait for
  const uint8_t lead = uint8_t(s[i - 1]);
  const size_t len = (lead & 0xE0) == 0xC0 ? 2 : (lead & 0xF0) == 0xE0 ? 3 : (lead & 0xF8) == 0xF0 ? 4 : 1;
  return len > 1 && cont + 1 < len ? i - 1 : n;
}

TextStream::TextStream(std::vector<std::string> stops) : stops_(std::move(stops)) {
  std::erase_if(stops_, [](const std::string& s) { return s.empty(); });
}

std::string TextStream::take(size_t n) {
  std::string out = pending_.substr(0, n);
  pending_.erase(0, n);
  sent_ += out;
  return out;
}

std::string TextStream::push(std::string_view piece) {
  if (stopped_) return {};
  pending_ += piece;
  // Text sent never holds a stop string's first bytes at its end, so a stop
  // string starts inside pending_.
  size_t first = std::string::npos;
  for (const std::string& s : stops_) first = std::min(first, pending_.find(s));
  if (first != std::string::npos) {
    stopped_ = true;
    std::string out = take(first);
    pending_.clear();
    return out;
  }
  // Hold the longest tail that is a proper prefix of a stop string.
  size_t hold = 0;
  for (const std::string& s : stops_)
    for (size_t len = std::min(s.size() - 1, pending_.size()); len > hold; --len)
      if (std::string_view(pending_).substr(pending_.size() - len) == std::string_view(s).substr(0, len)) {
        hold = len;
        break;
      }
  return take(complete_utf8_prefix(pending_, pending_.size() - hold));
}

std::string TextStream::finish() {
  if (stopped_) return {};
  return take(pending_.size());
}

}  // namespace blockq::serve
