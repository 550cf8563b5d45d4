//===- runtime/cpu_target.cpp - Kernels on the host -----------------------===//

#include "runtime/cpu_target.h"

#include "runtime/cpu_engine/engine.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <new>
#include <string>
#include <thread>
#include <unistd.h>

namespace kiln::runtime {
namespace {

/// Allocations are aligned as cuMemAlloc's, so that kernels tested here see
/// the alignment they get on a GPU.
constexpr size_t allocationAlignment = 256;

/// What an event handle points at.
struct CpuEvent {
  bool timing;
  bool recorded = false;
  timespec time = {};
};

/// What the environment asks of index checks: KILN_CPU_BOUNDSCHECK, else
/// Numba's NUMBA_BOUNDSCHECK. "0" runs the copy of every kernel without
/// index checks, "1" the checked one even for kernels compiled with
/// boundscheck=False; unset (or anything else) keeps each kernel's own
/// choice.
struct IndexCheckSetting {
  /// KILN_THREAD_SKIP_INDEX_CHECKS, KILN_THREAD_FORCE_INDEX_CHECKS or 0.
  uint32_t flags = 0;
  /// "NAME=VALUE" of the variable that set `flags`, for messages.
  std::string assignment;
};

IndexCheckSetting indexCheckSettingFromEnvironment() {
  for (const char *name : {"KILN_CPU_BOUNDSCHECK", "NUMBA_BOUNDSCHECK"}) {
    const char *value = std::getenv(name);
    if (!value || !*value)
      continue;
    std::string assignment = std::string(name) + "=" + value;
    if (std::strcmp(value, "0") == 0)
      return {KILN_THREAD_SKIP_INDEX_CHECKS, assignment};
    if (std::strcmp(value, "1") == 0)
      return {KILN_THREAD_FORCE_INDEX_CHECKS, assignment};
  }
  return {};
}

/// KILN_CPU_REFERENCE=1 runs every launch in the engine's reference mode
/// (runtime/cpu_engine/engine.h): one thread at a time through each
/// kernel's plain thread entry, with none of the engine's fast paths.
cpu_engine::EngineOptions engineOptionsFromEnvironment() {
  cpu_engine::EngineOptions options;
  const char *reference = std::getenv("KILN_CPU_REFERENCE");
  options.reference = reference && std::strcmp(reference, "1") == 0;
  return options;
}

/// sysconf(`name`) pages in bytes, or 0 when sysconf does not know.
uint64_t pagesInBytes(int name) {
  long pages = sysconf(name);
  long pageSize = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || pageSize <= 0)
    return 0;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(pageSize);
}

/// The host's physical memory: the CPU target's "device" memory, as both
/// device_info's total_memory and memory_info's total report it.
uint64_t physicalMemoryBytes() {
  return pagesInBytes(_SC_PHYS_PAGES);
}

/// MemAvailable of /proc/meminfo (what the kernel can give new allocations
/// without swapping, page cache included), or 0 where there is none.
uint64_t memAvailableBytes() {
  std::FILE *file = std::fopen("/proc/meminfo", "r");
  if (!file)
    return 0;
  unsigned long long kibibytes = 0;
  char line[256];
  while (std::fgets(line, sizeof line, file))
    if (std::sscanf(line, "MemAvailable: %llu kB", &kibibytes) == 1)
      break;
  std::fclose(file);
  return static_cast<uint64_t>(kibibytes) * 1024;
}

/// The host's memory available to new allocations: MemAvailable, else the
/// free physical pages.
uint64_t availableMemoryBytes() {
  if (uint64_t available = memAvailableBytes())
    return available;
  return pagesInBytes(_SC_AVPHYS_PAGES);
}

Status badEvent(const char *what) {
  return Status::error(ErrorKind::InvalidValue, std::string("kiln: ") + what);
}

Status ipcUnavailable() {
  return Status::error(ErrorKind::Unavailable,
                       "kiln: CUDA IPC needs a GPU: the CPU engine's device memory is this "
                       "process's host memory, which other processes cannot open; share the data "
                       "through host memory (copy_to_host, then multiprocessing.shared_memory or a "
                       "file) and copy it to the device in the other process");
}

class CpuTarget final : public ExecutionTarget {
public:
  const char *name() const override { return "cpu"; }
  bool sharesHostMemory() const override { return true; }
  bool runsFatBinaries() const override { return false; }

  Status deviceInfo(DeviceInfo &info) override {
    info = DeviceInfo();
    info.name = "Kiln CPU engine";
    // The limits the engine checks launches against (compute capability
    // 7.0), on as many "multiprocessors" as it has workers.
    info.computeCapabilityMajor = 7;
    info.computeCapabilityMinor = 0;
    unsigned workers = std::thread::hardware_concurrency();
    info.multiprocessorCount = workers ? static_cast<int>(workers) : 1;
    info.warpSize = static_cast<int>(cpu_engine::DeviceLimits::warpSize);
    info.maxThreadsPerBlock = static_cast<int>(cpu_engine::DeviceLimits::maxThreadsPerBlock);
    info.maxSharedMemoryPerBlock =
        static_cast<int>(cpu_engine::DeviceLimits::maxSharedBytesPerBlock);
    info.totalMemoryBytes = physicalMemoryBytes();
    info.uuid = "CPU-00000000-0000-0000-0000-000000000000";
    return Status::success();
  }
  /// No driver: the CPU engine runs without CUDA.
  Status driverVersion(int &version) override {
    version = 0;
    return Status::success();
  }

