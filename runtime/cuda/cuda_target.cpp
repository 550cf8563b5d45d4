//===- runtime/cuda/cuda_target.cpp - Kernels on a GPU --------------------===//
//
// ExecutionTarget over the Driver API. The target retains device 0's primary
// context when it is created and, at the top of every call, makes it current
// on the calling thread if it is not (cuCtxGetCurrent costs a few
// nanoseconds; another library on the thread may have switched contexts).
//
// Kernels load at their first launch, under their KernelSpec's loadMutex:
// the manifest's architecture lists say whether the fat binary holds a cubin
// (sm_XY runs on compute capability X.y for y >= Y) or PTX (compute_XY JITs
// for any device of compute capability X.Y or later) that the device can
// run; then cuModuleLoadData lets the driver pick, exactly as it would for
// nvcc's fat binaries. A module that holds nothing for the device fails with
// NoBinaryForGpu naming both sides, before the driver is asked. The kernels
// of one image share its fat binary, which is loaded once: the first of
// them to launch loads it, the others only look up their entry function.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/cuda_target.h"

#include "runtime/cuda/cuda_driver.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <unordered_map>

namespace kiln::runtime {

namespace {

using namespace cu;

/// Dynamic shared memory a kernel may use without opting in.
constexpr uint32_t kDefaultSharedLimit = 48 * 1024;

const char *const kAxisNames[3] = {"x", "y", "z"};

uint32_t component(const Dim3 &dim, int axis) {
  return axis == 0 ? dim.x : axis == 1 ? dim.y : dim.z;
}

/// "sm_75, sm_80 and sm_86".
std::string listArchs(const std::vector<unsigned> &archs, const char *prefix) {
  std::string text;
  for (size_t i = 0; i < archs.size(); ++i) {
    if (i > 0)
      text += i + 1 == archs.size() ? " and " : ", ";
    text += prefix + std::to_string(archs[i]);
  }
  return text;
}

std::string describeKernel(const KernelSpec &spec) {
  std::string text = "kernel '" + spec.name + "'";
  if (!spec.signature.empty())
    text += " " + spec.signature;
  return text;
}

std::string formatUuid(const CUuuid &uuid) {
  // As nvidia-smi writes it: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx.
  std::string text = "GPU-";
  char digits[3];
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10)
      text += '-';
    std::snprintf(digits, sizeof digits, "%02x", static_cast<unsigned char>(uuid.bytes[i]));
    text += digits;
  }
  return text;
}

/// "0x7f3a00000000".
std::string hexAddress(DevicePointer address) {
  char text[24];
  std::snprintf(text, sizeof text, "%#llx", static_cast<unsigned long long>(address));
  return text;
}

CUstream asStream(StreamHandle stream) {
  return reinterpret_cast<CUstream>(stream);
}
CUevent asEvent(EventHandle event) {
  return reinterpret_cast<CUevent>(event);
}

class CudaTarget final : public ExecutionTarget {
public:
  CudaTarget(const CudaDriver &driver, CUdevice device, CUcontext primaryContext)
      : driver(driver), device(device), primaryContext(primaryContext) {}
  ~CudaTarget() override { (void)driver.cuDevicePrimaryCtxRelease(device); }

  /// Reads the device's properties once, at creation.
  Status readDeviceProperties();

  const char *name() const override { return "cuda"; }
  bool sharesHostMemory() const override { return false; }
  bool runsFatBinaries() const override { return true; }
  Status deviceInfo(DeviceInfo &info) override {
    info = properties;
    return Status::success();
  }
  Status driverVersion(int &version) override;

