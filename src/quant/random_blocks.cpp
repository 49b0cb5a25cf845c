// Random but valid blocks for benchmarks (see random_blocks.hpp).
#include "quant/random_blocks.hpp"

#include <cstring>
#include <random>

#include "quant/half.hpp"

namespace blockq {

std::vector<uint8_t> random_blocks(Format f, uint32_t rows, uint32_t cols, uint32_t seed) {
  const size_t bytes = size_t{rows} * row_bytes(f, cols);
  std::vector<uint8_t> v(bytes);
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i + 8 <= bytes; i += 8) {
    uint64_t r = rng();
    std::memcpy(&v[i], &r, 8);
  }
  std::uniform_real_distribution<float> small(0.001f, 0.01f), val(-1.f, 1.f);
  auto set16 = [&](size_t off, uint16_t h) { std::memcpy(&v[off], &h, 2); };
  const auto& t = traits(f);
  const size_t blocks = bytes / t.block_bytes;
  switch (f) {
    case Format::F32:
      for (size_t i = 0; i < bytes / 4; ++i) {
        float x = val(rng);
        std::memcpy(&v[4 * i], &x, 4);
      }
      break;
    case Format::F16:
      for (size_t i = 0; i < bytes / 2; ++i) set16(2 * i, f32_to_f16(val(rng)));
      break;
    case Format::BF16:
      for (size_t i = 0; i < bytes / 2; ++i) set16(2 * i, f32_to_bf16(val(rng)));
      break;
    case Format::Q6_K: case Format::Q3_K:  // d last
      for (size_t b = 0; b < blocks; ++b) set16(b * t.block_bytes + t.block_bytes - 2, f32_to_f16(small(rng)));
      break;
    case Format::Q2_K:  // d, dmin last
      for (size_t b = 0; b < blocks; ++b) {
        set16(b * t.block_bytes + 80, f32_to_f16(small(rng)));
        set16(b * t.block_bytes + 82, f32_to_f16(small(rng)));
      }
      break;
    case Format::Q4_1: case Format::Q5_1: case Format::Q4_K: case Format::Q5_K:
      for (size_t b = 0; b < blocks; ++b) {
        set16(b * t.block_bytes, f32_to_f16(small(rng)));
        set16(b * t.block_bytes + 2, f32_to_f16(small(rng)));
      }
      break;
    default:
      for (size_t b = 0; b < blocks; ++b) set16(b * t.block_bytes, f32_to_f16(small(rng)));
  }
  return v;
}

}  // namespace blockq
