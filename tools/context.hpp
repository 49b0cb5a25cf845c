// Builds the GPU context for a CLI command from the global options.
#pragma once
#include "gpu/context.hpp"
#include "tools/commands.hpp"

namespace blockq::tools {

gpu::Context make_context(const GlobalOptions& g);

}  // namespace blockq::tools