  Status allocate(size_t bytes, DevicePointer &pointer) override;
  void release(DevicePointer pointer) override;
  Status allocateManaged(size_t bytes, DevicePointer &pointer) override;
  Status memoryInfo(uint64_t &freeBytes, uint64_t &totalBytes) override;
  Status allocateHost(size_t bytes, bool mapped, void *&host) override;
  void releaseHost(void *host) override;
  Status mappedDevicePointer(void *host, DevicePointer &pointer) override;
  Status copyToDevice(DevicePointer destination, const void *source, size_t bytes,
                      StreamHandle stream) override;
  Status copyToHost(void *destination, DevicePointer source, size_t bytes,
                    StreamHandle stream) override;
  Status copyOnDevice(DevicePointer destination, DevicePointer source, size_t bytes,
                      StreamHandle stream) override;
  Status fill(DevicePointer destination, uint8_t value, size_t bytes, StreamHandle stream) override;
  Status exportIpc(DevicePointer pointer, IpcMemoryHandle &exported) override;
  Status openIpc(const unsigned char (&handle)[IpcMemoryHandle::kBytes],
                 DevicePointer &base) override;
  Status closeIpc(DevicePointer base) override;

  Status createStream(StreamHandle &stream) override;
  void destroyStream(StreamHandle stream) override;
  Status synchronizeStream(StreamHandle stream) override;
  Status queryStream(StreamHandle stream, bool &finished) override;
  Status synchronizeDevice() override;
  Status createEvent(bool timing, EventHandle &event) override;
  void destroyEvent(EventHandle event) override;
  Status recordEvent(EventHandle event, StreamHandle stream) override;
  Status synchronizeEvent(EventHandle event) override;
  Status queryEvent(EventHandle event, bool &finished) override;
  Status elapsedMilliseconds(EventHandle start, EventHandle end, float &milliseconds) override;

  Status launch(KernelSpec &spec, const LaunchDims &dims, StreamHandle stream,
                void **args) override;
  Status maxCooperativeBlocks(KernelSpec &spec, uint32_t threadsPerBlock,
                              uint32_t dynamicSharedBytes, uint32_t &blocks) override;

private:
  /// Makes the primary context current on this thread, if it is not.
  Status makeCurrent();
  Status failed(const char *call, CUresult code, const std::string &context = {}) const {
    return cudaCallFailed(driver, call, code, context);
  }
  Status validate(const KernelSpec &spec, const LaunchDims &dims) const;
  /// The spec's CUfunction, loaded on first use.
  Status function(KernelSpec &spec, CUfunction &function);
  Status load(KernelSpec &spec, CUfunction &function);
  /// Lets `function` use `dynamicBytes` of dynamic shared memory.
  Status allowDynamicShared(const KernelSpec &spec, CUfunction function, uint32_t dynamicBytes);

  const CudaDriver &driver;
  CUdevice device;
  CUcontext primaryContext;
  DeviceInfo properties;
  uint32_t maxBlockDim[3] = {1024, 1024, 64};
  uint32_t maxGridDim[3] = {2147483647u, 65535, 65535};
  uint32_t maxSharedOptIn = kDefaultSharedLimit;
  /// CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: whether cuMemAllocManaged works.
  bool managedMemory = false;

  /// The fat binaries loaded so far, by address in their mapped modules.
  /// They stay loaded for the life of the process, as the functions cached
  /// in the specs need them.
  std::mutex imagesMutex;
  std::unordered_map<const uint8_t *, CUmodule> loadedImages;

  /// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES as set so far: only
  /// ever raised, so that concurrent launches never lower another's limit.
  std::mutex sharedLimitMutex;
  std::unordered_map<CUfunction, uint32_t> sharedLimits;
};

