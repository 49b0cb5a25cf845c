// `blockq info [--json]`: the adapter, every limit, the features, subgroup
// sizes and toggles of the device blockq would use.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "tools/context.hpp"

namespace blockq::tools {
namespace {

nlohmann::json info_json(const gpu::Context& ctx) {
  const auto& a = ctx.adapter();
  nlohmann::json j;
  j["adapter"] = {{"vendor", a.vendor},
                  {"architecture", a.architecture},
                  {"device", a.device},
                  {"description", a.description},
                  {"backend", gpu::backend_name(a.backend)},
                  {"type", gpu::adapter_type_name(a.type)},
                  {"vendorID", a.vendor_id},
                  {"deviceID", a.device_id}};
  nlohmann::json limits = nlohmann::json::object();
  for (const auto& e : gpu::limit_entries(ctx.limits())) limits[std::string(e.name)] = e.value;
  j["limits"] = limits;
  nlohmann::json adapter_limits = nlohmann::json::object();
  for (const auto& e : gpu::limit_entries(ctx.adapter_limits())) adapter_limits[std::string(e.name)] = e.value;
  j["adapterLimits"] = adapter_limits;
  j["features"] = ctx.features().names;
  j["subgroupMinSize"] = a.subgroup_min;
  j["subgroupMaxSize"] = a.subgroup_max;
  j["toggles"] = ctx.toggles();
  j["profile"] = ctx.low_end() ? "low-end" : "adapter";
  j["timedWaits"] = ctx.timed_waits();
  return j;
}

void print_human(const gpu::Context& ctx) {
  const auto& a = ctx.adapter();
  fmt::print("adapter      {}\n", a.name());
  fmt::print("vendor       {} (0x{:04x})  device 0x{:04x}\n", a.vendor, a.vendor_id, a.device_id);
  fmt::print("architecture {}\n", a.architecture.empty() ? "-" : a.architecture);
  fmt::print("backend      {}   type {}\n", gpu::backend_name(a.backend), gpu::adapter_type_name(a.type));
  fmt::print("profile      {}\n", ctx.low_end() ? "low-end (WebGPU default limits, no optional features)"
                                                 : "adapter (its own limits and features)");
  fmt::print("subgroups    {}\n", ctx.features().subgroups
                                      ? fmt::format("min {} max {}", a.subgroup_min, a.subgroup_max)
                                      : std::string("off"));
  fmt::print("features     {}\n", fmt::join(ctx.features().names, ", "));
  fmt::print("toggles      {}\n", fmt::join(ctx.toggles(), ", "));
  fmt::print("waits        {}\n", ctx.timed_waits() ? "timed (wgpuInstanceWaitAny blocks with a timeout)"
                                                       : "polled (wgpuInstanceWaitAny without a timeout, then a nap)");
  fmt::print("limits (device / adapter):\n");
  auto dev = gpu::limit_entries(ctx.limits());
  auto ad = gpu::limit_entries(ctx.adapter_limits());
  for (size_t i = 0; i < dev.size(); ++i)
    fmt::print("  {:<44} {:>14} {:>14}\n", dev[i].name, dev[i].value, ad[i].value);
}

void add_info(CLI::App& app, GlobalOptions& g) {
  auto* cmd = app.add_subcommand("info", "Show the adapter, limits, features and toggles");
  static bool json = false;
  cmd->add_flag("--json", json, "Print one JSON object");
  cmd->callback([&g] {
    auto ctx = make_context(g);
    if (json)
      fmt::print("{}\n", info_json(ctx).dump(2));
    else
      print_human(ctx);
  });
}

}  // namespace
BQ_REGISTER_COMMAND(add_info);
}  // namespace blockq::tools
