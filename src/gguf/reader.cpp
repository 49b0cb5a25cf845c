// GGUF parser: maps a file read-only and validates every count, length,
// type id, shape and offset before using it.
//
// Byte layout (all little-endian, no implicit padding):
//   u32 magic = "GGUF" (bytes 47 47 55 46)      offset 0
//   u32 version (3; 2 is accepted, same layout)  offset 4
//   u64 n_tensors                                offset 8
//   u64 n_kv                                     offset 16
//   n_kv times:  string key; u32 value_type; value
//   n_tensors times (tensor info):
//       string name (<= 63 bytes); u32 n_dims (1..4); u64 ne[n_dims] (ne[0] = row
//       length); u32 ggml_type; u64 offset (relative to the data section, a
//       multiple of ALIGNMENT)
//   zero padding to a multiple of ALIGNMENT (general.alignment, u32, power of 2,
//   default 32); the data section starts there; each tensor's bytes lie at
//   data_start + offset, padded to ALIGNMENT.
// where string = u64 length + that many bytes (no terminator), and a value is
//   u8/i8/bool: 1 byte (bool is 0 or 1); u16/i16: 2; u32/i32/f32: 4;
//   u64/i64/f64: 8; string; array = u32 elem_type + u64 count + count values
//   (arrays of arrays are rejected).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <numeric>
#include <unordered_set>

#include "gguf/gguf.hpp"
#include "gguf/internal.hpp"
#include "util/error.hpp"

namespace blockq::gguf {
namespace {

// Smallest encodings, used to bound counts by the bytes that remain.
constexpr uint64_t kMinKvBytes = 8 + 1 + 4 + 1;              // key len, 1-byte key, type, u8
constexpr uint64_t kMinTensorInfoBytes = 8 + 1 + 4 + 8 + 4 + 8;  // name, n_dims, ne[0], type, offset

uint64_t scalar_size(uint32_t type) {
  switch (ValueType(type)) {
    case ValueType::U8: case ValueType::I8: case ValueType::Bool: return 1;
    case ValueType::U16: case ValueType::I16: return 2;
    case ValueType::U32: case ValueType::I32: case ValueType::F32: return 4;
    case ValueType::U64: case ValueType::I64: case ValueType::F64: return 8;
    case ValueType::String: return 8;  // at least the length prefix
    default: return 0;
  }
}

// A bounds-checked little-endian reader over the file's bytes.
class Cursor {
 public:
  Cursor(std::span<const uint8_t> b, const std::string& name) : b_(b), name_(name) {}

  uint64_t pos() const { return pos_; }
  uint64_t remaining() const { return b_.size() - pos_; }

  template <typename... Args>
  [[noreturn]] void bad(uint64_t at, fmt::format_string<Args...> f, Args&&... args) const {
    fail("{}: offset {}: {}", name_, at, fmt::format(f, std::forward<Args>(args)...));
  }

  void need(uint64_t n, std::string_view what) const {
    if (n > remaining())
      bad(pos_, "truncated: {} needs {} bytes but only {} remain (file is {} bytes)", what, n,
          remaining(), b_.size());
  }

  template <typename T>
  T read(std::string_view what) {
    need(sizeof(T), what);
    T x;
    std::memcpy(&x, b_.data() + pos_, sizeof(T));  // host is little-endian (x86, arm64)
    pos_ += sizeof(T);
    return x;
  }

  std::string string(std::string_view what) {
    uint64_t at = pos_;
    uint64_t len = read<uint64_t>(what);
    if (len > remaining())
      bad(at, "{} length {} runs past the end of the file ({} bytes remain)", what, len, remaining());
    std::string s(reinterpret_cast<const char*>(b_.data() + pos_), size_t(len));
    pos_ += len;
    return s;
  }

