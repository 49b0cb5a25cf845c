// vkstats: what the Vulkan driver made of blockq's kernels. For each
// LABEL.spvasm that `blockq --dump-shaders DIR` wrote (Dawn's SPIR-V), it
// assembles LABEL.spv with spirv-as (Debian's spirv-tools), builds the compute
// pipeline on the first Vulkan device with VK_KHR_pipeline_executable_properties
// and prints the driver's statistics in a table: registers a thread, workgroup
// memory, local memory (register spills), binary size. Bindings come from the
// disassembly's Binding decorations (uniform or storage buffers of set 0).
// Usage: vkstats DIR | FILE.spvasm...   (needs spirv-as on PATH)
#include <vulkan/vulkan.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "vkstats: %s\n", what.c_str());
  std::exit(1);
}

void check(VkResult r, const char* what, const std::string& file = "") {
  if (r != VK_SUCCESS) die(std::string(what) + " failed (VkResult " + std::to_string(r) + ")" + (file.empty() ? "" : ": " + file));
}

struct Stat {
  std::string name;
  std::string value;
};

// The set-0 bindings a module declares: binding -> uniform?, and whether it
// has push constants.
struct Interface {
  std::map<uint32_t, bool> bindings;
  bool push = false;
};

Interface parse_interface(const fs::path& spvasm) {
  std::ifstream t(spvasm);
  if (!t) die("cannot read " + spvasm.string());
  std::map<std::string, uint32_t> binding;
  std::map<std::string, std::string> storage;
  Interface in;
  std::string line;
  while (std::getline(t, line)) {
    std::istringstream ss(line);
    std::string w0, w1, w2, w3, w4;
    ss >> w0 >> w1 >> w2 >> w3 >> w4;
    if (w0 == "OpDecorate" && w2 == "Binding") binding[w1] = static_cast<uint32_t>(std::stoul(w3));
    if (w1 == "=" && w2 == "OpVariable") storage[w0] = w4;
    if (w1 == "=" && w2 == "OpVariable" && w4 == "PushConstant") in.push = true;
  }
  for (const auto& [id, b] : binding) in.bindings[b] = storage[id] == "Uniform";
  return in;
}

