// GGUF v3 (and v2) reader and writer: typed metadata values, tensor infos with
// their blockq Format, zero-copy tensor data from a read-only mapping.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "quant/format.hpp"

namespace blockq::gguf {

// GGUF metadata value type ids (gguf_metadata_value_type). The index of a
// Value's variant alternative equals its type id.
enum class ValueType : uint32_t {
  U8 = 0, I8 = 1, U16 = 2, I16 = 3, U32 = 4, I32 = 5, F32 = 6, Bool = 7,
  String = 8, Array = 9, U64 = 10, I64 = 11, F64 = 12,
};
inline constexpr uint32_t kValueTypeCount = 13;

// "u8", "i32", "f32", "bool", "string", "array", ...; "type 77" when unknown.
std::string value_type_name(uint32_t type_id);
inline std::string value_type_name(ValueType t) { return value_type_name(uint32_t(t)); }

// An array of one element type. Arrays of arrays are not supported (ggml does
// not write them); the ValueType::Array slot holds std::monostate.
struct Array {
  using Values = std::variant<std::vector<uint8_t>, std::vector<int8_t>, std::vector<uint16_t>,
                              std::vector<int16_t>, std::vector<uint32_t>, std::vector<int32_t>,
                              std::vector<float>, std::vector<bool>, std::vector<std::string>,
                              std::monostate, std::vector<uint64_t>, std::vector<int64_t>,
                              std::vector<double>>;
  Values values;

  ValueType elem_type() const { return ValueType(values.index()); }
  size_t size() const;
  bool operator==(const Array&) const = default;
};

// One metadata value; variant index == GGUF type id (see ValueType).
using Value = std::variant<uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, float, bool,
                           std::string, Array, uint64_t, int64_t, double>;

inline ValueType value_type(const Value& v) { return ValueType(v.index()); }
// "u32[3]"-style type description: "string", "array<string>[32000]".
std::string describe_type(const Value& v);
// Human-readable value; arrays longer than max_elems show their count and
// the first max_elems elements. Strings are quoted and escaped.
std::string to_string(const Value& v, size_t max_elems = 8);

using Metadata = std::vector<std::pair<std::string, Value>>;

// One tensor as the file describes it. shape is in ggml order: shape[0] (ne[0])
// is the row length (contiguous), shape[1] the number of rows, and so on.
struct TensorInfo {
  std::string name;
  std::vector<uint64_t> shape;
  uint32_t ggml_type = 0;
  Format format = Format::F32;
  uint64_t offset = 0;  // relative to the data section (a multiple of alignment)
  uint64_t nbytes = 0;

  uint64_t n_elems() const;  // product of shape
  uint64_t rows() const;     // n_elems() / shape[0]
};

inline constexpr uint32_t kGgufMagic = 0x46554747;  // "GGUF" as little-endian u32
inline constexpr uint32_t kDefaultAlignment = 32;
inline constexpr size_t kMaxDims = 4;
inline constexpr size_t kMaxTensorName = 63;  // bytes, as ggml (GGML_MAX_NAME - 1)

// ggml's name for any ggml type id it knows ("q2_K", "iq4_xs"), whether or
// not blockq reads it; nullopt for ids ggml never assigned or removed.
std::optional<std::string_view> ggml_type_name(uint32_t ggml_type);

// A parsed, validated GGUF file. Copies share the underlying bytes.
class GgufFile {
 public:
  // Maps the file read-only. Throws blockq::Error on I/O failure or any
  // malformation (the message names the file, the byte offset and the fault).
  static GgufFile open(const std::string& path);
  // Parses bytes already in memory; `name` is used in error messages.
  static GgufFile from_memory(std::vector<uint8_t> bytes, std::string name = "<memory>");

  const std::string& name() const { return name_; }
  uint32_t version() const { return version_; }
  size_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }  // file offset of the data section
  std::span<const uint8_t> bytes() const { return bytes_; }  // the whole file

  // Metadata in file order.
  const Metadata& metadata() const { return metadata_; }
  const Value* find(std::string_view key) const;
  bool has(std::string_view key) const { return find(key) != nullptr; }

  // Typed getters: throw blockq::Error naming the file and key when the key is
  // missing or its type does not fit. Integer getters accept any integer type
  // whose value fits the requested type; get_f32/get_f64 accept f32 or f64.
  uint32_t get_u32(std::string_view key) const;
  int32_t get_i32(std::string_view key) const;
  uint64_t get_u64(std::string_view key) const;
  int64_t get_i64(std::string_view key) const;
  float get_f32(std::string_view key) const;
  double get_f64(std::string_view key) const;
  bool get_bool(std::string_view key) const;
  const std::string& get_string(std::string_view key) const;
  const Array& get_array(std::string_view key) const;
  // Exact element type required (string, f32, i32 respectively).
  const std::vector<std::string>& get_array_strings(std::string_view key) const;
  const std::vector<float>& get_array_f32(std::string_view key) const;
  const std::vector<int32_t>& get_array_i32(std::string_view key) const;
  // Any integer element type, converted (throws if a u64 exceeds INT64_MAX).
  std::vector<int64_t> get_array_ints(std::string_view key) const;

