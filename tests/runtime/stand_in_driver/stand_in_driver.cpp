//===- tests/runtime/stand_in_driver/stand_in_driver.cpp - Test stand-in ===//
//
// [Note: the stand-in CUDA driver]
// A TEST STAND-IN, NOT A DRIVER: a shared library that exports the Driver
// API entry points Kiln's CUDA target calls (runtime/cuda/cuda_driver_api.h),
// so that the tests can drive the GPU path on machines without a GPU, with
// KILN_CUDA_DRIVER=<path of this library>. It simulates one device:
//
//   - device memory is host memory, so copies and fills really move bytes;
//     managed memory too (cuMemAllocManaged), which the host then reads and
//     writes in place as it would on a GPU; cuMemGetInfo_v2 reports 16 GiB
//     less what is allocated on the device (device and managed memory);
//   - device allocations (cuMemAlloc_v2) are shareable memory, each a memfd
//     mapped MAP_SHARED, so CUDA IPC works across real processes:
//     cuIpcGetMemHandle's handle names the exporting process and its memfd
//     (see IpcHandle), and cuIpcOpenMemHandle_v2 in another process maps
//     /proc/<pid>/fd/<fd>, a mapping that copies, fills and launches take
//     as device memory until cuIpcCloseMemHandle; a process cannot open its
//     own handles (CUDA_ERROR_INVALID_CONTEXT), as with a driver;
//   - streams and events complete at once (queries say "finished");
//   - cuModuleLoadData reads the fat binary (backend/cuda_tools/fatbin_reader.h), picks
//     the image a driver would (a cubin sm_XY for compute capability X.y,
//     y >= Y, else PTX compute_XY for X.Y or later, else
//     CUDA_ERROR_NO_BINARY_FOR_GPU) and keeps the PTX's .entry lists;
//   - cuLaunchKernel checks the configuration as a driver does and logs every
//     parameter's bytes, read from kernelParams[i] with the size its PTX
//     .param declares. It never runs a kernel: the tests check results on the
//     CPU engine.
//
// Environment, read at each call:
//   KILN_STAND_IN_COMPUTE_CAPABILITY  "8.0" by default
//   KILN_STAND_IN_DEVICE_COUNT        1 by default; 0 simulates no device
//   KILN_STAND_IN_MANAGED_MEMORY      "0" simulates a device without managed
//                                     memory (CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY
//                                     is 0 and cuMemAllocManaged fails with
//                                     CUDA_ERROR_NOT_SUPPORTED); 1 by default
//   KILN_STAND_IN_FAIL                "cuMemAlloc_v2=CUDA_ERROR_OUT_OF_MEMORY,cuLaunchKernel":
//                                     those calls fail with that error (by
//                                     name or number; CUDA_ERROR_UNKNOWN if
//                                     none is given) and do nothing else
//   KILN_STAND_IN_LOG                 the JSON-lines call log (stand_in_log.h)
//
//===----------------------------------------------------------------------===//

#include "backend/cuda_tools/fatbin_reader.h"
#include "runtime/cuda/cuda_driver_api.h"
#include "tests/runtime/stand_in_driver/ptx_params.h"
#include "tests/runtime/stand_in_driver/stand_in_errors.h"
#include "tests/runtime/stand_in_driver/stand_in_log.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <sys/mman.h>
#include <sys/stat.h>
#include <type_traits>
#include <unistd.h>
#include <vector>

using namespace kiln::runtime::cu;
using namespace kiln::stand_in;

#define STAND_IN_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

constexpr uint32_t kFatbinMagic = 0xBA55ED50u;
constexpr int kDefaultSharedLimit = 48 * 1024;
/// The simulated device's memory: cuDeviceTotalMem_v2, cuMemGetInfo_v2.
constexpr size_t kDeviceMemoryBytes = size_t(16) << 30;

struct Config {
  int major = 8;
  int minor = 0;
  int deviceCount = 1;
  bool managedMemory = true;
  int arch() const { return major * 10 + minor; }
  /// cudaDevAttrMaxSharedMemoryPerBlockOptin of real devices of this arch.
  int sharedOptIn() const {
    switch (arch()) {
    case 70:
      return 98304;
    case 75:
      return 65536;
    case 80:
    case 87:
      return 166912;
    case 90:
    case 100:
    case 103:
      return 232448;
    default:
      return arch() < 70 ? kDefaultSharedLimit : 101376;
    }
  }
};

Config readConfig() {
  Config config;
  if (const char *text = std::getenv("KILN_STAND_IN_COMPUTE_CAPABILITY")) {
    char *end = nullptr;
    config.major = static_cast<int>(std::strtol(text, &end, 10));
    config.minor = end && *end == '.' ? static_cast<int>(std::strtol(end + 1, nullptr, 10)) : 0;
  }
  if (const char *text = std::getenv("KILN_STAND_IN_DEVICE_COUNT"))
    config.deviceCount = std::atoi(text);
  if (const char *text = std::getenv("KILN_STAND_IN_MANAGED_MEMORY"))
    config.managedMemory = std::strcmp(text, "0") != 0;
  return config;
}

/// The error KILN_STAND_IN_FAIL names for `symbol`, or CUDA_SUCCESS.
CUresult injectedFailure(const char *symbol) {
  const char *text = std::getenv("KILN_STAND_IN_FAIL");
  if (!text || !*text)
    return CUDA_SUCCESS;
  std::string list = text;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = std::min(list.find(',', start), list.size());
    std::string item = list.substr(start, comma - start);
    start = comma + 1;
    size_t equals = item.find('=');
    if (item.substr(0, equals) != symbol)
      continue;
    if (equals == std::string::npos)
      return CUDA_ERROR_UNKNOWN;
    int code = parseError(item.c_str() + equals + 1);
    return code > 0 ? code : CUDA_ERROR_UNKNOWN;
  }
  return CUDA_SUCCESS;
}

/// What a CUipcMemHandle names: a memfd of the exporting process.
struct IpcSource {
  int32_t pid = 0;
  int32_t fd = -1;
  /// The memfd's inode and device: a handle of freed memory whose fd number
  /// was reused names another file, which cuIpcOpenMemHandle_v2 then refuses.
  uint64_t inode = 0;
  uint64_t device = 0;
  bool operator==(const IpcSource &other) const {
    return pid == other.pid && fd == other.fd && inode == other.inode && device == other.device;
  }
};

struct Allocation {
  uint64_t size = 0;
  bool host = false;
  unsigned flags = 0;
  /// From cuMemAllocManaged: freed with cuMemFree_v2, as device memory is.
  bool managed = false;
  /// Device memory (cuMemAlloc_v2): the memfd behind the mapping (-1 for
  /// the others: aligned_alloc's, or an IPC mapping, which keeps no fd).
  int fd = -1;
  /// Device memory and IPC mappings: the length munmap takes.
  uint64_t mappedBytes = 0;
  /// Opened with cuIpcOpenMemHandle_v2 from `source`, `opens` times not
  /// yet closed; released by cuIpcCloseMemHandle only. Device memory keeps
  /// its memfd's inode and device in `source` for its handles.
  bool imported = false;
  IpcSource source;
  int opens = 0;
};

/// The bytes of a CUipcMemHandle the stand-in makes (the rest are zero).
struct IpcHandle {
  char magic[8];
  int32_t pid;
  int32_t fd;
  uint64_t size;
  uint64_t inode;
  uint64_t device;
};
static_assert(sizeof(IpcHandle) <= CU_IPC_HANDLE_SIZE);
constexpr char kIpcMagic[8] = {'K', 'i', 'l', 'n', 'I', 'P', 'C', '1'};

