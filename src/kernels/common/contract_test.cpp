// Schema checks of kernel contracts: malformed manifests, test and bench files
// are rejected with the file name and the JSON path of the problem; case
// tensors materialise deterministically.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "kernels/common/contract.hpp"
#include "util/error.hpp"

namespace blockq::contract {
namespace {

const char* kManifest = R"({
  "id": "test.Op", "version": "1.2.3", "summary": "a test op",
  "inputs": [
    {"name": "x", "dtypes": ["float32"], "storage": "array<f32>", "rank": {"min": 1, "max": 2}, "shape": "[n]"},
    {"name": "idx", "dtypes": ["int32", "int64"], "storage": "array<u32>", "rank": {"min": 0}, "shape": "any"},
    {"name": "zp", "dtypes": ["uint8"], "storage": "array<u32>", "rank": 1, "shape": "[n]", "optional": true}
  ],
  "outputs": [{"name": "y", "dtypes": ["float32"], "storage": "array<f32>", "rank": 1, "shape": "[n]"}],
  "attributes": [{"name": "bits", "type": "int", "default": 4, "allowed": [4, 8]},
                 {"name": "mode", "type": "string"}],
  "options": [{"name": "wg", "type": "int", "default": 0}],
  "features": {"optional": ["timestamp-query"]}
})";