  // Same, with a fallback for a missing key (a present key of the wrong type
  // still throws).
  uint32_t get_u32_or(std::string_view key, uint32_t fallback) const;
  int64_t get_i64_or(std::string_view key, int64_t fallback) const;
  float get_f32_or(std::string_view key, float fallback) const;
  bool get_bool_or(std::string_view key, bool fallback) const;
  std::string get_string_or(std::string_view key, std::string fallback) const;

  // Tensors in file order.
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* find_tensor(std::string_view name) const;
  const TensorInfo& tensor(std::string_view name) const;  // throws if missing
  // Zero-copy view of a tensor's bytes (valid while any copy of this file lives).
  std::span<const uint8_t> tensor_data(const TensorInfo& t) const;

 private:
  GgufFile() = default;
  void parse();
  [[noreturn]] void key_error(std::string_view key, std::string_view want, const Value* v) const;

  std::string name_;
  std::shared_ptr<const void> storage_;  // the mapping or the vector, kept alive
  std::span<const uint8_t> bytes_;
  uint32_t version_ = 0;
  size_t alignment_ = kDefaultAlignment;
  uint64_t data_offset_ = 0;
  Metadata metadata_;
  std::vector<TensorInfo> tensors_;
};

// Builds a GGUF v3 file. Metadata keeps insertion order; setting an existing
// key replaces its value in place. The alignment is general.alignment when set
// (a power of two, type u32), else 32.
class GgufWriter {
 public:
  void set(std::string key, Value v);
  void set_u8(std::string key, uint8_t v) { set(std::move(key), Value(v)); }
  void set_i8(std::string key, int8_t v) { set(std::move(key), Value(v)); }
  void set_u16(std::string key, uint16_t v) { set(std::move(key), Value(v)); }
  void set_i16(std::string key, int16_t v) { set(std::move(key), Value(v)); }
  void set_u32(std::string key, uint32_t v) { set(std::move(key), Value(v)); }
  void set_i32(std::string key, int32_t v) { set(std::move(key), Value(v)); }
  void set_u64(std::string key, uint64_t v) { set(std::move(key), Value(v)); }
  void set_i64(std::string key, int64_t v) { set(std::move(key), Value(v)); }
  void set_f32(std::string key, float v) { set(std::move(key), Value(v)); }
  void set_f64(std::string key, double v) { set(std::move(key), Value(v)); }
  void set_bool(std::string key, bool v) { set(std::move(key), Value(v)); }
  void set_string(std::string key, std::string v) { set(std::move(key), Value(std::move(v))); }
  void set_array(std::string key, Array a) { set(std::move(key), Value(std::move(a))); }
  void set_array_strings(std::string key, std::vector<std::string> v);
  void set_array_f32(std::string key, std::vector<float> v);
  void set_array_i32(std::string key, std::vector<int32_t> v);
  void set_array_u32(std::string key, std::vector<uint32_t> v);
  void set_array_i64(std::string key, std::vector<int64_t> v);
  void set_alignment(uint32_t alignment);  // sets general.alignment
  bool remove(std::string_view key);       // true if the key was present
  const Value* find(std::string_view key) const;
  const Metadata& metadata() const { return metadata_; }
  // Copies every metadata pair of `file` (in its order).
  void copy_metadata(const GgufFile& file);

  // Adds a tensor whose bytes the writer owns. shape is in ggml order
  // (shape[0] = row length, a multiple of the format's block size); bytes.size()
  // must equal the format's size of that shape. Throws blockq::Error otherwise,
  // and on a duplicate or too-long name.
  void add_tensor(std::string name, std::vector<uint64_t> shape, Format fmt,
                  std::vector<uint8_t> bytes);
  // Same, borrowing the bytes: they must stay alive until write()/to_bytes().
  void add_tensor_view(std::string name, std::vector<uint64_t> shape, Format fmt,
                       std::span<const uint8_t> bytes);
  size_t tensor_count() const { return tensors_.size(); }

  size_t alignment() const;
  // Serializes the whole file. write() streams to `path` (replaced if present).
  std::vector<uint8_t> to_bytes() const;
  void write(const std::string& path) const;

 private:
  struct PendingTensor {
    std::string name;
    std::vector<uint64_t> shape;
    Format format;
    std::vector<uint8_t> owned;
    std::span<const uint8_t> view;  // used when borrowed
    bool borrowed = false;
    std::span<const uint8_t> bytes() const { return borrowed ? view : std::span<const uint8_t>(owned); }
  };
  void check_tensor(const std::string& name, const std::vector<uint64_t>& shape, Format fmt,
                    size_t nbytes) const;
  // The header, metadata, tensor infos and padding up to the data section.
  std::vector<uint8_t> header_bytes(std::vector<uint64_t>& offsets) const;

  Metadata metadata_;
  std::vector<PendingTensor> tensors_;
};

// The data size of a tensor: rows * row_bytes(format, shape[0]); throws
// blockq::Error on a bad rank, a row length off the block size or overflow.
uint64_t tensor_nbytes(std::span<const uint64_t> shape, Format fmt);

}  // namespace blockq::gguf

namespace blockq {
using gguf::GgufFile;
using gguf::GgufWriter;
}  // namespace blockq