 private:
  std::span<const uint8_t> b_;
  const std::string& name_;
  uint64_t pos_ = 0;
};

template <typename T>
std::vector<T> read_vec(Cursor& c, uint64_t n, std::string_view what) {
  std::vector<T> v;
  // n * (encoded size) <= remaining was checked by the caller; a std::string is
  // larger in memory than its 8-byte minimum encoding, so only cap its reserve.
  v.reserve(size_t(std::is_same_v<T, std::string> ? std::min<uint64_t>(n, 4096) : n));
  for (uint64_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<T, std::string>) {
      v.push_back(c.string(what));
    } else if constexpr (std::is_same_v<T, bool>) {
      uint64_t at = c.pos();
      uint8_t b = c.read<uint8_t>(what);
      if (b > 1) c.bad(at, "{}: invalid bool value {} (expected 0 or 1)", what, b);
      v.push_back(b != 0);
    } else {
      v.push_back(c.read<T>(what));
    }
  }
  return v;
}

Value read_value(Cursor& c, uint32_t type, uint64_t type_at, const std::string& key) {
  std::string what = fmt::format("value of '{}'", key);
  switch (ValueType(type)) {
    case ValueType::U8: return c.read<uint8_t>(what);
    case ValueType::I8: return c.read<int8_t>(what);
    case ValueType::U16: return c.read<uint16_t>(what);
    case ValueType::I16: return c.read<int16_t>(what);
    case ValueType::U32: return c.read<uint32_t>(what);
    case ValueType::I32: return c.read<int32_t>(what);
    case ValueType::F32: return c.read<float>(what);
    case ValueType::U64: return c.read<uint64_t>(what);
    case ValueType::I64: return c.read<int64_t>(what);
    case ValueType::F64: return c.read<double>(what);
    case ValueType::Bool: {
      uint64_t at = c.pos();
      uint8_t b = c.read<uint8_t>(what);
      if (b > 1) c.bad(at, "{}: invalid bool value {} (expected 0 or 1)", what, b);
      return b != 0;
    }
    case ValueType::String: return c.string(what);
    case ValueType::Array: break;
    default: c.bad(type_at, "unknown value type {} for metadata key '{}'", type, key);
  }
  uint64_t et_at = c.pos();
  uint32_t et = c.read<uint32_t>(fmt::format("array element type of '{}'", key));
  if (et == uint32_t(ValueType::Array))
    c.bad(et_at, "metadata key '{}': nested arrays are not supported", key);
  if (et >= kValueTypeCount)
    c.bad(et_at, "unknown array element type {} for metadata key '{}'", et, key);
  uint64_t n_at = c.pos();
  uint64_t n = c.read<uint64_t>(fmt::format("array length of '{}'", key));
  uint64_t elem = scalar_size(et);
  if (n > c.remaining() / elem)
    c.bad(n_at, "array length {} of '{}' ({} elements of {}) runs past the end of the file ({} bytes remain)",
          n, key, n, value_type_name(et), c.remaining());
  std::string ewhat = fmt::format("element of array '{}'", key);
  Array a;
  switch (ValueType(et)) {
    case ValueType::U8: a.values = read_vec<uint8_t>(c, n, ewhat); break;
    case ValueType::I8: a.values = read_vec<int8_t>(c, n, ewhat); break;
    case ValueType::U16: a.values = read_vec<uint16_t>(c, n, ewhat); break;
    case ValueType::I16: a.values = read_vec<int16_t>(c, n, ewhat); break;
    case ValueType::U32: a.values = read_vec<uint32_t>(c, n, ewhat); break;
    case ValueType::I32: a.values = read_vec<int32_t>(c, n, ewhat); break;
    case ValueType::F32: a.values = read_vec<float>(c, n, ewhat); break;
    case ValueType::Bool: a.values = read_vec<bool>(c, n, ewhat); break;
    case ValueType::String: a.values = read_vec<std::string>(c, n, ewhat); break;
    case ValueType::U64: a.values = read_vec<uint64_t>(c, n, ewhat); break;
    case ValueType::I64: a.values = read_vec<int64_t>(c, n, ewhat); break;
    case ValueType::F64: a.values = read_vec<double>(c, n, ewhat); break;
    default: BQ_ASSERT(false, "unreachable element type {}", et);
  }
  return a;
}

// Owns a read-only mapping of a whole file.
struct Mapping {
  void* addr = nullptr;
  size_t size = 0;
  ~Mapping() {
    if (addr) munmap(addr, size);
  }
};

}  // namespace