Status CudaTarget::readDeviceProperties() {
  struct Query {
    CUdevice_attribute attribute;
    int *value;
  };
  int major = 0, minor = 0, optIn = 0, managed = 0;
  int blockDim[3] = {}, gridDim[3] = {};
  const Query queries[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &major},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &minor},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &properties.multiprocessorCount},
      {CU_DEVICE_ATTRIBUTE_WARP_SIZE, &properties.warpSize},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &properties.maxThreadsPerBlock},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, &properties.maxSharedMemoryPerBlock},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &optIn},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, &blockDim[0]},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, &blockDim[1]},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, &blockDim[2]},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, &gridDim[0]},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, &gridDim[1]},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, &gridDim[2]},
      {CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, &managed},
  };
  for (const Query &query : queries)
    if (CUresult result = driver.cuDeviceGetAttribute(query.value, query.attribute, device))
      return failed("cuDeviceGetAttribute", result,
                    "attribute " + std::to_string(query.attribute) + " of device 0");
  properties.ordinal = 0;
  properties.computeCapabilityMajor = major;
  properties.computeCapabilityMinor = minor;
  for (int axis = 0; axis < 3; ++axis) {
    if (blockDim[axis] > 0)
      maxBlockDim[axis] = static_cast<uint32_t>(blockDim[axis]);
    if (gridDim[axis] > 0)
      maxGridDim[axis] = static_cast<uint32_t>(gridDim[axis]);
  }
  maxSharedOptIn = static_cast<uint32_t>(std::max(optIn, properties.maxSharedMemoryPerBlock));
  managedMemory = managed != 0;

  char deviceName[256] = {};
  if (CUresult result = driver.cuDeviceGetName(deviceName, sizeof deviceName - 1, device))
    return failed("cuDeviceGetName", result, "device 0");
  properties.name = deviceName;
  size_t totalBytes = 0;
  if (CUresult result = driver.cuDeviceTotalMem(&totalBytes, device))
    return failed("cuDeviceTotalMem", result, "device 0");
  properties.totalMemoryBytes = totalBytes;
  CUuuid uuid = {};
  if (CUresult result = driver.cuDeviceGetUuid(&uuid, device))
    return failed("cuDeviceGetUuid", result, "device 0");
  properties.uuid = formatUuid(uuid);
  return Status::success();
}

Status CudaTarget::makeCurrent() {
  CUcontext current = nullptr;
  if (driver.cuCtxGetCurrent(&current) == CUDA_SUCCESS && current == primaryContext)
    return Status::success();
  if (CUresult result = driver.cuCtxSetCurrent(primaryContext))
    return failed("cuCtxSetCurrent", result, "making device 0's primary context current");
  return Status::success();
}

Status CudaTarget::driverVersion(int &version) {
  version = 0;
  if (CUresult result = driver.cuDriverGetVersion(&version))
    return failed("cuDriverGetVersion", result);
  return Status::success();
}

// Memory.

Status CudaTarget::allocate(size_t bytes, DevicePointer &pointer) {
  pointer = 0;
  if (bytes == 0)
    return Status::success();
  if (Status status = makeCurrent(); !status.ok())
    return status;
  CUdeviceptr address = 0;
  if (CUresult result = driver.cuMemAlloc(&address, bytes))
    return failed("cuMemAlloc", result, "allocating " + std::to_string(bytes) + " bytes");
  pointer = address;
  return Status::success();
}

void CudaTarget::release(DevicePointer pointer) {
  if (pointer == 0 || !makeCurrent().ok())
    return;
  (void)driver.cuMemFree(pointer);
}

Status CudaTarget::exportIpc(DevicePointer pointer, IpcMemoryHandle &exported) {
  static_assert(sizeof(CUipcMemHandle) == IpcMemoryHandle::kBytes);
  exported = {};
  if (Status status = makeCurrent(); !status.ok())
    return status;
  CUdeviceptr base = 0;
  size_t size = 0;
  if (CUresult result = driver.cuMemGetAddressRange(&base, &size, pointer))
    return failed("cuMemGetAddressRange", result,
                  "finding the allocation that holds " + hexAddress(pointer));
  CUipcMemHandle handle;
  if (CUresult result = driver.cuIpcGetMemHandle(&handle, base))
    return failed("cuIpcGetMemHandle", result, "exporting the allocation at " + hexAddress(base));
  std::memcpy(exported.handle, handle.reserved, IpcMemoryHandle::kBytes);
  exported.base = base;
  exported.size = size;
  return Status::success();
}

