// GGUF v3 writer: metadata in insertion order, tensor infos, zero padding to
// the alignment, then each tensor's bytes padded to the alignment (as ggml).
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "gguf/gguf.hpp"
#include "gguf/internal.hpp"
#include "util/error.hpp"

namespace blockq::gguf {
namespace {

class Out {
 public:
  explicit Out(std::vector<uint8_t>& b) : b_(b) {}
  template <typename T>
  void put(T x) {
    uint8_t tmp[sizeof(T)];
    std::memcpy(tmp, &x, sizeof(T));  // host is little-endian
    b_.insert(b_.end(), tmp, tmp + sizeof(T));
  }
  void str(const std::string& s) {
    put<uint64_t>(s.size());
    b_.insert(b_.end(), s.begin(), s.end());
  }

 private:
  std::vector<uint8_t>& b_;
};

void put_value(Out& o, const Value& v) {
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::string>) {
          o.str(x);
        } else if constexpr (std::is_same_v<T, bool>) {
          o.put<uint8_t>(x ? 1 : 0);
        } else if constexpr (std::is_same_v<T, Array>) {
          o.put<uint32_t>(uint32_t(x.elem_type()));
          std::visit(
              [&](const auto& vec) {
                using V = std::decay_t<decltype(vec)>;
                if constexpr (!std::is_same_v<V, std::monostate>) {
                  o.put<uint64_t>(vec.size());
                  for (const auto& e : vec) {
                    using E = std::decay_t<decltype(e)>;
                    if constexpr (std::is_same_v<E, std::string>) o.str(e);
                    else if constexpr (std::is_same_v<V, std::vector<bool>>) o.put<uint8_t>(e ? 1 : 0);
                    else o.put<E>(e);
                  }
                }
              },
              x.values);
        } else {
          o.put<T>(x);
        }
      },
      v);
}

}  // namespace

void GgufWriter::set(std::string key, Value v) {
  BQ_CHECK(!key.empty(), "GGUF writer: empty metadata key");
  if (const Array* a = std::get_if<Array>(&v))
    BQ_CHECK(a->elem_type() != ValueType::Array, "GGUF writer: key '{}': nested arrays are not supported", key);
  if (key == "general.alignment") {
    const uint32_t* u = std::get_if<uint32_t>(&v);
    BQ_CHECK(u, "GGUF writer: general.alignment must be u32, got {}", describe_type(v));
    BQ_CHECK(*u != 0 && (*u & (*u - 1)) == 0, "GGUF writer: general.alignment {} is not a power of two", *u);
  }
  for (auto& [k, old] : metadata_) {
    if (k == key) {
      old = std::move(v);
      return;
    }
  }
  metadata_.emplace_back(std::move(key), std::move(v));
}

void GgufWriter::set_array_strings(std::string key, std::vector<std::string> v) {
  Array a;
  a.values = std::move(v);
  set_array(std::move(key), std::move(a));
}
void GgufWriter::set_array_f32(std::string key, std::vector<float> v) {
  Array a;
  a.values = std::move(v);
  set_array(std::move(key), std::move(a));
}
void GgufWriter::set_array_i32(std::string key, std::vector<int32_t> v) {
  Array a;
  a.values = std::move(v);
  set_array(std::move(key), std::move(a));
}
void GgufWriter::set_array_u32(std::string key, std::vector<uint32_t> v) {
  Array a;
  a.values = std::move(v);
  set_array(std::move(key), std::move(a));
}
void GgufWriter::set_array_i64(std::string key, std::vector<int64_t> v) {
  Array a;
  a.values = std::move(v);
  set_array(std::move(key), std::move(a));
}

void GgufWriter::set_alignment(uint32_t alignment) { set_u32("general.alignment", alignment); }

bool GgufWriter::remove(std::string_view key) {
  for (auto it = metadata_.begin(); it != metadata_.end(); ++it) {
    if (it->first == key) {
      metadata_.erase(it);
      return true;
    }
  }
  return false;
}

const Value* GgufWriter::find(std::string_view key) const {
  for (const auto& [k, v] : metadata_)
    if (k == key) return &v;
  return nullptr;
}

void GgufWriter::copy_metadata(const GgufFile& file) {
  for (const auto& [k, v] : file.metadata()) set(k, v);
}

size_t GgufWriter::alignment() const {
  const Value* v = find("general.alignment");
  return v ? std::get<uint32_t>(*v) : kDefaultAlignment;  // type checked by set()
}

