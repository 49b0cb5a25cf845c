// Kernel contracts: a kernel's manifest (inputs, outputs, attributes, options,
// features), its test cases and bench cases as JSON, a schema check that names
// the file and the JSON path of any problem, and the materialisation of a
// case's input tensors (explicit values or seeded random generators).
#pragma once
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "quant/format.hpp"

namespace blockq::contract {

using json = nlohmann::json;
using Shape = std::vector<int64_t>;

// One input or output of a kernel.
struct TensorDecl {
  std::string name;
  std::vector<std::string> dtypes;  // logical dtypes accepted ("int32", "q8_0", ...)
  std::string storage;              // how the GPU holds it ("array<u32>, int64 as lo/hi pairs")
  int rank_min = 0, rank_max = -1;  // -1: no upper bound
  std::string shape;                // the rule, e.g. "data.shape[:g] + indices.shape + ..."
  bool optional = false;
  std::string description;
};

// One attribute (ONNX semantics) or blockq option (output dtype, workgroup size).
struct ParamDecl {
  std::string name;
  std::string type;  // "int", "float" or "string"
  json default_value;  // null: required
  std::vector<json> allowed;  // empty: any value of the type
  std::string rule;           // a constraint in words ("power of two >= 16")
  std::string description;
};

struct Manifest {
  std::string file;  // where it came from, for messages
  std::string id, version, summary;
  std::vector<TensorDecl> inputs, outputs;
  std::vector<ParamDecl> attributes, options;
  std::vector<std::string> features_required, features_optional;
  json raw;
  const TensorDecl* input(std::string_view name) const;
};

// A seeded random generator: integers in [min, max] (inclusive), floats in
// [min, max), ggml blocks with random codes and their scale fields in [min, max).
struct RandomInit {
  uint64_t seed = 0;
  std::optional<double> min, max;
};

// An input tensor of a case: explicit values, or a random generator.
struct TensorInit {
  std::string dtype;
  Shape shape;
  std::optional<json> values;  // numbers (ggml dtypes: f32 values, quantized by the reference)
  std::optional<RandomInit> random;
};

// Normwise relative errors allowed: max |got - ref| / max |ref|.
struct Tolerance {
  double vs_twin = 0;
  double vs_ref = 0;
};

struct TestCase {
  std::string name;
  json attributes = json::object();  // every manifest attribute, defaults filled in
  json options = json::object();     // every manifest option, defaults filled in
  std::map<std::string, TensorInit> inputs;
  Tolerance tolerance;
  std::map<std::string, std::vector<double>> expected;  // optional explicit outputs
  std::vector<std::string> tags;  // e.g. "large": left out of exports
  std::string expect_error;       // non-empty: the call must throw blockq::Error containing it
};

struct TestFile {
  std::string file, kernel;
  std::vector<TestCase> cases;
};

struct BenchCase {
  std::string name;
  json attributes = json::object();
  json options = json::object();
  std::map<std::string, TensorInit> inputs;
  int samples = 20;
  std::vector<std::string> tags;
};

struct BenchFile {
  std::string file, kernel;
  std::vector<BenchCase> cases;
  json tuning = json::object();  // option name -> values worth trying
};

// Parse and check; a malformed file throws blockq::Error
// "FILE: $.json.path: what is wrong".
Manifest parse_manifest(std::string_view text, const std::string& file);
// Cases are checked against the manifest: known attribute/option/input names,
// allowed values, dtypes and ranks, required inputs present, unique names.
TestFile parse_tests(std::string_view text, const std::string& file, const Manifest& m);
BenchFile parse_bench(std::string_view text, const std::string& file, const Manifest& m);

// A materialised tensor: the little-endian bytes of its dtype (ggml dtypes:
// raw blocks, shape [rows, cols] in elements).
struct HostTensor {
  std::string dtype;
  Shape shape;
  std::vector<uint8_t> bytes;
  int64_t numel() const;
  template <typename T>
  std::vector<T> as() const {
    std::vector<T> v(bytes.size() / sizeof(T));
    if (!v.empty()) std::memcpy(v.data(), bytes.data(), v.size() * sizeof(T));
    return v;
  }
};
HostTensor materialize(const TensorInit& t, const std::string& what);

// The ggml format of a dtype name ("q8_0", "float16" -> F16, "float32" -> F32),
// if it is one of the table formats.
std::optional<Format> ggml_dtype(std::string_view dtype);
// Bytes per element of a plain dtype; 0 for ggml block dtypes.
size_t dtype_bytes(std::string_view dtype);

// Random ggml rows: `rows` rows of `cols` elements of `f`, row r generated from
// its own splitmix64 stream (seed, r): random code bytes, every f16 scale field
// uniform in [lo, hi) (never NaN or inf). out: rows * row_bytes(f, cols) bytes.
void random_rows(Format f, uint64_t rows, uint64_t cols, uint64_t seed, double lo, double hi,
                 std::span<uint8_t> out);

// splitmix64: the small fast generator behind every random tensor.
struct SplitMix64 {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return double(next() >> 11) * 0x1p-53; }  // [0, 1)
};

}  // namespace blockq::contract