struct StandInStream {
  uint64_t id = 0;
};

struct StandInEvent {
  uint64_t id = 0;
  unsigned flags = 0;
  bool recorded = false;
  std::chrono::steady_clock::time_point when;
};

struct StandInModule {
  uint64_t id = 0;
  /// The image a driver would load: "sm_80 cubin", "compute_90 PTX".
  std::string selected;
  /// Whether the module had PTX to read the entries from.
  bool hasPtx = false;
  std::vector<PtxEntry> entries;
};

/// Multiprocessors of the stand-in device (CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT).
constexpr int kStandInMultiprocessors = 108;

struct StandInFunction {
  uint64_t id = 0;
  StandInModule *module = nullptr;
  std::string name;
  /// Null when the module had no PTX (parameters unknown).
  const PtxEntry *entry = nullptr;
  int maxDynamicShared = kDefaultSharedLimit;
};

struct State {
  std::mutex mutex;
  bool initialized = false;
  int primaryRetains = 0;
  uint64_t sequence = 0;
  int threads = 0;
  uint64_t nextId = 1;
  std::map<uintptr_t, Allocation> allocations;
  std::set<StandInStream *> streams;
  std::set<StandInEvent *> events;
  std::set<StandInModule *> modules;
  std::set<StandInFunction *> functions;
};

State &state() {
  static State *instance = new State; // Never destroyed: calls may come at exit.
  return *instance;
}

int primaryContextObject;
CUcontext primaryContext() {
  return reinterpret_cast<CUcontext>(&primaryContextObject);
}
thread_local CUcontext currentContext = nullptr;
thread_local int threadNumber = 0;

std::string resultName(CUresult result) {
  const char *name = errorName(result);
  return name ? name : std::to_string(result);
}

std::string hexBytes(const void *data, uint64_t size) {
  static const char digits[] = "0123456789abcdef";
  std::string text;
  const auto *bytes = static_cast<const unsigned char *>(data);
  for (uint64_t i = 0; i < size; ++i) {
    text += digits[bytes[i] >> 4];
    text += digits[bytes[i] & 15];
  }
  return text;
}

std::string dimsJson(unsigned x, unsigned y, unsigned z) {
  return "[" + std::to_string(x) + "," + std::to_string(y) + "," + std::to_string(z) + "]";
}

/// One call: holds the stand-in's lock, builds the log line, and checks
/// what every call checks.
class Call {
public:
  explicit Call(const char *symbol) : log(logEnabled()), lock(state().mutex), symbol(symbol) {
    if (!threadNumber)
      threadNumber = ++state().threads;
    log.number("seq", ++state().sequence)
        .number("thread", static_cast<uint64_t>(threadNumber))
        .string("call", symbol);
  }

  JsonObject log;

  /// An injected failure, else CUDA_ERROR_NOT_INITIALIZED before cuInit
  /// (when `needsInit`), else CUDA_ERROR_INVALID_CONTEXT without the primary
  /// context current on the thread (when `needsContext`).
  CUresult check(bool needsInit, bool needsContext) {
    if (CUresult injected = injectedFailure(symbol)) {
      log.boolean("injected", true);
      return injected;
    }
    if (needsInit && !state().initialized)
      return CUDA_ERROR_NOT_INITIALIZED;
    if (needsContext && (currentContext != primaryContext() || state().primaryRetains == 0))
      return CUDA_ERROR_INVALID_CONTEXT;
    return CUDA_SUCCESS;
  }

  CUresult finish(CUresult result) {
    if (!log.isEnabled())
      return result;
    log.string("result", resultName(result));
    writeLogLine(log.text());
    return result;
  }
  /// finish() with a note saying why the stand-in refused.
  CUresult refuse(CUresult result, const std::string &why) {
    log.string("why", why);
    return finish(result);
  }

private:
  std::lock_guard<std::mutex> lock;
  const char *symbol;
};

using AllocationEntry = std::pair<const uintptr_t, Allocation>;

/// The allocation (of any kind) that starts last at or before `address`,
/// or null.
AllocationEntry *allocationFrom(uint64_t address) {
  auto &allocations = state().allocations;
  auto after = allocations.upper_bound(static_cast<uintptr_t>(address));
  return after == allocations.begin() ? nullptr : &*std::prev(after);
}

/// The allocation (of any kind) whose bytes include `address`, or null.
AllocationEntry *allocationHolding(uint64_t address) {
  AllocationEntry *found = allocationFrom(address);
  return found && address < found->first + found->second.size ? found : nullptr;
}

/// Whether [address, address + bytes) lies in one allocation the device can
/// reach (device memory, or host memory the stand-in allocated).
bool deviceAccessible(uint64_t address, uint64_t bytes) {
  AllocationEntry *found = allocationFrom(address);
  return found && address + bytes <= found->first + found->second.size;
}

bool validStream(CUstream stream) {
  auto handle = reinterpret_cast<uintptr_t>(stream);
  return handle == 0 || handle == CU_STREAM_LEGACY_HANDLE ||
         handle == CU_STREAM_PER_THREAD_HANDLE ||
         state().streams.count(reinterpret_cast<StandInStream *>(stream));
}

uint64_t handleNumber(const void *handle) {
  return reinterpret_cast<uintptr_t>(handle);
}

CUresult copy(Call &call, void *destination, const void *source, size_t bytes, CUstream stream,
              bool checkDestination, bool checkSource) {
  if (CUresult result = call.check(true, true))
    return call.finish(result);
  if (!validStream(stream))
    return call.refuse(CUDA_ERROR_INVALID_HANDLE, "unknown stream");
  if (checkDestination && !deviceAccessible(reinterpret_cast<uintptr_t>(destination), bytes))
    return call.refuse(CUDA_ERROR_INVALID_VALUE, "destination is not in a device allocation");
  if (checkSource && !deviceAccessible(reinterpret_cast<uintptr_t>(source), bytes))
    return call.refuse(CUDA_ERROR_INVALID_VALUE, "source is not in a device allocation");
  if (bytes)
    std::memmove(destination, source, bytes);
  return call.finish(CUDA_SUCCESS);
}

