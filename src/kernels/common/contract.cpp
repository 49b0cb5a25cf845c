// Parsing and schema checks of kernel contracts (manifest, test and bench
// JSON), and materialisation of case tensors (see contract.hpp).
#include "kernels/common/contract.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "quant/half.hpp"
#include "util/error.hpp"

namespace blockq::contract {
namespace {

const char* type_name(const json& j) {
  switch (j.type()) {
    case json::value_t::null: return "null";
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    case json::value_t::string: return "a string";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "an integer";
    case json::value_t::number_float: return "a number";
    default: return "an unknown value";
  }
}

// A JSON value and where it is: every complaint names the file and the path.
struct Node {
  const json& j;
  std::string file, path;

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(fmt::format("{}: {}: {}", file, path, what));
  }
  Node at(const std::string& key) const { return {j.at(key), file, path + "." + key}; }
  Node at(size_t i) const { return {j.at(i), file, fmt::format("{}[{}]", path, i)}; }
  bool has(const std::string& key) const { return j.contains(key); }

  const Node& object(std::initializer_list<const char*> required,
                     std::initializer_list<const char*> optional) const {
    if (!j.is_object()) fail(fmt::format("expected an object, got {}", type_name(j)));
    for (const char* k : required)
      if (!j.contains(k)) fail(fmt::format("missing required key \"{}\"", k));
    for (const auto& [k, v] : j.items()) {
      const auto known = [&](std::initializer_list<const char*> l) {
        return std::any_of(l.begin(), l.end(), [&](const char* s) { return k == s; });
      };
      if (!known(required) && !known(optional)) {
        std::string keys;
        for (const char* s : required) keys += fmt::format("{}\"{}\"", keys.empty() ? "" : ", ", s);
        for (const char* s : optional) keys += fmt::format("{}\"{}\"", keys.empty() ? "" : ", ", s);
        fail(fmt::format("unknown key \"{}\" (known: {})", k, keys));
      }
    }
    return *this;
  }
  std::string str() const {
    if (!j.is_string()) fail(fmt::format("expected a string, got {}", type_name(j)));
    return j.get<std::string>();
  }
  std::string nonempty_str() const {
    std::string s = str();
    if (s.empty()) fail("expected a non-empty string");
    return s;
  }
  int64_t integer() const {
    if (!j.is_number_integer()) fail(fmt::format("expected an integer, got {}", type_name(j)));
    return j.get<int64_t>();
  }
  double number() const {
    if (!j.is_number()) fail(fmt::format("expected a number, got {}", type_name(j)));
    return j.get<double>();
  }
  bool boolean() const {
    if (!j.is_boolean()) fail(fmt::format("expected a boolean, got {}", type_name(j)));
    return j.get<bool>();
  }
  size_t array(bool nonempty = false) const {
    if (!j.is_array()) fail(fmt::format("expected an array, got {}", type_name(j)));
    if (nonempty && j.empty()) fail("expected a non-empty array");
    return j.size();
  }
  std::vector<std::string> strings(bool nonempty = false) const {
    std::vector<std::string> v;
    for (size_t i = 0, n = array(nonempty); i < n; ++i) v.push_back(at(i).nonempty_str());
    return v;
  }
};

json parse_text(std::string_view text, const std::string& file) {
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    throw Error(fmt::format("{}: not valid JSON: {}", file, e.what()));
  }
}

const std::set<std::string> kDtypes = {"uint8", "int32", "int64", "uint32", "float32", "float16"};
const std::set<std::string> kFeatures = {"shader-f16", "subgroups", "timestamp-query"};

bool known_dtype(const std::string& d) {
  return kDtypes.count(d) || format_from_name(d).has_value();
}