// Expects parsing to throw blockq::Error whose message contains every part.
template <class F>
void expect_error(F&& f, std::initializer_list<std::string> parts) {
  try {
    f();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    for (const auto& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  const auto at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

TEST(Contract, ValidManifestParses) {
  const Manifest m = parse_manifest(kManifest, "m.json");
  EXPECT_EQ(m.id, "test.Op");
  ASSERT_EQ(m.inputs.size(), 3u);
  EXPECT_EQ(m.inputs[0].rank_max, 2);
  EXPECT_EQ(m.inputs[1].rank_max, -1);
  EXPECT_TRUE(m.inputs[2].optional);
  EXPECT_EQ(m.attributes[0].default_value, 4);
  EXPECT_TRUE(m.attributes[1].default_value.is_null());
}

TEST(Contract, BrokenManifestsNameFileAndPath) {
  const std::string ok = kManifest;
  expect_error([&] { parse_manifest("{ \"id\": ", "bad.json"); }, {"bad.json", "not valid JSON"});
  expect_error([&] { parse_manifest("[]", "m.json"); }, {"m.json: $: expected an object, got an array"});
  expect_error([&] { parse_manifest(replace(ok, "\"id\": \"test.Op\", ", ""), "m.json"); },
               {"m.json: $: missing required key \"id\""});
  expect_error([&] { parse_manifest(replace(ok, "\"1.2.3\"", "\"1.2\""), "m.json"); },
               {"$.version", "MAJOR.MINOR.PATCH"});
  expect_error([&] { parse_manifest(replace(ok, "\"a test op\",", "\"a test op\", \"colour\": 1,"), "m.json"); },
               {"m.json: $: unknown key \"colour\""});
  expect_error([&] { parse_manifest(replace(ok, "[\"int32\", \"int64\"]", "[\"int32\", \"int65\"]"), "m.json"); },
               {"m.json: $.inputs[1].dtypes[1]: unknown dtype \"int65\""});
  expect_error([&] { parse_manifest(replace(ok, "\"rank\": {\"min\": 1, \"max\": 2}", "\"rank\": {\"min\": 3, \"max\": 2}"), "m.json"); },
               {"$.inputs[0].rank", "max is below min"});
  expect_error([&] { parse_manifest(replace(ok, "\"storage\": \"array<f32>\", \"rank\": {", "\"storage\": 5, \"rank\": {"), "m.json"); },
               {"$.inputs[0].storage: expected a string, got an integer"});
  expect_error([&] { parse_manifest(replace(ok, "\"default\": 4,", "\"default\": 5,"), "m.json"); },
               {"$.attributes[0].default", "value 5 of \"bits\" is not allowed"});
  expect_error([&] { parse_manifest(replace(ok, "\"type\": \"string\"", "\"type\": \"str\""), "m.json"); },
               {"$.attributes[1].type"});
  expect_error([&] { parse_manifest(replace(ok, "{\"name\": \"y\"", "{\"name\": \"y\", \"optional\": true"), "m.json"); },
               {"$.outputs[0].optional", "outputs cannot be optional"});
  expect_error([&] { parse_manifest(replace(ok, "\"timestamp-query\"", "\"warp-magic\""), "m.json"); },
               {"$.features.optional[0]", "unknown feature"});
  expect_error([&] { parse_manifest(replace(ok, "{\"name\": \"zp\"", "{\"name\": \"x\""), "m.json"); },
               {"$.inputs[2]", "duplicate name \"x\""});
  expect_error([&] { parse_manifest(replace(ok, "{\"name\": \"y\", \"dtypes\": [\"float32\"], \"storage\": \"array<f32>\", \"rank\": 1, \"shape\": \"[n]\"}", ""), "m.json"); },
               {"$.outputs: expected a non-empty array"});
}

const char* kTests = R"({
  "kernel": "test.Op",
  "cases": [{
    "name": "a",
    "attributes": {"mode": "fast"},
    "inputs": {
      "x": {"dtype": "float32", "shape": [2, 3], "random": {"seed": 1, "min": -2, "max": 2}},
      "idx": {"dtype": "int64", "shape": [], "values": [-1]}
    },
    "tolerance": {"vs_twin": 0, "vs_ref": 1e-6}
  }]
})";

TEST(Contract, TestFileIsCheckedAgainstTheManifest) {
  const Manifest m = parse_manifest(kManifest, "m.json");
  const TestFile t = parse_tests(kTests, "t.json", m);
  ASSERT_EQ(t.cases.size(), 1u);
  EXPECT_EQ(t.cases[0].attributes["bits"], 4);  // default filled in
  EXPECT_EQ(t.cases[0].options["wg"], 0);
  const std::string ok = kTests;
  expect_error([&] { parse_tests(replace(ok, "\"test.Op\"", "\"other.Op\""), "t.json", m); },
               {"t.json: $.kernel", "not this manifest's id"});
  expect_error([&] { parse_tests(replace(ok, "{\"mode\": \"fast\"}", "{\"mode\": \"fast\", \"bits\": 3}"), "t.json", m); },
               {"$.cases[0].attributes.bits", "value 3 of \"bits\" is not allowed"});
  expect_error([&] { parse_tests(replace(ok, "{\"mode\": \"fast\"}", "{}"), "t.json", m); },
               {"$.cases[0].attributes", "missing required attribute \"mode\""});
  expect_error([&] { parse_tests(replace(ok, "\"x\": {\"dtype\": \"float32\"", "\"x\": {\"dtype\": \"float16\""), "t.json", m); },
               {"$.cases[0].inputs.x.dtype", "not accepted by input \"x\""});
  expect_error([&] { parse_tests(replace(ok, "[2, 3]", "[2, 3, 4]"), "t.json", m); },
               {"$.cases[0].inputs.x.shape", "rank 3"});
  expect_error([&] { parse_tests(replace(ok, "\"values\": [-1]", "\"values\": [-1, 2]"), "t.json", m); },
               {"$.cases[0].inputs.idx.values", "2 values for shape []"});
  expect_error([&] { parse_tests(replace(ok, "\"idx\": {\"dtype\": \"int64\", \"shape\": [], \"values\": [-1]}", "\"idx\": {\"dtype\": \"int64\", \"shape\": [3], \"random\": {\"seed\": 1}}"), "t.json", m); },
               {"$.cases[0].inputs.idx.random", "need \"min\" and \"max\""});
  expect_error([&] { parse_tests(replace(ok, ",\n      \"idx\": {\"dtype\": \"int64\", \"shape\": [], \"values\": [-1]}", ""), "t.json", m); },
               {"$.cases[0].inputs", "missing required input \"idx\""});
  expect_error([&] { parse_tests(replace(ok, "\"vs_ref\": 1e-6", "\"vs_ref\": -1"), "t.json", m); },
               {"$.cases[0].tolerance", ">= 0"});
  expect_error([&] { parse_tests(replace(ok, "\"name\": \"a\",", "\"name\": \"a\", \"colour\": 1,"), "t.json", m); },
               {"$.cases[0]", "unknown key \"colour\""});
}

TEST(Contract, BenchFileTuningIsChecked) {
  const Manifest m = parse_manifest(kManifest, "m.json");
  const std::string b = R"({"kernel": "test.Op", "tuning": {"wg": [64, 128]}, "cases": [{"name": "b",
    "attributes": {"mode": "x"}, "inputs": {"x": {"dtype": "float32", "shape": [4], "random": {"seed": 2}},
    "idx": {"dtype": "int32", "shape": [1], "values": [0]}}}]})";
  EXPECT_EQ(parse_bench(b, "b.json", m).cases[0].samples, 20);
  expect_error([&] { parse_bench(replace(b, "\"wg\": [64, 128]", "\"wgs\": [64]"), "b.json", m); },
               {"b.json: $.tuning", "unknown option \"wgs\""});
  expect_error([&] { parse_bench(replace(b, "[64, 128]", "[64, \"big\"]"), "b.json", m); },
               {"$.tuning.wg[1]", "is an int"});
}

TEST(Contract, MaterialisesDeterministically) {
  TensorInit t{"int64", {5}, std::nullopt, RandomInit{7, -3.0, 3.0}};
  const HostTensor a = materialize(t, "t"), b = materialize(t, "t");
  EXPECT_EQ(a.bytes, b.bytes);
  for (int64_t v : a.as<int64_t>()) EXPECT_TRUE(v >= -3 && v <= 3);
  TensorInit q{"q8_0", {3, 64}, std::nullopt, RandomInit{9, 0.01, 0.02}};
  const HostTensor h = materialize(q, "q");
  EXPECT_EQ(h.bytes.size(), 3u * 2 * 34);
  const auto f = dequantize(Format::Q8_0, h.bytes, 3 * 64);
  bool nonzero = false;
  for (float x : f) {
    nonzero |= x != 0.0f;
    EXPECT_TRUE(std::isfinite(x));
  }
  EXPECT_TRUE(nonzero);
}

}  // namespace
}  // namespace blockq::contract
