// GGUF writer -> reader round trips: every value type, every format, alignments,
// files on disk, typed getters and the writer's own checks.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "gguf/corpus.hpp"
#include "gguf/gguf.hpp"
#include "util/error.hpp"

namespace blockq::gguf {
namespace {

std::vector<uint8_t> random_bytes(size_t n, std::mt19937& rng) {
  std::vector<uint8_t> b(n);
  for (auto& x : b) x = uint8_t(rng());
  return b;
}

template <typename T>
Array make_array(std::vector<T> v) {
  Array a;
  a.values = std::move(v);
  return a;
}

// Expects `fn` to throw blockq::Error whose message contains every word.
template <typename Fn>
void expect_error(Fn&& fn, std::initializer_list<std::string> words) {
  try {
    fn();
    ADD_FAILURE() << "no blockq::Error thrown";
  } catch (const Error& e) {
    std::string msg = e.what();
    for (const auto& w : words) EXPECT_NE(msg.find(w), std::string::npos) << "'" << w << "' not in: " << msg;
  }
}

TEST(GgufRoundTrip, EveryValueType) {
  GgufWriter w;
  w.set_u8("a.u8", 255);
  w.set_i8("a.i8", -128);
  w.set_u16("a.u16", 65535);
  w.set_i16("a.i16", -32768);
  w.set_u32("a.u32", 0xdeadbeefu);
  w.set_i32("a.i32", -123456789);
  w.set_f32("a.f32", -0.1f);
  w.set_bool("a.bool_t", true);
  w.set_bool("a.bool_f", false);
  w.set_string("a.string", std::string("h\xc3\xa9llo\0world", 12));
  w.set_string("a.empty_string", "");
  w.set_u64("a.u64", ~0ull);
  w.set_i64("a.i64", INT64_MIN);
  w.set_f64("a.f64", 6.02214076e23);
  w.set_array("b.u8", make_array<uint8_t>({0, 1, 255}));
  w.set_array("b.i8", make_array<int8_t>({-1, 0, 127}));
  w.set_array("b.u16", make_array<uint16_t>({1, 65535}));
  w.set_array("b.i16", make_array<int16_t>({-2, 2}));
  w.set_array_u32("b.u32", {7, 8, 9});
  w.set_array_i32("b.i32", {-7, 8, -9});
  w.set_array_f32("b.f32", {1.f, -2.5f, 1e-30f});
  w.set_array("b.bool", make_array<bool>({true, false, true, true}));
  w.set_array_strings("b.string", {"", "x", std::string(300, 'y'), "\xe2\x96\x81the"});
  w.set_array("b.u64", make_array<uint64_t>({0, ~0ull}));
  w.set_array_i64("b.i64", {INT64_MIN, INT64_MAX});
  w.set_array("b.f64", make_array<double>({0.5, -1e300}));
  w.set_array("b.empty_f32", make_array<float>({}));
  w.set_array_strings("b.empty_string", {});

  GgufFile f = GgufFile::from_memory(w.to_bytes(), "values.gguf");
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.alignment(), 32u);
  ASSERT_EQ(f.metadata().size(), w.metadata().size());
  for (size_t i = 0; i < w.metadata().size(); ++i) {
    EXPECT_EQ(f.metadata()[i].first, w.metadata()[i].first);
    EXPECT_TRUE(f.metadata()[i].second == w.metadata()[i].second) << w.metadata()[i].first;
  }
  // Every scalar type and every element type appears.
  std::vector<bool> scalar(kValueTypeCount), elem(kValueTypeCount);
  for (const auto& [k, v] : f.metadata()) {
    scalar[v.index()] = true;
    if (auto* a = std::get_if<Array>(&v)) elem[size_t(a->elem_type())] = true;
  }
  for (uint32_t t = 0; t < kValueTypeCount; ++t) {
    EXPECT_TRUE(scalar[t]) << value_type_name(t);
    if (t != uint32_t(ValueType::Array)) {
      EXPECT_TRUE(elem[t]) << value_type_name(t);
    }
  }
  EXPECT_EQ(f.get_string("a.string").size(), 12u);
  EXPECT_EQ(f.get_array_strings("b.string")[2], std::string(300, 'y'));
  EXPECT_TRUE(f.tensors().empty());
}

TEST(GgufRoundTrip, EveryFormatAndRank) {
  std::mt19937 rng(11);
  GgufWriter w;
  w.set_string("general.architecture", "test");
  struct Want {
    std::string name;
    std::vector<uint64_t> shape;
    Format f;
    std::vector<uint8_t> bytes;
  };
  std::vector<Want> wants;
  for (Format f : kAllFormats) {
    const FormatTraits& tr = traits(f);
    const uint64_t be = tr.block_elems;
    std::vector<std::vector<uint64_t>> shapes = {{be * 3}, {be * 2, 5}, {be, 3, 2}, {be * 2, 1, 2, 3}};
    for (size_t i = 0; i < shapes.size(); ++i) {
      uint64_t n = shapes[i][0] / be * tr.block_bytes;
      for (size_t d = 1; d < shapes[i].size(); ++d) n *= shapes[i][d];
      Want wt{std::string(tr.name) + ".r" + std::to_string(shapes[i].size()), shapes[i], f,
              random_bytes(size_t(n), rng)};
      EXPECT_EQ(tensor_nbytes(wt.shape, f), n);
      w.add_tensor(wt.name, wt.shape, f, wt.bytes);
      wants.push_back(std::move(wt));
    }
  }
  GgufFile f = GgufFile::from_memory(w.to_bytes(), "formats.gguf");
  ASSERT_EQ(f.tensors().size(), wants.size());
  for (size_t i = 0; i < wants.size(); ++i) {
    const TensorInfo& t = f.tensors()[i];
    EXPECT_EQ(t.name, wants[i].name);
    EXPECT_EQ(t.shape, wants[i].shape);
    EXPECT_EQ(t.format, wants[i].f);
    EXPECT_EQ(t.ggml_type, traits(wants[i].f).ggml_type);
    EXPECT_EQ(t.nbytes, wants[i].bytes.size());
    EXPECT_EQ(t.offset % f.alignment(), 0u);
    EXPECT_EQ(t.rows() * t.shape[0], t.n_elems());
    auto data = f.tensor_data(t);
    EXPECT_TRUE(std::equal(data.begin(), data.end(), wants[i].bytes.begin(), wants[i].bytes.end())) << t.name;
    EXPECT_EQ(&f.tensor(t.name), &t);
  }
  EXPECT_EQ(f.data_offset() % 32, 0u);
  EXPECT_EQ(f.find_tensor("nope"), nullptr);
  expect_error([&] { f.tensor("nope"); }, {"formats.gguf", "nope"});
}

TEST(GgufRoundTrip, Alignments) {
  std::mt19937 rng(3);
  for (uint32_t align : {1u, 8u, 64u, 4096u}) {
    GgufWriter w;
    w.set_alignment(align);
    w.add_tensor("a", {3}, Format::F32, random_bytes(12, rng));
    w.add_tensor("b", {32, 1}, Format::Q8_0, random_bytes(34, rng));
    w.add_tensor("c", {5}, Format::F16, random_bytes(10, rng));
    std::vector<uint8_t> bytes = w.to_bytes();
    EXPECT_EQ(bytes.size() % align, 0u);
    GgufFile f = GgufFile::from_memory(bytes, "aligned.gguf");
    EXPECT_EQ(f.alignment(), align);
    EXPECT_EQ(f.data_offset() % align, 0u);
    for (const TensorInfo& t : f.tensors()) EXPECT_EQ(t.offset % align, 0u) << align;
    EXPECT_EQ(f.get_u32("general.alignment"), align);
  }
}

TEST(GgufRoundTrip, MatchesIndependentEncoder) {
  // The raw encoder in corpus.cpp spells the layout out by hand; the writer must
  // produce the same bytes for the same content.
  testing::RawGguf raw = testing::valid_raw();
  GgufFile ref = GgufFile::from_memory(raw.bytes(), "raw.gguf");
  GgufWriter w;
  w.copy_metadata(ref);
  for (const TensorInfo& t : ref.tensors()) w.add_tensor_view(t.name, t.shape, t.format, ref.tensor_data(t));
  EXPECT_EQ(w.to_bytes(), raw.bytes());
  EXPECT_EQ(ref.get_string("general.architecture"), "llama");
  EXPECT_EQ(ref.get_array_strings("tokenizer.ggml.tokens").size(), 4u);
  EXPECT_EQ(ref.tensors()[2].format, Format::Q4_K);
  EXPECT_EQ(ref.tensors()[2].offset, 224u);
}

TEST(GgufRoundTrip, WriteAndOpenFile) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("blockq_gguf_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                               "_" + std::to_string(std::random_device{}()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "model.gguf").string();
  std::vector<uint8_t> bytes = testing::valid_full(5);
  GgufFile mem = GgufFile::from_memory(bytes, "mem");
  GgufWriter w;
  w.copy_metadata(mem);
  for (const TensorInfo& t : mem.tensors()) w.add_tensor_view(t.name, t.shape, t.format, mem.tensor_data(t));
  w.write(path);
  std::optional<GgufFile> copy;
  {
    GgufFile f = GgufFile::open(path);
    EXPECT_EQ(f.name(), path);
    EXPECT_TRUE(std::equal(f.bytes().begin(), f.bytes().end(), bytes.begin(), bytes.end()));
    copy = f;  // shares the mapping
  }
  ASSERT_EQ(copy->tensors().size(), mem.tensors().size());
  for (size_t i = 0; i < mem.tensors().size(); ++i) {
    auto a = copy->tensor_data(copy->tensors()[i]);
    auto b = mem.tensor_data(mem.tensors()[i]);
    EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end()));
  }
  expect_error([&] { GgufFile::open((dir / "missing.gguf").string()); }, {"missing.gguf", "cannot open"});
  expect_error([&] { GgufFile::open(dir.string()); }, {"not a regular file"});
  { std::ofstream(dir / "empty.gguf"); }
  expect_error([&] { GgufFile::open((dir / "empty.gguf").string()); }, {"empty.gguf", "truncated"});
  copy.reset();
  std::filesystem::remove_all(dir);
}