/// Reads the fat binary or PTX at `image` into `module`; CUDA_SUCCESS, or
/// the error a driver would give.
CUresult readImage(Call &call, const void *image, StandInModule &module) {
  Config config = readConfig();
  uint32_t magic = 0;
  std::memcpy(&magic, image, 4);
  if (magic != kFatbinMagic) {
    std::string text(static_cast<const char *>(image));
    if (text.find(".version") == std::string::npos || text.find(".target") == std::string::npos)
      return call.refuse(CUDA_ERROR_INVALID_IMAGE,
                         "the stand-in reads fat binaries and PTX text only");
    unsigned arch = ptxTargetArch(text);
    call.log.string("image", "PTX text");
    if (arch > unsigned(config.arch()))
      return call.refuse(CUDA_ERROR_NO_BINARY_FOR_GPU, "the PTX targets a newer device");
    module.selected = "compute_" + std::to_string(arch) + " PTX";
    module.hasPtx = true;
    module.entries = readPtxEntries(text);
    return CUDA_SUCCESS;
  }

  // The first container: its header, then `size` bytes of entries.
  const auto *bytes = static_cast<const char *>(image);
  uint16_t headerSize = 0;
  uint64_t size = 0;
  std::memcpy(&headerSize, bytes + 6, 2);
  std::memcpy(&size, bytes + 8, 8);
  llvm::Expected<std::vector<kiln::cuda_tools::FatbinEntry>> entries =
      kiln::cuda_tools::readFatbin(llvm::StringRef(bytes, headerSize + size));
  if (!entries) {
    std::string message = llvm::toString(entries.takeError());
    return call.refuse(CUDA_ERROR_INVALID_IMAGE, "unreadable fat binary: " + message);
  }
  std::string images = "[";
  const kiln::cuda_tools::FatbinEntry *cubin = nullptr, *ptx = nullptr, *newestPtx = nullptr;
  for (const kiln::cuda_tools::FatbinEntry &entry : *entries) {
    images += (images.size() > 1 ? "," : "") + jsonString(entry.label());
    int arch = static_cast<int>(entry.arch);
    if (entry.kind == kiln::cuda_tools::FatbinEntryKind::Cubin && arch / 10 == config.major &&
        arch % 10 <= config.minor && (!cubin || entry.arch > cubin->arch))
      cubin = &entry;
    if (entry.kind == kiln::cuda_tools::FatbinEntryKind::Ptx) {
      if (arch <= config.arch() && (!ptx || entry.arch > ptx->arch))
        ptx = &entry;
      if (!entry.compressed() && (!newestPtx || entry.arch > newestPtx->arch))
        newestPtx = &entry;
    }
  }
  call.log.raw("images", images + "]");
  if (!cubin && !ptx)
    return call.refuse(CUDA_ERROR_NO_BINARY_FOR_GPU,
                       "nothing in the fat binary runs on sm_" + std::to_string(config.arch()));
  module.selected = cubin ? cubin->label() : ptx->label();
  // The parameters come from the PTX: the loaded one, else any.
  const kiln::cuda_tools::FatbinEntry *source = ptx && !ptx->compressed() ? ptx : newestPtx;
  if (source) {
    module.hasPtx = true;
    module.entries = readPtxEntries(source->image);
    call.log.string("params_from", source->label());
  }
  return CUDA_SUCCESS;
}

} // namespace

// Initialization, errors and devices.

STAND_IN_EXPORT CUresult cuInit(unsigned int flags) {
  Call call("cuInit");
  call.log.number("flags", flags);
  if (CUresult result = call.check(false, false))
    return call.finish(result);
  if (readConfig().deviceCount <= 0)
    return call.finish(CUDA_ERROR_NO_DEVICE);
  state().initialized = true;
  return call.finish(CUDA_SUCCESS);
}

STAND_IN_EXPORT CUresult cuDriverGetVersion(int *driverVersion) {
  Call call("cuDriverGetVersion");
  if (CUresult result = call.check(false, false))
    return call.finish(result);
  *driverVersion = 13000;
  return call.finish(CUDA_SUCCESS);
}

STAND_IN_EXPORT CUresult cuGetErrorName(CUresult error, const char **pStr) {
  Call call("cuGetErrorName");
  call.log.signedNumber("error", error);
  *pStr = errorName(error);
  return call.finish(*pStr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE);
}

STAND_IN_EXPORT CUresult cuGetErrorString(CUresult error, const char **pStr) {
  Call call("cuGetErrorString");
  call.log.signedNumber("error", error);
  *pStr = errorDescription(error);
  return call.finish(*pStr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE);
}

STAND_IN_EXPORT CUresult cuDeviceGetCount(int *count) {
  Call call("cuDeviceGetCount");
  if (CUresult result = call.check(true, false))
    return call.finish(result);
  *count = readConfig().deviceCount;
  call.log.signedNumber("count", *count);
  return call.finish(CUDA_SUCCESS);
}

STAND_IN_EXPORT CUresult cuDeviceGet(CUdevice *device, int ordinal) {
  Call call("cuDeviceGet");
  call.log.signedNumber("ordinal", ordinal);
  if (CUresult result = call.check(true, false))
    return call.finish(result);
  if (ordinal < 0 || ordinal >= readConfig().deviceCount)
    return call.finish(CUDA_ERROR_INVALID_DEVICE);
  *device = ordinal;
  return call.finish(CUDA_SUCCESS);
}

STAND_IN_EXPORT CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev) {
  Call call("cuDeviceGetAttribute");
  call.log.signedNumber("attrib", attrib).signedNumber("dev", dev);
  if (CUresult result = call.check(true, false))
    return call.finish(result);
  Config config = readConfig();
  if (dev < 0 || dev >= config.deviceCount)
    return call.finish(CUDA_ERROR_INVALID_DEVICE);
  switch (attrib) {
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
    *pi = 1024;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
    *pi = 64;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
    *pi = 2147483647;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
    *pi = 65535;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
    *pi = kDefaultSharedLimit;
    break;
  case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
    *pi = 32;
    break;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
    *pi = kStandInMultiprocessors;
    break;
  case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY:
    *pi = 1;
    break;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
    *pi = config.major;
    break;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
    *pi = config.minor;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
    *pi = config.sharedOptIn();
    break;
  case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY:
    *pi = config.managedMemory ? 1 : 0;
    break;
  default:
    *pi = 0;
    break;
  }
  call.log.signedNumber("pi", *pi);
  return call.finish(CUDA_SUCCESS);
}

STAND_IN_EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice dev) {
  Call call("cuDeviceGetName");
  call.log.signedNumber("len", len).signedNumber("dev", dev);
  if (CUresult result = call.check(true, false))
    return call.finish(result);
  if (len <= 0 || dev < 0 || dev >= readConfig().deviceCount)
    return call.finish(CUDA_ERROR_INVALID_VALUE);
  const char text[] = "Kiln stand-in driver (not a GPU)";
  std::strncpy(name, text, static_cast<size_t>(len));
  name[len - 1] = 0;
  return call.finish(CUDA_SUCCESS);
}

STAND_IN_EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev) {
  Call call("cuDeviceTotalMem_v2");
  call.log.signedNumber("dev", dev);
  if (CUresult result = call.check(true, false))
    return call.finish(result);
  *bytes = kDeviceMemoryBytes;
  return call.finish(CUDA_SUCCESS);
}

STAND_IN_EXPORT CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev) {
  Call call("cuDeviceGetUuid_v2");
  call.log.signedNumber("dev", dev);
  if (CUresult result = call.check(true, false))
    return call.finish(result);
  for (int i = 0; i < 16; ++i)
    uuid->bytes[i] = static_cast<char>(0x10 * (i % 16) + dev);
  return call.finish(CUDA_SUCCESS);
}

// Contexts.

STAND_IN_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev) {
  Call call("cuDevicePrimaryCtxRetain");
  call.log.signedNumber("dev", dev);
  if (CUresult result = call.check(true, false))
    return call.finish(result);
  if (dev != 0)
    return call.finish(CUDA_ERROR_INVALID_DEVICE);
  ++state().primaryRetains;
  *pctx = primaryContext();
  call.log.number("pctx", handleNumber(*pctx));
  return call.finish(CUDA_SUCCESS);
}

STAND_IN_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev) {
  Call call("cuDevicePrimaryCtxRelease_v2");
  call.log.signedNumber("dev", dev);
  if (CUresult result = call.check(true, false))
    return call.finish(result);
  if (dev != 0 || state().primaryRetains == 0)
    return call.finish(CUDA_ERROR_INVALID_CONTEXT);
  --state().primaryRetains;
  return call.finish(CUDA_SUCCESS);
}

