// Builds valid GGUF samples and the malformed-GGUF corpus: each bad file starts
// from a valid one and corrupts one thing, and names the words its error must carry.
#include "gguf/corpus.hpp"

#include <cstring>
#include <random>

namespace blockq::gguf::testing {

std::vector<uint8_t> le32(uint32_t x) {
  std::vector<uint8_t> b(4);
  for (int i = 0; i < 4; ++i) b[i] = uint8_t(x >> (8 * i));
  return b;
}

std::vector<uint8_t> le64(uint64_t x) {
  std::vector<uint8_t> b(8);
  for (int i = 0; i < 8; ++i) b[i] = uint8_t(x >> (8 * i));
  return b;
}

std::vector<uint8_t> gstr(const std::string& s) {
  std::vector<uint8_t> b = le64(s.size());
  b.insert(b.end(), s.begin(), s.end());
  return b;
}

std::vector<uint8_t> cat(std::initializer_list<std::vector<uint8_t>> parts) {
  std::vector<uint8_t> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

std::vector<uint8_t> RawGguf::bytes() const {
  std::vector<uint8_t> b = cat({le32(magic), le32(version), le64(n_tensors.value_or(tensors.size())),
                                le64(n_kv.value_or(kvs.size()))});
  auto add = [&](const std::vector<uint8_t>& p) { b.insert(b.end(), p.begin(), p.end()); };
  for (const RawKv& kv : kvs) {
    add(gstr(kv.key));
    add(le32(kv.type));
    add(kv.payload);
  }
  for (const RawTensor& t : tensors) {
    add(gstr(t.name));
    add(le32(t.n_dims.value_or(uint32_t(t.shape.size()))));
    for (uint64_t d : t.shape) add(le64(d));
    add(le32(t.type));
    add(le64(t.offset));
  }
  while (b.size() % alignment) b.push_back(0);
  add(data);
  return b;
}

namespace {

// GGUF value type ids and ggml type ids, spelled out independently of the library.
enum : uint32_t { kU8 = 0, kI8, kU16, kI16, kU32, kI32, kF32, kBool, kString, kArray, kU64, kI64, kF64 };
enum : uint32_t { kGgmlF32 = 0, kGgmlQ8_0 = 8, kGgmlQ4_K = 12, kGgmlQ8_K = 15, kGgmlIQ2_XS = 17, kGgmlI32 = 26 };

std::vector<uint8_t> f32le(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return le32(u);
}

RawKv kv_u32(const std::string& k, uint32_t v) { return {k, kU32, le32(v)}; }
RawKv kv_string(const std::string& k, const std::string& v) { return {k, kString, gstr(v)}; }

RawKv kv_strings(const std::string& k, const std::vector<std::string>& v) {
  std::vector<uint8_t> p = cat({le32(kString), le64(v.size())});
  for (const auto& s : v) {
    auto e = gstr(s);
    p.insert(p.end(), e.begin(), e.end());
  }
  return {k, kArray, p};
}

RawKv kv_f32s(const std::string& k, const std::vector<float>& v) {
  std::vector<uint8_t> p = cat({le32(kF32), le64(v.size())});
  for (float f : v) {
    auto e = f32le(f);
    p.insert(p.end(), e.begin(), e.end());
  }
  return {k, kArray, p};
}

RawKv& kv_named(RawGguf& g, const std::string& key) {
  for (RawKv& kv : g.kvs)
    if (kv.key == key) return kv;
  std::abort();  // test helper misuse
}

BadCase bad(std::string name, const RawGguf& g, std::vector<std::string> expect) {
  return {std::move(name), g.bytes(), std::move(expect)};
}

BadCase bad_bytes(std::string name, std::vector<uint8_t> b, std::vector<std::string> expect) {
  return {std::move(name), std::move(b), std::move(expect)};
}

}  // namespace

RawGguf valid_raw() {
  RawGguf g;
  g.kvs.push_back(kv_string("general.architecture", "llama"));
  g.kvs.push_back(kv_u32("general.alignment", 32));
  g.kvs.push_back(kv_u32("llama.context_length", 128));
  g.kvs.push_back({"general.flag", kBool, {1}});
  g.kvs.push_back(kv_strings("tokenizer.ggml.tokens", {"<s>", "</s>", "a", "b"}));
  g.kvs.push_back(kv_f32s("tokenizer.ggml.scores", {0.f, -1.f, -2.f, -3.f}));
  // f32 [8, 2]: 64 bytes at 0; q8_0 [64, 2]: 4 blocks of 34 = 136 bytes at 64;
  // q4_K [256, 1]: one 144-byte block at 224 (64 + 136 padded to 32). End 368, padded 384.
  g.tensors.push_back({"tok_embd.weight", {8, 2}, std::nullopt, kGgmlF32, 0});
  g.tensors.push_back({"blk.0.attn_q.weight", {64, 2}, std::nullopt, kGgmlQ8_0, 64});
  g.tensors.push_back({"output.weight", {256, 1}, std::nullopt, kGgmlQ4_K, 224});
  std::mt19937 rng(7);
  g.data.resize(384);  // zero padding between and after the tensors
  for (auto [begin, end] : {std::pair{0, 64}, std::pair{64, 200}, std::pair{224, 368}})
    for (int i = begin; i < end; ++i) g.data[size_t(i)] = uint8_t(rng());
  return g;
}

std::vector<uint8_t> valid_full(uint32_t seed) {
  std::mt19937 rng(seed);
  GgufWriter w;
  w.set_string("general.architecture", "llama");
  w.set_u8("t.u8", 200);
  w.set_i8("t.i8", -100);
  w.set_u16("t.u16", 60000);
  w.set_i16("t.i16", -30000);
  w.set_u32("t.u32", 4000000000u);
  w.set_i32("t.i32", -2000000000);
  w.set_f32("t.f32", 1.5f);
  w.set_bool("t.bool", true);
  w.set_u64("t.u64", 1ull << 60);
  w.set_i64("t.i64", -(1ll << 60));
  w.set_f64("t.f64", -2.25);
  w.set_array_strings("tokenizer.ggml.tokens", {"<s>", "</s>", "hello", ""});
  w.set_array_f32("tokenizer.ggml.scores", {0.f, 1.f, -1.f, 0.5f});
  w.set_array_i32("tokenizer.ggml.token_type", {1, 3, 1, 1});
  for (Format f : kAllFormats) {
    const FormatTraits& tr = traits(f);
    std::vector<uint64_t> shape = {uint64_t(tr.block_elems) * (tr.quantized ? 1 : 8), 2};
    std::vector<uint8_t> bytes(size_t(tensor_nbytes(shape, f)));
    for (auto& b : bytes) b = uint8_t(rng());
    w.add_tensor(std::string("t.") + std::string(tr.name), shape, f, std::move(bytes));
  }
  return w.to_bytes();
}

std::vector<BadCase> malformed_corpus() {
  std::vector<BadCase> c;
  const RawGguf base = valid_raw();
  const std::vector<uint8_t> good = base.bytes();
  auto with = [&](auto edit) {
    RawGguf g = base;
    edit(g);
    return g;
  };

  // Header.
  c.push_back(bad_bytes("empty", {}, {"truncated", "offset 0"}));
  c.push_back(bad_bytes("three_bytes", {'G', 'G', 'U'}, {"truncated"}));
  c.push_back(bad("bad_magic_ggml", with([](RawGguf& g) { g.magic = 0x4c4d4747; }), {"bad magic", "offset 0"}));
  c.push_back(bad("bad_magic_swapped", with([](RawGguf& g) { g.magic = 0x47475546; }), {"bad magic"}));
  c.push_back(bad("version_1", with([](RawGguf& g) { g.version = 1; }), {"unsupported GGUF version 1", "offset 4"}));
  c.push_back(bad("version_4", with([](RawGguf& g) { g.version = 4; }), {"unsupported GGUF version 4"}));
  c.push_back(bad("version_big_endian", with([](RawGguf& g) { g.version = 0x03000000; }), {"big-endian"}));
  c.push_back(bad_bytes("header_truncated", {good.begin(), good.begin() + 20}, {"truncated", "header"}));
  c.push_back(bad("n_kv_huge", with([](RawGguf& g) { g.n_kv = 1ull << 62; }), {"metadata count", "too large"}));
  c.push_back(bad("n_kv_max", with([](RawGguf& g) { g.n_kv = ~0ull; }), {"metadata count", "too large"}));
  c.push_back(bad("n_tensors_max", with([](RawGguf& g) { g.n_tensors = ~0ull; }), {"tensor count", "too large"}));
  c.push_back(bad("n_kv_one_more", with([](RawGguf& g) {
                    g.n_kv = g.kvs.size() + 1;
                    g.tensors.clear();
                    g.data.clear();
                    g.alignment = 1;
                  }),
                  {"truncated", "metadata key #6"}));

  // Metadata.
  c.push_back(bad("empty_key", with([](RawGguf& g) { g.kvs[0].key.clear(); }), {"metadata key #0 is empty"}));
  {
    // A key whose length prefix claims 2^40 bytes: patch the first key's length.
    std::vector<uint8_t> b = good;
    auto len = le64(1ull << 40);
    std::copy(len.begin(), len.end(), b.begin() + 24);
    c.push_back(bad_bytes("key_length_2e40", b, {"metadata key #0 length 1099511627776", "runs past the end", "offset 24"}));
    len = le64(~0ull);
    std::copy(len.begin(), len.end(), b.begin() + 24);
    c.push_back(bad_bytes("key_length_max", b, {"metadata key #0", "runs past the end"}));
  }
  c.push_back(bad("duplicate_key", with([](RawGguf& g) { g.kvs.push_back(kv_u32("llama.context_length", 5)); }),
                  {"duplicate metadata key 'llama.context_length'"}));
  c.push_back(bad("value_type_13", with([](RawGguf& g) { kv_named(g, "llama.context_length").type = 13; }),
                  {"unknown value type 13", "llama.context_length"}));
  c.push_back(bad("value_type_max", with([](RawGguf& g) { kv_named(g, "general.flag").type = 0xffffffffu; }),
                  {"unknown value type 4294967295"}));
  c.push_back(bad("string_length_past_end",
                  with([](RawGguf& g) { kv_named(g, "general.architecture").payload = cat({le64(100000), gstr("x")}); }),
                  {"value of 'general.architecture'", "runs past the end"}));
  c.push_back(bad("array_u32_length_past_end",
                  with([](RawGguf& g) { kv_named(g, "tokenizer.ggml.scores").payload = cat({le32(kU32), le64(1ull << 62)}); }),
                  {"array length 4611686018427387904", "tokenizer.ggml.scores", "runs past the end"}));
  c.push_back(bad("array_u64_length_overflow",
                  with([](RawGguf& g) { kv_named(g, "tokenizer.ggml.scores").payload = cat({le32(kU64), le64(~0ull >> 2)}); }),
                  {"array length", "runs past the end"}));
  c.push_back(bad("array_strings_length_huge",
                  with([](RawGguf& g) { kv_named(g, "tokenizer.ggml.tokens").payload = cat({le32(kString), le64(~0ull)}); }),
                  {"array length 18446744073709551615", "tokenizer.ggml.tokens"}));
  c.push_back(bad("array_string_element_past_end",
                  with([](RawGguf& g) { kv_named(g, "tokenizer.ggml.tokens").payload = cat({le32(kString), le64(2), gstr("a"), le64(1ull << 33)}); }),
                  {"element of array 'tokenizer.ggml.tokens'", "runs past the end"}));
  c.push_back(bad("array_elem_type_unknown",
                  with([](RawGguf& g) { kv_named(g, "tokenizer.ggml.scores").payload[0] = 77; }),
                  {"unknown array element type 77"}));
  c.push_back(bad("array_nested",
                  with([](RawGguf& g) { kv_named(g, "tokenizer.ggml.scores").payload[0] = kArray; }),
                  {"nested arrays"}));
  c.push_back(bad("bool_2", with([](RawGguf& g) { kv_named(g, "general.flag").payload = {2}; }),
                  {"invalid bool value 2", "general.flag"}));
  c.push_back(bad("bool_array_bad",
                  with([](RawGguf& g) { g.kvs.push_back({"x.flags", kArray, cat({le32(kBool), le64(3), {1, 0, 9}})}); }),
                  {"invalid bool value 9", "x.flags"}));
  c.push_back(bad("alignment_string",
                  with([](RawGguf& g) { kv_named(g, "general.alignment") = kv_string("general.alignment", "32"); }),
                  {"general.alignment", "expected u32"}));
  c.push_back(bad("alignment_zero", with([](RawGguf& g) { kv_named(g, "general.alignment").payload = le32(0); }),
                  {"general.alignment 0", "power of two"}));
  c.push_back(bad("alignment_48", with([](RawGguf& g) { kv_named(g, "general.alignment").payload = le32(48); }),
                  {"general.alignment 48", "power of two"}));
  c.push_back(bad_bytes("cut_early_in_metadata", {good.begin(), good.begin() + 90}, {"metadata count 6 is too large"}));
  c.push_back(bad_bytes("cut_in_metadata", {good.begin(), good.begin() + 160}, {"truncated", "value type of 'general.flag'", "offset 158"}));

  // Tensor infos.
  c.push_back(bad("dims_0", with([](RawGguf& g) { g.tensors[1].shape.clear(); }),
                  {"'blk.0.attn_q.weight' has 0 dims"}));
  c.push_back(bad("dims_5", with([](RawGguf& g) { g.tensors[0].shape = {8, 2, 1, 1, 1}; }),
                  {"'tok_embd.weight' has 5 dims"}));
  c.push_back(bad("dims_count_huge", with([](RawGguf& g) { g.tensors[0].n_dims = 0x7fffffff; }),
                  {"has 2147483647 dims"}));
  c.push_back(bad("type_unknown_99", with([](RawGguf& g) { g.tensors[2].type = 99; }),
                  {"'output.weight' has unknown ggml type 99"}));
  c.push_back(bad("type_removed_4", with([](RawGguf& g) { g.tensors[2].type = 4; }), {"unknown ggml type 4"}));
  c.push_back(bad("type_q8_K", with([](RawGguf& g) { g.tensors[2].type = kGgmlQ8_K; }),
                  {"q8_K", "does not support", "output.weight"}));
  c.push_back(bad("type_iq2_xs", with([](RawGguf& g) { g.tensors[2].type = kGgmlIQ2_XS; }), {"iq2_xs", "does not support"}));
  c.push_back(bad("type_i32", with([](RawGguf& g) { g.tensors[0].type = kGgmlI32; }), {"i32", "does not support"}));
  c.push_back(bad("row_not_block_multiple", with([](RawGguf& g) { g.tensors[1].shape = {33, 2}; }),
                  {"row length 33", "block size 32"}));
  c.push_back(bad("row_not_superblock_multiple", with([](RawGguf& g) { g.tensors[2].shape = {128, 2}; }),
                  {"row length 128", "block size 256"}));
  c.push_back(bad("shape_product_overflow", with([](RawGguf& g) { g.tensors[0].shape = {1ull << 32, 1ull << 32}; }),
                  {"overflows"}));
  c.push_back(bad("shape_dim_above_int64", with([](RawGguf& g) { g.tensors[0].shape = {~0ull}; }), {"overflows"}));
  c.push_back(bad("shape_bytes_overflow", with([](RawGguf& g) { g.tensors[0].shape = {1ull << 31, 1ull << 31}; }),
                  {"byte size overflows"}));
  c.push_back(bad("data_past_end_by_shape", with([](RawGguf& g) { g.tensors[2].shape = {256, 2}; }),
                  {"'output.weight'", "runs past the end"}));
  c.push_back(bad("data_past_end_by_offset", with([](RawGguf& g) { g.tensors[0].offset = 1ull << 40; }),
                  {"'tok_embd.weight'", "runs past the end"}));
  c.push_back(bad("data_offset_wraps", with([](RawGguf& g) { g.tensors[0].offset = ~0ull - 31; }),
                  {"runs past the end"}));
  c.push_back(bad("misaligned_offset", with([](RawGguf& g) { g.tensors[1].offset = 80; }),
                  {"offset 80 is misaligned", "alignment 32"}));
  c.push_back(bad("overlap", with([](RawGguf& g) { g.tensors[1].offset = 32; }), {"overlaps", "tok_embd.weight"}));
  c.push_back(bad("overlap_same_offset", with([](RawGguf& g) { g.tensors[2].offset = 64; }), {"overlaps"}));
  c.push_back(bad("duplicate_tensor", with([](RawGguf& g) { g.tensors[2].name = "tok_embd.weight"; }),
                  {"duplicate tensor name 'tok_embd.weight'"}));
  c.push_back(bad("empty_tensor_name", with([](RawGguf& g) { g.tensors[1].name.clear(); }), {"tensor #1 has an empty name"}));
  c.push_back(bad("tensor_name_64", with([](RawGguf& g) { g.tensors[1].name = std::string(64, 'x'); }),
                  {"tensor #1 name is too long", "64 bytes"}));
  {
    // The first tensor info starts right after the metadata: patch its name length.
    RawGguf head = base;
    head.tensors.clear();
    head.data.clear();
    head.alignment = 1;
    size_t at = head.bytes().size();
    std::vector<uint8_t> b = good;
    auto len = le64(1ull << 50);
    std::copy(len.begin(), len.end(), b.begin() + long(at));
    c.push_back(bad_bytes("tensor_name_past_end", b,
                          {"name of tensor #0 length 1125899906842624", "runs past the end", "offset " + std::to_string(at)}));
  }
  c.push_back(bad_bytes("truncated_in_tensor_infos", {good.begin(), good.end() - 384 - 40},
                        {"name of tensor #2 length 13", "runs past the end"}));
  c.push_back(bad_bytes("truncated_data", {good.begin(), good.end() - 100}, {"'output.weight'", "runs past the end"}));
  return c;
}

}  // namespace blockq::gguf::testing
