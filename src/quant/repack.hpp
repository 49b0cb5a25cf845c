// GPU-side layouts of ggml blocks, each lossless with an inverse that rebuilds
// the exact block bytes. All work on a run of whole blocks (e.g. one row, or
// a matrix whose row length is a multiple of the block size); u32 words are
// little-endian: byte k of a word is bits 8k..8k+7.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "quant/format.hpp"

namespace blockq {

// "Scales separated" Q8_0: int8 quants four per u32 (element t of the run in
// byte t % 4 of word t / 4) and one f32 scale per 32-element block.
struct Q8Split {
  uint64_t elems = 0;
  std::vector<uint32_t> quants;  // [elems / 4]
  std::vector<float> scales;     // [elems / 32]
};
// blocks: whole 34-byte Q8_0 blocks, else blockq::Error.
Q8Split split_q8_0(std::span<const uint8_t> blocks);
// The exact Q8_0 blocks back; throws blockq::Error on inconsistent sizes.
std::vector<uint8_t> join_q8_0(const Q8Split& s);

// "One vec4<u32> per block" Q4_0 / Q4_1: each block's 16 quant bytes as 4
// words (qs byte k in byte k % 4 of word 4*i + k / 4: the nibble order of the
// block is kept), one f32 scale per block and, for Q4_1, one f32 min.
struct Q4Vec4 {
  Format format = Format::Q4_0;  // Q4_0 or Q4_1
  uint64_t blocks = 0;
  std::vector<uint32_t> quants;  // [blocks * 4]
  std::vector<float> scales;     // [blocks]
  std::vector<float> mins;       // [blocks] for Q4_1; empty for Q4_0
};
// f is Q4_0 or Q4_1 and blocks whole blocks of it, else blockq::Error.
Q4Vec4 split_q4_vec4(Format f, std::span<const uint8_t> blocks);
std::vector<uint8_t> join_q4_vec4(const Q4Vec4& s);

// "Raw": blocks of any format byte for byte in u32 words, the last word
// padded with zero bytes (kernels that decode e.g. 34-byte Q8_0 blocks in place).
struct RawWords {
  Format format = Format::F32;
  uint64_t bytes = 0;            // the block bytes, a multiple of the block size
  std::vector<uint32_t> words;   // [ceil(bytes / 4)]
};
RawWords to_raw_words(Format f, std::span<const uint8_t> blocks);
std::vector<uint8_t> from_raw_words(const RawWords& r);

// The scale conversions the split layouts use: f16_to_f32 / f32_to_f16 for
// every non-NaN value (exact both ways), and a NaN keeps its f16 payload bits
// (not quieted), so that split + join is lossless on any bytes at all.
float scale_f16_to_f32(uint16_t h);
uint16_t scale_f32_to_f16(float f);

}  // namespace blockq
