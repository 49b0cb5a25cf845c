// The blockq command-line tool: one CLI11 app, each subcommand registered by
// its own file in tools/ (cmd_*.cpp).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "tools/commands.hpp"
#include "util/error.hpp"

int main(int argc, char** argv) {
  CLI::App app{"blockq: block-quantized LLM kernels on WebGPU"};
  app.require_subcommand(1);
  blockq::tools::GlobalOptions global;
  blockq::tools::add_global_options(app, global);
  for (auto add : blockq::tools::command_table()) add(app, global);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const blockq::Error& e) {
    std::fprintf(stderr, "blockq: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "blockq: error: %s\n", e.what());
    return 1;
  }
  return blockq::tools::exit_code();
}
