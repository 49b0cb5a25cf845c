// Helpers shared by the GGUF reader and writer (not part of the public API).
#pragma once
#include <cstdint>
#include <span>
#include <string>

#include "gguf/gguf.hpp"

namespace blockq::gguf {

// "[4096, 32000]"
std::string shape_string(std::span<const uint64_t> shape);
// Validates rank (1..4), element count (< 2^63), row length (a multiple of the
// block size) and byte size (< 2^63); sets nbytes. Returns "" when valid, else
// what is wrong.
std::string check_shape(std::span<const uint64_t> shape, Format fmt, uint64_t& nbytes);

inline uint64_t align_up(uint64_t x, uint64_t a) { return x + (a - x % a) % a; }

}  // namespace blockq::gguf
