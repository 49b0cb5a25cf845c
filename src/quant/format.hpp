// The tensor formats blockq reads, and the traits table that is the single
// source of truth for each: ggml type id, block size in elements and bytes,
// the reference dequantizer and quantizer, and the WGSL decode snippet name.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace blockq {

enum class Format : uint8_t { F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K, Q2_K, Q3_K, IQ4_NL, IQ4_XS };

inline constexpr Format kAllFormats[] = {Format::F32,  Format::F16,  Format::BF16, Format::Q4_0,
                                         Format::Q4_1, Format::Q5_0, Format::Q5_1, Format::Q8_0,
                                         Format::Q4_K, Format::Q5_K, Format::Q6_K, Format::Q2_K,
                                         Format::Q3_K, Format::IQ4_NL, Format::IQ4_XS};

struct FormatTraits {
  Format format;
  std::string_view name;   // ggml's lower-case name: "q8_0", "q4_K", "f16"
  uint32_t ggml_type;      // ggml_type / GGUF tensor type id
  uint32_t block_elems;    // elements per block (1 for F32/F16/BF16)
  uint32_t block_bytes;    // bytes per block
  bool quantized;          // a block format (not F32/F16/BF16)
  // Decode n elements (a multiple of block_elems) from raw blocks.
  void (*dequantize)(const uint8_t* blocks, float* out, size_t n);
  // ggml's reference (non-SIMD, no-imatrix) quantizer: n elements (a multiple
  // of block_elems) into n / block_elems blocks, byte-exact with ggml.
  void (*quantize)(const float* in, uint8_t* blocks, size_t n);
  // The decode snippet's file, the same name in each kernel family's fmt/
  // folder (kernels/matvec/fmt/, kernels/gemm/fmt/) and, for a format with
  // int8 activations, in its fmt/i8/: "q8_0.wgsl", "q4_k.wgsl".
  std::string_view wgsl_decode;
};

const FormatTraits& traits(Format f);
// nullopt for a type id blockq does not read (e.g. IQ2_XS, Q8_K).
std::optional<Format> format_from_ggml(uint32_t ggml_type);
// Accepts ggml's names, case-insensitively ("q4_k", "Q4_K", "f32").
std::optional<Format> format_from_name(std::string_view name);

// Bytes of a row of `elems` elements; throws blockq::Error if elems is not a
// multiple of the block size.
size_t row_bytes(Format f, uint64_t elems);

// Checked forms of the traits' codecs: out.size() / in.size() elements (a
// multiple of the block size) and exactly row_bytes(f, elems) bytes of blocks,
// else blockq::Error.
void dequantize(Format f, std::span<const uint8_t> blocks, std::span<float> out);
void quantize(Format f, std::span<const float> in, std::span<uint8_t> blocks);
std::vector<uint8_t> quantize(Format f, std::span<const float> in);
std::vector<float> dequantize(Format f, std::span<const uint8_t> blocks, uint64_t elems);

}  // namespace blockq