Status CudaTarget::openIpc(const unsigned char (&handle)[IpcMemoryHandle::kBytes],
                           DevicePointer &base) {
  base = 0;
  if (Status status = makeCurrent(); !status.ok())
    return status;
  CUipcMemHandle driverHandle;
  std::memcpy(driverHandle.reserved, handle, IpcMemoryHandle::kBytes);
  CUdeviceptr address = 0;
  if (CUresult result =
          driver.cuIpcOpenMemHandle(&address, driverHandle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS))
    return failed("cuIpcOpenMemHandle", result, "opening another process's device memory");
  base = address;
  return Status::success();
}

Status CudaTarget::closeIpc(DevicePointer base) {
  if (Status status = makeCurrent(); !status.ok())
    return status;
  if (CUresult result = driver.cuIpcCloseMemHandle(base))
    return failed("cuIpcCloseMemHandle", result, "closing the IPC memory at " + hexAddress(base));
  return Status::success();
}

Status CudaTarget::allocateManaged(size_t bytes, DevicePointer &pointer) {
  pointer = 0;
  if (!managedMemory)
    return Status::error(ErrorKind::Unavailable,
                         "managed memory is not supported on device 0 (" + properties.name +
                             "): it reports CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY = 0; use device "
                             "memory (device_array) or mapped host memory (mapped_array) "
                             "instead");
  if (bytes == 0)
    return Status::success();
  if (Status status = makeCurrent(); !status.ok())
    return status;
  CUdeviceptr address = 0;
  if (CUresult result = driver.cuMemAllocManaged(&address, bytes, CU_MEM_ATTACH_GLOBAL))
    return failed("cuMemAllocManaged", result,
                  "allocating " + std::to_string(bytes) + " bytes of managed memory");
  pointer = address;
  return Status::success();
}

Status CudaTarget::memoryInfo(uint64_t &freeBytes, uint64_t &totalBytes) {
  freeBytes = totalBytes = 0;
  if (Status status = makeCurrent(); !status.ok())
    return status;
  size_t available = 0, total = 0;
  if (CUresult result = driver.cuMemGetInfo(&available, &total))
    return failed("cuMemGetInfo", result, "device 0");
  freeBytes = available;
  totalBytes = total;
  return Status::success();
}

Status CudaTarget::allocateHost(size_t bytes, bool mapped, void *&host) {
  host = nullptr;
  if (Status status = makeCurrent(); !status.ok())
    return status;
  unsigned flags = mapped ? CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE : 0;
  // A zero-byte request still gets an address, so that buffers stay valid.
  if (CUresult result = driver.cuMemHostAlloc(&host, std::max<size_t>(bytes, 1), flags))
    return failed("cuMemHostAlloc", result,
                  "allocating " + std::to_string(bytes) + " bytes of " +
                      (mapped ? "mapped" : "pinned") + " host memory");
  return Status::success();
}

void CudaTarget::releaseHost(void *host) {
  if (!host || !makeCurrent().ok())
    return;
  (void)driver.cuMemFreeHost(host);
}

Status CudaTarget::mappedDevicePointer(void *host, DevicePointer &pointer) {
  pointer = 0;
  if (Status status = makeCurrent(); !status.ok())
    return status;
  CUdeviceptr address = 0;
  if (CUresult result = driver.cuMemHostGetDevicePointer(&address, host, 0))
    return failed("cuMemHostGetDevicePointer", result, "mapping host memory into the device");
  pointer = address;
  return Status::success();
}

Status CudaTarget::copyToDevice(DevicePointer destination, const void *source, size_t bytes,
                                StreamHandle stream) {
  if (bytes == 0)
    return Status::success();
  if (Status status = makeCurrent(); !status.ok())
    return status;
  if (CUresult result = driver.cuMemcpyHtoDAsync(destination, source, bytes, asStream(stream)))
    return failed("cuMemcpyHtoDAsync", result,
                  "copying " + std::to_string(bytes) + " bytes to the device");
  return Status::success();
}

