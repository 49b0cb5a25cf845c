// GGUF metadata values and names: type names, printing, ggml type names,
// tensor size arithmetic (overflow-checked), and GgufFile's typed getters.
#include <cmath>
#include <limits>
#include <type_traits>

#include <fmt/format.h>

#include "gguf/gguf.hpp"
#include "gguf/internal.hpp"
#include "util/error.hpp"

namespace blockq::gguf {

std::string value_type_name(uint32_t t) {
  static constexpr std::string_view kNames[kValueTypeCount] = {
      "u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "string", "array", "u64", "i64", "f64"};
  if (t < kValueTypeCount) return std::string(kNames[t]);
  return fmt::format("type {}", t);
}

size_t Array::size() const {
  return std::visit(
      [](const auto& v) -> size_t {
        if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::monostate>) return 0;
        else return v.size();
      },
      values);
}

std::string describe_type(const Value& v) {
  if (const Array* a = std::get_if<Array>(&v))
    return fmt::format("array<{}>[{}]", value_type_name(a->elem_type()), a->size());
  return value_type_name(value_type(v));
}

namespace {

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += char(c);
    }
  }
  return out + "\"";
}

template <typename T>
std::string scalar_string(const T& x) {
  if constexpr (std::is_same_v<T, std::string>) return quote(x);
  else if constexpr (std::is_same_v<T, bool>) return x ? "true" : "false";
  else if constexpr (std::is_same_v<T, uint8_t> || std::is_same_v<T, int8_t>) return fmt::format("{}", int(x));
  else return fmt::format("{}", x);
}

}  // namespace

std::string to_string(const Value& v, size_t max_elems) {
  return std::visit(
      [&](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Array>) {
          return std::visit(
              [&](const auto& vec) -> std::string {
                using V = std::decay_t<decltype(vec)>;
                if constexpr (std::is_same_v<V, std::monostate>) {
                  return "[]";
                } else {
                  std::string out = "[";
                  size_t n = std::min(vec.size(), max_elems);
                  for (size_t i = 0; i < n; ++i) {
                    if (i) out += ", ";
                    out += scalar_string<typename V::value_type>(vec[i]);
                  }
                  if (vec.size() > n) out += fmt::format("{}... ({} total)", n ? ", " : "", vec.size());
                  return out + "]";
                }
              },
              x.values);
        } else {
          return scalar_string<T>(x);
        }
      },
      v);
}

std::optional<std::string_view> ggml_type_name(uint32_t t) {
  // ggml_type ids; empty = removed or never assigned.
  static constexpr std::string_view kNames[] = {
      "f32",     "f16",    "q4_0",    "q4_1",  "",       "",       "q5_0",   "q5_1",   "q8_0",
      "q8_1",    "q2_K",   "q3_K",    "q4_K",  "q5_K",   "q6_K",   "q8_K",   "iq2_xxs", "iq2_xs",
      "iq3_xxs", "iq1_s",  "iq4_nl",  "iq3_s", "iq2_s",  "iq4_xs", "i8",     "i16",    "i32",
      "i64",     "f64",    "iq1_m",   "bf16",  "",       "",       "",       "tq1_0",  "tq2_0",
      "",        "",       "",        "mxfp4"};
  if (t >= std::size(kNames) || kNames[t].empty()) return std::nullopt;
  return kNames[t];
}

std::string shape_string(std::span<const uint64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += fmt::format("{}{}", i ? ", " : "", shape[i]);
  return s + "]";
}