STAND_IN_EXPORT CUresult cuCtxGetCurrent(CUcontext *pctx) {
  Call call("cuCtxGetCurrent");
  if (CUresult result = call.check(true, false))
    return call.finish(result);
  *pctx = currentContext;
  call.log.number("pctx", handleNumber(*pctx));
  return call.finish(CUDA_SUCCESS);
}

STAND_IN_EXPORT CUresult cuCtxSetCurrent(CUcontext ctx) {
  Call call("cuCtxSetCurrent");
  call.log.number("ctx", handleNumber(ctx));
  if (CUresult result = call.check(true, false))
    return call.finish(result);
  if (ctx && ctx != primaryContext())
    return call.finish(CUDA_ERROR_INVALID_CONTEXT);
  currentContext = ctx;
  return call.finish(CUDA_SUCCESS);
}

STAND_IN_EXPORT CUresult cuCtxSynchronize() {
  Call call("cuCtxSynchronize");
  return call.finish(call.check(true, true));
}

// Memory.

STAND_IN_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize) {
  Call call("cuMemAlloc_v2");
  call.log.number("bytesize", bytesize);
  if (CUresult result = call.check(true, true))
    return call.finish(result);
  if (bytesize == 0)
    return call.finish(CUDA_ERROR_INVALID_VALUE);
  // Shareable memory, so that cuIpcGetMemHandle can hand it to another
  // process: a memfd, mapped MAP_SHARED (page-aligned, so 256-aligned too).
  if (uint64_t(bytesize) > uint64_t(INT64_MAX) - 255)
    return call.refuse(CUDA_ERROR_OUT_OF_MEMORY, "larger than any mapping");
  uint64_t rounded = (uint64_t(bytesize) + 255) / 256 * 256;
  Allocation allocation;
  allocation.size = bytesize;
  allocation.mappedBytes = rounded;
  allocation.fd = memfd_create("kiln-stand-in-device-memory", MFD_CLOEXEC);
  if (allocation.fd < 0)
    return call.refuse(CUDA_ERROR_OUT_OF_MEMORY,
                       std::string("memfd_create failed: ") + std::strerror(errno));
  struct stat file;
  void *memory = MAP_FAILED;
  if (ftruncate(allocation.fd, static_cast<off_t>(rounded)) == 0 &&
      fstat(allocation.fd, &file) == 0)
    memory = mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_SHARED, allocation.fd, 0);
  if (memory == MAP_FAILED) {
    std::string why = std::string("shareable memory unavailable: ") + std::strerror(errno);
    close(allocation.fd);
    return call.refuse(CUDA_ERROR_OUT_OF_MEMORY, why);
  }
  allocation.source.inode = file.st_ino;
  allocation.source.device = file.st_dev;
  std::memset(memory, 0xa5, bytesize); // Device memory starts undefined.
  state().allocations[reinterpret_cast<uintptr_t>(memory)] = allocation;
  *dptr = reinterpret_cast<uintptr_t>(memory);
  call.log.number("dptr", *dptr);
  return call.finish(CUDA_SUCCESS);
}

STAND_IN_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr) {
  Call call("cuMemFree_v2");
  call.log.number("dptr", dptr);
  if (CUresult result = call.check(true, true))
    return call.finish(result);
  auto found = state().allocations.find(static_cast<uintptr_t>(dptr));
  if (found == state().allocations.end() || found->second.host)
    return call.refuse(CUDA_ERROR_INVALID_VALUE, "not a device allocation");
  if (found->second.imported)
    return call.refuse(CUDA_ERROR_INVALID_VALUE,
                       "opened from an IPC handle: cuIpcCloseMemHandle releases it");
  Allocation freed = found->second;
  state().allocations.erase(found);
  void *memory = reinterpret_cast<void *>(static_cast<uintptr_t>(dptr));
  if (freed.fd >= 0) { // cuMemAlloc_v2's shareable memory.
    munmap(memory, freed.mappedBytes);
    close(freed.fd);
  } else { // cuMemAllocManaged's.
    std::free(memory);
  }
  return call.finish(CUDA_SUCCESS);
}

STAND_IN_EXPORT CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags) {
  Call call("cuMemAllocManaged");
  call.log.number("bytesize", bytesize).number("flags", flags);
  if (CUresult result = call.check(true, true))
    return call.finish(result);
  if (!readConfig().managedMemory)
    return call.refuse(CUDA_ERROR_NOT_SUPPORTED, "KILN_STAND_IN_MANAGED_MEMORY=0");
  constexpr unsigned kAttachHost = 0x2; // CU_MEM_ATTACH_HOST
  if (bytesize == 0 || (flags != CU_MEM_ATTACH_GLOBAL && flags != kAttachHost))
    return call.finish(CUDA_ERROR_INVALID_VALUE);
  void *memory = std::aligned_alloc(4096, (bytesize + 4095) / 4096 * 4096);
  if (!memory)
    return call.finish(CUDA_ERROR_OUT_OF_MEMORY);
  std::memset(memory, 0xa5, bytesize); // Starts undefined, as device memory does.
  Allocation &allocation = state().allocations[reinterpret_cast<uintptr_t>(memory)];
  allocation.size = bytesize;
  allocation.flags = flags;
  allocation.managed = true;
  *dptr = reinterpret_cast<uintptr_t>(memory);
  call.log.number("dptr", *dptr);
  return call.finish(CUDA_SUCCESS);
}

STAND_IN_EXPORT CUresult cuMemGetInfo_v2(size_t *free, size_t *total) {
  Call call("cuMemGetInfo_v2");
  if (CUresult result = call.check(true, true))
    return call.finish(result);
  if (!free || !total)
    return call.finish(CUDA_ERROR_INVALID_VALUE);
  uint64_t used = 0;
  for (const auto &[address, allocation] : state().allocations)
    if (!allocation.host && !allocation.imported) // Opened memory is the exporter's.
      used += allocation.size;
  *total = kDeviceMemoryBytes;
  *free = kDeviceMemoryBytes - std::min<uint64_t>(used, kDeviceMemoryBytes);
  call.log.number("free", *free).number("total", *total);
  return call.finish(CUDA_SUCCESS);
}

STAND_IN_EXPORT CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags) {
  Call call("cuMemHostAlloc");
  call.log.number("bytesize", bytesize).number("Flags", Flags);
  if (CUresult result = call.check(true, true))
    return call.finish(result);
  if (bytesize == 0)
    return call.finish(CUDA_ERROR_INVALID_VALUE);
  void *memory = std::aligned_alloc(4096, (bytesize + 4095) / 4096 * 4096);
  if (!memory)
    return call.finish(CUDA_ERROR_OUT_OF_MEMORY);
  Allocation &allocation = state().allocations[reinterpret_cast<uintptr_t>(memory)];
  allocation.size = bytesize;
  allocation.host = true;
  allocation.flags = Flags;
  *pp = memory;
  call.log.number("p", handleNumber(memory));
  return call.finish(CUDA_SUCCESS);
}

STAND_IN_EXPORT CUresult cuMemFreeHost(void *p) {
  Call call("cuMemFreeHost");
  call.log.number("p", handleNumber(p));
  if (CUresult result = call.check(true, true))
    return call.finish(result);
  auto found = state().allocations.find(reinterpret_cast<uintptr_t>(p));
  if (found == state().allocations.end() || !found->second.host)
    return call.refuse(CUDA_ERROR_INVALID_VALUE, "not a host allocation");
  state().allocations.erase(found);
  std::free(p);
  return call.finish(CUDA_SUCCESS);
}

