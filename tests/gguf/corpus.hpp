// Test helpers for the GGUF reader: an independent raw GGUF encoder, valid
// sample files, and the malformed-file corpus (valid files, then corrupted).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gguf/gguf.hpp"

namespace blockq::gguf::testing {

// One metadata pair as raw bytes: key, type id, encoded value payload.
struct RawKv {
  std::string key;
  uint32_t type = 0;
  std::vector<uint8_t> payload;
};

// One tensor info as raw fields (nothing validated).
struct RawTensor {
  std::string name;
  std::vector<uint64_t> shape;           // written as n_dims + ne[]
  std::optional<uint32_t> n_dims;        // overrides shape.size() when set
  uint32_t type = 0;
  uint64_t offset = 0;
};

// A GGUF file spelled field by field; bytes() encodes it without checks, so
// any field can be corrupted before encoding.
struct RawGguf {
  uint32_t magic = kGgufMagic;
  uint32_t version = 3;
  std::optional<uint64_t> n_tensors;  // overrides tensors.size()
  std::optional<uint64_t> n_kv;       // overrides kvs.size()
  std::vector<RawKv> kvs;
  std::vector<RawTensor> tensors;
  uint64_t alignment = kDefaultAlignment;  // padding before the data section
  std::vector<uint8_t> data;               // the data section

  std::vector<uint8_t> bytes() const;
};

// Little-endian encoders for payloads.
std::vector<uint8_t> le32(uint32_t x);
std::vector<uint8_t> le64(uint64_t x);
std::vector<uint8_t> gstr(const std::string& s);  // u64 length + bytes
std::vector<uint8_t> cat(std::initializer_list<std::vector<uint8_t>> parts);

// A valid file: a few metadata pairs (u32, string, string array, f32 array)
// and three tensors (f32 [8, 2], q8_0 [64, 2], q4_K [256, 1]) with random
// data, laid out with offsets aligned to 32.
RawGguf valid_raw();

// A valid file from GgufWriter with every value type and one tensor of every
// format in kAllFormats (random data), deterministic for a seed.
std::vector<uint8_t> valid_full(uint32_t seed = 1);

struct BadCase {
  std::string name;                  // also the file name passed to the reader
  std::vector<uint8_t> bytes;
  std::vector<std::string> expect;   // words the error message must contain
};

// At least 30 malformed files, each expected to throw blockq::Error.
std::vector<BadCase> malformed_corpus();

}  // namespace blockq::gguf::testing