void GgufWriter::check_tensor(const std::string& name, const std::vector<uint64_t>& shape, Format fmt,
                              size_t nbytes) const {
  BQ_CHECK(!name.empty(), "GGUF writer: empty tensor name");
  BQ_CHECK(name.size() <= kMaxTensorName, "GGUF writer: tensor name '{}' is too long: {} bytes (at most {})",
           name, name.size(), kMaxTensorName);
  for (const PendingTensor& t : tensors_)
    BQ_CHECK(t.name != name, "GGUF writer: duplicate tensor name '{}'", name);
  uint64_t want = 0;
  std::string err = check_shape(shape, fmt, want);
  BQ_CHECK(err.empty(), "GGUF writer: tensor '{}' ({}): {}", name, traits(fmt).name, err);
  BQ_CHECK(want == nbytes, "GGUF writer: tensor '{}' ({} {}) needs {} bytes, got {}", name,
           traits(fmt).name, shape_string(shape), want, nbytes);
}

void GgufWriter::add_tensor(std::string name, std::vector<uint64_t> shape, Format fmt,
                            std::vector<uint8_t> bytes) {
  check_tensor(name, shape, fmt, bytes.size());
  tensors_.push_back(PendingTensor{std::move(name), std::move(shape), fmt, std::move(bytes), {}, false});
}

void GgufWriter::add_tensor_view(std::string name, std::vector<uint64_t> shape, Format fmt,
                                 std::span<const uint8_t> bytes) {
  check_tensor(name, shape, fmt, bytes.size());
  tensors_.push_back(PendingTensor{std::move(name), std::move(shape), fmt, {}, bytes, true});
}

std::vector<uint8_t> GgufWriter::header_bytes(std::vector<uint64_t>& offsets) const {
  const uint64_t align = alignment();
  std::vector<uint8_t> b;
  Out o(b);
  o.put<uint32_t>(kGgufMagic);
  o.put<uint32_t>(3);
  o.put<uint64_t>(tensors_.size());
  o.put<uint64_t>(metadata_.size());
  for (const auto& [k, v] : metadata_) {
    o.str(k);
    o.put<uint32_t>(uint32_t(value_type(v)));
    put_value(o, v);
  }
  offsets.clear();
  uint64_t off = 0;
  for (const PendingTensor& t : tensors_) {
    o.str(t.name);
    o.put<uint32_t>(uint32_t(t.shape.size()));
    for (uint64_t d : t.shape) o.put<uint64_t>(d);
    o.put<uint32_t>(traits(t.format).ggml_type);
    o.put<uint64_t>(off);
    offsets.push_back(off);
    off = align_up(off + t.bytes().size(), align);
  }
  b.resize(align_up(b.size(), align), 0);
  return b;
}

std::vector<uint8_t> GgufWriter::to_bytes() const {
  std::vector<uint64_t> offsets;
  std::vector<uint8_t> b = header_bytes(offsets);
  const uint64_t align = alignment();
  for (const PendingTensor& t : tensors_) {
    b.insert(b.end(), t.bytes().begin(), t.bytes().end());
    b.resize(align_up(b.size(), align), 0);
  }
  return b;
}

void GgufWriter::write(const std::string& path) const {
  std::vector<uint64_t> offsets;
  std::vector<uint8_t> head = header_bytes(offsets);
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!f) fail("{}: cannot create: {}", path, std::strerror(errno));
  auto put = [&](const uint8_t* p, size_t n) {
    if (n && std::fwrite(p, 1, n, f.get()) != n) fail("{}: write failed: {}", path, std::strerror(errno));
  };
  put(head.data(), head.size());
  const uint64_t align = alignment();
  static const uint8_t zeros[256] = {};
  for (const PendingTensor& t : tensors_) {
    put(t.bytes().data(), t.bytes().size());
    uint64_t pad = align_up(t.bytes().size(), align) - t.bytes().size();
    for (; pad > 0; pad -= std::min<uint64_t>(pad, sizeof zeros)) put(zeros, size_t(std::min<uint64_t>(pad, sizeof zeros)));
  }
  if (std::fflush(f.get()) != 0) fail("{}: write failed: {}", path, std::strerror(errno));
  FILE* raw = f.release();
  if (std::fclose(raw) != 0) fail("{}: close failed: {}", path, std::strerror(errno));
}

}  // namespace blockq::gguf