STAND_IN_EXPORT CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p,
                                                      unsigned int Flags) {
  Call call("cuMemHostGetDevicePointer_v2");
  call.log.number("p", handleNumber(p)).number("Flags", Flags);
  if (CUresult result = call.check(true, true))
    return call.finish(result);
  if (Flags != 0)
    return call.finish(CUDA_ERROR_INVALID_VALUE);
  AllocationEntry *found = allocationHolding(reinterpret_cast<uintptr_t>(p));
  if (!found || !found->second.host || !(found->second.flags & CU_MEMHOSTALLOC_DEVICEMAP))
    return call.refuse(CUDA_ERROR_INVALID_VALUE, "not mapped host memory");
  *pdptr = reinterpret_cast<uintptr_t>(p); // Unified addressing: the same address.
  call.log.number("pdptr", *pdptr);
  return call.finish(CUDA_SUCCESS);
}

/// The handle's fields as the log shows them.
static std::string ipcHandleJson(const IpcHandle &handle) {
  JsonObject object;
  object.signedNumber("pid", handle.pid)
      .signedNumber("fd", handle.fd)
      .number("size", handle.size)
      .number("inode", handle.inode)
      .number("device", handle.device);
  return object.text();
}

STAND_IN_EXPORT CUresult cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize,
                                                 CUdeviceptr dptr) {
  Call call("cuMemGetAddressRange_v2");
  call.log.number("dptr", dptr);
  if (CUresult result = call.check(true, true))
    return call.finish(result);
  // Device and managed memory, and memory opened from an IPC handle; not
  // host memory, which no cuMemAlloc made.
  AllocationEntry *found = allocationHolding(dptr);
  if (!found || found->second.host)
    return call.refuse(CUDA_ERROR_NOT_FOUND, "not in a device allocation");
  if (pbase) {
    *pbase = found->first;
    call.log.number("pbase", *pbase);
  }
  if (psize) {
    *psize = found->second.size;
    call.log.number("psize", *psize);
  }
  return call.finish(CUDA_SUCCESS);
}

STAND_IN_EXPORT CUresult cuIpcGetMemHandle(CUipcMemHandle *pHandle, CUdeviceptr dptr) {
  Call call("cuIpcGetMemHandle");
  call.log.number("dptr", dptr);
  if (CUresult result = call.check(true, true))
    return call.finish(result);
  if (!pHandle)
    return call.finish(CUDA_ERROR_INVALID_VALUE);
  auto found = state().allocations.find(static_cast<uintptr_t>(dptr));
  // Only cuMemAlloc_v2's memory has a memfd: not host or managed memory,
  // nor memory this process opened from another's handle.
  if (found == state().allocations.end() || found->second.fd < 0 || found->second.imported)
    return call.refuse(CUDA_ERROR_INVALID_VALUE,
                       "not the base of a cuMemAlloc_v2 allocation of this process");
  IpcHandle handle;
  std::memcpy(handle.magic, kIpcMagic, sizeof handle.magic);
  handle.pid = static_cast<int32_t>(getpid());
  handle.fd = found->second.fd;
  handle.size = found->second.size;
  handle.inode = found->second.source.inode;
  handle.device = found->second.source.device;
  std::memset(pHandle->reserved, 0, sizeof pHandle->reserved);
  std::memcpy(pHandle->reserved, &handle, sizeof handle);
  call.log.raw("pHandle", ipcHandleJson(handle));
  return call.finish(CUDA_SUCCESS);
}

STAND_IN_EXPORT CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *pdptr, CUipcMemHandle handle,
                                               unsigned int Flags) {
  Call call("cuIpcOpenMemHandle_v2");
  IpcHandle contents;
  std::memcpy(&contents, handle.reserved, sizeof contents);
  bool tagged = std::memcmp(contents.magic, kIpcMagic, sizeof kIpcMagic) == 0;
  if (tagged)
    call.log.raw("handle", ipcHandleJson(contents));
  else
    call.log.null("handle");
  call.log.number("Flags", Flags);
  if (CUresult result = call.check(true, true))
    return call.finish(result);
  if (!pdptr)
    return call.finish(CUDA_ERROR_INVALID_VALUE);
  if (Flags != CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS)
    return call.refuse(CUDA_ERROR_INVALID_VALUE,
                       "Flags must be CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS");
  if (!tagged)
    return call.refuse(CUDA_ERROR_INVALID_VALUE,
                       "not a handle from cuIpcGetMemHandle (no stand-in magic)");
  if (contents.pid == getpid())
    return call.refuse(CUDA_ERROR_INVALID_CONTEXT,
                       "the handle was made by this process, which cannot open it");
  IpcSource source{contents.pid, contents.fd, contents.inode, contents.device};
  // Opened before (and not closed since): the same address, one more open.
  for (auto &[address, allocation] : state().allocations)
    if (allocation.imported && allocation.source == source) {
      ++allocation.opens;
      *pdptr = address;
      call.log.number("pdptr", *pdptr).signedNumber("opens", allocation.opens);
      return call.finish(CUDA_SUCCESS);
    }
  std::string path = "/proc/" + std::to_string(contents.pid) + "/fd/" + std::to_string(contents.fd);
  int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0)
    return call.refuse(CUDA_ERROR_INVALID_HANDLE, "cannot open " + path + " (" +
                                                      std::strerror(errno) +
                                                      "): has the exporting process exited?");
  struct stat file;
  if (fstat(fd, &file) != 0 || uint64_t(file.st_ino) != contents.inode ||
      uint64_t(file.st_dev) != contents.device || uint64_t(file.st_size) < contents.size ||
      contents.size == 0) {
    close(fd);
    return call.refuse(CUDA_ERROR_INVALID_HANDLE,
                       path + " is not the exported memory: was it freed?");
  }
  void *memory = mmap(nullptr, contents.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int error = errno;
  close(fd); // The mapping keeps the memory.
  if (memory == MAP_FAILED)
    return call.refuse(CUDA_ERROR_INVALID_HANDLE,
                       "cannot map " + path + ": " + std::strerror(error));
  Allocation allocation;
  allocation.size = contents.size;
  allocation.mappedBytes = contents.size;
  allocation.imported = true;
  allocation.source = source;
  allocation.opens = 1;
  state().allocations[reinterpret_cast<uintptr_t>(memory)] = allocation;
  *pdptr = reinterpret_cast<uintptr_t>(memory);
  call.log.number("pdptr", *pdptr).signedNumber("opens", 1);
  return call.finish(CUDA_SUCCESS);
}

STAND_IN_EXPORT CUresult cuIpcCloseMemHandle(CUdeviceptr dptr) {
  Call call("cuIpcCloseMemHandle");
  call.log.number("dptr", dptr);
  if (CUresult result = call.check(true, true))
    return call.finish(result);
  auto found = state().allocations.find(static_cast<uintptr_t>(dptr));
  if (found == state().allocations.end() || !found->second.imported)
    return call.refuse(CUDA_ERROR_INVALID_VALUE, "not an address cuIpcOpenMemHandle_v2 gave");
  int opens = --found->second.opens;
  call.log.signedNumber("opens", opens);
  if (opens == 0) { // The last close unmaps.
    uint64_t mappedBytes = found->second.mappedBytes;
    state().allocations.erase(found);
    munmap(reinterpret_cast<void *>(static_cast<uintptr_t>(dptr)), mappedBytes);
  }
  return call.finish(CUDA_SUCCESS);
}