Status CudaTarget::copyToHost(void *destination, DevicePointer source, size_t bytes,
                              StreamHandle stream) {
  if (bytes == 0)
    return Status::success();
  if (Status status = makeCurrent(); !status.ok())
    return status;
  if (CUresult result = driver.cuMemcpyDtoHAsync(destination, source, bytes, asStream(stream)))
    return failed("cuMemcpyDtoHAsync", result,
                  "copying " + std::to_string(bytes) + " bytes to the host");
  return Status::success();
}

Status CudaTarget::copyOnDevice(DevicePointer destination, DevicePointer source, size_t bytes,
                                StreamHandle stream) {
  if (bytes == 0)
    return Status::success();
  if (Status status = makeCurrent(); !status.ok())
    return status;
  if (CUresult result = driver.cuMemcpyDtoDAsync(destination, source, bytes, asStream(stream)))
    return failed("cuMemcpyDtoDAsync", result,
                  "copying " + std::to_string(bytes) + " bytes on the device");
  return Status::success();
}

Status CudaTarget::fill(DevicePointer destination, uint8_t value, size_t bytes,
                        StreamHandle stream) {
  if (bytes == 0)
    return Status::success();
  if (Status status = makeCurrent(); !status.ok())
    return status;
  if (CUresult result = driver.cuMemsetD8Async(destination, value, bytes, asStream(stream)))
    return failed("cuMemsetD8Async", result, "filling " + std::to_string(bytes) + " bytes");
  return Status::success();
}

// Streams and events.

Status CudaTarget::createStream(StreamHandle &stream) {
  stream = 0;
  if (Status status = makeCurrent(); !status.ok())
    return status;
  CUstream created = nullptr;
  if (CUresult result = driver.cuStreamCreate(&created, CU_STREAM_DEFAULT))
    return failed("cuStreamCreate", result);
  stream = reinterpret_cast<StreamHandle>(created);
  return Status::success();
}

void CudaTarget::destroyStream(StreamHandle stream) {
  if (stream == 0 || !makeCurrent().ok())
    return;
  (void)driver.cuStreamDestroy(asStream(stream));
}

Status CudaTarget::synchronizeStream(StreamHandle stream) {
  if (Status status = makeCurrent(); !status.ok())
    return status;
  if (CUresult result = driver.cuStreamSynchronize(asStream(stream)))
    return failed("cuStreamSynchronize", result);
  return Status::success();
}

Status CudaTarget::queryStream(StreamHandle stream, bool &finished) {
  finished = false;
  if (Status status = makeCurrent(); !status.ok())
    return status;
  CUresult result = driver.cuStreamQuery(asStream(stream));
  if (result == CUDA_ERROR_NOT_READY)
    return Status::success();
  if (result != CUDA_SUCCESS)
    return failed("cuStreamQuery", result);
  finished = true;
  return Status::success();
}

Status CudaTarget::synchronizeDevice() {
  if (Status status = makeCurrent(); !status.ok())
    return status;
  if (CUresult result = driver.cuCtxSynchronize())
    return failed("cuCtxSynchronize", result);
  return Status::success();
}

Status CudaTarget::createEvent(bool timing, EventHandle &event) {
  event = 0;
  if (Status status = makeCurrent(); !status.ok())
    return status;
  CUevent created = nullptr;
  if (CUresult result =
          driver.cuEventCreate(&created, timing ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING))
    return failed("cuEventCreate", result);
  event = reinterpret_cast<EventHandle>(created);
  return Status::success();
}

void CudaTarget::destroyEvent(EventHandle event) {
  if (event == 0 || !makeCurrent().ok())
    return;
  (void)driver.cuEventDestroy(asEvent(event));
}

Status CudaTarget::recordEvent(EventHandle event, StreamHandle stream) {
  if (Status status = makeCurrent(); !status.ok())
    return status;
  if (CUresult result = driver.cuEventRecord(asEvent(event), asStream(stream)))
    return failed("cuEventRecord", result);
  return Status::success();
}

Status CudaTarget::synchronizeEvent(EventHandle event) {
  if (Status status = makeCurrent(); !status.ok())
    return status;
  if (CUresult result = driver.cuEventSynchronize(asEvent(event)))
    return failed("cuEventSynchronize", result);
  return Status::success();
}

