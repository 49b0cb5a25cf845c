// Access to the WGSL files under src/ and the JSON files under src/kernels/
// (kernel contracts), embedded into the binary at build time by
// cmake/EmbedWgsl.cmake, by their path relative to src/.
#pragma once
#include <string_view>
#include <vector>

namespace blockq {

struct EmbeddedFile {
  std::string_view path;  // e.g. "kernels/matvec/matvec.wgsl"
  std::string_view text;
};

// Every embedded file (generated code).
const std::vector<EmbeddedFile>& embedded_wgsl();

// The text of one embedded file; throws blockq::Error if there is none.
std::string_view wgsl_file(std::string_view path);

// Every embedded JSON file under src/kernels (generated code), e.g.
// "kernels/gather/manifest.json".
const std::vector<EmbeddedFile>& embedded_json();

// The text of one embedded JSON file; throws blockq::Error if there is none.
std::string_view json_file(std::string_view path);

}  // namespace blockq