STAND_IN_EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost,
                                              size_t ByteCount, CUstream hStream) {
  Call call("cuMemcpyHtoDAsync_v2");
  call.log.number("dstDevice", dstDevice)
      .number("srcHost", handleNumber(srcHost))
      .number("ByteCount", ByteCount)
      .number("hStream", handleNumber(hStream));
  return copy(call, reinterpret_cast<void *>(static_cast<uintptr_t>(dstDevice)), srcHost, ByteCount,
              hStream, true, false);
}

STAND_IN_EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice,
                                              size_t ByteCount, CUstream hStream) {
  Call call("cuMemcpyDtoHAsync_v2");
  call.log.number("dstHost", handleNumber(dstHost))
      .number("srcDevice", srcDevice)
      .number("ByteCount", ByteCount)
      .number("hStream", handleNumber(hStream));
  return copy(call, dstHost, reinterpret_cast<const void *>(static_cast<uintptr_t>(srcDevice)),
              ByteCount, hStream, false, true);
}

STAND_IN_EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
                                              size_t ByteCount, CUstream hStream) {
  Call call("cuMemcpyDtoDAsync_v2");
  call.log.number("dstDevice", dstDevice)
      .number("srcDevice", srcDevice)
      .number("ByteCount", ByteCount)
      .number("hStream", handleNumber(hStream));
  return copy(call, reinterpret_cast<void *>(static_cast<uintptr_t>(dstDevice)),
              reinterpret_cast<const void *>(static_cast<uintptr_t>(srcDevice)), ByteCount, hStream,
              true, true);
}

STAND_IN_EXPORT CUresult cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N,
                                         CUstream hStream) {
  Call call("cuMemsetD8Async");
  call.log.number("dstDevice", dstDevice)
      .number("uc", uc)
      .number("N", N)
      .number("hStream", handleNumber(hStream));
  if (CUresult result = call.check(true, true))
    return call.finish(result);
  if (!validStream(hStream))
    return call.refuse(CUDA_ERROR_INVALID_HANDLE, "unknown stream");
  if (!deviceAccessible(dstDevice, N))
    return call.refuse(CUDA_ERROR_INVALID_VALUE, "destination is not in a device allocation");
  std::memset(reinterpret_cast<void *>(static_cast<uintptr_t>(dstDevice)), uc, N);
  return call.finish(CUDA_SUCCESS);
}

// Streams and events.

STAND_IN_EXPORT CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags) {
  Call call("cuStreamCreate");
  call.log.number("Flags", Flags);
  if (CUresult result = call.check(true, true))
    return call.finish(result);
  auto *stream = new StandInStream{state().nextId++};
  state().streams.insert(stream);
  *phStream = reinterpret_cast<CUstream>(stream);
  call.log.number("phStream", handleNumber(stream));
  return call.finish(CUDA_SUCCESS);
}

STAND_IN_EXPORT CUresult cuStreamDestroy_v2(CUstream hStream) {
  Call call("cuStreamDestroy_v2");
  call.log.number("hStream", handleNumber(hStream));
  if (CUresult result = call.check(true, true))
    return call.finish(result);
  auto *stream = reinterpret_cast<StandInStream *>(hStream);
  if (!state().streams.erase(stream))
    return call.finish(CUDA_ERROR_INVALID_HANDLE);
  delete stream;
  return call.finish(CUDA_SUCCESS);
}

STAND_IN_EXPORT CUresult cuStreamSynchronize(CUstream hStream) {
  Call call("cuStreamSynchronize");
  call.log.number("hStream", handleNumber(hStream));
  if (CUresult result = call.check(true, true))
    return call.finish(result);
  return call.finish(validStream(hStream) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE);
}

STAND_IN_EXPORT CUresult cuStreamQuery(CUstream hStream) {
  Call call("cuStreamQuery");
  call.log.number("hStream", handleNumber(hStream));
  if (CUresult result = call.check(true, true))
    return call.finish(result);
  return call.finish(validStream(hStream) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE);
}

STAND_IN_EXPORT CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags) {
  Call call("cuEventCreate");
  call.log.number("Flags", Flags);
  if (CUresult result = call.check(true, true))
    return call.finish(result);
  auto *event = new StandInEvent;
  event->id = state().nextId++;
  event->flags = Flags;
  state().events.insert(event);
  *phEvent = reinterpret_cast<CUevent>(event);
  call.log.number("phEvent", handleNumber(event));
  return call.finish(CUDA_SUCCESS);
}

STAND_IN_EXPORT CUresult cuEventDestroy_v2(CUevent hEvent) {
  Call call("cuEventDestroy_v2");
  call.log.number("hEvent", handleNumber(hEvent));
  if (CUresult result = call.check(true, true))
    return call.finish(result);
  auto *event = reinterpret_cast<StandInEvent *>(hEvent);
  if (!state().events.erase(event))
    return call.finish(CUDA_ERROR_INVALID_HANDLE);
  delete event;
  return call.finish(CUDA_SUCCESS);
}

STAND_IN_EXPORT CUresult cuEventRecord(CUevent hEvent, CUstream hStream) {
  Call call("cuEventRecord");
  call.log.number("hEvent", handleNumber(hEvent)).number("hStream", handleNumber(hStream));
  if (CUresult result = call.check(true, true))
    return call.finish(result);
  auto *event = reinterpret_cast<StandInEvent *>(hEvent);
  if (!state().events.count(event) || !validStream(hStream))
    return call.finish(CUDA_ERROR_INVALID_HANDLE);
  event->recorded = true;
  event->when = std::chrono::steady_clock::now();
  return call.finish(CUDA_SUCCESS);
}

STAND_IN_EXPORT CUresult cuEventSynchronize(CUevent hEvent) {
  Call call("cuEventSynchronize");
  call.log.number("hEvent", handleNumber(hEvent));
  if (CUresult result = call.check(true, true))
    return call.finish(result);
  bool known = state().events.count(reinterpret_cast<StandInEvent *>(hEvent));
  return call.finish(known ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE);
}

STAND_IN_EXPORT CUresult cuEventQuery(CUevent hEvent) {
  Call call("cuEventQuery");
  call.log.number("hEvent", handleNumber(hEvent));
  if (CUresult result = call.check(true, true))
    return call.finish(result);
  bool known = state().events.count(reinterpret_cast<StandInEvent *>(hEvent));
  return call.finish(known ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE);
}

STAND_IN_EXPORT CUresult cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd) {
  Call call("cuEventElapsedTime_v2");
  call.log.number("hStart", handleNumber(hStart)).number("hEnd", handleNumber(hEnd));
  if (CUresult result = call.check(true, true))
    return call.finish(result);
  auto *start = reinterpret_cast<StandInEvent *>(hStart);
  auto *end = reinterpret_cast<StandInEvent *>(hEnd);
  if (!state().events.count(start) || !state().events.count(end))
    return call.finish(CUDA_ERROR_INVALID_HANDLE);
  if ((start->flags | end->flags) & CU_EVENT_DISABLE_TIMING)
    return call.refuse(CUDA_ERROR_INVALID_HANDLE, "an event was created without timing");
  if (!start->recorded || !end->recorded)
    return call.refuse(CUDA_ERROR_INVALID_HANDLE, "an event was never recorded");
  *pMilliseconds = std::chrono::duration<float, std::milli>(end->when - start->when).count();
  call.log.real("pMilliseconds", *pMilliseconds);
  return call.finish(CUDA_SUCCESS);
}

