// Errors: blockq::Error for failures of input, I/O, WGSL or the device (they
// carry context), and BQ_ASSERT for programmer errors (file:line, then abort).
#pragma once
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace blockq {

// Any failure a caller can cause or the environment can produce: bad GGUF,
// bad shapes, out-of-range indices, WGSL compilation, device loss, allocation.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> f, Args&&... args) {
  throw Error(fmt::format(f, std::forward<Args>(args)...));
}

[[noreturn]] inline void assert_failed(const char* expr, const char* file, int line,
                                       const std::string& msg) {
  std::fprintf(stderr, "%s:%d: assertion failed: %s%s%s\n", file, line, expr,
               msg.empty() ? "" : ": ", msg.c_str());
  std::abort();
}

}  // namespace blockq

// Programmer error: a broken invariant inside blockq, never bad user input.
#define BQ_ASSERT(cond, ...)                                                              \
  do {                                                                                   \
    if (!(cond)) ::blockq::assert_failed(#cond, __FILE__, __LINE__, ::fmt::format("" __VA_ARGS__)); \
  } while (0)

// Checked input: throws blockq::Error with a formatted message.
#define BQ_CHECK(cond, ...)                          \
  do {                                               \
    if (!(cond)) ::blockq::fail(__VA_ARGS__);        \
  } while (0)
