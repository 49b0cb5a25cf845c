// Random but valid blocks of any format, for benchmarks and tuning: random
// quant bytes with every f16 scale field small and finite (F32/F16/BF16 rows
// drawn as numbers in [-1, 1)).
#pragma once
#include <cstdint>
#include <vector>

#include "quant/format.hpp"

namespace blockq {

// rows x cols elements (cols a multiple of the block size): rows * row_bytes bytes.
std::vector<uint8_t> random_blocks(Format f, uint32_t rows, uint32_t cols, uint32_t seed);

}  // namespace blockq