// Modules and kernels.

STAND_IN_EXPORT CUresult cuModuleLoadData(CUmodule *module, const void *image) {
  Call call("cuModuleLoadData");
  call.log.number("image", handleNumber(image));
  if (CUresult result = call.check(true, true))
    return call.finish(result);
  if (!image)
    return call.finish(CUDA_ERROR_INVALID_VALUE);
  auto loaded = std::make_unique<StandInModule>();
  if (CUresult result = readImage(call, image, *loaded))
    return result; // readImage finished the call.
  loaded->id = state().nextId++;
  std::string entries = "[";
  for (const PtxEntry &entry : loaded->entries)
    entries += (entries.size() > 1 ? "," : "") + jsonString(entry.name);
  call.log.string("selected", loaded->selected).raw("entries", entries + "]");
  *module = reinterpret_cast<CUmodule>(loaded.get());
  call.log.number("module", handleNumber(*module));
  state().modules.insert(loaded.release());
  return call.finish(CUDA_SUCCESS);
}

STAND_IN_EXPORT CUresult cuModuleUnload(CUmodule hmod) {
  Call call("cuModuleUnload");
  call.log.number("hmod", handleNumber(hmod));
  if (CUresult result = call.check(true, true))
    return call.finish(result);
  auto *module = reinterpret_cast<StandInModule *>(hmod);
  if (!state().modules.erase(module))
    return call.finish(CUDA_ERROR_INVALID_HANDLE);
  for (auto it = state().functions.begin(); it != state().functions.end();)
    if ((*it)->module == module) {
      delete *it;
      it = state().functions.erase(it);
    } else {
      ++it;
    }
  delete module;
  return call.finish(CUDA_SUCCESS);
}

STAND_IN_EXPORT CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name) {
  Call call("cuModuleGetFunction");
  call.log.number("hmod", handleNumber(hmod)).string("name", name ? name : "");
  if (CUresult result = call.check(true, true))
    return call.finish(result);
  auto *module = reinterpret_cast<StandInModule *>(hmod);
  if (!state().modules.count(module))
    return call.finish(CUDA_ERROR_INVALID_HANDLE);
  if (!name)
    return call.finish(CUDA_ERROR_INVALID_VALUE);
  const PtxEntry *entry = nullptr;
  for (const PtxEntry &candidate : module->entries)
    if (candidate.name == name)
      entry = &candidate;
  if (!entry && module->hasPtx)
    return call.finish(CUDA_ERROR_NOT_FOUND);
  auto *function = new StandInFunction;
  function->id = state().nextId++;
  function->module = module;
  function->name = name;
  function->entry = entry;
  state().functions.insert(function);
  *hfunc = reinterpret_cast<CUfunction>(function);
  call.log.number("hfunc", handleNumber(function));
  return call.finish(CUDA_SUCCESS);
}

STAND_IN_EXPORT CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib,
                                            int value) {
  Call call("cuFuncSetAttribute");
  call.log.number("hfunc", handleNumber(hfunc))
      .signedNumber("attrib", attrib)
      .signedNumber("value", value);
  if (CUresult result = call.check(true, true))
    return call.finish(result);
  auto *function = reinterpret_cast<StandInFunction *>(hfunc);
  if (!state().functions.count(function))
    return call.finish(CUDA_ERROR_INVALID_HANDLE);
  if (attrib == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
    if (value < 0 || value > readConfig().sharedOptIn())
      return call.finish(CUDA_ERROR_INVALID_VALUE);
    function->maxDynamicShared = value;
  }
  return call.finish(CUDA_SUCCESS);
}

/// Resident blocks per multiprocessor, as on compute capability 8.0: at
/// most 32 blocks and 2048 threads (registers and shared memory unlimited).
static int residentBlocksPerMultiprocessor(unsigned threadsPerBlock) {
  return threadsPerBlock ? std::min(32, int(2048 / threadsPerBlock)) : 0;
}

/// cuLaunchKernel and cuLaunchCooperativeKernel: the checks of a driver,
/// then the log of every parameter.
static CUresult launch(Call &call, CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                       unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                       unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                       void **kernelParams, bool cooperative) {
  auto *function = reinterpret_cast<StandInFunction *>(f);
  bool known = state().functions.count(function);
  call.log.number("f", handleNumber(f))
      .string("function", known ? function->name : "")
      .raw("grid", dimsJson(gridDimX, gridDimY, gridDimZ))
      .raw("block", dimsJson(blockDimX, blockDimY, blockDimZ))
      .number("sharedMemBytes", sharedMemBytes)
      .number("hStream", handleNumber(hStream));
  if (CUresult result = call.check(true, true))
    return call.finish(result);
  if (!known)
    return call.finish(CUDA_ERROR_INVALID_HANDLE);
  if (!validStream(hStream))
    return call.refuse(CUDA_ERROR_INVALID_HANDLE, "unknown stream");
  if (!gridDimX || !gridDimY || !gridDimZ || !blockDimX || !blockDimY || !blockDimZ)
    return call.refuse(CUDA_ERROR_INVALID_VALUE, "a zero dimension");
  if (uint64_t(blockDimX) * blockDimY * blockDimZ > 1024 || blockDimX > 1024 || blockDimY > 1024 ||
      blockDimZ > 64)
    return call.refuse(CUDA_ERROR_INVALID_VALUE, "block too large");
  if (gridDimX > 2147483647u || gridDimY > 65535 || gridDimZ > 65535)
    return call.refuse(CUDA_ERROR_INVALID_VALUE, "grid too large");
  if (sharedMemBytes > unsigned(std::max(kDefaultSharedLimit, function->maxDynamicShared)))
    return call.refuse(CUDA_ERROR_INVALID_VALUE,
                       "dynamic shared memory above the function's limit (" +
                           std::to_string(function->maxDynamicShared) + " bytes)");
  if (cooperative && uint64_t(gridDimX) * gridDimY * gridDimZ >
                         uint64_t(kStandInMultiprocessors) *
                             residentBlocksPerMultiprocessor(blockDimX * blockDimY * blockDimZ))
    return call.refuse(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
                       "more blocks than can be resident at once");

  if (!function->entry) {
    call.log.null("params").string("note", "no PTX in the module: parameters not read");
    return call.finish(CUDA_SUCCESS);
  }
  const std::vector<PtxParam> &params = function->entry->params;
  if (!params.empty() && !kernelParams)
    return call.refuse(CUDA_ERROR_INVALID_VALUE, "kernelParams is null");
  std::string list = "[";
  for (size_t i = 0; i < params.size(); ++i) {
    const PtxParam &param = params[i];
    if (!kernelParams[i])
      return call.refuse(CUDA_ERROR_INVALID_VALUE,
                         "kernelParams[" + std::to_string(i) + "] is null");
    if (!call.log.isEnabled())
      continue;
    JsonObject object;
    object.string("name", param.name)
        .string("type", param.type)
        .number("size", param.size)
        .number("align", param.align)
        .number("offset", param.offset)
        .string("hex", hexBytes(kernelParams[i], param.size));
    list += (i ? "," : "") + object.text();
  }
  call.log.raw("params", list + "]");
  return call.finish(CUDA_SUCCESS);
}

