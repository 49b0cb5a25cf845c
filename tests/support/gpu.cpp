// The shared test GPU context.
#include "support/gpu.hpp"

#include <cstdio>

namespace blockq::testing_support {

gpu::Context& test_context() {
  static gpu::Context ctx = [] {
    auto c = gpu::Context::create({});
    std::fprintf(stderr, "[blockq] adapter: %s (%s), profile: %s\n", c.adapter().name().c_str(),
                 std::string(gpu::backend_name(c.adapter().backend)).c_str(),
                 c.low_end() ? "low-end" : "adapter");
    return c;
  }();
  return ctx;
}

}  // namespace blockq::testing_support
