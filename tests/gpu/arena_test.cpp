// Weight arena tests: slices at binding-aligned offsets, pages closed at the
// page size and exactly as large as what they hold, a slice past the page
// size on a page of its own, the bytes on the device, and a kernel reading
// a slice at a non-zero offset through its binding.
#include <gtest/gtest.h>

#include "gpu/arena.hpp"
#include "gpu/recorder.hpp"
#include "support/gpu.hpp"
#include "support/random.hpp"
#include "util/error.hpp"

using namespace blockq;
using blockq::testing_support::test_context;

namespace {

std::vector<uint32_t> words(size_t n, uint32_t seed) {
  std::vector<uint32_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = seed * 2654435761u + uint32_t(i) * 40503u;
  return v;
}

TEST(Arena, PacksAlignedSlicesIntoExactPages) {
  auto& ctx = test_context();
  const uint64_t align = std::max<uint64_t>(4, ctx.limits().minStorageBufferOffsetAlignment);
  const uint64_t page = 8 * align;
  gpu::Arena a(ctx, "test.arena", page);
  const size_t aw = align / 4;  // words per alignment step
  // Every slice but [5] fits a page with room to spare; [5] is past a page.
  const std::vector<size_t> sizes = {3, 3 * aw + 1, 1, 2 * aw, 5, 20 * aw, 9};
  std::vector<std::vector<uint32_t>> data;
  std::vector<gpu::Slice> slices;
  for (size_t i = 0; i < sizes.size(); ++i) {
    data.push_back(words(sizes[i], uint32_t(i) + 1));
    slices.push_back(a.put<uint32_t>(data.back(), "t" + std::to_string(i)));
  }
  a.flush();
  uint64_t used = 0, reserved = 0;
  for (size_t i = 0; i < slices.size(); ++i) {
    const gpu::Slice& s = slices[i];
    EXPECT_EQ(s.offset % align, 0u) << i;
    EXPECT_EQ(s.size, sizes[i] * 4) << i;
    EXPECT_LE(s.offset + s.size, s.buffer().size()) << i;
    EXPECT_EQ(ctx.download<uint32_t>(s.buffer(), s.offset, sizes[i]), data[i]) << i;
    used += s.size;
  }
  for (uint32_t p = 0; p < a.pages(); ++p) {
    reserved += a.page(p).size();
    // Every page but a single oversized slice's stays within the page size.
    EXPECT_TRUE(a.page(p).size() <= page || a.page(p).size() == sizes[5] * 4) << p;
  }
  EXPECT_EQ(a.used(), used);
  EXPECT_EQ(a.reserved(), reserved);
  EXPECT_GE(a.pages(), 3u);
  EXPECT_EQ(slices[5].offset, 0u) << "the oversized slice starts a page of its own";
  EXPECT_NE(slices[5].page, slices[4].page);
  // The last page ends at its last slice (no slack kept).
  const gpu::Slice& last = slices.back();
  EXPECT_EQ(a.page(last.page).size(), last.offset + last.size);
}

TEST(Arena, KernelReadsASliceAtAnOffset) {
  auto& ctx = test_context();
  gpu::Arena a(ctx, "test.arena");
  const std::vector<float> before(100, -7.f);
  a.put<float>(before, "before");
  const auto x = testing_support::random_floats(300, 5);
  const gpu::Slice sx = a.put<float>(x, "x");
  a.flush();
  ASSERT_GT(sx.offset, 0u);
  const gpu::Kernel& k = ctx.kernel("test.arena.twice", "test.arena.twice", [] {
    return std::string(R"(
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
  if (g.x < arrayLength(&x)) { y[g.x] = 2.0 * x[g.x]; }
}
)");
  });
  auto y = ctx.create_buffer(x.size() * 4, gpu::kStorage, "y");
  const auto group = ctx.bind(k, {sx.binding(), {&y}});
  gpu::Recorder r(ctx);
  r.dispatch(k, group, {5, 1, 1});
  r.submit();
  const auto got = ctx.download<float>(y);
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(got[i], 2.f * x[i]) << i;
}

TEST(Arena, RefusesASlicePastMaxBufferSize) {
  auto& ctx = test_context();
  gpu::Arena a(ctx, "test.arena");
  // A span that claims more bytes than the device's buffers hold (never read).
  const uint8_t b = 0;
  const std::span<const uint8_t> huge(&b, static_cast<size_t>(ctx.limits().maxBufferSize) + 4);
  EXPECT_THROW(a.put(huge, "huge"), Error);
}

}  // namespace