TensorDecl parse_tensor_decl(const Node& n, bool is_input) {
  n.object({"name", "dtypes", "storage", "rank", "shape"}, {"optional", "description"});
  TensorDecl t;
  t.name = n.at("name").nonempty_str();
  t.dtypes = n.at("dtypes").strings(true);
  for (size_t i = 0; i < t.dtypes.size(); ++i)
    if (!known_dtype(t.dtypes[i])) n.at("dtypes").at(i).fail(fmt::format("unknown dtype \"{}\"", t.dtypes[i]));
  t.storage = n.at("storage").nonempty_str();
  const Node r = n.at("rank");
  if (r.j.is_number_integer()) {
    t.rank_min = t.rank_max = int(r.integer());
  } else {
    r.object({"min"}, {"max"});
    t.rank_min = int(r.at("min").integer());
    t.rank_max = r.has("max") ? int(r.at("max").integer()) : -1;
    if (t.rank_max >= 0 && t.rank_max < t.rank_min) r.fail("max is below min");
  }
  if (t.rank_min < 0) r.fail("rank must be >= 0");
  t.shape = n.at("shape").nonempty_str();
  if (n.has("optional")) {
    t.optional = n.at("optional").boolean();
    if (t.optional && !is_input) n.at("optional").fail("outputs cannot be optional");
  }
  if (n.has("description")) t.description = n.at("description").str();
  return t;
}

void check_param_value(const Node& n, const ParamDecl& p) {
  if (p.type == "int" && !n.j.is_number_integer())
    n.fail(fmt::format("attribute \"{}\" is an int, got {}", p.name, type_name(n.j)));
  if (p.type == "float" && !n.j.is_number())
    n.fail(fmt::format("attribute \"{}\" is a float, got {}", p.name, type_name(n.j)));
  if (p.type == "string" && !n.j.is_string())
    n.fail(fmt::format("attribute \"{}\" is a string, got {}", p.name, type_name(n.j)));
  if (!p.allowed.empty() && std::find(p.allowed.begin(), p.allowed.end(), n.j) == p.allowed.end())
    n.fail(fmt::format("value {} of \"{}\" is not allowed (allowed: {})", n.j.dump(), p.name,
                       json(p.allowed).dump()));
}

ParamDecl parse_param_decl(const Node& n) {
  n.object({"name", "type"}, {"default", "allowed", "rule", "description"});
  ParamDecl p;
  p.name = n.at("name").nonempty_str();
  p.type = n.at("type").str();
  if (p.type != "int" && p.type != "float" && p.type != "string")
    n.at("type").fail(fmt::format("type \"{}\" is not one of \"int\", \"float\", \"string\"", p.type));
  if (n.has("allowed")) {
    const Node a = n.at("allowed");
    const ParamDecl any = p;  // no allowed list yet: a type check only
    for (size_t i = 0, c = a.array(true); i < c; ++i) {
      check_param_value(a.at(i), any);
      p.allowed.push_back(a.j[i]);
    }
  }
  if (n.has("default")) {
    p.default_value = n.j.at("default");
    check_param_value(n.at("default"), p);
  }
  if (n.has("rule")) p.rule = n.at("rule").str();
  if (n.has("description")) p.description = n.at("description").str();
  return p;
}

template <class T, class F>
std::vector<T> parse_list(const Node& n, F&& parse, bool nonempty) {
  std::vector<T> v;
  std::set<std::string> names;
  for (size_t i = 0, c = n.array(nonempty); i < c; ++i) {
    v.push_back(parse(n.at(i)));
    if (!names.insert(v.back().name).second)
      n.at(i).fail(fmt::format("duplicate name \"{}\"", v.back().name));
  }
  return v;
}

Shape parse_shape(const Node& n) {
  Shape s;
  for (size_t i = 0, c = n.array(); i < c; ++i) {
    s.push_back(n.at(i).integer());
    if (s.back() < 0) n.at(i).fail("a dimension must be >= 0");
  }
  return s;
}

int64_t shape_numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