  Status allocate(size_t bytes, DevicePointer &pointer) override {
    void *host = nullptr;
    if (Status status = allocateAligned(bytes, host); !status.ok())
      return status;
    pointer = reinterpret_cast<uintptr_t>(host);
    return Status::success();
  }
  void release(DevicePointer pointer) override {
    std::free(reinterpret_cast<void *>(static_cast<uintptr_t>(pointer)));
  }
  /// Host memory is what the engine's "device" memory is: managed memory is
  /// an ordinary allocation.
  Status allocateManaged(size_t bytes, DevicePointer &pointer) override {
    return allocate(bytes, pointer);
  }
  Status memoryInfo(uint64_t &freeBytes, uint64_t &totalBytes) override {
    totalBytes = physicalMemoryBytes();
    if (totalBytes == 0) {
      freeBytes = 0;
      return Status::error(ErrorKind::Unavailable,
                           "kiln: the host's memory size is unknown (sysconf(_SC_PHYS_PAGES) "
                           "failed), so the CPU engine cannot report its memory");
    }
    // Free never exceeds total, whatever /proc/meminfo says.
    freeBytes = std::min(availableMemoryBytes(), totalBytes);
    return Status::success();
  }
  Status allocateHost(size_t bytes, bool, void *&host) override {
    return allocateAligned(bytes, host);
  }
  void releaseHost(void *host) override { std::free(host); }
  Status exportIpc(DevicePointer, IpcMemoryHandle &exported) override {
    exported = {};
    return ipcUnavailable();
  }
  Status openIpc(const unsigned char (&)[IpcMemoryHandle::kBytes], DevicePointer &base) override {
    base = 0;
    return ipcUnavailable();
  }
  Status closeIpc(DevicePointer) override { return ipcUnavailable(); }

  Status mappedDevicePointer(void *host, DevicePointer &pointer) override {
    pointer = reinterpret_cast<uintptr_t>(host);
    return Status::success();
  }

  Status copyToDevice(DevicePointer destination, const void *source, size_t bytes,
                      StreamHandle) override {
    if (bytes)
      std::memmove(address(destination), source, bytes);
    return Status::success();
  }
  Status copyToHost(void *destination, DevicePointer source, size_t bytes, StreamHandle) override {
    if (bytes)
      std::memmove(destination, address(source), bytes);
    return Status::success();
  }
  Status copyOnDevice(DevicePointer destination, DevicePointer source, size_t bytes,
                      StreamHandle) override {
    if (bytes)
      std::memmove(address(destination), address(source), bytes);
    return Status::success();
  }
  Status fill(DevicePointer destination, uint8_t value, size_t bytes, StreamHandle) override {
    if (bytes)
      std::memset(address(destination), value, bytes);
    return Status::success();
  }

  // Everything finishes before it returns: a stream is only a name.
  Status createStream(StreamHandle &stream) override {
    stream = nextStream.fetch_add(1, std::memory_order_relaxed);
    return Status::success();
  }
  void destroyStream(StreamHandle) override {}
  Status synchronizeStream(StreamHandle) override { return Status::success(); }
  Status queryStream(StreamHandle, bool &finished) override {
    finished = true;
    return Status::success();
  }
  Status synchronizeDevice() override { return Status::success(); }

  Status createEvent(bool timing, EventHandle &event) override {
    auto *created = new (std::nothrow) CpuEvent{timing};
    if (!created)
      return Status::error(ErrorKind::OutOfMemory, "kiln: out of host memory for an event");
    event = reinterpret_cast<uintptr_t>(created);
    return Status::success();
  }
  void destroyEvent(EventHandle event) override { delete eventOf(event); }
  Status recordEvent(EventHandle event, StreamHandle) override {
    CpuEvent *recorded = eventOf(event);
    if (!recorded)
      return badEvent("record() of a null event");
    clock_gettime(CLOCK_MONOTONIC, &recorded->time);
    recorded->recorded = true;
    return Status::success();
  }
  Status synchronizeEvent(EventHandle event) override {
    return eventOf(event) ? Status::success() : badEvent("synchronize() of a null event");
  }
  Status queryEvent(EventHandle event, bool &finished) override {
    finished = true;
    return eventOf(event) ? Status::success() : badEvent("query() of a null event");
  }
  Status elapsedMilliseconds(EventHandle start, EventHandle end, float &milliseconds) override {
    CpuEvent *first = eventOf(start);
    CpuEvent *last = eventOf(end);
    if (!first || !last)
      return badEvent("elapsed_time() of a null event");
    if (!first->timing || !last->timing)
      return badEvent("elapsed_time() needs two events created with timing=True");
    if (!first->recorded || !last->recorded)
      return badEvent("elapsed_time() needs two recorded events; call record() first");
    double seconds = static_cast<double>(last->time.tv_sec - first->time.tv_sec) +
                     static_cast<double>(last->time.tv_nsec - first->time.tv_nsec) * 1e-9;
    milliseconds = static_cast<float>(seconds * 1e3);
    return Status::success();
  }

