// The traits table of every format blockq reads (ggml type ids, block sizes,
// reference codecs, WGSL decode snippet names), the lookups by ggml id and by
// name, row sizes, checked quantize/dequantize wrappers, and the codecs of the
// plain float formats F32, F16 and BF16.
#include "quant/format.hpp"

#include <array>
#include <cstring>

#include "quant/blocks.hpp"
#include "quant/codecs.hpp"
#include "util/error.hpp"

namespace blockq {
namespace codec {

void dequantize_f32(const uint8_t* in, float* out, size_t n) {
  if (n != 0) std::memcpy(out, in, n * 4);
}
void quantize_f32(const float* in, uint8_t* out, size_t n) {
  if (n != 0) std::memcpy(out, in, n * 4);
}

void dequantize_f16(const uint8_t* in, float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    uint16_t h;
    std::memcpy(&h, in + 2 * i, 2);
    out[i] = f16_to_f32(h);
  }
}
void quantize_f16(const float* in, uint8_t* out, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const uint16_t h = f32_to_f16(in[i]);
    std::memcpy(out + 2 * i, &h, 2);
  }
}

void dequantize_bf16(const uint8_t* in, float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    uint16_t h;
    std::memcpy(&h, in + 2 * i, 2);
    out[i] = bf16_to_f32(h);
  }
}
void quantize_bf16(const float* in, uint8_t* out, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const uint16_t h = f32_to_bf16(in[i]);
    std::memcpy(out + 2 * i, &h, 2);
  }
}

}  // namespace codec

namespace {

using namespace codec;

// Indexed by Format (the enum's order).
constexpr std::array<FormatTraits, std::size(kAllFormats)> kTraits{{
    {Format::F32, "f32", 0, 1, 4, false, dequantize_f32, quantize_f32, "f32.wgsl"},
    {Format::F16, "f16", 1, 1, 2, false, dequantize_f16, quantize_f16, "f16.wgsl"},
    {Format::BF16, "bf16", 30, 1, 2, false, dequantize_bf16, quantize_bf16, "bf16.wgsl"},
    {Format::Q4_0, "q4_0", 2, kQK, sizeof(block_q4_0), true, dequantize_q4_0, quantize_q4_0, "q4_0.wgsl"},
    {Format::Q4_1, "q4_1", 3, kQK, sizeof(block_q4_1), true, dequantize_q4_1, quantize_q4_1, "q4_1.wgsl"},
    {Format::Q5_0, "q5_0", 6, kQK, sizeof(block_q5_0), true, dequantize_q5_0, quantize_q5_0, "q5_0.wgsl"},
    {Format::Q5_1, "q5_1", 7, kQK, sizeof(block_q5_1), true, dequantize_q5_1, quantize_q5_1, "q5_1.wgsl"},
    {Format::Q8_0, "q8_0", 8, kQK, sizeof(block_q8_0), true, dequantize_q8_0, quantize_q8_0, "q8_0.wgsl"},
    {Format::Q4_K, "q4_K", 12, kQK_K, sizeof(block_q4_K), true, dequantize_q4_K, quantize_q4_K, "q4_k.wgsl"},
    {Format::Q5_K, "q5_K", 13, kQK_K, sizeof(block_q5_K), true, dequantize_q5_K, quantize_q5_K, "q5_k.wgsl"},
    {Format::Q6_K, "q6_K", 14, kQK_K, sizeof(block_q6_K), true, dequantize_q6_K, quantize_q6_K, "q6_k.wgsl"},
    {Format::Q2_K, "q2_K", 10, kQK_K, sizeof(block_q2_K), true, dequantize_q2_K, quantize_q2_K, "q2_k.wgsl"},
    {Format::Q3_K, "q3_K", 11, kQK_K, sizeof(block_q3_K), true, dequantize_q3_K, quantize_q3_K, "q3_k.wgsl"},
    {Format::IQ4_NL, "iq4_nl", 20, kQK, sizeof(block_iq4_nl), true, dequantize_iq4_nl, quantize_iq4_nl,
     "iq4_nl.wgsl"},
    {Format::IQ4_XS, "iq4_xs", 23, kQK_K, sizeof(block_iq4_xs), true, dequantize_iq4_xs, quantize_iq4_xs,
     "iq4_xs.wgsl"},
}};

constexpr bool table_in_enum_order() {
  for (size_t i = 0; i < kTraits.size(); ++i) {
    if (kTraits[i].format != kAllFormats[i] || static_cast<size_t>(kAllFormats[i]) != i) return false;
  }
  return true;
}
static_assert(table_in_enum_order());

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool iequal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

}  // namespace

const FormatTraits& traits(Format f) {
  const auto i = static_cast<size_t>(f);
  BQ_ASSERT(i < kTraits.size(), "bad Format value {}", i);
  return kTraits[i];
}

std::optional<Format> format_from_ggml(uint32_t ggml_type) {
  for (const auto& t : kTraits) {
    if (t.ggml_type == ggml_type) return t.format;
  }
  return std::nullopt;
}

std::optional<Format> format_from_name(std::string_view name) {
  for (const auto& t : kTraits) {
    if (iequal(t.name, name)) return t.format;
  }
  return std::nullopt;
}

size_t row_bytes(Format f, uint64_t elems) {
  const auto& t = traits(f);
  BQ_CHECK(elems % t.block_elems == 0, "{}: a row of {} elements is not a multiple of the block size {}",
           t.name, elems, t.block_elems);
  const uint64_t nblocks = elems / t.block_elems;
  BQ_CHECK(nblocks <= SIZE_MAX / t.block_bytes, "{}: a row of {} elements overflows size_t", t.name, elems);
  return static_cast<size_t>(nblocks * t.block_bytes);
}

void dequantize(Format f, std::span<const uint8_t> blocks, std::span<float> out) {
  const auto& t = traits(f);
  const size_t bytes = row_bytes(f, out.size());
  BQ_CHECK(blocks.size() == bytes, "{}: {} elements need {} bytes of blocks, got {}", t.name, out.size(),
           bytes, blocks.size());
  t.dequantize(blocks.data(), out.data(), out.size());
}

void quantize(Format f, std::span<const float> in, std::span<uint8_t> blocks) {
  const auto& t = traits(f);
  const size_t bytes = row_bytes(f, in.size());
  BQ_CHECK(blocks.size() == bytes, "{}: {} elements need {} bytes of blocks, got {}", t.name, in.size(),
           bytes, blocks.size());
  t.quantize(in.data(), blocks.data(), in.size());
}

std::vector<uint8_t> quantize(Format f, std::span<const float> in) {
  std::vector<uint8_t> blocks(row_bytes(f, in.size()));
  traits(f).quantize(in.data(), blocks.data(), in.size());
  return blocks;
}

std::vector<float> dequantize(Format f, std::span<const uint8_t> blocks, uint64_t elems) {
  std::vector<float> out(elems);
  dequantize(f, blocks, out);
  return out;
}

}  // namespace blockq
