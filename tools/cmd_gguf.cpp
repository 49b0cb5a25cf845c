// `blockq gguf inspect FILE [--json]`: a GGUF file's header, metadata (long
// arrays abbreviated) and tensor table (name, type, shape, bytes, offset), with totals.
#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>

#include "gguf/gguf.hpp"
#include "tools/commands.hpp"
#include "util/error.hpp"

namespace blockq::tools {
namespace {

using gguf::GgufFile;
using gguf::TensorInfo;
using gguf::Value;

// Keys and names come from the file: escape anything that is not printable ASCII.
std::string printable(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f) out += char(c);
    else out += fmt::format("\\x{:02x}", c);
  }
  return out;
}

std::string human_bytes(uint64_t n) {
  if (n < 1024) return fmt::format("{} B", n);
  static const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  double v = double(n);
  int u = -1;
  while (v >= 1024 && u < 3) {
    v /= 1024;
    ++u;
  }
  return fmt::format("{:.2f} {}", v, kUnits[u]);
}

std::string shape_text(const std::vector<uint64_t>& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

// A value as JSON; arrays keep their first `max_elems` elements unless full.
nlohmann::json value_json(const Value& v, size_t max_elems, bool full) {
  return std::visit(
      [&](const auto& x) -> nlohmann::json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, gguf::Array>) {
          nlohmann::json arr = nlohmann::json::array();
          std::visit(
              [&](const auto& vec) {
                using V = std::decay_t<decltype(vec)>;
                if constexpr (!std::is_same_v<V, std::monostate>) {
                  size_t n = full ? vec.size() : std::min(vec.size(), max_elems);
                  for (size_t i = 0; i < n; ++i) {
                    if constexpr (std::is_same_v<V, std::vector<bool>>) arr.push_back(bool(vec[i]));
                    else arr.push_back(vec[i]);
                  }
                }
              },
              x.values);
          return arr;
        } else {
          return x;
        }
      },
      v);
}

struct Totals {
  uint64_t elems = 0, bytes = 0;
  std::map<std::string, std::pair<uint64_t, uint64_t>> by_type;  // name -> (count, bytes)
};

Totals totals_of(const GgufFile& f) {
  Totals t;
  for (const TensorInfo& ti : f.tensors()) {
    t.elems += ti.n_elems();
    t.bytes += ti.nbytes;
    auto& [count, bytes] = t.by_type[std::string(traits(ti.format).name)];
    ++count;
    bytes += ti.nbytes;
  }
  return t;
}

nlohmann::json inspect_json(const GgufFile& f, size_t max_elems, bool full) {
  nlohmann::json j;
  j["file"] = f.name();
  j["version"] = f.version();
  j["alignment"] = f.alignment();
  j["data_offset"] = f.data_offset();
  j["file_bytes"] = f.bytes().size();
  nlohmann::json meta = nlohmann::json::array();
  for (const auto& [k, v] : f.metadata()) {
    nlohmann::json e = {{"key", k}, {"type", gguf::value_type_name(gguf::value_type(v))}};
    if (const auto* a = std::get_if<gguf::Array>(&v)) {
      e["element_type"] = gguf::value_type_name(a->elem_type());
      e["count"] = a->size();
      e["truncated"] = !full && a->size() > max_elems;
    }
    e["value"] = value_json(v, max_elems, full);
    meta.push_back(std::move(e));
  }
  j["metadata"] = std::move(meta);
  nlohmann::json tensors = nlohmann::json::array();
  for (const TensorInfo& t : f.tensors())
    tensors.push_back({{"name", t.name},
                       {"type", traits(t.format).name},
                       {"ggml_type", t.ggml_type},
                       {"shape", t.shape},
                       {"elements", t.n_elems()},
                       {"bytes", t.nbytes},
                       {"offset", t.offset},
                       {"file_offset", f.data_offset() + t.offset}});
  j["tensors"] = std::move(tensors);
  Totals tot = totals_of(f);
  nlohmann::json by_type = nlohmann::json::object();
  for (const auto& [name, cb] : tot.by_type) by_type[name] = {{"count", cb.first}, {"bytes", cb.second}};
  j["totals"] = {{"tensors", f.tensors().size()}, {"elements", tot.elems}, {"bytes", tot.bytes}, {"by_type", by_type}};
  return j;
}

void inspect_human(const GgufFile& f, size_t max_elems) {
  fmt::print("file       {}\n", printable(f.name()));
  fmt::print("version    {}   alignment {}   data section at offset {}   file {} ({} bytes)\n", f.version(),
             f.alignment(), f.data_offset(), human_bytes(f.bytes().size()), f.bytes().size());
  fmt::print("\nmetadata ({} keys)\n", f.metadata().size());
  size_t key_w = 8;
  for (const auto& [k, v] : f.metadata()) key_w = std::max(key_w, std::min<size_t>(printable(k).size(), 48));
  for (const auto& [k, v] : f.metadata())
    fmt::print("  {:<{}}  {:<22}  {}\n", printable(k), key_w, gguf::describe_type(v), gguf::to_string(v, max_elems));

  fmt::print("\ntensors ({})\n", f.tensors().size());
  size_t name_w = 4;
  for (const TensorInfo& t : f.tensors()) name_w = std::max(name_w, printable(t.name).size());
  fmt::print("  {:<{}}  {:<5}  {:<24}  {:>14}  {:>14}\n", "name", name_w, "type", "shape", "bytes", "offset");
  for (const TensorInfo& t : f.tensors())
    fmt::print("  {:<{}}  {:<5}  {:<24}  {:>14}  {:>14}\n", printable(t.name), name_w, traits(t.format).name,
               shape_text(t.shape), t.nbytes, t.offset);

  Totals tot = totals_of(f);
  fmt::print("\ntotals     {} tensors, {} elements, {} ({} bytes)\n", f.tensors().size(), tot.elems,
             human_bytes(tot.bytes), tot.bytes);
  for (const auto& [name, cb] : tot.by_type)
    fmt::print("  {:<6} {:>6} tensors  {:>12}\n", name, cb.first, human_bytes(cb.second));
}

void add_gguf(CLI::App& app, GlobalOptions&) {
  auto* gguf_cmd = app.add_subcommand("gguf", "GGUF file tools");
  gguf_cmd->require_subcommand(1);
  auto* inspect = gguf_cmd->add_subcommand("inspect", "Show a GGUF file's metadata and tensor table");
  static std::string path;
  static bool json = false, full = false;
  static size_t max_elems = 8;
  inspect->add_option("file", path, "GGUF file")->required();
  inspect->add_flag("--json", json, "Print one JSON object");
  inspect->add_option("--max-elems", max_elems, "Array elements shown before abbreviating (default 8)");
  inspect->add_flag("--full", full, "JSON: print arrays in full");
  inspect->callback([] {
    GgufFile f = GgufFile::open(path);  // a bad file throws blockq::Error: main prints it, exit 1
    if (json)
      fmt::print("{}\n", inspect_json(f, max_elems, full).dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
    else
      inspect_human(f, max_elems);
  });
}

}  // namespace
BQ_REGISTER_COMMAND(add_gguf);
}  // namespace blockq::tools