TensorInit parse_tensor_init(const Node& n, const TensorDecl& decl) {
  n.object({"dtype", "shape"}, {"values", "random"});
  TensorInit t;
  t.dtype = n.at("dtype").str();
  if (std::find(decl.dtypes.begin(), decl.dtypes.end(), t.dtype) == decl.dtypes.end())
    n.at("dtype").fail(fmt::format("dtype \"{}\" is not accepted by input \"{}\" (accepted: {})",
                                   t.dtype, decl.name, json(decl.dtypes).dump()));
  t.shape = parse_shape(n.at("shape"));
  const int rank = int(t.shape.size());
  if (rank < decl.rank_min || (decl.rank_max >= 0 && rank > decl.rank_max))
    n.at("shape").fail(fmt::format("rank {} of input \"{}\" is outside [{}, {}]", rank, decl.name,
                                   decl.rank_min, decl.rank_max < 0 ? std::string("any") : std::to_string(decl.rank_max)));
  if (n.has("values") == n.has("random")) n.fail("give exactly one of \"values\" and \"random\"");
  if (n.has("values")) {
    const Node v = n.at("values");
    const size_t c = v.array();
    for (size_t i = 0; i < c; ++i) v.at(i).number();
    if (int64_t(c) != shape_numel(t.shape))
      v.fail(fmt::format("{} values for shape {} ({} elements)", c, json(t.shape).dump(), shape_numel(t.shape)));
    t.values = v.j;
  } else {
    const Node r = n.at("random");
    r.object({"seed"}, {"min", "max"});
    RandomInit ri;
    const int64_t seed = r.at("seed").integer();
    if (seed < 0) r.at("seed").fail("seed must be >= 0");
    ri.seed = uint64_t(seed);
    if (r.has("min")) ri.min = r.at("min").number();
    if (r.has("max")) ri.max = r.at("max").number();
    if (ri.min && ri.max && *ri.max < *ri.min) r.fail("max is below min");
    if ((t.dtype == "int32" || t.dtype == "int64") && (!ri.min || !ri.max))
      r.fail("integer tensors need \"min\" and \"max\" (inclusive)");
    t.random = ri;
  }
  if (auto f = ggml_dtype(t.dtype); f && traits(*f).quantized) {
    if (rank != 2) n.at("shape").fail("a ggml tensor has shape [rows, cols]");
    if (t.shape[1] % traits(*f).block_elems)
      n.at("shape").fail(fmt::format("{} columns are not a multiple of {}'s block of {}", t.shape[1],
                                     t.dtype, traits(*f).block_elems));
  }
  return t;
}

// attributes/options of a case: known names, allowed values, defaults filled.
json parse_params(const Node* n, const std::vector<ParamDecl>& decls, const char* kind) {
  json out = json::object();
  if (n) {
    if (!n->j.is_object()) n->fail(fmt::format("expected an object, got {}", type_name(n->j)));
    for (const auto& [k, v] : n->j.items()) {
      auto it = std::find_if(decls.begin(), decls.end(), [&](const ParamDecl& p) { return p.name == k; });
      if (it == decls.end()) n->fail(fmt::format("unknown {} \"{}\"", kind, k));
      check_param_value(n->at(k), *it);
      out[k] = v;
    }
  }
  for (const auto& p : decls) {
    if (out.contains(p.name)) continue;
    if (p.default_value.is_null()) {
      if (n) n->fail(fmt::format("missing required {} \"{}\"", kind, p.name));
      throw Error(fmt::format("missing required {} \"{}\"", kind, p.name));
    }
    out[p.name] = p.default_value;
  }
  return out;
}

std::map<std::string, TensorInit> parse_inputs(const Node& n, const Manifest& m) {
  if (!n.j.is_object()) n.fail(fmt::format("expected an object, got {}", type_name(n.j)));
  std::map<std::string, TensorInit> out;
  for (const auto& [k, v] : n.j.items()) {
    const TensorDecl* d = m.input(k);
    if (!d) n.fail(fmt::format("unknown input \"{}\" for {}", k, m.id));
    out[k] = parse_tensor_init(n.at(k), *d);
  }
  for (const auto& d : m.inputs)
    if (!d.optional && !out.count(d.name)) n.fail(fmt::format("missing required input \"{}\"", d.name));
  return out;
}

std::string check_kernel(const Node& root, const Manifest& m) {
  std::string k = root.at("kernel").nonempty_str();
  if (k != m.id) root.at("kernel").fail(fmt::format("kernel \"{}\" is not this manifest's id \"{}\"", k, m.id));
  return k;
}

}  // namespace

const TensorDecl* Manifest::input(std::string_view name) const {
  for (const auto& t : inputs)
    if (t.name == name) return &t;
  return nullptr;
}