std::string check_shape(std::span<const uint64_t> shape, Format fmt, uint64_t& nbytes) {
  if (shape.empty() || shape.size() > kMaxDims)
    return fmt::format("{} dims (expected 1 to {})", shape.size(), kMaxDims);
  uint64_t elems = 1;
  for (uint64_t d : shape) {
    if (d > uint64_t(std::numeric_limits<int64_t>::max()) || __builtin_mul_overflow(elems, d, &elems) ||
        elems > uint64_t(std::numeric_limits<int64_t>::max()))
      return fmt::format("shape {} overflows: element count exceeds 2^63-1", shape_string(shape));
  }
  const FormatTraits& tr = traits(fmt);
  if (shape[0] % tr.block_elems != 0)
    return fmt::format("shape {}: row length {} is not a multiple of the {} block size {}",
                       shape_string(shape), shape[0], tr.name, tr.block_elems);
  uint64_t rows = shape[0] == 0 ? 0 : elems / shape[0];
  uint64_t row = (shape[0] / tr.block_elems) * tr.block_bytes;  // cannot overflow: block_bytes <= 256 * block_elems
  if (__builtin_mul_overflow(rows, row, &nbytes) ||
      nbytes > uint64_t(std::numeric_limits<int64_t>::max()))
    return fmt::format("shape {}: byte size overflows", shape_string(shape));
  return {};
}

uint64_t tensor_nbytes(std::span<const uint64_t> shape, Format fmt) {
  uint64_t nbytes = 0;
  std::string err = check_shape(shape, fmt, nbytes);
  if (!err.empty()) fail("{} tensor: {}", traits(fmt).name, err);
  return nbytes;
}

uint64_t TensorInfo::n_elems() const {
  uint64_t n = 1;
  for (uint64_t d : shape) n *= d;  // validated by the reader / writer
  return n;
}

uint64_t TensorInfo::rows() const { return shape.empty() || shape[0] == 0 ? 0 : n_elems() / shape[0]; }

// ---- GgufFile typed getters ----------------------------------------------

const Value* GgufFile::find(std::string_view key) const {
  for (const auto& [k, v] : metadata_)
    if (k == key) return &v;
  return nullptr;
}

void GgufFile::key_error(std::string_view key, std::string_view want, const Value* v) const {
  if (!v) fail("{}: metadata key '{}' is missing (expected {})", name_, key, want);
  fail("{}: metadata key '{}' has type {}, expected {}", name_, key, describe_type(*v), want);
}

namespace {

// Any integer alternative as a (value, is_negative) pair in 128-bit-free form.
bool as_int(const Value& v, int64_t& s, uint64_t& u, bool& is_signed) {
  return std::visit(
      [&](const auto& x) -> bool {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
          is_signed = std::is_signed_v<T>;
          if constexpr (std::is_signed_v<T>) s = x;
          else u = x;
          return true;
        } else {
          return false;
        }
      },
      v);
}

template <typename Want>
bool fit_int(const Value& v, Want& out) {
  int64_t s = 0;
  uint64_t u = 0;
  bool is_signed = false;
  if (!as_int(v, s, u, is_signed)) return false;
  using L = std::numeric_limits<Want>;
  if (is_signed) {
    if (s < 0 && !std::is_signed_v<Want>) return false;
    if constexpr (std::is_signed_v<Want>) {
      if (s < int64_t(L::min()) || s > int64_t(L::max())) return false;
    } else {
      if (uint64_t(s) > uint64_t(L::max())) return false;
    }
    out = Want(s);
  } else {
    if (u > uint64_t(L::max())) return false;
    out = Want(u);
  }
  return true;
}

}  // namespace

#define BQ_INT_GETTER(fn, T, want)                                 \
  T GgufFile::fn(std::string_view key) const {                     \
    const Value* v = find(key);                                    \
    T out{};                                                       \
    if (!v || !fit_int<T>(*v, out)) key_error(key, want, v);       \
    return out;                                                    \
  }
BQ_INT_GETTER(get_u32, uint32_t, "an integer that fits u32")
BQ_INT_GETTER(get_i32, int32_t, "an integer that fits i32")
BQ_INT_GETTER(get_u64, uint64_t, "a non-negative integer")
BQ_INT_GETTER(get_i64, int64_t, "an integer that fits i64")
#undef BQ_INT_GETTER

double GgufFile::get_f64(std::string_view key) const {
  const Value* v = find(key);
  if (v) {
    if (auto* f = std::get_if<float>(v)) return *f;
    if (auto* d = std::get_if<double>(v)) return *d;
  }
  key_error(key, "f32 or f64", v);
}

float GgufFile::get_f32(std::string_view key) const { return float(get_f64(key)); }

