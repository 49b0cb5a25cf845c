// libFuzzer target for the GGUF reader: parse arbitrary bytes, touch every value
// and tensor, and check that writer(reader(x)) is a fixed point. With
// BLOCKQ_GGUF_WRITE_SEEDS=DIR set it writes a seed corpus to DIR and exits.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "gguf/gguf.hpp"
#include "util/error.hpp"

namespace {

using namespace blockq;
using namespace blockq::gguf;

std::vector<uint8_t> pattern(size_t n, uint32_t seed) {
  std::vector<uint8_t> b(n);
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    b[i] = uint8_t(seed >> 24);
  }
  return b;
}

void add_tensor(GgufWriter& w, const std::string& name, std::vector<uint64_t> shape, Format f, uint32_t seed) {
  w.add_tensor(name, shape, f, pattern(size_t(tensor_nbytes(shape, f)), seed));
}

// Small valid files covering every value type, every format and a few layouts.
std::vector<std::pair<std::string, std::vector<uint8_t>>> seeds() {
  std::vector<std::pair<std::string, std::vector<uint8_t>>> out;
  {
    GgufWriter w;
    w.set_string("general.architecture", "llama");
    w.set_u32("llama.context_length", 128);
    w.set_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
    w.set_array_strings("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "\xe2\x96\x81" "a"});
    w.set_array_f32("tokenizer.ggml.scores", {0, 0, 0, -1});
    w.set_array_i32("tokenizer.ggml.token_type", {2, 3, 3, 1});
    w.set_bool("tokenizer.ggml.add_bos_token", true);
    out.emplace_back("metadata_only.gguf", w.to_bytes());
  }
  {
    GgufWriter w;
    w.set_u8("a", 1);
    w.set_i8("b", -1);
    w.set_u16("c", 2);
    w.set_i16("d", -2);
    w.set_i32("e", -3);
    w.set_u64("f", 4);
    w.set_i64("g", -4);
    w.set_f64("h", 0.5);
    Array a;
    a.values = std::vector<bool>{true, false};
    w.set_array("i", a);
    a.values = std::vector<uint64_t>{1, 2};
    w.set_array("j", a);
    a.values = std::vector<double>{1.5};
    w.set_array("k", a);
    a.values = std::vector<int16_t>{-5, 5};
    w.set_array("l", a);
    add_tensor(w, "x", {4}, Format::F32, 1);
    out.emplace_back("value_types.gguf", w.to_bytes());
  }
  for (Format f : kAllFormats) {
    GgufWriter w;
    w.set_u32("general.file_type", 0);
    const FormatTraits& tr = traits(f);
    add_tensor(w, "w", {tr.block_elems, 2}, f, tr.ggml_type);
    add_tensor(w, "v", {tr.block_elems}, f, tr.ggml_type + 7);
    out.emplace_back(std::string("format_") + std::string(tr.name) + ".gguf", w.to_bytes());
  }
  {
    GgufWriter w;
    w.set_alignment(64);
    add_tensor(w, "a", {3, 1, 1, 2}, Format::F16, 5);
    add_tensor(w, "b", {32, 1, 2}, Format::Q8_0, 6);
    add_tensor(w, "empty", {0}, Format::F32, 0);
    out.emplace_back("aligned64_rank4.gguf", w.to_bytes());
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* dir = std::getenv("BLOCKQ_GGUF_WRITE_SEEDS")) {
    for (const auto& [name, bytes] : seeds()) {
      std::string path = std::string(dir) + "/" + name;
      FILE* f = std::fopen(path.c_str(), "wb");
      if (!f || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) {
        std::fprintf(stderr, "cannot write %s\n", path.c_str());
        std::exit(1);
      }
      std::fclose(f);
      std::printf("%s (%zu bytes)\n", path.c_str(), bytes.size());
    }
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> first;
  try {
    GgufFile f = GgufFile::from_memory(std::vector<uint8_t>(data, data + size), "fuzz");
    GgufWriter w;
    w.copy_metadata(f);
    size_t text = 0;
    for (const auto& [k, v] : f.metadata()) text += to_string(v, 16).size() + describe_type(v).size();
    for (const TensorInfo& t : f.tensors()) {
      auto bytes = f.tensor_data(t);
      if (bytes.size() != t.nbytes) std::abort();
      w.add_tensor_view(t.name, t.shape, t.format, bytes);
    }
    (void)text;
    if (f.alignment() > 4096) return 0;  // legal, but rewriting would pad to gigabytes
    first = w.to_bytes();
  } catch (const blockq::Error&) {
    return 0;  // rejected cleanly
  }
  // Whatever the reader accepts, the writer reproduces, and the result is a
  // fixed point of read-then-write.
  GgufFile again = GgufFile::from_memory(first, "fuzz-rewritten");
  GgufWriter w2;
  w2.copy_metadata(again);
  for (const TensorInfo& t : again.tensors()) w2.add_tensor_view(t.name, t.shape, t.format, again.tensor_data(t));
  if (w2.to_bytes() != first) std::abort();
  return 0;
}