Manifest parse_manifest(std::string_view text, const std::string& file) {
  const json j = parse_text(text, file);
  const Node root{j, file, "$"};
  root.object({"id", "version", "summary", "inputs", "outputs", "attributes"},
              {"options", "features", "notes"});
  Manifest m;
  m.file = file;
  m.raw = j;
  m.id = root.at("id").nonempty_str();
  m.version = root.at("version").nonempty_str();
  {
    int a, b, c;
    char tail;
    if (std::sscanf(m.version.c_str(), "%d.%d.%d%c", &a, &b, &c, &tail) != 3)
      root.at("version").fail(fmt::format("version \"{}\" is not MAJOR.MINOR.PATCH", m.version));
  }
  m.summary = root.at("summary").nonempty_str();
  m.inputs = parse_list<TensorDecl>(root.at("inputs"), [](const Node& n) { return parse_tensor_decl(n, true); }, true);
  m.outputs = parse_list<TensorDecl>(root.at("outputs"), [](const Node& n) { return parse_tensor_decl(n, false); }, true);
  m.attributes = parse_list<ParamDecl>(root.at("attributes"), parse_param_decl, false);
  if (root.has("options")) m.options = parse_list<ParamDecl>(root.at("options"), parse_param_decl, false);
  if (root.has("features")) {
    const Node f = root.at("features");
    f.object({}, {"required", "optional"});
    for (const char* key : {"required", "optional"}) {
      if (!f.has(key)) continue;
      auto v = f.at(key).strings();
      for (size_t i = 0; i < v.size(); ++i)
        if (!kFeatures.count(v[i]))
          f.at(key).at(i).fail(fmt::format("unknown feature \"{}\" (known: shader-f16, subgroups, timestamp-query)", v[i]));
      (std::string_view(key) == "required" ? m.features_required : m.features_optional) = v;
    }
  }
  if (root.has("notes")) root.at("notes").strings();
  return m;
}

TestFile parse_tests(std::string_view text, const std::string& file, const Manifest& m) {
  const json j = parse_text(text, file);
  const Node root{j, file, "$"};
  root.object({"kernel", "cases"}, {"notes"});
  TestFile t;
  t.file = file;
  t.kernel = check_kernel(root, m);
  const Node cases = root.at("cases");
  std::set<std::string> names;
  for (size_t i = 0, c = cases.array(true); i < c; ++i) {
    const Node n = cases.at(i);
    n.object({"name", "inputs", "tolerance"},
             {"attributes", "options", "expected", "tags", "notes", "expect_error"});
    TestCase tc;
    tc.name = n.at("name").nonempty_str();
    if (!names.insert(tc.name).second) n.at("name").fail(fmt::format("duplicate case name \"{}\"", tc.name));
    const Node attrs = n.has("attributes") ? n.at("attributes") : Node{json::object(), file, n.path + ".attributes"};
    tc.attributes = parse_params(n.has("attributes") ? &attrs : nullptr, m.attributes, "attribute");
    const Node opts = n.has("options") ? n.at("options") : Node{json::object(), file, n.path + ".options"};
    tc.options = parse_params(n.has("options") ? &opts : nullptr, m.options, "option");
    tc.inputs = parse_inputs(n.at("inputs"), m);
    const Node tol = n.at("tolerance");
    tol.object({"vs_twin", "vs_ref"}, {});
    tc.tolerance.vs_twin = tol.at("vs_twin").number();
    tc.tolerance.vs_ref = tol.at("vs_ref").number();
    if (tc.tolerance.vs_twin < 0 || tc.tolerance.vs_ref < 0) tol.fail("tolerances must be >= 0");
    if (n.has("expected")) {
      const Node e = n.at("expected");
      if (!e.j.is_object()) e.fail(fmt::format("expected an object, got {}", type_name(e.j)));
      for (const auto& [k, v] : e.j.items()) {
        if (std::none_of(m.outputs.begin(), m.outputs.end(), [&](const TensorDecl& o) { return o.name == k; }))
          e.fail(fmt::format("unknown output \"{}\"", k));
        const Node vals = e.at(k);
        std::vector<double> d;
        for (size_t q = 0, c2 = vals.array(); q < c2; ++q) d.push_back(vals.at(q).number());
        tc.expected[k] = std::move(d);
      }
    }
    if (n.has("tags")) tc.tags = n.at("tags").strings();
    if (n.has("notes")) n.at("notes").str();
    if (n.has("expect_error")) tc.expect_error = n.at("expect_error").nonempty_str();
    t.cases.push_back(std::move(tc));
  }
  return t;
}

