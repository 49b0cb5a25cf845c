// GPU layouts of ggml blocks (Q8_0 scales separated, Q4 one vec4<u32> per
// block, raw words) and their exact inverses.
#include "quant/repack.hpp"

#include <bit>
#include <cstring>

#include "quant/blocks.hpp"
#include "quant/half.hpp"
#include "util/error.hpp"

namespace blockq {
namespace {

uint32_t pack_le(const uint8_t* b) {
  return uint32_t{b[0]} | uint32_t{b[1]} << 8 | uint32_t{b[2]} << 16 | uint32_t{b[3]} << 24;
}
void unpack_le(uint32_t w, uint8_t* b) {
  for (int k = 0; k < 4; ++k) b[k] = static_cast<uint8_t>(w >> (8 * k));
}

template <typename Block>
Block load(std::span<const uint8_t> bytes, size_t i) {
  Block b;
  std::memcpy(&b, bytes.data() + i * sizeof(Block), sizeof(Block));
  return b;
}
template <typename Block>
void store(std::vector<uint8_t>& bytes, size_t i, const Block& b) {
  std::memcpy(bytes.data() + i * sizeof(Block), &b, sizeof(Block));
}

size_t whole_blocks(Format f, size_t bytes, const char* what) {
  const auto& t = traits(f);
  BQ_CHECK(bytes % t.block_bytes == 0, "{}: {} bytes is not a whole number of {}-byte {} blocks", what, bytes,
           t.block_bytes, t.name);
  return bytes / t.block_bytes;
}

}  // namespace

float scale_f16_to_f32(uint16_t h) {
  if ((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0) {  // NaN: keep the payload as is
    return std::bit_cast<float>((uint32_t{h} & 0x8000u) << 16 | 0x7f800000u | (uint32_t{h} & 0x3ffu) << 13);
  }
  return f16_to_f32(h);
}

uint16_t scale_f32_to_f16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) {  // NaN
    const auto sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
    const auto payload = static_cast<uint16_t>((x >> 13) & 0x3ffu);
    return payload != 0 ? static_cast<uint16_t>(sign | 0x7c00u | payload) : static_cast<uint16_t>(sign | 0x7e00u);
  }
  return f32_to_f16(f);
}

Q8Split split_q8_0(std::span<const uint8_t> blocks) {
  const size_t nb = whole_blocks(Format::Q8_0, blocks.size(), "split_q8_0");
  Q8Split s;
  s.elems = nb * kQK;
  s.quants.resize(nb * kQK / 4);
  s.scales.resize(nb);
  for (size_t i = 0; i < nb; ++i) {
    const auto b = load<block_q8_0>(blocks, i);
    s.scales[i] = scale_f16_to_f32(b.d);
    uint8_t qs[kQK];
    std::memcpy(qs, b.qs, kQK);
    for (int w = 0; w < kQK / 4; ++w) s.quants[i * (kQK / 4) + w] = pack_le(qs + 4 * w);
  }
  return s;
}

std::vector<uint8_t> join_q8_0(const Q8Split& s) {
  BQ_CHECK(s.elems % kQK == 0 && s.quants.size() == s.elems / 4 && s.scales.size() == s.elems / kQK,
           "join_q8_0: {} elements with {} quant words and {} scales", s.elems, s.quants.size(),
           s.scales.size());
  const size_t nb = s.elems / kQK;
  std::vector<uint8_t> out(nb * sizeof(block_q8_0));
  for (size_t i = 0; i < nb; ++i) {
    block_q8_0 b;
    b.d = scale_f32_to_f16(s.scales[i]);
    uint8_t qs[kQK];
    for (int w = 0; w < kQK / 4; ++w) unpack_le(s.quants[i * (kQK / 4) + w], qs + 4 * w);
    std::memcpy(b.qs, qs, kQK);
    store(out, i, b);
  }
  return out;
}