STAND_IN_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                        unsigned int gridDimZ, unsigned int blockDimX,
                                        unsigned int blockDimY, unsigned int blockDimZ,
                                        unsigned int sharedMemBytes, CUstream hStream,
                                        void **kernelParams, void **extra) {
  Call call("cuLaunchKernel");
  if (extra)
    return call.refuse(CUDA_ERROR_NOT_SUPPORTED, "the stand-in reads kernelParams only");
  return launch(call, f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                sharedMemBytes, hStream, kernelParams, false);
}

STAND_IN_EXPORT CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX,
                                                   unsigned int gridDimY, unsigned int gridDimZ,
                                                   unsigned int blockDimX, unsigned int blockDimY,
                                                   unsigned int blockDimZ,
                                                   unsigned int sharedMemBytes, CUstream hStream,
                                                   void **kernelParams) {
  Call call("cuLaunchCooperativeKernel");
  return launch(call, f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                sharedMemBytes, hStream, kernelParams, true);
}

STAND_IN_EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks,
                                                                     CUfunction func, int blockSize,
                                                                     size_t dynamicSMemSize) {
  Call call("cuOccupancyMaxActiveBlocksPerMultiprocessor");
  call.log.number("func", handleNumber(func))
      .number("blockSize", blockSize)
      .number("dynamicSMemSize", dynamicSMemSize);
  if (CUresult result = call.check(true, true))
    return call.finish(result);
  if (!numBlocks)
    return call.finish(CUDA_ERROR_INVALID_VALUE);
  if (!state().functions.count(reinterpret_cast<StandInFunction *>(func)))
    return call.finish(CUDA_ERROR_INVALID_HANDLE);
  if (blockSize <= 0 || blockSize > 1024)
    return call.refuse(CUDA_ERROR_INVALID_VALUE, "block size out of range");
  *numBlocks = residentBlocksPerMultiprocessor(unsigned(blockSize));
  return call.finish(CUDA_SUCCESS);
}

// Every export has the signature the runtime declares for it.
static_assert(std::is_same_v<decltype(&cuInit), PFN_cuInit>);
static_assert(std::is_same_v<decltype(&cuDriverGetVersion), PFN_cuDriverGetVersion>);
static_assert(std::is_same_v<decltype(&cuGetErrorName), PFN_cuGetErrorName>);
static_assert(std::is_same_v<decltype(&cuGetErrorString), PFN_cuGetErrorString>);
static_assert(std::is_same_v<decltype(&cuDeviceGetCount), PFN_cuDeviceGetCount>);
static_assert(std::is_same_v<decltype(&cuDeviceGet), PFN_cuDeviceGet>);
static_assert(std::is_same_v<decltype(&cuDeviceGetAttribute), PFN_cuDeviceGetAttribute>);
static_assert(std::is_same_v<decltype(&cuDeviceGetName), PFN_cuDeviceGetName>);
static_assert(std::is_same_v<decltype(&cuDeviceTotalMem_v2), PFN_cuDeviceTotalMem>);
static_assert(std::is_same_v<decltype(&cuDeviceGetUuid_v2), PFN_cuDeviceGetUuid>);
static_assert(std::is_same_v<decltype(&cuDevicePrimaryCtxRetain), PFN_cuDevicePrimaryCtxRetain>);
static_assert(
    std::is_same_v<decltype(&cuDevicePrimaryCtxRelease_v2), PFN_cuDevicePrimaryCtxRelease>);
static_assert(std::is_same_v<decltype(&cuCtxGetCurrent), PFN_cuCtxGetCurrent>);
static_assert(std::is_same_v<decltype(&cuCtxSetCurrent), PFN_cuCtxSetCurrent>);
static_assert(std::is_same_v<decltype(&cuCtxSynchronize), PFN_cuCtxSynchronize>);
static_assert(std::is_same_v<decltype(&cuMemAlloc_v2), PFN_cuMemAlloc>);
static_assert(std::is_same_v<decltype(&cuMemFree_v2), PFN_cuMemFree>);
static_assert(std::is_same_v<decltype(&cuMemAllocManaged), PFN_cuMemAllocManaged>);
static_assert(std::is_same_v<decltype(&cuMemGetInfo_v2), PFN_cuMemGetInfo>);
static_assert(std::is_same_v<decltype(&cuMemHostAlloc), PFN_cuMemHostAlloc>);
static_assert(std::is_same_v<decltype(&cuMemFreeHost), PFN_cuMemFreeHost>);
static_assert(
    std::is_same_v<decltype(&cuMemHostGetDevicePointer_v2), PFN_cuMemHostGetDevicePointer>);
static_assert(std::is_same_v<decltype(&cuMemGetAddressRange_v2), PFN_cuMemGetAddressRange>);
static_assert(std::is_same_v<decltype(&cuIpcGetMemHandle), PFN_cuIpcGetMemHandle>);
static_assert(std::is_same_v<decltype(&cuIpcOpenMemHandle_v2), PFN_cuIpcOpenMemHandle>);
static_assert(std::is_same_v<decltype(&cuIpcCloseMemHandle), PFN_cuIpcCloseMemHandle>);
static_assert(std::is_same_v<decltype(&cuMemcpyHtoDAsync_v2), PFN_cuMemcpyHtoDAsync>);
static_assert(std::is_same_v<decltype(&cuMemcpyDtoHAsync_v2), PFN_cuMemcpyDtoHAsync>);
static_assert(std::is_same_v<decltype(&cuMemcpyDtoDAsync_v2), PFN_cuMemcpyDtoDAsync>);
static_assert(std::is_same_v<decltype(&cuMemsetD8Async), PFN_cuMemsetD8Async>);
static_assert(std::is_same_v<decltype(&cuStreamCreate), PFN_cuStreamCreate>);
static_assert(std::is_same_v<decltype(&cuStreamDestroy_v2), PFN_cuStreamDestroy>);
static_assert(std::is_same_v<decltype(&cuStreamSynchronize), PFN_cuStreamSynchronize>);
static_assert(std::is_same_v<decltype(&cuStreamQuery), PFN_cuStreamQuery>);
static_assert(std::is_same_v<decltype(&cuEventCreate), PFN_cuEventCreate>);
static_assert(std::is_same_v<decltype(&cuEventDestroy_v2), PFN_cuEventDestroy>);
static_assert(std::is_same_v<decltype(&cuEventRecord), PFN_cuEventRecord>);
static_assert(std::is_same_v<decltype(&cuEventSynchronize), PFN_cuEventSynchronize>);
static_assert(std::is_same_v<decltype(&cuEventQuery), PFN_cuEventQuery>);
static_assert(std::is_same_v<decltype(&cuEventElapsedTime_v2), PFN_cuEventElapsedTime>);
static_assert(std::is_same_v<decltype(&cuModuleLoadData), PFN_cuModuleLoadData>);
static_assert(std::is_same_v<decltype(&cuModuleUnload), PFN_cuModuleUnload>);
static_assert(std::is_same_v<decltype(&cuModuleGetFunction), PFN_cuModuleGetFunction>);
static_assert(std::is_same_v<decltype(&cuFuncSetAttribute), PFN_cuFuncSetAttribute>);
static_assert(std::is_same_v<decltype(&cuLaunchKernel), PFN_cuLaunchKernel>);
static_assert(std::is_same_v<decltype(&cuLaunchCooperativeKernel), PFN_cuLaunchCooperativeKernel>);
static_assert(std::is_same_v<decltype(&cuOccupancyMaxActiveBlocksPerMultiprocessor),
                             PFN_cuOccupancyMaxActiveBlocksPerMultiprocessor>);
