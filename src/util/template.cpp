// Placeholder filling for WGSL templates ({{NAME}}), strict both ways.
#include "util/template.hpp"

#include <cmath>
#include <set>

#include "util/embedded_wgsl.hpp"
#include "util/error.hpp"

namespace blockq {

Template& Template::set(const std::string& name, const std::string& value) {
  values_[name] = value;
  return *this;
}
Template& Template::set(const std::string& name, long long value) {
  return set(name, std::to_string(value));
}
Template& Template::set_u(const std::string& name, unsigned long long value) {
  return set(name, std::to_string(value) + "u");
}
Template& Template::set_f(const std::string& name, double value) {
  return set(name, wgsl_float(value));
}

std::string wgsl_float(double v) {
  BQ_CHECK(std::isfinite(v), "WGSL literal must be finite, got {}", v);
  std::string s = fmt::format("{:.9g}", static_cast<float>(v));
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s + "f";
}

std::string Template::render() const {
  std::string out;
  out.reserve(text_.size() + 256);
  std::set<std::string> used;
  size_t pos = 0;
  while (true) {
    size_t open = text_.find("{{", pos);
    if (open == std::string_view::npos) {
      out.append(text_.substr(pos));
      break;
    }
    size_t close = text_.find("}}", open + 2);
    BQ_CHECK(close != std::string_view::npos, "{}: unterminated placeholder at offset {}", label_,
             open);
    std::string name(text_.substr(open + 2, close - open - 2));
    auto it = values_.find(name);
    BQ_CHECK(it != values_.end(), "{}: placeholder {{{{{}}}}} left unfilled", label_, name);
    used.insert(name);
    out.append(text_.substr(pos, open - pos));
    out.append(it->second);
    pos = close + 2;
  }
  for (const auto& [name, value] : values_)
    BQ_CHECK(used.count(name), "{}: value {} set but no placeholder uses it", label_, name);
  return out;
}

std::string_view wgsl_file(std::string_view path) {
  for (const auto& f : embedded_wgsl())
    if (f.path == path) return f.text;
  fail("no embedded WGSL file {}", path);
}

}  // namespace blockq