Status CudaTarget::queryEvent(EventHandle event, bool &finished) {
  finished = false;
  if (Status status = makeCurrent(); !status.ok())
    return status;
  CUresult result = driver.cuEventQuery(asEvent(event));
  if (result == CUDA_ERROR_NOT_READY)
    return Status::success();
  if (result != CUDA_SUCCESS)
    return failed("cuEventQuery", result);
  finished = true;
  return Status::success();
}

Status CudaTarget::elapsedMilliseconds(EventHandle start, EventHandle end, float &milliseconds) {
  milliseconds = 0;
  if (Status status = makeCurrent(); !status.ok())
    return status;
  if (CUresult result = driver.cuEventElapsedTime(&milliseconds, asEvent(start), asEvent(end)))
    return failed("cuEventElapsedTime", result);
  return Status::success();
}

// Kernels.

Status CudaTarget::validate(const KernelSpec &spec, const LaunchDims &dims) const {
  auto invalid = [&](const std::string &problem) {
    return Status::error(ErrorKind::InvalidLaunch,
                         "invalid launch of kernel '" + spec.name + "': " + problem);
  };
  for (int axis = 0; axis < 3; ++axis)
    if (component(dims.grid, axis) == 0)
      return invalid(std::string("grid dimension ") + kAxisNames[axis] +
                     " is 0; every dimension must be at least 1");
  for (int axis = 0; axis < 3; ++axis)
    if (component(dims.block, axis) == 0)
      return invalid(std::string("block dimension ") + kAxisNames[axis] +
                     " is 0; every dimension must be at least 1");
  for (int axis = 0; axis < 3; ++axis) {
    uint32_t value = component(dims.block, axis);
    if (value > maxBlockDim[axis])
      return invalid(std::string("block dimension ") + kAxisNames[axis] + " is " +
                     std::to_string(value) + ", above the device's limit of " +
                     std::to_string(maxBlockDim[axis]));
  }
  uint64_t threads = uint64_t(dims.block.x) * dims.block.y * dims.block.z;
  if (threads > uint64_t(properties.maxThreadsPerBlock))
    return invalid("a block of " + std::to_string(dims.block.x) + " x " +
                   std::to_string(dims.block.y) + " x " + std::to_string(dims.block.z) + " = " +
                   std::to_string(threads) + " threads is above the device's limit of " +
                   std::to_string(properties.maxThreadsPerBlock) + " threads per block");
  for (int axis = 0; axis < 3; ++axis) {
    uint32_t value = component(dims.grid, axis);
    if (value > maxGridDim[axis])
      return invalid(std::string("grid dimension ") + kAxisNames[axis] + " is " +
                     std::to_string(value) + ", above the device's limit of " +
                     std::to_string(maxGridDim[axis]));
  }
  uint64_t shared = uint64_t(spec.staticSharedBytes) + dims.dynamicSharedBytes;
  if (shared > maxSharedOptIn)
    return invalid(std::to_string(spec.staticSharedBytes) + " bytes of static and " +
                   std::to_string(dims.dynamicSharedBytes) + " bytes of dynamic shared memory (" +
                   std::to_string(shared) + " bytes) are above the device's limit of " +
                   std::to_string(maxSharedOptIn) + " bytes per block");
  return Status::success();
}

Status CudaTarget::function(KernelSpec &spec, CUfunction &function) {
  if (uintptr_t loaded = spec.gpuFunction.load(std::memory_order_acquire)) {
    function = reinterpret_cast<CUfunction>(loaded);
    return Status::success();
  }
  std::lock_guard<std::mutex> lock(spec.loadMutex);
  if (uintptr_t loaded = spec.gpuFunction.load(std::memory_order_acquire)) {
    function = reinterpret_cast<CUfunction>(loaded);
    return Status::success();
  }
  if (Status status = load(spec, function); !status.ok())
    return status;
  spec.gpuFunction.store(reinterpret_cast<uintptr_t>(function), std::memory_order_release);
  return Status::success();
}

