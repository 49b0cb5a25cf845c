// Malformed GGUF files: the corpus of corrupted files, truncation at every byte
// length, and a deterministic mutation fuzz run; all must throw blockq::Error.
#include <gtest/gtest.h>

#include <random>

#include "gguf/corpus.hpp"
#include "gguf/gguf.hpp"
#include "util/error.hpp"

namespace blockq::gguf {
namespace {

// The smallest prefix of a valid file that still parses: the end of its last
// tensor's data (or of the headers when it has no tensor data).
size_t min_valid_length(const GgufFile& f) {
  uint64_t end = 0;
  for (const TensorInfo& t : f.tensors())
    if (t.nbytes) end = std::max(end, f.data_offset() + t.offset + t.nbytes);
  return size_t(end);
}

TEST(GgufMalformed, CorpusThrowsNamedErrors) {
  std::vector<testing::BadCase> corpus = testing::malformed_corpus();
  EXPECT_GE(corpus.size(), 30u);
  for (const testing::BadCase& c : corpus) {
    std::string name = "corpus/" + c.name + ".gguf";
    try {
      GgufFile::from_memory(c.bytes, name);
      ADD_FAILURE() << c.name << ": parsed without error";
    } catch (const Error& e) {
      std::string msg = e.what();
      size_t at = msg.find(name);
      EXPECT_NE(at, std::string::npos) << c.name << ": file not named: " << msg;
      if (at != std::string::npos) msg.erase(at, name.size());  // the words must be in the rest
      EXPECT_NE(msg.find("offset "), std::string::npos) << c.name << ": no offset: " << msg;
      for (const std::string& w : c.expect)
        EXPECT_NE(msg.find(w), std::string::npos) << c.name << ": '" << w << "' not in: " << msg;
    }
  }
}

TEST(GgufMalformed, ValidBasesParse) {
  GgufFile a = GgufFile::from_memory(testing::valid_raw().bytes(), "raw.gguf");
  EXPECT_EQ(a.tensors().size(), 3u);
  GgufFile b = GgufFile::from_memory(testing::valid_full(), "full.gguf");
  EXPECT_EQ(b.tensors().size(), std::size(kAllFormats));
  EXPECT_EQ(b.metadata().size(), 15u);
}

void truncate_everywhere(const std::vector<uint8_t>& good, const std::string& label) {
  GgufFile full = GgufFile::from_memory(good, label);
  size_t min_len = min_valid_length(full);
  ASSERT_GT(min_len, 0u);
  ASSERT_LE(min_len, good.size());
  for (size_t len = 0; len <= good.size(); ++len) {
    std::vector<uint8_t> cut(good.begin(), good.begin() + long(len));
    std::string name = label + "[:" + std::to_string(len) + "]";
    if (len < min_len) {
      try {
        GgufFile::from_memory(std::move(cut), name);
        ADD_FAILURE() << name << " parsed";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
      }
    } else {
      // Only trailing padding is missing: still a complete file.
      EXPECT_NO_THROW(GgufFile::from_memory(std::move(cut), name));
    }
  }
}

TEST(GgufMalformed, TruncatedAtEveryLength) {
  truncate_everywhere(testing::valid_raw().bytes(), "raw");
  truncate_everywhere(testing::valid_full(2), "full");
}

TEST(GgufMalformed, TruncatedMetadataOnlyFile) {
  // No tensors: every cut before the end of the metadata fails.
  GgufWriter w;
  w.set_string("general.architecture", "llama");
  w.set_array_strings("tokenizer.ggml.tokens", {"a", "bb", "ccc"});
  w.set_array_f32("tokenizer.ggml.scores", {1, 2, 3});
  std::vector<uint8_t> good = w.to_bytes();
  size_t end = good.size();
  while (end > 0 && good[end - 1] == 0) --end;  // the metadata ends with a non-zero f32
  for (size_t len = 0; len < end; ++len)
    EXPECT_THROW(GgufFile::from_memory({good.begin(), good.begin() + long(len)}, "meta"), Error) << len;
  EXPECT_NO_THROW(GgufFile::from_memory(good, "meta"));
}

// One random corruption of a valid file.
std::vector<uint8_t> mutate(std::vector<uint8_t> b, std::mt19937_64& rng) {
  auto pick = [&](size_t n) { return n ? size_t(rng() % n) : 0; };
  static const uint64_t kInteresting[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 12, 13, 31, 32, 33, 63, 64, 255, 256,
                                          0x7fffffffull, 0x80000000ull, 0xffffffffull, 1ull << 32,
                                          1ull << 62, 1ull << 63, ~0ull, ~0ull - 31};
  int rounds = 1 + int(rng() % 3);
  for (int r = 0; r < rounds && !b.empty(); ++r) {
    switch (rng() % 7) {
      case 0:  // flip a bit
        b[pick(b.size())] ^= uint8_t(1u << (rng() % 8));
        break;
      case 1:  // random byte
        b[pick(b.size())] = uint8_t(rng());
        break;
      case 2:
      case 3: {  // an interesting u32 or u64, at an 8-aligned or any position
        uint64_t v = kInteresting[rng() % std::size(kInteresting)];
        size_t w = (rng() & 1) ? 8 : 4;
        if (b.size() < w) break;
        size_t at = pick(b.size() - w + 1);
        if (rng() & 1) at &= ~size_t(7);
        for (size_t i = 0; i < w; ++i) b[at + i] = uint8_t(v >> (8 * i));
        break;
      }
      case 4:  // truncate
        b.resize(pick(b.size()));
        break;
      case 5: {  // delete a run
        size_t at = pick(b.size()), n = std::min(b.size() - at, size_t(1 + rng() % 16));
        b.erase(b.begin() + long(at), b.begin() + long(at + n));
        break;
      }
      case 6: {  // duplicate a run
        size_t at = pick(b.size()), n = std::min(b.size() - at, size_t(1 + rng() % 32));
        std::vector<uint8_t> run(b.begin() + long(at), b.begin() + long(at + n));
        b.insert(b.begin() + long(pick(b.size())), run.begin(), run.end());
        break;
      }
    }
  }
  return b;
}

TEST(GgufMalformed, RandomMutationsParseOrThrow) {
  std::vector<std::vector<uint8_t>> seeds = {testing::valid_raw().bytes(), testing::valid_full(3)};
  for (const auto& c : testing::malformed_corpus()) seeds.push_back(c.bytes);
  std::mt19937_64 rng(20261130);
  int parsed = 0, rejected = 0;
  for (int i = 0; i < 4000; ++i) {
    std::vector<uint8_t> b = mutate(seeds[rng() % seeds.size()], rng);
    try {
      GgufFile f = GgufFile::from_memory(std::move(b), "mutant");
      // Touch everything a caller would.
      for (const TensorInfo& t : f.tensors()) {
        auto d = f.tensor_data(t);
        ASSERT_EQ(d.size(), t.nbytes);
      }
      for (const auto& [k, v] : f.metadata()) (void)to_string(v, 4);
      ++parsed;
    } catch (const Error&) {
      ++rejected;
    } catch (const std::exception& e) {
      FAIL() << "mutation " << i << " threw a non-blockq exception: " << e.what();
    }
  }
  EXPECT_GT(parsed, 0);
  EXPECT_GT(rejected, 0);
}

}  // namespace
}  // namespace blockq::gguf