GgufFile GgufFile::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("{}: cannot open: {}", path, std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    fail("{}: cannot stat: {}", path, std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    fail("{}: not a regular file", path);
  }
  auto map = std::make_shared<Mapping>();
  map->size = size_t(st.st_size);
  if (map->size > 0) {
    void* p = mmap(nullptr, map->size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int e = errno;
      ::close(fd);
      fail("{}: cannot map {} bytes: {}", path, map->size, std::strerror(e));
    }
    map->addr = p;
  }
  ::close(fd);
  GgufFile f;
  f.name_ = path;
  f.bytes_ = std::span<const uint8_t>(static_cast<const uint8_t*>(map->addr), map->size);
  f.storage_ = std::move(map);
  f.parse();
  return f;
}

GgufFile GgufFile::from_memory(std::vector<uint8_t> bytes, std::string name) {
  auto vec = std::make_shared<std::vector<uint8_t>>(std::move(bytes));
  GgufFile f;
  f.name_ = std::move(name);
  f.bytes_ = std::span<const uint8_t>(vec->data(), vec->size());
  f.storage_ = std::move(vec);
  f.parse();
  return f;
}

void GgufFile::parse() {
  Cursor c(bytes_, name_);

  // Header.
  if (bytes_.size() >= 4) {
    uint32_t magic;
    std::memcpy(&magic, bytes_.data(), 4);
    if (magic != kGgufMagic)
      c.bad(0, "bad magic 0x{:08x} (expected \"GGUF\"): not a GGUF file", magic);
  }
  c.need(24, "the header (magic, version, tensor count, metadata count)");
  c.read<uint32_t>("magic");
  version_ = c.read<uint32_t>("version");
  if (version_ != 2 && version_ != 3) {
    bool swapped = (version_ & 0xffff) == 0 && (version_ >> 24) <= 3;
    c.bad(4, "unsupported GGUF version {} (expected 3{})", version_,
          swapped ? "; big-endian files are not supported" : "");
  }
  uint64_t n_tensors = c.read<uint64_t>("tensor count");
  uint64_t n_kv = c.read<uint64_t>("metadata count");
  if (n_kv > c.remaining() / kMinKvBytes)
    c.bad(16, "metadata count {} is too large: {} bytes remain, each pair needs at least {}", n_kv,
          c.remaining(), kMinKvBytes);
  if (n_tensors > c.remaining() / kMinTensorInfoBytes)
    c.bad(8, "tensor count {} is too large: {} bytes remain, each tensor info needs at least {}",
          n_tensors, c.remaining(), kMinTensorInfoBytes);

  // Metadata.
  std::unordered_set<std::string> keys;
  uint64_t alignment_at = 0;
  for (uint64_t i = 0; i < n_kv; ++i) {
    uint64_t at = c.pos();
    std::string key = c.string(fmt::format("metadata key #{}", i));
    if (key.empty()) c.bad(at, "metadata key #{} is empty", i);
    if (!keys.insert(key).second) c.bad(at, "duplicate metadata key '{}'", key);
    uint64_t type_at = c.pos();
    uint32_t type = c.read<uint32_t>(fmt::format("value type of '{}'", key));
    if (type >= kValueTypeCount) c.bad(type_at, "unknown value type {} for metadata key '{}'", type, key);
    if (key == "general.alignment") alignment_at = type_at;
    Value v = read_value(c, type, type_at, key);
    metadata_.emplace_back(std::move(key), std::move(v));
  }

  alignment_ = kDefaultAlignment;
  if (const Value* a = find("general.alignment")) {
    const uint32_t* u = std::get_if<uint32_t>(a);
    if (!u) c.bad(alignment_at, "general.alignment has type {}, expected u32", describe_type(*a));
    if (*u == 0 || (*u & (*u - 1)) != 0)
      c.bad(alignment_at, "general.alignment {} is not a power of two", *u);
    alignment_ = *u;
  }

  // Tensor infos.
  // No reserve by count: vectors grow only as entries actually parse.
  std::vector<uint64_t> info_at;
  std::unordered_set<std::string> names;
  for (uint64_t i = 0; i < n_tensors; ++i) {
    uint64_t at = c.pos();
    info_at.push_back(at);
    TensorInfo t;
    t.name = c.string(fmt::format("name of tensor #{}", i));
    if (t.name.empty()) c.bad(at, "tensor #{} has an empty name", i);
    if (t.name.size() > kMaxTensorName)
      c.bad(at, "tensor #{} name is too long: {} bytes (at most {})", i, t.name.size(), kMaxTensorName);
    if (!names.insert(t.name).second) c.bad(at, "duplicate tensor name '{}'", t.name);
    uint64_t dims_at = c.pos();
    uint32_t n_dims = c.read<uint32_t>(fmt::format("dims count of tensor '{}'", t.name));
    if (n_dims == 0 || n_dims > kMaxDims)
      c.bad(dims_at, "tensor '{}' has {} dims (expected 1 to {})", t.name, n_dims, kMaxDims);
    for (uint32_t d = 0; d < n_dims; ++d)
      t.shape.push_back(c.read<uint64_t>(fmt::format("shape of tensor '{}'", t.name)));
    uint64_t type_at = c.pos();
    t.ggml_type = c.read<uint32_t>(fmt::format("type of tensor '{}'", t.name));
    std::optional<Format> f = format_from_ggml(t.ggml_type);
    if (!f) {
      if (auto n = ggml_type_name(t.ggml_type))
        c.bad(type_at, "tensor '{}' has type {} (ggml type {}), which blockq does not support",
              t.name, *n, t.ggml_type);
      c.bad(type_at, "tensor '{}' has unknown ggml type {}", t.name, t.ggml_type);
    }
    t.format = *f;
    std::string err = check_shape(t.shape, t.format, t.nbytes);
    if (!err.empty()) c.bad(dims_at, "tensor '{}': {}", t.name, err);
    uint64_t off_at = c.pos();
    t.offset = c.read<uint64_t>(fmt::format("data offset of tensor '{}'", t.name));
    if (t.offset % alignment_ != 0)
      c.bad(off_at, "tensor '{}' data offset {} is misaligned: not a multiple of the alignment {}",
            t.name, t.offset, alignment_);
    tensors_.push_back(std::move(t));
  }

  // Data section: every tensor inside it, none overlapping.
  data_offset_ = align_up(c.pos(), alignment_);
  uint64_t data_size = bytes_.size() > data_offset_ ? bytes_.size() - data_offset_ : 0;
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const TensorInfo& t = tensors_[i];
    if (t.nbytes == 0) continue;
    if (t.offset > data_size || t.nbytes > data_size - t.offset)
      c.bad(info_at[i],
            "tensor '{}' data [{}, +{}) runs past the end of the file (data section starts at {} and "
            "holds {} bytes)",
            t.name, t.offset, t.nbytes, data_offset_, data_size);
  }
  std::vector<size_t> order(tensors_.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return tensors_[a].offset < tensors_[b].offset;
  });
  const TensorInfo* prev = nullptr;
  for (size_t i : order) {
    const TensorInfo& t = tensors_[i];
    if (t.nbytes == 0) continue;
    if (prev && t.offset < prev->offset + prev->nbytes)
      c.bad(info_at[i], "tensor '{}' data [{}, +{}) overlaps tensor '{}' data [{}, +{})", t.name,
            t.offset, t.nbytes, prev->name, prev->offset, prev->nbytes);
    prev = &t;
  }
}

}  // namespace blockq::gguf
