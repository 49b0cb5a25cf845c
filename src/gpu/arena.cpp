// The GPU arena (see arena.hpp).
#include "gpu/arena.hpp"

#include <algorithm>
#include <cstring>

#include "util/error.hpp"

namespace blockq::gpu {

Binding Slice::binding() const { return arena ? Binding{&buffer(), offset, size} : Binding{}; }

const Buffer& Slice::buffer() const {
  BQ_ASSERT(arena, "an empty slice was bound");
  return arena->page(page);
}

Arena::Arena(const Context& ctx, std::string label, uint64_t page_bytes)
    : ctx_(&ctx), label_(std::move(label)) {
  const uint64_t max_buf = ctx.limits().maxBufferSize;
  page_bytes_ = std::min<uint64_t>(max_buf, page_bytes ? page_bytes : uint64_t{256} << 20);
  align_ = std::max<uint64_t>(4, ctx.limits().minStorageBufferOffsetAlignment);
}

Slice Arena::put(std::span<const uint8_t> bytes, const std::string& what) {
  const uint64_t size = std::max<uint64_t>(4, (bytes.size() + 3) / 4 * 4);
  BQ_CHECK(size <= ctx_->limits().maxBufferSize, "arena '{}': '{}' of {} bytes exceeds maxBufferSize ({} bytes)",
           label_, what, size, ctx_->limits().maxBufferSize);
  uint64_t off = (staged_.size() + align_ - 1) / align_ * align_;
  if (!staged_.empty() && off + size > page_bytes_) {
    flush();
    off = 0;
  }
  staged_.resize(off + size, 0);
  std::memcpy(staged_.data() + off, bytes.data(), bytes.size());
  if (first_.empty()) first_ = what;
  last_ = what;
  used_ += size;
  return {this, static_cast<uint32_t>(pages_.size()), off, size};
}

void Arena::flush() {
  if (staged_.empty()) return;
  const std::string label = first_ == last_ ? fmt::format("{}.{}: {}", label_, pages_.size(), first_)
                                            : fmt::format("{}.{}: {} .. {}", label_, pages_.size(), first_, last_);
  Buffer b = ctx_->create_buffer(staged_.size(), kStorage, label);
  ctx_->upload(b, std::span<const uint8_t>(staged_));
  reserved_ += b.size();
  pages_.push_back(std::move(b));
  std::vector<uint8_t>().swap(staged_);
  first_.clear();
  last_.clear();
}

const Buffer& Arena::page(uint32_t i) const {
  BQ_ASSERT(i < pages_.size(), "arena '{}': page {} is still open (flush() before binding)", label_, i);
  return pages_[i];
}

}  // namespace blockq::gpu
