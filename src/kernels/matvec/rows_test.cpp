// Row gather (matvec layout) parity tests: every weight kind, ragged row
// counts, k at the smallest block multiple and longer, 1 and 5 tokens with
// repeated ids and the first and last rows, weights split into row chunks
// across arena pages at non-zero offsets; poisoned outputs. Each case
// reports its max relative error against the twin, against float64 and the
// twin's against the format's own dequantizer (ggml's / ONNX Runtime's).
// Bound 1e-6: the element is one scale * code + min, which the GPU may fuse.
#include <gtest/gtest.h>

#include "kernels/matvec/rows.hpp"
#include "kernels/matvec/test_weights.hpp"
#include "support/gpu.hpp"
#include "support/random.hpp"
#include "util/error.hpp"

using namespace blockq;
using namespace blockq::matvec;
using namespace blockq::matvec::test;
using blockq::testing_support::test_context;
namespace ts = blockq::testing_support;

namespace {

// The format's own dequantization of rows ids (the definition the twin must meet).
std::vector<float> dequantized(const OwnedWeight& w, std::span<const uint32_t> ids) {
  const uint32_t k = w.host.k;
  std::vector<float> out(ids.size() * k);
  for (size_t t = 0; t < ids.size(); ++t) {
    std::span<float> row(out.data() + t * k, k);
    if (w.host.kind.onnx) {
      dequantize_row(w.onnx, ids[t], row);
    } else {
      const size_t rb = w.ggml.size() / w.host.n;
      dequantize(w.host.kind.format, std::span<const uint8_t>(w.ggml.data() + ids[t] * rb, rb), row);
    }
  }
  return out;
}

struct RowsCase {
  uint32_t n, k;
  std::vector<uint32_t> ids;
  uint64_t max_chunk_bytes = 0;  // force row chunks
  uint64_t page_bytes = 0;       // a shared arena with pages this small (0: the weight's own arena)
};

void run_rows(const Kind& kind, const RowsCase& c, uint32_t seed) {
  auto& ctx = test_context();
  OwnedWeight w = make_weight(kind.kind, c.n, c.k, seed);
  fix(w);
  UploadOptions uo;
  uo.max_chunk_bytes = c.max_chunk_bytes;
  if (c.max_chunk_bytes) uo.row_granularity = 8;
  std::unique_ptr<gpu::Arena> arena;
  if (c.page_bytes) {
    arena = std::make_unique<gpu::Arena>(ctx, "test.arena", c.page_bytes);
    const std::vector<uint32_t> other(37, 0xdeadbeefu);  // a tensor before, so the weight's offsets are not 0
    arena->put<uint32_t>(other, "other");
    uo.arena = arena.get();
  }
  const Weights gw = upload(ctx, w.host, "test.table", uo);
  if (arena) arena->flush();
  const uint32_t m = uint32_t(c.ids.size());
  const KernelSpec spec = plan_rows(ctx, kind.kind, c.n, c.k, m);
  auto ids = ctx.storage<uint32_t>(c.ids, "ids");
  std::vector<float> poison(size_t{m} * c.k);
  ts::poison(poison);
  auto y = ctx.storage<float>(poison, "y");
  const PreparedRows p = prepare_rows(ctx, spec, gw, ids, y);
  gpu::Recorder rec(ctx);
  p.record(rec);
  rec.submit();
  const auto got = ctx.download<float>(y);
  EXPECT_EQ(ts::first_poisoned(got), -1) << spec.key();
  const auto tw = rows_twin(w.host, c.ids);
  const auto ref = rows_reference(w.host, c.ids);
  const auto fmt_ref = dequantized(w, c.ids);
  const double vs_twin = ts::max_rel_err(got, tw), vs_ref = ts::max_rel_err(got, ref),
               twin_vs_fmt = ts::max_rel_err(tw, fmt_ref);
  std::printf("  %-50s chunks %zu pages %zu  vs twin %.2e  vs f64 %.2e  twin vs dequantize %.2e\n",
              spec.key().c_str(), gw.chunks.size(), arena ? arena->pages() : gw.own->pages(), vs_twin, vs_ref,
              twin_vs_fmt);
  EXPECT_LT(vs_twin, 1e-6) << spec.key();
  EXPECT_LT(vs_ref, 1e-6) << spec.key();
  EXPECT_LT(twin_vs_fmt, 1e-6) << spec.key();
}

class RowsParity : public ::testing::TestWithParam<int> {};

TEST_P(RowsParity, MatchesTwinFloat64AndDequantize) {
  const Kind kind = all_kinds()[GetParam()];
  uint32_t seed = 300;
  run_rows(kind, {37, kind.block, {5}}, seed++);
  run_rows(kind, {37, kind.block, {36, 0, 5, 5, 17}}, seed++);
  // A longer row; the table in 8-row chunks over an arena of small pages.
  const uint32_t k = std::max(kind.block * 3, 96u);
  const RowBytes rb = row_bytes(kind.kind, k);
  const uint64_t chunk = uint64_t(8 * std::max(rb.main, rb.side)) + 64;  // 8 rows of the widest array
  run_rows(kind, {41, k, {40, 1, 16, 23, 40}, chunk, 2 * chunk}, seed++);
  // The same table in one chunk on one page of a shared arena, at an offset.
  run_rows(kind, {41, k, {0, 40}, 0, 1 << 20}, seed++);
}

INSTANTIATE_TEST_SUITE_P(Kinds, RowsParity, ::testing::Range(0, int(all_kinds().size())),
                         [](const ::testing::TestParamInfo<int>& info) {
                           std::string s = all_kinds()[info.param].name;
                           for (char& ch : s)
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return s;
                         });

TEST(Rows, BadInputsThrow) {
  auto& ctx = test_context();
  const Kind kind = all_kinds()[0];
  OwnedWeight w = make_weight(kind.kind, 8, kind.block, 9);
  fix(w);
  const Weights gw = upload(ctx, w.host, "t");
  const std::vector<uint32_t> bad = {3, 8};
  EXPECT_THROW(rows_twin(w.host, bad), Error);
  auto ids = ctx.storage<uint32_t>(bad, "ids");
  auto small_y = ctx.create_buffer(4, gpu::kStorage, "y");
  EXPECT_THROW(prepare_rows(ctx, plan_rows(ctx, kind.kind, 8, kind.block, 2), gw, ids, small_y), Error);
  auto y = ctx.create_buffer(2 * kind.block * 4, gpu::kStorage, "y");
  EXPECT_THROW(prepare_rows(ctx, plan_rows(ctx, kind.kind, 9, kind.block, 2), gw, ids, y), Error);  // n mismatch
}

}  // namespace