Q4Vec4 split_q4_vec4(Format f, std::span<const uint8_t> blocks) {
  BQ_CHECK(f == Format::Q4_0 || f == Format::Q4_1, "split_q4_vec4: {} is not Q4_0 or Q4_1", traits(f).name);
  const size_t nb = whole_blocks(f, blocks.size(), "split_q4_vec4");
  Q4Vec4 s;
  s.format = f;
  s.blocks = nb;
  s.quants.resize(nb * 4);
  s.scales.resize(nb);
  if (f == Format::Q4_1) s.mins.resize(nb);
  for (size_t i = 0; i < nb; ++i) {
    const uint8_t* qs;
    if (f == Format::Q4_0) {
      const auto b = load<block_q4_0>(blocks, i);
      s.scales[i] = scale_f16_to_f32(b.d);
      qs = blocks.data() + i * sizeof(block_q4_0) + offsetof(block_q4_0, qs);
    } else {
      const auto b = load<block_q4_1>(blocks, i);
      s.scales[i] = scale_f16_to_f32(b.d);
      s.mins[i] = scale_f16_to_f32(b.m);
      qs = blocks.data() + i * sizeof(block_q4_1) + offsetof(block_q4_1, qs);
    }
    for (int w = 0; w < 4; ++w) s.quants[4 * i + w] = pack_le(qs + 4 * w);
  }
  return s;
}

std::vector<uint8_t> join_q4_vec4(const Q4Vec4& s) {
  BQ_CHECK(s.format == Format::Q4_0 || s.format == Format::Q4_1, "join_q4_vec4: {} is not Q4_0 or Q4_1",
           traits(s.format).name);
  const size_t mins = s.format == Format::Q4_1 ? s.blocks : 0;
  BQ_CHECK(s.quants.size() == s.blocks * 4 && s.scales.size() == s.blocks && s.mins.size() == mins,
           "join_q4_vec4: {} {} blocks with {} quant words, {} scales and {} mins", s.blocks,
           traits(s.format).name, s.quants.size(), s.scales.size(), s.mins.size());
  std::vector<uint8_t> out(s.blocks * traits(s.format).block_bytes);
  for (size_t i = 0; i < s.blocks; ++i) {
    uint8_t qs[kQK / 2];
    for (int w = 0; w < 4; ++w) unpack_le(s.quants[4 * i + w], qs + 4 * w);
    if (s.format == Format::Q4_0) {
      block_q4_0 b;
      b.d = scale_f32_to_f16(s.scales[i]);
      std::memcpy(b.qs, qs, sizeof qs);
      store(out, i, b);
    } else {
      block_q4_1 b;
      b.d = scale_f32_to_f16(s.scales[i]);
      b.m = scale_f32_to_f16(s.mins[i]);
      std::memcpy(b.qs, qs, sizeof qs);
      store(out, i, b);
    }
  }
  return out;
}

RawWords to_raw_words(Format f, std::span<const uint8_t> blocks) {
  whole_blocks(f, blocks.size(), "to_raw_words");
  RawWords r;
  r.format = f;
  r.bytes = blocks.size();
  r.words.assign((blocks.size() + 3) / 4, 0u);
  for (size_t k = 0; k < blocks.size(); ++k) r.words[k / 4] |= uint32_t{blocks[k]} << (8 * (k % 4));
  return r;
}

std::vector<uint8_t> from_raw_words(const RawWords& r) {
  whole_blocks(r.format, r.bytes, "from_raw_words");
  BQ_CHECK(r.words.size() == (r.bytes + 3) / 4, "from_raw_words: {} bytes in {} words", r.bytes,
           r.words.size());
  std::vector<uint8_t> out(r.bytes);
  for (size_t k = 0; k < out.size(); ++k) out[k] = static_cast<uint8_t>(r.words[k / 4] >> (8 * (k % 4)));
  return out;
}

}  // namespace blockq