Status CudaTarget::load(KernelSpec &spec, CUfunction &function) {
  unsigned major = static_cast<unsigned>(properties.computeCapabilityMajor);
  unsigned minor = static_cast<unsigned>(properties.computeCapabilityMinor);
  unsigned deviceArch = major * 10 + minor;
  bool cubinFits = std::any_of(spec.cubinArchs.begin(), spec.cubinArchs.end(), [&](unsigned arch) {
    return arch / 10 == major && arch % 10 <= minor;
  });
  bool ptxFits = std::any_of(spec.ptxArchs.begin(), spec.ptxArchs.end(),
                             [&](unsigned arch) { return arch <= deviceArch; });
  if (!cubinFits && !ptxFits) {
    std::string held;
    if (!spec.cubinArchs.empty())
      held += "cubins for " + listArchs(spec.cubinArchs, "sm_");
    if (!spec.ptxArchs.empty())
      held += std::string(held.empty() ? "" : " and ") + "PTX for " +
              listArchs(spec.ptxArchs, "compute_");
    if (held.empty())
      held = "no cubin and no PTX";
    return Status::error(ErrorKind::NoBinaryForGpu,
                         "no binary for the GPU: " + describeKernel(spec) + " cannot run on " +
                             properties.name + " (sm_" + std::to_string(deviceArch) +
                             ", compute capability " + std::to_string(major) + "." +
                             std::to_string(minor) + "): the module holds " + held +
                             "; rebuild it with --arch naming sm_" + std::to_string(deviceArch));
  }
  if (!spec.fatbin || spec.fatbinSize == 0)
    return Status::error(ErrorKind::Internal, describeKernel(spec) + " has no fat binary");

  std::lock_guard<std::mutex> lock(imagesMutex);
  CUmodule &module = loadedImages[spec.fatbin];
  if (!module)
    if (CUresult result = driver.cuModuleLoadData(&module, spec.fatbin)) {
      loadedImages.erase(spec.fatbin);
      return failed("cuModuleLoadData", result,
                    "loading " + describeKernel(spec) +
                        (cubinFits ? ""
                                   : " from PTX, which the driver compiles for sm_" +
                                         std::to_string(deviceArch)));
    }
  if (CUresult result = driver.cuModuleGetFunction(&function, module, spec.entryName.c_str()))
    return failed("cuModuleGetFunction", result,
                  "entry '" + spec.entryName + "' of " + describeKernel(spec));
  return Status::success();
}

Status CudaTarget::allowDynamicShared(const KernelSpec &spec, CUfunction function,
                                      uint32_t dynamicBytes) {
  std::lock_guard<std::mutex> lock(sharedLimitMutex);
  uint32_t &limit = sharedLimits[function];
  if (limit >= dynamicBytes)
    return Status::success();
  if (CUresult result =
          driver.cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                    static_cast<int>(dynamicBytes)))
    return failed("cuFuncSetAttribute", result,
                  "allowing " + std::to_string(dynamicBytes) +
                      " bytes of dynamic shared memory for " + describeKernel(spec));
  limit = dynamicBytes;
  return Status::success();
}