bool GgufFile::get_bool(std::string_view key) const {
  const Value* v = find(key);
  if (auto* b = v ? std::get_if<bool>(v) : nullptr) return *b;
  key_error(key, "bool", v);
}

const std::string& GgufFile::get_string(std::string_view key) const {
  const Value* v = find(key);
  if (auto* s = v ? std::get_if<std::string>(v) : nullptr) return *s;
  key_error(key, "string", v);
}

const Array& GgufFile::get_array(std::string_view key) const {
  const Value* v = find(key);
  if (auto* a = v ? std::get_if<Array>(v) : nullptr) return *a;
  key_error(key, "array", v);
}

template <typename T>
static const std::vector<T>* array_of(const Value* v) {
  const Array* a = v ? std::get_if<Array>(v) : nullptr;
  return a ? std::get_if<std::vector<T>>(&a->values) : nullptr;
}

const std::vector<std::string>& GgufFile::get_array_strings(std::string_view key) const {
  const Value* v = find(key);
  if (auto* p = array_of<std::string>(v)) return *p;
  key_error(key, "array<string>", v);
}

const std::vector<float>& GgufFile::get_array_f32(std::string_view key) const {
  const Value* v = find(key);
  if (auto* p = array_of<float>(v)) return *p;
  key_error(key, "array<f32>", v);
}

const std::vector<int32_t>& GgufFile::get_array_i32(std::string_view key) const {
  const Value* v = find(key);
  if (auto* p = array_of<int32_t>(v)) return *p;
  key_error(key, "array<i32>", v);
}

std::vector<int64_t> GgufFile::get_array_ints(std::string_view key) const {
  const Value* v = find(key);
  const Array* a = v ? std::get_if<Array>(v) : nullptr;
  std::vector<int64_t> out;
  bool ok = a && std::visit(
      [&](const auto& vec) -> bool {
        using V = std::decay_t<decltype(vec)>;
        if constexpr (std::is_same_v<V, std::monostate>) {
          return false;
        } else {
          using T = typename V::value_type;
          if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
            out.reserve(vec.size());
            for (T x : vec) {
              if constexpr (std::is_same_v<T, uint64_t>)
                if (x > uint64_t(std::numeric_limits<int64_t>::max())) return false;
              out.push_back(int64_t(x));
            }
            return true;
          } else {
            return false;
          }
        }
      },
      a->values);
  if (!ok) key_error(key, "an array of integers that fit i64", v);
  return out;
}

uint32_t GgufFile::get_u32_or(std::string_view key, uint32_t fallback) const {
  return has(key) ? get_u32(key) : fallback;
}
int64_t GgufFile::get_i64_or(std::string_view key, int64_t fallback) const {
  return has(key) ? get_i64(key) : fallback;
}
float GgufFile::get_f32_or(std::string_view key, float fallback) const {
  return has(key) ? get_f32(key) : fallback;
}
bool GgufFile::get_bool_or(std::string_view key, bool fallback) const {
  return has(key) ? get_bool(key) : fallback;
}
std::string GgufFile::get_string_or(std::string_view key, std::string fallback) const {
  return has(key) ? get_string(key) : std::move(fallback);
}

const TensorInfo* GgufFile::find_tensor(std::string_view name) const {
  for (const TensorInfo& t : tensors_)
    if (t.name == name) return &t;
  return nullptr;
}

const TensorInfo& GgufFile::tensor(std::string_view name) const {
  const TensorInfo* t = find_tensor(name);
  if (!t) fail("{}: no tensor named '{}'", name_, name);
  return *t;
}

std::span<const uint8_t> GgufFile::tensor_data(const TensorInfo& t) const {
  if (t.nbytes == 0) return {};
  BQ_ASSERT(data_offset_ <= bytes_.size() && t.offset <= bytes_.size() - data_offset_ &&
                t.nbytes <= bytes_.size() - data_offset_ - t.offset,
            "tensor '{}' is not from this file", t.name);
  return bytes_.subspan(size_t(data_offset_ + t.offset), size_t(t.nbytes));
}

}  // namespace blockq::gguf