  Status launch(KernelSpec &spec, const LaunchDims &dims, StreamHandle, void **args) override {
    cpu_engine::KernelImage image;
    image.threadEntry = spec.hostEntries.thread;
    image.blockEntry = spec.hostEntries.block;
    image.staticSharedBytes = spec.staticSharedBytes;
    image.localBytesPerThread = spec.localBytes;
    image.cooperative = spec.cooperative;
    image.maxThreadsPerBlock = spec.maxThreadsPerBlock;
    image.name = spec.name.c_str();
    image.sites = spec.sites.data();
    image.siteCount = spec.sites.size();
    cpu_engine::LaunchConfig config;
    config.grid = {dims.grid.x, dims.grid.y, dims.grid.z};
    config.block = {dims.block.x, dims.block.y, dims.block.z};
    config.dynamicSharedBytes = dims.dynamicSharedBytes;
    config.threadFlags = indexChecks.flags;
    return statusOf(
        engine.launch(image, config, args, {dims.interrupt.requested, dims.interrupt.context}));
  }

  std::string launchWarning(const KernelSpec &spec) const override {
    bool skips = indexChecks.flags & KILN_THREAD_SKIP_INDEX_CHECKS;
    bool forces = indexChecks.flags & KILN_THREAD_FORCE_INDEX_CHECKS;
    if ((!skips || spec.hasUncheckedCode) && (!forces || spec.hasCheckedCode))
      return {};
    std::string kernel = "kernel '" + spec.name + "' " + spec.signature;
    std::string runs = skips ? "its copy with index checks, which runs"
                             : "its copy without index checks (boundscheck=False), which runs";
    return indexChecks.assignment + " asks for " +
           (skips ? "code without index checks" : "index checks") + ", but the host code of " +
           kernel + " holds only " + runs +
           "; build its module with --switchable-index-checks for the setting to choose";
  }

  Status maxCooperativeBlocks(KernelSpec &spec, uint32_t threadsPerBlock,
                              uint32_t dynamicSharedBytes, uint32_t &blocks) override {
    blocks = spec.staticSharedBytes + dynamicSharedBytes >
                     cpu_engine::DeviceLimits::maxSharedBytesPerBlock
                 ? 0
                 : cpu_engine::maxCooperativeBlocks(threadsPerBlock);
    return Status::success();
  }

private:
  static void *address(DevicePointer pointer) {
    return reinterpret_cast<void *>(static_cast<uintptr_t>(pointer));
  }
  static CpuEvent *eventOf(EventHandle event) { return reinterpret_cast<CpuEvent *>(event); }

  static Status allocateAligned(size_t bytes, void *&host) {
    size_t rounded = (bytes + allocationAlignment - 1) / allocationAlignment * allocationAlignment;
    host = std::aligned_alloc(allocationAlignment, rounded ? rounded : allocationAlignment);
    if (!host)
      return Status::error(ErrorKind::OutOfMemory, "kiln: out of host memory allocating " +
                                                       std::to_string(bytes) + " bytes");
    return Status::success();
  }

  static Status statusOf(const cpu_engine::LaunchResult &result) {
    switch (result.kind()) {
    case cpu_engine::LaunchErrorKind::None:
      return Status::success();
    case cpu_engine::LaunchErrorKind::InvalidConfiguration:
      return Status::error(ErrorKind::InvalidLaunch, result.message());
    case cpu_engine::LaunchErrorKind::KernelException:
      return Status::kernelException(result.exception()->className, result.exception()->argument);
    case cpu_engine::LaunchErrorKind::Deadlock:
      return Status::error(ErrorKind::Deadlock, result.message());
    case cpu_engine::LaunchErrorKind::ResourceFailure:
      return Status::error(ErrorKind::OutOfMemory, result.message());
    case cpu_engine::LaunchErrorKind::Internal:
      return Status::error(ErrorKind::Internal, result.message());
    case cpu_engine::LaunchErrorKind::Interrupted:
      return Status::error(ErrorKind::Interrupted, result.message());
    }
    return Status::error(ErrorKind::Internal, result.message());
  }

  cpu_engine::Engine engine{engineOptionsFromEnvironment()};
  const IndexCheckSetting indexChecks = indexCheckSettingFromEnvironment();
  std::atomic<StreamHandle> nextStream{1};
};

} // namespace

std::unique_ptr<ExecutionTarget> createCpuTarget() {
  return std::make_unique<CpuTarget>();
}

} // namespace kiln::runtime