BenchFile parse_bench(std::string_view text, const std::string& file, const Manifest& m) {
  const json j = parse_text(text, file);
  const Node root{j, file, "$"};
  root.object({"kernel", "cases"}, {"tuning", "notes"});
  BenchFile b;
  b.file = file;
  b.kernel = check_kernel(root, m);
  if (root.has("tuning")) {
    const Node t = root.at("tuning");
    if (!t.j.is_object()) t.fail(fmt::format("expected an object, got {}", type_name(t.j)));
    for (const auto& [k, v] : t.j.items()) {
      auto it = std::find_if(m.options.begin(), m.options.end(), [&](const ParamDecl& p) { return p.name == k; });
      if (it == m.options.end()) t.fail(fmt::format("unknown option \"{}\"", k));
      const Node vals = t.at(k);
      for (size_t i = 0, c = vals.array(true); i < c; ++i) check_param_value(vals.at(i), *it);
    }
    b.tuning = t.j;
  }
  const Node cases = root.at("cases");
  std::set<std::string> names;
  for (size_t i = 0, c = cases.array(true); i < c; ++i) {
    const Node n = cases.at(i);
    n.object({"name", "inputs"}, {"attributes", "options", "samples", "tags", "notes"});
    BenchCase bc;
    bc.name = n.at("name").nonempty_str();
    if (!names.insert(bc.name).second) n.at("name").fail(fmt::format("duplicate case name \"{}\"", bc.name));
    const Node attrs = n.has("attributes") ? n.at("attributes") : Node{json::object(), file, n.path};
    bc.attributes = parse_params(n.has("attributes") ? &attrs : nullptr, m.attributes, "attribute");
    const Node opts = n.has("options") ? n.at("options") : Node{json::object(), file, n.path};
    bc.options = parse_params(n.has("options") ? &opts : nullptr, m.options, "option");
    bc.inputs = parse_inputs(n.at("inputs"), m);
    if (n.has("samples")) {
      bc.samples = int(n.at("samples").integer());
      if (bc.samples < 1 || bc.samples > 1000) n.at("samples").fail("samples must be in [1, 1000]");
    }
    if (n.has("tags")) bc.tags = n.at("tags").strings();
    if (n.has("notes")) n.at("notes").str();
    b.cases.push_back(std::move(bc));
  }
  return b;
}

// ---- materialisation

std::optional<Format> ggml_dtype(std::string_view dtype) {
  if (dtype == "float32") return Format::F32;
  if (dtype == "float16") return Format::F16;
  if (kDtypes.count(std::string(dtype))) return std::nullopt;
  return format_from_name(dtype);
}

size_t dtype_bytes(std::string_view d) {
  if (d == "uint8") return 1;
  if (d == "float16") return 2;
  if (d == "int32" || d == "float32") return 4;
  if (d == "int64") return 8;
  return 0;
}

int64_t HostTensor::numel() const { return shape_numel(shape); }