Status CudaTarget::launch(KernelSpec &spec, const LaunchDims &dims, StreamHandle stream,
                          void **args) {
  if (Status status = validate(spec, dims); !status.ok())
    return status;
  if (Status status = makeCurrent(); !status.ok())
    return status;
  CUfunction loaded = nullptr;
  if (Status status = function(spec, loaded); !status.ok())
    return status;
  if (uint64_t(spec.staticSharedBytes) + dims.dynamicSharedBytes > kDefaultSharedLimit)
    if (Status status = allowDynamicShared(spec, loaded, dims.dynamicSharedBytes); !status.ok())
      return status;
  // A kernel that syncs the grid needs every block resident: the driver
  // guarantees it for a cooperative launch (or refuses the launch), and
  // gives the launch the workspace its grid barrier counts arrivals in.
  if (spec.cooperative) {
    if (CUresult result = driver.cuLaunchCooperativeKernel(
            loaded, dims.grid.x, dims.grid.y, dims.grid.z, dims.block.x, dims.block.y, dims.block.z,
            dims.dynamicSharedBytes, asStream(stream), args))
      return failed("cuLaunchCooperativeKernel", result,
                    "launching " + describeKernel(spec) +
                        " (a cooperative launch: its grid may have at most "
                        "max_cooperative_grid_blocks() blocks)");
    return Status::success();
  }
  if (CUresult result = driver.cuLaunchKernel(
          loaded, dims.grid.x, dims.grid.y, dims.grid.z, dims.block.x, dims.block.y, dims.block.z,
          dims.dynamicSharedBytes, asStream(stream), args, nullptr))
    return failed("cuLaunchKernel", result, "launching " + describeKernel(spec));
  return Status::success();
}

Status CudaTarget::maxCooperativeBlocks(KernelSpec &spec, uint32_t threadsPerBlock,
                                        uint32_t dynamicSharedBytes, uint32_t &blocks) {
  blocks = 0;
  if (Status status = makeCurrent(); !status.ok())
    return status;
  CUfunction loaded = nullptr;
  if (Status status = function(spec, loaded); !status.ok())
    return status;
  int perMultiprocessor = 0;
  if (CUresult result = driver.cuOccupancyMaxActiveBlocksPerMultiprocessor(
          &perMultiprocessor, loaded, static_cast<int>(threadsPerBlock), dynamicSharedBytes))
    return failed("cuOccupancyMaxActiveBlocksPerMultiprocessor", result,
                  "for " + describeKernel(spec));
  blocks = static_cast<uint32_t>(perMultiprocessor) *
           static_cast<uint32_t>(properties.multiprocessorCount);
  return Status::success();
}

} // namespace

std::unique_ptr<ExecutionTarget> createCudaTarget(Status &why) {
  const CudaDriver *driver = loadCudaDriver(why);
  if (!driver)
    return nullptr;
  auto unavailable = [&](const char *call, CUresult code, const std::string &context) {
    Status failure = cudaCallFailed(*driver, call, code, context);
    return Status::error(ErrorKind::Unavailable, failure.message());
  };

  if (CUresult result = driver->cuInit(0)) {
    why = result == CUDA_ERROR_NO_DEVICE
              ? Status::error(ErrorKind::Unavailable,
                              "no CUDA device: cuInit reports CUDA_ERROR_NO_DEVICE (driver '" +
                                  driver->libraryPath + "')")
              : unavailable("cuInit", result, "driver '" + driver->libraryPath + "'");
    return nullptr;
  }
  int count = 0;
  if (CUresult result = driver->cuDeviceGetCount(&count)) {
    why = unavailable("cuDeviceGetCount", result, "driver '" + driver->libraryPath + "'");
    return nullptr;
  }
  if (count == 0) {
    why = Status::error(ErrorKind::Unavailable,
                        "no CUDA device: the driver '" + driver->libraryPath + "' reports none");
    return nullptr;
  }
  CUdevice device = 0;
  if (CUresult result = driver->cuDeviceGet(&device, 0)) {
    why = unavailable("cuDeviceGet", result, "device 0");
    return nullptr;
  }
  CUcontext context = nullptr;
  if (CUresult result = driver->cuDevicePrimaryCtxRetain(&context, device)) {
    why = unavailable("cuDevicePrimaryCtxRetain", result, "device 0");
    return nullptr;
  }
  auto target = std::make_unique<CudaTarget>(*driver, device, context);
  if (CUresult result = driver->cuCtxSetCurrent(context)) {
    why = unavailable("cuCtxSetCurrent", result, "device 0's primary context");
    return nullptr;
  }
  if (Status status = target->readDeviceProperties(); !status.ok()) {
    why = Status::error(ErrorKind::Unavailable, status.message());
    return nullptr;
  }
  return target;
}

} // namespace kiln::runtime