TEST(GgufRoundTrip, ZeroTensorsAndEmptyTensors) {
  GgufWriter w;
  w.set_u32("x", 1);
  GgufFile f = GgufFile::from_memory(w.to_bytes(), "none.gguf");
  EXPECT_TRUE(f.tensors().empty());
  GgufWriter w2;
  w2.add_tensor("empty", {0, 4}, Format::Q4_0, {});
  w2.add_tensor("one", {1}, Format::F32, {1, 2, 3, 4});
  GgufFile g = GgufFile::from_memory(w2.to_bytes(), "empty.gguf");
  EXPECT_EQ(g.tensors()[0].nbytes, 0u);
  EXPECT_EQ(g.tensors()[0].rows(), 0u);
  EXPECT_TRUE(g.tensor_data(g.tensors()[0]).empty());
  EXPECT_EQ(g.tensor_data(g.tensors()[1])[3], 4);
}

TEST(GgufGetters, WideningAndErrors) {
  GgufWriter w;
  w.set_u8("k.u8", 7);
  w.set_i32("k.neg", -5);
  w.set_u64("k.big", 1ull << 40);
  w.set_f64("k.f64", 0.25);
  w.set_string("k.s", "v");
  w.set_bool("k.b", true);
  w.set_array("k.u16s", make_array<uint16_t>({1, 2}));
  w.set_array("k.u64s", make_array<uint64_t>({~0ull}));
  GgufFile f = GgufFile::from_memory(w.to_bytes(), "getters.gguf");
  EXPECT_EQ(f.get_u32("k.u8"), 7u);
  EXPECT_EQ(f.get_i64("k.u8"), 7);
  EXPECT_EQ(f.get_i32("k.neg"), -5);
  EXPECT_EQ(f.get_i64("k.big"), int64_t(1) << 40);
  EXPECT_EQ(f.get_u64("k.big"), uint64_t(1) << 40);
  EXPECT_FLOAT_EQ(f.get_f32("k.f64"), 0.25f);
  EXPECT_EQ(f.get_string("k.s"), "v");
  EXPECT_TRUE(f.get_bool("k.b"));
  EXPECT_EQ(f.get_array_ints("k.u16s"), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(f.get_u32_or("k.missing", 9u), 9u);
  EXPECT_EQ(f.get_string_or("k.missing", "d"), "d");
  EXPECT_EQ(f.get_i64_or("k.neg", 0), -5);
  EXPECT_FLOAT_EQ(f.get_f32_or("k.missing", 1.5f), 1.5f);
  EXPECT_TRUE(f.get_bool_or("k.missing", true));
  EXPECT_EQ(f.find("k.missing"), nullptr);
  expect_error([&] { f.get_u32("k.missing"); }, {"getters.gguf", "'k.missing'", "missing"});
  expect_error([&] { f.get_u32("k.neg"); }, {"getters.gguf", "'k.neg'", "i32"});
  expect_error([&] { f.get_u32("k.big"); }, {"'k.big'", "u64"});
  expect_error([&] { f.get_i32("k.big"); }, {"'k.big'"});
  expect_error([&] { f.get_string("k.u8"); }, {"'k.u8'", "has type u8", "expected string"});
  expect_error([&] { f.get_bool("k.s"); }, {"'k.s'", "bool"});
  expect_error([&] { f.get_f32("k.s"); }, {"'k.s'", "f32"});
  expect_error([&] { f.get_array("k.s"); }, {"'k.s'", "array"});
  expect_error([&] { f.get_array_strings("k.u16s"); }, {"array<u16>[2]", "array<string>"});
  expect_error([&] { f.get_array_f32("k.u16s"); }, {"'k.u16s'"});
  expect_error([&] { f.get_array_i32("k.u16s"); }, {"'k.u16s'"});
  expect_error([&] { f.get_array_ints("k.u64s"); }, {"'k.u64s'"});
  expect_error([&] { f.get_u32_or("k.s", 1); }, {"'k.s'"});
}

TEST(GgufValue, Printing) {
  Array a = make_array<std::string>({"a", "b\"", "c", "d", "e"});
  EXPECT_EQ(to_string(Value(a), 2), "[\"a\", \"b\\\"\", ... (5 total)]");
  EXPECT_EQ(to_string(Value(a), 0), "[... (5 total)]");
  EXPECT_EQ(describe_type(Value(a)), "array<string>[5]");
  EXPECT_EQ(to_string(Value(uint8_t(3))), "3");
  EXPECT_EQ(to_string(Value(int8_t(-3))), "-3");
  EXPECT_EQ(to_string(Value(true)), "true");
  EXPECT_EQ(to_string(Value(std::string("x\ny"))), "\"x\\ny\"");
  EXPECT_EQ(to_string(Value(make_array<float>({1.5f}))), "[1.5]");
  EXPECT_EQ(value_type_name(ValueType::F64), "f64");
  EXPECT_EQ(value_type_name(99), "type 99");
  EXPECT_EQ(ggml_type_name(10), "q2_K");
  EXPECT_EQ(ggml_type_name(4), std::nullopt);
  EXPECT_EQ(ggml_type_name(1000), std::nullopt);
}

TEST(GgufWriter, RejectsBadInput) {
  GgufWriter w;
  w.add_tensor("t", {32, 2}, Format::Q8_0, std::vector<uint8_t>(68));
  expect_error([&] { w.add_tensor("t", {4}, Format::F32, std::vector<uint8_t>(16)); }, {"duplicate tensor name 't'"});
  expect_error([&] { w.add_tensor("u", {4}, Format::F32, std::vector<uint8_t>(15)); }, {"'u'", "needs 16 bytes, got 15"});
  expect_error([&] { w.add_tensor("u", {33}, Format::Q8_0, std::vector<uint8_t>(34)); }, {"row length 33"});
  expect_error([&] { w.add_tensor("u", {}, Format::F32, {}); }, {"0 dims"});
  expect_error([&] { w.add_tensor("u", {1, 1, 1, 1, 1}, Format::F32, std::vector<uint8_t>(4)); }, {"5 dims"});
  expect_error([&] { w.add_tensor(std::string(64, 'n'), {1}, Format::F32, std::vector<uint8_t>(4)); }, {"too long"});
  expect_error([&] { w.add_tensor("", {1}, Format::F32, std::vector<uint8_t>(4)); }, {"empty tensor name"});
  expect_error([&] { w.set_alignment(24); }, {"power of two"});
  expect_error([&] { w.set_alignment(0); }, {"power of two"});
  expect_error([&] { w.set_string("general.alignment", "32"); }, {"general.alignment must be u32"});
  expect_error([&] { w.set_u32("", 1); }, {"empty metadata key"});
  Array nested;
  nested.values = std::monostate{};
  expect_error([&] { w.set_array("n", nested); }, {"nested arrays"});
  expect_error([&] { tensor_nbytes(std::vector<uint64_t>{255}, Format::Q4_K); }, {"row length 255"});
  EXPECT_EQ(w.tensor_count(), 1u);
}

TEST(GgufWriter, SetReplacesInPlaceAndRemove) {
  GgufWriter w;
  w.set_u32("a", 1);
  w.set_u32("b", 2);
  w.set_string("a", "now a string");
  ASSERT_EQ(w.metadata().size(), 2u);
  EXPECT_EQ(w.metadata()[0].first, "a");
  EXPECT_EQ(std::get<std::string>(w.metadata()[0].second), "now a string");
  EXPECT_TRUE(w.remove("a"));
  EXPECT_FALSE(w.remove("a"));
  EXPECT_EQ(w.find("a"), nullptr);
  EXPECT_NE(w.find("b"), nullptr);
  EXPECT_EQ(w.alignment(), 32u);
  w.set_alignment(128);
  EXPECT_EQ(w.alignment(), 128u);
}

}  // namespace
}  // namespace blockq::gguf
