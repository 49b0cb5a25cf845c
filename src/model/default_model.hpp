// The synthetic models the CLI uses when no model is given (`blockq run`
// without -m, `blockq bench run --preset`): written on first use into a
// models/ folder next to the build's bin/ folder, else into the user's cache.
#pragma once
#include <string>

#include "model/config.hpp"
#include "quant/format.hpp"

namespace blockq::model {

// The folder: $BLOCKQ_MODEL_DIR, else <dir of the executable>/../models when
// writable, else $XDG_CACHE_HOME/blockq (or ~/.cache/blockq), else the temp dir.
std::string default_model_dir();

// Path of the synthetic model (preset, type, arch), synthesized there first
// when absent (a note on stderr when `verbose`).
std::string ensure_synth_model(const std::string& preset, Format type, Arch arch = Arch::Llama,
                               bool verbose = true);

}  // namespace blockq::model
