// WGSL templating: {{NAME}} placeholders filled from a map. Filling fails on
// any placeholder left unfilled and on any value that no placeholder uses.
#pragma once
#include <map>
#include <string>
#include <string_view>

namespace blockq {

class Template {
 public:
  explicit Template(std::string_view text, std::string label = "template")
      : text_(text), label_(std::move(label)) {}

  Template& set(const std::string& name, const std::string& value);
  Template& set(const std::string& name, long long value);
  Template& set_u(const std::string& name, unsigned long long value);  // "123u"
  Template& set_f(const std::string& name, double value);              // WGSL f32 literal

  // The filled text; throws blockq::Error naming the label and the first
  // unfilled placeholder, or a value no placeholder used.
  std::string render() const;

 private:
  std::string_view text_;
  std::string label_;
  std::map<std::string, std::string> values_;
};

// A WGSL f32 literal that round-trips the value (e.g. "1e-05f", "-2.5f").
std::string wgsl_float(double v);

}  // namespace blockq
