// A GPU arena: tensors sub-allocated from a few large storage buffers, each
// slice at an offset aligned for binding (minStorageBufferOffsetAlignment).
// Bytes are staged on the host and go up one buffer at a time, so every
// buffer is exactly as large as the slices it holds: a page is closed (made
// and uploaded) when the next slice would pass the page size, and by flush().
#pragma once
#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <vector>

#include "gpu/context.hpp"

namespace blockq::gpu {

class Arena;

// A byte range of an arena buffer. Usable for binding once its page is
// closed (an assertion otherwise); an empty slice binds as no buffer.
struct Slice {
  const Arena* arena = nullptr;
  uint32_t page = 0;
  uint64_t offset = 0, size = 0;
  explicit operator bool() const { return size != 0; }
  Binding binding() const;
  operator Binding() const { return binding(); }
  const Buffer& buffer() const;
};

class Arena {
 public:
  // page_bytes 0: min(maxBufferSize, 256 MiB). A slice larger than a page
  // gets a page of its own (up to maxBufferSize).
  Arena(const Context& ctx, std::string label, uint64_t page_bytes = 0);
  Arena(const Arena&) = delete;  // slices point to it
  Arena& operator=(const Arena&) = delete;

  // Stages `bytes` (rounded up to 4) as a new slice; throws blockq::Error,
  // naming `what`, past maxBufferSize or on a failed allocation.
  Slice put(std::span<const uint8_t> bytes, const std::string& what);
  template <typename T>
  Slice put(std::span<const T> v, const std::string& what) {
    return put(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(v.data()), v.size_bytes()), what);
  }
  // Closes the open page: creates its buffer and uploads the staged bytes.
  void flush();

  const Buffer& page(uint32_t i) const;
  size_t pages() const { return pages_.size(); }
  uint64_t used() const { return used_; }          // bytes of the slices
  uint64_t reserved() const { return reserved_; }  // bytes of the buffers (slices + alignment)

 private:
  const Context* ctx_;
  std::string label_;
  uint64_t page_bytes_, align_;
  std::deque<Buffer> pages_;     // stable addresses
  std::vector<uint8_t> staged_;  // the open page's bytes (page index pages_.size())
  std::string first_, last_;     // what the open page holds, for its label
  uint64_t used_ = 0, reserved_ = 0;
};

}  // namespace blockq::gpu
