// The part of Dawn's C API (webgpu.h, spring 2025) that blockq uses, declared
// by hand to match the pinned libwebgpu_wrapper.so (npm bun-webgpu-linux-x64
// 0.1.7). Layouts follow that binary; every struct's size is static_asserted
// for x86-64 Linux (LP64). Only what blockq calls is here.
#pragma once
#include <cstddef>
#include <cstdint>

extern "C" {

// ---- Basic types -----------------------------------------------------------
typedef uint32_t WGPUBool;
typedef uint64_t WGPUFlags;
typedef WGPUFlags WGPUBufferUsage;
typedef WGPUFlags WGPUMapMode;
typedef WGPUFlags WGPUShaderStage;

typedef struct WGPUInstanceImpl* WGPUInstance;
typedef struct WGPUAdapterImpl* WGPUAdapter;
typedef struct WGPUDeviceImpl* WGPUDevice;
typedef struct WGPUQueueImpl* WGPUQueue;
typedef struct WGPUBufferImpl* WGPUBuffer;
typedef struct WGPUShaderModuleImpl* WGPUShaderModule;
typedef struct WGPUComputePipelineImpl* WGPUComputePipeline;
typedef struct WGPUBindGroupLayoutImpl* WGPUBindGroupLayout;
typedef struct WGPUBindGroupImpl* WGPUBindGroup;
typedef struct WGPUPipelineLayoutImpl* WGPUPipelineLayout;
typedef struct WGPUCommandEncoderImpl* WGPUCommandEncoder;
typedef struct WGPUComputePassEncoderImpl* WGPUComputePassEncoder;
typedef struct WGPUCommandBufferImpl* WGPUCommandBuffer;
typedef struct WGPUQuerySetImpl* WGPUQuerySet;

#define WGPU_STRLEN SIZE_MAX
#define WGPU_WHOLE_SIZE UINT64_MAX
#define WGPU_WHOLE_MAP_SIZE SIZE_MAX
#define WGPU_LIMIT_U32_UNDEFINED UINT32_MAX
#define WGPU_LIMIT_U64_UNDEFINED UINT64_MAX
#define WGPU_QUERY_SET_INDEX_UNDEFINED UINT32_MAX

struct WGPUStringView {
  const char* data;
  size_t length;  // WGPU_STRLEN: null-terminated
};
static_assert(sizeof(WGPUStringView) == 16);

struct WGPUFuture {
  uint64_t id;
};
static_assert(sizeof(WGPUFuture) == 8);

// ---- Enums (exact values of this binary) -----------------------------------
enum WGPUSType : uint32_t {
  WGPUSType_ShaderSourceWGSL = 0x00000002,
  WGPUSType_AdapterPropertiesSubgroups = 0x0000000C,
  WGPUSType_DawnTogglesDescriptor = 0x0005000A,
  WGPUSType_AdapterPropertiesSubgroupMatrixConfigs = 0x0005003B,
};
enum WGPUCallbackMode : uint32_t {
  WGPUCallbackMode_WaitAnyOnly = 1,
  WGPUCallbackMode_AllowProcessEvents = 2,
  WGPUCallbackMode_AllowSpontaneous = 3,
};
enum WGPUStatus : uint32_t { WGPUStatus_Success = 1, WGPUStatus_Error = 2 };
enum WGPUWaitStatus : uint32_t { WGPUWaitStatus_Success = 1, WGPUWaitStatus_TimedOut = 2 };
enum WGPURequestAdapterStatus : uint32_t { WGPURequestAdapterStatus_Success = 1 };
enum WGPURequestDeviceStatus : uint32_t { WGPURequestDeviceStatus_Success = 1 };
enum WGPUMapAsyncStatus : uint32_t { WGPUMapAsyncStatus_Success = 1 };
enum WGPUQueueWorkDoneStatus : uint32_t { WGPUQueueWorkDoneStatus_Success = 1 };
enum WGPUPopErrorScopeStatus : uint32_t { WGPUPopErrorScopeStatus_Success = 1 };
enum WGPUErrorType : uint32_t {
  WGPUErrorType_NoError = 1,
  WGPUErrorType_Validation = 2,
  WGPUErrorType_OutOfMemory = 3,
  WGPUErrorType_Internal = 4,
  WGPUErrorType_Unknown = 5,
};
enum WGPUErrorFilter : uint32_t {
  WGPUErrorFilter_Validation = 1,
  WGPUErrorFilter_OutOfMemory = 2,
  WGPUErrorFilter_Internal = 3,
};
enum WGPUDeviceLostReason : uint32_t {
  WGPUDeviceLostReason_Unknown = 1,
  WGPUDeviceLostReason_Destroyed = 2,
  WGPUDeviceLostReason_CallbackCancelled = 3,
  WGPUDeviceLostReason_FailedCreation = 4,
};
enum WGPUBackendType : uint32_t {
  WGPUBackendType_Undefined = 0,
  WGPUBackendType_Null = 1,
  WGPUBackendType_WebGPU = 2,
  WGPUBackendType_D3D11 = 3,
  WGPUBackendType_D3D12 = 4,
  WGPUBackendType_Metal = 5,
  WGPUBackendType_Vulkan = 6,
  WGPUBackendType_OpenGL = 7,
  WGPUBackendType_OpenGLES = 8,
};
enum WGPUAdapterType : uint32_t {
  WGPUAdapterType_DiscreteGPU = 1,
  WGPUAdapterType_IntegratedGPU = 2,
  WGPUAdapterType_CPU = 3,
  WGPUAdapterType_Unknown = 4,
};
enum WGPUPowerPreference : uint32_t {
  WGPUPowerPreference_Undefined = 0,
  WGPUPowerPreference_LowPower = 1,
  WGPUPowerPreference_HighPerformance = 2,
};
enum WGPUFeatureLevel : uint32_t {
  WGPUFeatureLevel_Undefined = 0,
  WGPUFeatureLevel_Compatibility = 1,
  WGPUFeatureLevel_Core = 2,
};
enum WGPUFeatureName : uint32_t {
  WGPUFeatureName_TimestampQuery = 0x00000003,
  WGPUFeatureName_ShaderF16 = 0x0000000A,
  WGPUFeatureName_Subgroups = 0x00000011,
  WGPUFeatureName_ChromiumExperimentalTimestampQueryInsidePasses = 0x00050003,
  WGPUFeatureName_SubgroupsF16 = 0x00050008,
  WGPUFeatureName_ChromiumExperimentalSubgroupMatrix = 0x00050038,
};
enum WGPUWGSLLanguageFeatureName : uint32_t {
  WGPUWGSLLanguageFeatureName_Packed4x8IntegerDotProduct = 0x00000002,
};
enum WGPUQueryType : uint32_t { WGPUQueryType_Occlusion = 1, WGPUQueryType_Timestamp = 2 };

constexpr WGPUBufferUsage WGPUBufferUsage_MapRead = 0x1;
constexpr WGPUBufferUsage WGPUBufferUsage_MapWrite = 0x2;
constexpr WGPUBufferUsage WGPUBufferUsage_CopySrc = 0x4;
constexpr WGPUBufferUsage WGPUBufferUsage_CopyDst = 0x8;
constexpr WGPUBufferUsage WGPUBufferUsage_Uniform = 0x40;
constexpr WGPUBufferUsage WGPUBufferUsage_Storage = 0x80;
constexpr WGPUBufferUsage WGPUBufferUsage_QueryResolve = 0x200;
constexpr WGPUMapMode WGPUMapMode_Read = 0x1;
constexpr WGPUShaderStage WGPUShaderStage_Compute = 0x4;

// ---- Chained structs -------------------------------------------------------
struct WGPUChainedStruct {
  const WGPUChainedStruct* next;
  WGPUSType sType;
};
static_assert(sizeof(WGPUChainedStruct) == 16);

struct WGPUChainedStructOut {
  WGPUChainedStructOut* next;
  WGPUSType sType;
};
static_assert(sizeof(WGPUChainedStructOut) == 16);

struct WGPUDawnTogglesDescriptor {
  WGPUChainedStruct chain;
  size_t enabledToggleCount;
  const char* const* enabledToggles;
  size_t disabledToggleCount;
  const char* const* disabledToggles;
};
static_assert(sizeof(WGPUDawnTogglesDescriptor) == 48);

// ---- Callbacks (userdata1, userdata2 last) ---------------------------------
typedef void (*WGPURequestAdapterCallback)(WGPURequestAdapterStatus status, WGPUAdapter adapter,
                                           WGPUStringView message, void* u1, void* u2);
typedef void (*WGPURequestDeviceCallback)(WGPURequestDeviceStatus status, WGPUDevice device,
                                          WGPUStringView message, void* u1, void* u2);
typedef void (*WGPUDeviceLostCallback)(const WGPUDevice* device, WGPUDeviceLostReason reason,
                                       WGPUStringView message, void* u1, void* u2);
typedef void (*WGPUUncapturedErrorCallback)(const WGPUDevice* device, WGPUErrorType type,
                                            WGPUStringView message, void* u1, void* u2);
typedef void (*WGPUBufferMapCallback)(WGPUMapAsyncStatus status, WGPUStringView message, void* u1,
                                      void* u2);
// This binary passes a message here (seen: status, message, userdata1, userdata2),
// though bun-webgpu's FFI declares only (status, userdata1, userdata2).
typedef void (*WGPUQueueWorkDoneCallback)(WGPUQueueWorkDoneStatus status, WGPUStringView message,
                                          void* u1, void* u2);
typedef void (*WGPUPopErrorScopeCallback)(WGPUPopErrorScopeStatus status, WGPUErrorType type,
                                          WGPUStringView message, void* u1, void* u2);

// Every *CallbackInfo with a mode has this layout.
#define BQ_WGPU_CALLBACK_INFO(Name, Fn)  \
  struct Name {                          \
    const WGPUChainedStruct* nextInChain; \
    WGPUCallbackMode mode;               \
    Fn callback;                         \
    void* userdata1;                     \
    void* userdata2;                     \
  };                                     \
  static_assert(sizeof(Name) == 40)
BQ_WGPU_CALLBACK_INFO(WGPURequestAdapterCallbackInfo, WGPURequestAdapterCallback);
BQ_WGPU_CALLBACK_INFO(WGPURequestDeviceCallbackInfo, WGPURequestDeviceCallback);
BQ_WGPU_CALLBACK_INFO(WGPUDeviceLostCallbackInfo, WGPUDeviceLostCallback);
BQ_WGPU_CALLBACK_INFO(WGPUBufferMapCallbackInfo, WGPUBufferMapCallback);
BQ_WGPU_CALLBACK_INFO(WGPUQueueWorkDoneCallbackInfo, WGPUQueueWorkDoneCallback);
BQ_WGPU_CALLBACK_INFO(WGPUPopErrorScopeCallbackInfo, WGPUPopErrorScopeCallback);
#undef BQ_WGPU_CALLBACK_INFO

struct WGPUUncapturedErrorCallbackInfo {
  const WGPUChainedStruct* nextInChain;
  WGPUUncapturedErrorCallback callback;
  void* userdata1;
  void* userdata2;
};
static_assert(sizeof(WGPUUncapturedErrorCallbackInfo) == 32);

// Dawn's log messages (e.g. the dump_shaders toggle's shaders), delivered
// from within the call that emits them.
enum WGPULoggingType : uint32_t {
  WGPULoggingType_Verbose = 0x00000001,
  WGPULoggingType_Info = 0x00000002,
  WGPULoggingType_Warning = 0x00000003,
  WGPULoggingType_Error = 0x00000004,
};
typedef void (*WGPULoggingCallback)(WGPULoggingType type, WGPUStringView message, void* u1, void* u2);
struct WGPULoggingCallbackInfo {
  const WGPUChainedStruct* nextInChain;
  WGPULoggingCallback callback;
  void* userdata1;
  void* userdata2;
};
static_assert(sizeof(WGPULoggingCallbackInfo) == 32);

struct WGPUFutureWaitInfo {
  WGPUFuture future;
  WGPUBool completed;
};
static_assert(sizeof(WGPUFutureWaitInfo) == 16);

// ---- Instance and adapter --------------------------------------------------
struct WGPUInstanceCapabilities {
  WGPUChainedStructOut* nextInChain;
  WGPUBool timedWaitAnyEnable;
  size_t timedWaitAnyMaxCount;
};
static_assert(sizeof(WGPUInstanceCapabilities) == 24);

struct WGPUInstanceDescriptor {
  const WGPUChainedStruct* nextInChain;
  WGPUInstanceCapabilities capabilities;
};
static_assert(sizeof(WGPUInstanceDescriptor) == 32);

struct WGPURequestAdapterOptions {
  const WGPUChainedStruct* nextInChain;
  WGPUFeatureLevel featureLevel;
  WGPUPowerPreference powerPreference;
  WGPUBool forceFallbackAdapter;
  WGPUBackendType backendType;
  void* compatibleSurface;
};
static_assert(sizeof(WGPURequestAdapterOptions) == 32);

struct WGPUAdapterInfo {
  WGPUChainedStructOut* nextInChain;
  WGPUStringView vendor;
  WGPUStringView architecture;
  WGPUStringView device;
  WGPUStringView description;
  WGPUBackendType backendType;
  WGPUAdapterType adapterType;
  uint32_t vendorID;
  uint32_t deviceID;
  uint32_t subgroupMinSize;
  uint32_t subgroupMaxSize;
};
static_assert(sizeof(WGPUAdapterInfo) == 96);

struct WGPUSupportedFeatures {
  size_t featureCount;
  const WGPUFeatureName* features;
};
static_assert(sizeof(WGPUSupportedFeatures) == 16);

// Field order is the ABI; names are WebGPU's.
struct WGPULimits {
  WGPUChainedStructOut* nextInChain;
  uint32_t maxTextureDimension1D;
  uint32_t maxTextureDimension2D;
  uint32_t maxTextureDimension3D;
  uint32_t maxTextureArrayLayers;
  uint32_t maxBindGroups;
  uint32_t maxBindGroupsPlusVertexBuffers;
  uint32_t maxBindingsPerBindGroup;
  uint32_t maxDynamicUniformBuffersPerPipelineLayout;
  uint32_t maxDynamicStorageBuffersPerPipelineLayout;
  uint32_t maxSampledTexturesPerShaderStage;
  uint32_t maxSamplersPerShaderStage;
  uint32_t maxStorageBuffersPerShaderStage;
  uint32_t maxStorageTexturesPerShaderStage;
  uint32_t maxUniformBuffersPerShaderStage;
  uint64_t maxUniformBufferBindingSize;
  uint64_t maxStorageBufferBindingSize;
  uint32_t minUniformBufferOffsetAlignment;
  uint32_t minStorageBufferOffsetAlignment;
  uint32_t maxVertexBuffers;
  uint64_t maxBufferSize;
  uint32_t maxVertexAttributes;
  uint32_t maxVertexBufferArrayStride;
  uint32_t maxInterStageShaderVariables;
  uint32_t maxColorAttachments;
  uint32_t maxColorAttachmentBytesPerSample;
  uint32_t maxComputeWorkgroupStorageSize;
  uint32_t maxComputeInvocationsPerWorkgroup;
  uint32_t maxComputeWorkgroupSizeX;
  uint32_t maxComputeWorkgroupSizeY;
  uint32_t maxComputeWorkgroupSizeZ;
  uint32_t maxComputeWorkgroupsPerDimension;
  uint32_t maxImmediateSize;
  uint32_t maxStorageBuffersInVertexStage;
  uint32_t maxStorageTexturesInVertexStage;
  uint32_t maxStorageBuffersInFragmentStage;
  uint32_t maxStorageTexturesInFragmentStage;
};
static_assert(sizeof(WGPULimits) == 168);
static_assert(offsetof(WGPULimits, maxStorageBufferBindingSize) == 72);
static_assert(offsetof(WGPULimits, maxBufferSize) == 96);
static_assert(offsetof(WGPULimits, maxImmediateSize) == 148);

// ---- Device ----------------------------------------------------------------
struct WGPUQueueDescriptor {
  const WGPUChainedStruct* nextInChain;
  WGPUStringView label;
};
static_assert(sizeof(WGPUQueueDescriptor) == 24);

struct WGPUDeviceDescriptor {
  const WGPUChainedStruct* nextInChain;
  WGPUStringView label;
  size_t requiredFeatureCount;
  const WGPUFeatureName* requiredFeatures;
  const WGPULimits* requiredLimits;
  WGPUQueueDescriptor defaultQueue;
  WGPUDeviceLostCallbackInfo deviceLostCallbackInfo;
  WGPUUncapturedErrorCallbackInfo uncapturedErrorCallbackInfo;
};
static_assert(sizeof(WGPUDeviceDescriptor) == 144);

// ---- Resources -------------------------------------------------------------
struct WGPUBufferDescriptor {
  const WGPUChainedStruct* nextInChain;
  WGPUStringView label;
  WGPUBufferUsage usage;
  uint64_t size;
  WGPUBool mappedAtCreation;
};
static_assert(sizeof(WGPUBufferDescriptor) == 48);

struct WGPUShaderSourceWGSL {
  WGPUChainedStruct chain;
  WGPUStringView code;
};
static_assert(sizeof(WGPUShaderSourceWGSL) == 32);

struct WGPUShaderModuleDescriptor {
  const WGPUChainedStruct* nextInChain;
  WGPUStringView label;
};
static_assert(sizeof(WGPUShaderModuleDescriptor) == 24);

struct WGPUConstantEntry {
  const WGPUChainedStruct* nextInChain;
  WGPUStringView key;
  double value;
};
static_assert(sizeof(WGPUConstantEntry) == 32);

struct WGPUComputeState {
  const WGPUChainedStruct* nextInChain;
  WGPUShaderModule module;
  WGPUStringView entryPoint;
  size_t constantCount;
  const WGPUConstantEntry* constants;
};
static_assert(sizeof(WGPUComputeState) == 48);

struct WGPUComputePipelineDescriptor {
  const WGPUChainedStruct* nextInChain;
  WGPUStringView label;
  WGPUPipelineLayout layout;  // null: layout derived from the shader
  WGPUComputeState compute;
};
static_assert(sizeof(WGPUComputePipelineDescriptor) == 80);

struct WGPUBindGroupEntry {
  const WGPUChainedStruct* nextInChain;
  uint32_t binding;
  WGPUBuffer buffer;
  uint64_t offset;
  uint64_t size;
  void* sampler;
  void* textureView;
};
static_assert(sizeof(WGPUBindGroupEntry) == 56);

struct WGPUBindGroupDescriptor {
  const WGPUChainedStruct* nextInChain;
  WGPUStringView label;
  WGPUBindGroupLayout layout;
  size_t entryCount;
  const WGPUBindGroupEntry* entries;
};
static_assert(sizeof(WGPUBindGroupDescriptor) == 48);

struct WGPUCommandEncoderDescriptor {
  const WGPUChainedStruct* nextInChain;
  WGPUStringView label;
};
static_assert(sizeof(WGPUCommandEncoderDescriptor) == 24);

struct WGPUCommandBufferDescriptor {
  const WGPUChainedStruct* nextInChain;
  WGPUStringView label;
};
static_assert(sizeof(WGPUCommandBufferDescriptor) == 24);

struct WGPUPassTimestampWrites {
  const WGPUChainedStruct* nextInChain;
  WGPUQuerySet querySet;
  uint32_t beginningOfPassWriteIndex;
  uint32_t endOfPassWriteIndex;
};
static_assert(sizeof(WGPUPassTimestampWrites) == 24);

struct WGPUComputePassDescriptor {
  const WGPUChainedStruct* nextInChain;
  WGPUStringView label;
  const WGPUPassTimestampWrites* timestampWrites;
};
static_assert(sizeof(WGPUComputePassDescriptor) == 32);

struct WGPUQuerySetDescriptor {
  const WGPUChainedStruct* nextInChain;
  WGPUStringView label;
  WGPUQueryType type;
  uint32_t count;
};
static_assert(sizeof(WGPUQuerySetDescriptor) == 32);

// ---- Functions -------------------------------------------------------------
WGPUInstance wgpuCreateInstance(const WGPUInstanceDescriptor* descriptor);
WGPUStatus wgpuGetInstanceCapabilities(WGPUInstanceCapabilities* capabilities);
WGPUFuture wgpuInstanceRequestAdapter(WGPUInstance instance, const WGPURequestAdapterOptions* options,
                                      WGPURequestAdapterCallbackInfo callbackInfo);
WGPUWaitStatus wgpuInstanceWaitAny(WGPUInstance instance, size_t futureCount,
                                   WGPUFutureWaitInfo* futures, uint64_t timeoutNS);
void wgpuInstanceProcessEvents(WGPUInstance instance);
void wgpuInstanceRelease(WGPUInstance instance);
WGPUBool wgpuInstanceHasWGSLLanguageFeature(WGPUInstance instance, WGPUWGSLLanguageFeatureName feature);

WGPUStatus wgpuAdapterGetInfo(WGPUAdapter adapter, WGPUAdapterInfo* info);
void wgpuAdapterInfoFreeMembers(WGPUAdapterInfo info);
WGPUStatus wgpuAdapterGetLimits(WGPUAdapter adapter, WGPULimits* limits);
void wgpuAdapterGetFeatures(WGPUAdapter adapter, WGPUSupportedFeatures* features);
WGPUBool wgpuAdapterHasFeature(WGPUAdapter adapter, WGPUFeatureName feature);
WGPUFuture wgpuAdapterRequestDevice(WGPUAdapter adapter, const WGPUDeviceDescriptor* descriptor,
                                    WGPURequestDeviceCallbackInfo callbackInfo);
void wgpuAdapterRelease(WGPUAdapter adapter);
void wgpuSupportedFeaturesFreeMembers(WGPUSupportedFeatures features);

WGPUStatus wgpuDeviceGetLimits(WGPUDevice device, WGPULimits* limits);
void wgpuDeviceGetFeatures(WGPUDevice device, WGPUSupportedFeatures* features);
WGPUBool wgpuDeviceHasFeature(WGPUDevice device, WGPUFeatureName feature);
WGPUQueue wgpuDeviceGetQueue(WGPUDevice device);
void wgpuDevicePushErrorScope(WGPUDevice device, WGPUErrorFilter filter);
WGPUFuture wgpuDevicePopErrorScope(WGPUDevice device, WGPUPopErrorScopeCallbackInfo callbackInfo);
WGPUBuffer wgpuDeviceCreateBuffer(WGPUDevice device, const WGPUBufferDescriptor* descriptor);
void wgpuDeviceSetLoggingCallback(WGPUDevice device, WGPULoggingCallbackInfo callbackInfo);
WGPUShaderModule wgpuDeviceCreateShaderModule(WGPUDevice device,
                                              const WGPUShaderModuleDescriptor* descriptor);
WGPUComputePipeline wgpuDeviceCreateComputePipeline(WGPUDevice device,
                                                    const WGPUComputePipelineDescriptor* descriptor);
WGPUBindGroup wgpuDeviceCreateBindGroup(WGPUDevice device, const WGPUBindGroupDescriptor* descriptor);
WGPUCommandEncoder wgpuDeviceCreateCommandEncoder(WGPUDevice device,
                                                  const WGPUCommandEncoderDescriptor* descriptor);
WGPUQuerySet wgpuDeviceCreateQuerySet(WGPUDevice device, const WGPUQuerySetDescriptor* descriptor);
void wgpuDeviceDestroy(WGPUDevice device);
void wgpuDeviceRelease(WGPUDevice device);

void wgpuQueueSubmit(WGPUQueue queue, size_t commandCount, const WGPUCommandBuffer* commands);
void wgpuQueueWriteBuffer(WGPUQueue queue, WGPUBuffer buffer, uint64_t bufferOffset, const void* data,
                          size_t size);
WGPUFuture wgpuQueueOnSubmittedWorkDone(WGPUQueue queue, WGPUQueueWorkDoneCallbackInfo callbackInfo);
void wgpuQueueRelease(WGPUQueue queue);

WGPUFuture wgpuBufferMapAsync(WGPUBuffer buffer, WGPUMapMode mode, size_t offset, size_t size,
                              WGPUBufferMapCallbackInfo callbackInfo);
const void* wgpuBufferGetConstMappedRange(WGPUBuffer buffer, size_t offset, size_t size);
void wgpuBufferUnmap(WGPUBuffer buffer);
void wgpuBufferDestroy(WGPUBuffer buffer);
void wgpuBufferRelease(WGPUBuffer buffer);

void wgpuShaderModuleRelease(WGPUShaderModule shaderModule);
WGPUBindGroupLayout wgpuComputePipelineGetBindGroupLayout(WGPUComputePipeline pipeline,
                                                          uint32_t groupIndex);
void wgpuComputePipelineRelease(WGPUComputePipeline pipeline);
void wgpuBindGroupLayoutRelease(WGPUBindGroupLayout layout);
void wgpuBindGroupRelease(WGPUBindGroup bindGroup);

WGPUComputePassEncoder wgpuCommandEncoderBeginComputePass(WGPUCommandEncoder encoder,
                                                          const WGPUComputePassDescriptor* descriptor);
void wgpuCommandEncoderCopyBufferToBuffer(WGPUCommandEncoder encoder, WGPUBuffer source,
                                          uint64_t sourceOffset, WGPUBuffer destination,
                                          uint64_t destinationOffset, uint64_t size);
void wgpuCommandEncoderClearBuffer(WGPUCommandEncoder encoder, WGPUBuffer buffer, uint64_t offset,
                                   uint64_t size);
void wgpuCommandEncoderResolveQuerySet(WGPUCommandEncoder encoder, WGPUQuerySet querySet,
                                       uint32_t firstQuery, uint32_t queryCount,
                                       WGPUBuffer destination, uint64_t destinationOffset);
WGPUCommandBuffer wgpuCommandEncoderFinish(WGPUCommandEncoder encoder,
                                           const WGPUCommandBufferDescriptor* descriptor);
void wgpuCommandEncoderRelease(WGPUCommandEncoder encoder);

void wgpuComputePassEncoderSetPipeline(WGPUComputePassEncoder pass, WGPUComputePipeline pipeline);
void wgpuComputePassEncoderSetBindGroup(WGPUComputePassEncoder pass, uint32_t groupIndex,
                                        WGPUBindGroup group, size_t dynamicOffsetCount,
                                        const uint32_t* dynamicOffsets);
void wgpuComputePassEncoderDispatchWorkgroups(WGPUComputePassEncoder pass, uint32_t x, uint32_t y,
                                              uint32_t z);
void wgpuComputePassEncoderEnd(WGPUComputePassEncoder pass);
void wgpuComputePassEncoderRelease(WGPUComputePassEncoder pass);

void wgpuCommandBufferRelease(WGPUCommandBuffer commandBuffer);
void wgpuQuerySetDestroy(WGPUQuerySet querySet);
void wgpuQuerySetRelease(WGPUQuerySet querySet);

}  // extern "C"