std::vector<Stat> pipeline_stats(VkDevice dev, const fs::path& spvasm, const fs::path& spv) {
  const Interface in = parse_interface(spvasm);
  std::vector<VkDescriptorSetLayoutBinding> bs;
  for (const auto& [b, uniform] : in.bindings) {
    VkDescriptorSetLayoutBinding lb{};
    lb.binding = b;
    lb.descriptorType = uniform ? VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    lb.descriptorCount = 1;
    lb.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    bs.push_back(lb);
  }
  VkDescriptorSetLayoutCreateInfo sl{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  sl.bindingCount = static_cast<uint32_t>(bs.size());
  sl.pBindings = bs.data();
  VkDescriptorSetLayout dsl;
  check(vkCreateDescriptorSetLayout(dev, &sl, nullptr, &dsl), "vkCreateDescriptorSetLayout", spvasm);
  VkPushConstantRange pcr{VK_SHADER_STAGE_COMPUTE_BIT, 0, 128};
  VkPipelineLayoutCreateInfo pl{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pl.setLayoutCount = 1;
  pl.pSetLayouts = &dsl;
  pl.pushConstantRangeCount = in.push ? 1 : 0;
  pl.pPushConstantRanges = &pcr;
  VkPipelineLayout layout;
  check(vkCreatePipelineLayout(dev, &pl, nullptr, &layout), "vkCreatePipelineLayout", spvasm);
  std::ifstream f(spv, std::ios::binary);
  std::vector<char> code((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (code.empty() || code.size() % 4) die("no SPIR-V words in " + spv.string());
  std::vector<uint32_t> words(code.size() / 4);
  std::copy(code.begin(), code.end(), reinterpret_cast<char*>(words.data()));
  VkShaderModuleCreateInfo sm{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  sm.codeSize = code.size();
  sm.pCode = words.data();
  VkShaderModule mod;
  check(vkCreateShaderModule(dev, &sm, nullptr, &mod), "vkCreateShaderModule", spv);
  VkComputePipelineCreateInfo cp{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  cp.flags = VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
  cp.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  cp.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  cp.stage.module = mod;
  cp.stage.pName = "dawn_entry_point";  // the entry point Dawn's SPIR-V names
  cp.layout = layout;
  VkPipeline pipe;
  check(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &cp, nullptr, &pipe), "vkCreateComputePipelines", spv);
  auto get_props = reinterpret_cast<PFN_vkGetPipelineExecutablePropertiesKHR>(
      vkGetDeviceProcAddr(dev, "vkGetPipelineExecutablePropertiesKHR"));
  auto get_stats = reinterpret_cast<PFN_vkGetPipelineExecutableStatisticsKHR>(
      vkGetDeviceProcAddr(dev, "vkGetPipelineExecutableStatisticsKHR"));
  VkPipelineInfoKHR pi{VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR};
  pi.pipeline = pipe;
  uint32_t ne = 0;
  check(get_props(dev, &pi, &ne, nullptr), "vkGetPipelineExecutablePropertiesKHR", spv);
  std::vector<Stat> out;
  for (uint32_t e = 0; e < ne; ++e) {
    VkPipelineExecutableInfoKHR ei{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
    ei.pipeline = pipe;
    ei.executableIndex = e;
    uint32_t ns = 0;
    check(get_stats(dev, &ei, &ns, nullptr), "vkGetPipelineExecutableStatisticsKHR", spv);
    std::vector<VkPipelineExecutableStatisticKHR> st(ns, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
    check(get_stats(dev, &ei, &ns, st.data()), "vkGetPipelineExecutableStatisticsKHR", spv);
    for (const auto& s : st) {
      std::string v;
      switch (s.format) {
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: v = std::to_string(s.value.b32); break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: v = std::to_string(s.value.i64); break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: v = std::to_string(s.value.u64); break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR: v = std::to_string(s.value.f64); break;
        default: v = "?";
      }
      out.push_back({s.name, v});
    }
  }
  vkDestroyPipeline(dev, pipe, nullptr);
  vkDestroyShaderModule(dev, mod, nullptr);
  vkDestroyPipelineLayout(dev, layout, nullptr);
  vkDestroyDescriptorSetLayout(dev, dsl, nullptr);
  return out;
}

std::string find(const std::vector<Stat>& st, const std::string& name) {
  for (const auto& s : st)
    if (s.name == name) return s.value;
  return "-";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) die("usage: vkstats DIR | FILE.spvasm...");
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    const fs::path p = argv[i];
    if (fs::is_directory(p)) {
      for (const auto& e : fs::directory_iterator(p))
        if (e.path().extension() == ".spvasm") files.push_back(e.path());
    } else {
      files.push_back(p);
    }
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) die("no .spvasm files");

  VkApplicationInfo ai{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  ai.apiVersion = VK_API_VERSION_1_3;
  VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ici.pApplicationInfo = &ai;
  VkInstance inst;
  check(vkCreateInstance(&ici, nullptr, &inst), "vkCreateInstance");
  uint32_t np = 0;
  vkEnumeratePhysicalDevices(inst, &np, nullptr);
  if (np == 0) die("no Vulkan device");
  std::vector<VkPhysicalDevice> pds(np);
  vkEnumeratePhysicalDevices(inst, &np, pds.data());
  VkPhysicalDevice pd = pds[0];
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(pd, &props);
  // Every feature the device has, enabled (Dawn's SPIR-V may use any of them).
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR pe{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  VkPhysicalDeviceVulkan13Features f13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES, &pe};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &f13};
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, &f12};
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f11};
  vkGetPhysicalDeviceFeatures2(pd, &f2);
  if (!pe.pipelineExecutableInfo) die(std::string(props.deviceName) + " has no VK_KHR_pipeline_executable_properties");
  const float prio = 1;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = 0;
  qci.queueCount = 1;
  qci.pQueuePriorities = &prio;
  const char* exts[] = {"VK_KHR_pipeline_executable_properties"};
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &f2};
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  dci.enabledExtensionCount = 1;
  dci.ppEnabledExtensionNames = exts;
  VkDevice dev;
  check(vkCreateDevice(pd, &dci, nullptr, &dev), "vkCreateDevice");

  std::printf("device %s (driver statistics of each pipeline)\n", props.deviceName);
  std::printf("%5s %7s %8s %8s  %s\n", "regs", "shared", "local", "binary", "kernel");
  for (const fs::path& asmf : files) {
    fs::path spv = asmf;
    spv.replace_extension(".spv");
    const std::string cmd = "spirv-as --target-env vulkan1.1 '" + asmf.string() + "' -o '" + spv.string() + "'";
    if (std::system(cmd.c_str()) != 0) die("spirv-as failed on " + asmf.string());
    const auto st = pipeline_stats(dev, asmf, spv);
    // NVIDIA's driver (580) reports "Local Memory Size" as 2^36 plus the
    // bytes of local memory (spills) a thread: the low 32 bits are printed.
    std::string local = find(st, "Local Memory Size");
    if (local != "-") local = std::to_string(std::stoull(local) & 0xffffffffull);
    std::printf("%5s %7s %8s %8s  %s\n", find(st, "Register Count").c_str(), find(st, "Shared Memory Size").c_str(),
                local.c_str(), find(st, "Binary Size").c_str(), asmf.stem().string().c_str());
    std::fflush(stdout);
  }
  vkDestroyDevice(dev, nullptr);
  vkDestroyInstance(inst, nullptr);
}