void random_rows(Format f, uint64_t rows, uint64_t cols, uint64_t seed, double lo, double hi,
                 std::span<uint8_t> out) {
  const FormatTraits& tr = traits(f);
  const size_t rb = row_bytes(f, cols);
  BQ_ASSERT(out.size() == rb * rows, "random_rows: {} bytes for {} rows of {}", out.size(), rows, rb);
  // Byte offsets of the f16 scale fields in one block.
  std::vector<uint32_t> f16_fields;
  switch (f) {
    case Format::Q4_0: case Format::Q5_0: case Format::Q8_0: f16_fields = {0}; break;
    case Format::Q4_1: case Format::Q5_1: case Format::Q4_K: case Format::Q5_K: f16_fields = {0, 2}; break;
    case Format::Q6_K: f16_fields = {208}; break;
    default: break;
  }
  for (uint64_t r = 0; r < rows; ++r) {
    SplitMix64 g{seed * 0x100000001b3ull + r * 0x9e3779b97f4a7c15ull};
    uint8_t* row = out.data() + r * rb;
    if (!tr.quantized) {
      for (uint64_t c = 0; c < cols; ++c) {
        const float v = float(lo + (hi - lo) * g.uniform());
        if (f == Format::F32) std::memcpy(row + 4 * c, &v, 4);
        else {
          const uint16_t h = f == Format::F16 ? f32_to_f16(v) : f32_to_bf16(v);
          std::memcpy(row + 2 * c, &h, 2);
        }
      }
      continue;
    }
    for (size_t i = 0; i < rb; i += 8) {
      const uint64_t w = g.next();
      std::memcpy(row + i, &w, std::min<size_t>(8, rb - i));
    }
    for (uint64_t b = 0; b < cols / tr.block_elems; ++b)
      for (uint32_t off : f16_fields) {
        const uint16_t h = f32_to_f16(float(lo + (hi - lo) * g.uniform()));
        std::memcpy(row + b * tr.block_bytes + off, &h, 2);
      }
  }
}

HostTensor materialize(const TensorInit& t, const std::string& what) {
  HostTensor h{t.dtype, t.shape, {}};
  const int64_t n = shape_numel(t.shape);
  const auto gf = ggml_dtype(t.dtype);
  if (gf && traits(*gf).quantized) {
    const uint64_t rows = uint64_t(t.shape[0]), cols = uint64_t(t.shape[1]);
    h.bytes.resize(row_bytes(*gf, cols) * rows);
    if (t.values) {
      std::vector<float> v;
      for (const auto& x : *t.values) v.push_back(x.get<float>());
      quantize(*gf, v, h.bytes);
    } else {
      random_rows(*gf, rows, cols, t.random->seed, t.random->min.value_or(0.001),
                  t.random->max.value_or(0.01), h.bytes);
    }
    return h;
  }
  const size_t eb = dtype_bytes(t.dtype);
  BQ_CHECK(eb, "{}: cannot materialise dtype \"{}\"", what, t.dtype);
  h.bytes.resize(size_t(n) * eb);
  SplitMix64 g{t.random ? t.random->seed : 0};
  for (int64_t i = 0; i < n; ++i) {
    uint8_t* p = h.bytes.data() + size_t(i) * eb;
    if (t.dtype == "float32" || t.dtype == "float16") {
      const double lo = t.random ? t.random->min.value_or(-1.0) : 0, hi = t.random ? t.random->max.value_or(1.0) : 0;
      const float v = t.values ? (*t.values)[size_t(i)].get<float>() : float(lo + (hi - lo) * g.uniform());
      if (eb == 4) std::memcpy(p, &v, 4);
      else {
        const uint16_t x = f32_to_f16(v);
        std::memcpy(p, &x, 2);
      }
      continue;
    }
    int64_t v;
    if (t.values) {
      const double d = (*t.values)[size_t(i)].get<double>();
      BQ_CHECK(d == std::floor(d), "{}: value {} at {} of a {} tensor is not an integer", what, d, i, t.dtype);
      v = int64_t(d);
    } else {
      const double lo = t.random->min.value_or(0), hi = t.random->max.value_or(255);
      const auto span = uint64_t(int64_t(hi) - int64_t(lo)) + 1;
      v = int64_t(lo) + int64_t(g.next() % span);
    }
    if (t.dtype == "uint8") {
      BQ_CHECK(v >= 0 && v <= 255, "{}: value {} at {} does not fit uint8", what, v, i);
      *p = uint8_t(v);
    } else if (t.dtype == "int32") {
      BQ_CHECK(v >= INT32_MIN && v <= INT32_MAX, "{}: value {} at {} does not fit int32", what, v, i);
      const int32_t x = int32_t(v);
      std::memcpy(p, &x, 4);
    } else {
      std::memcpy(p, &v, 8);
    }
  }
  return h;
}

}  // namespace blockq::contract
