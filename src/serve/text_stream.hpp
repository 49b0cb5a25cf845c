// The text a generation sends to a client, piece by piece: a tail that is an
// incomplete UTF-8 sequence, or that could be the start of a stop string, is
// held back until the next piece decides it, and the text ends before the
// first stop string (which is never sent).
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace blockq::serve {

// The length of s[0, n) without a UTF-8 sequence that s[0, n) cuts short: n,
// or the position of the lead byte of a sequence whose continuation bytes
// have not all arrived. Invalid bytes are not held (they cannot complete).
size_t complete_utf8_prefix(std::string_view s, size_t n);

class TextStream {
 public:
  explicit TextStream(std::vector<std::string> stops = {});

  // Adds a token's text; returns what is now safe to send (maybe nothing).
  // After a stop string was found, returns the text before it, then nothing.
  std::string push(std::string_view piece);
  // At the end of the generation: what was held back (empty after a stop).
  std::string finish();
  bool stopped() const { return stopped_; }
  const std::string& sent() const { return sent_; }  // all returned so far

 private:
  std::string take(size_t n);

  std::vector<std::string> stops_;
  std::string pending_;  // received, not yet sent
  std::string sent_;
  bool stopped_ = false;
};

}  // namespace blockq::serve
