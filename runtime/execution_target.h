//===- runtime/execution_target.h - Where kernels run -----------*- C++ -*-===//
//
// [Note: execution targets]
// The runtime runs kernels on one of two targets, chosen once per process
// (KILN_TARGET=cuda|cpu|auto):
//
//   CudaTarget (runtime/cuda/)  the CUDA Driver API, loaded with dlopen;
//   CpuTarget (runtime/)        the CPU engine, on host memory.
//
// Both see the same things: "device" memory named by a DevicePointer (on the
// CPU target, a host address), streams and events named by opaque handles
// (0 is the default stream), and kernels described by a KernelSpec whose
// arguments are packed once, in the kernel ABI of docs/abi.md, for either.
// The Python extension (runtime/extension/) talks to the target only through
// this interface; nothing here knows Python.
//
// No exceptions: every fallible call returns a Status whose message says what
// failed, in words a Python user can act on.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "module/format.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kiln::runtime {

/// Which Python exception a failed Status becomes.
enum class ErrorKind : uint8_t {
  None,
  CudaError,       ///< a driver call failed: kiln.CudaError with the driver's error name
  NoBinaryForGpu,  ///< the module holds no cubin or PTX the device can run
  InvalidLaunch,   ///< bad grid, block or shared memory: ValueError
  KernelException, ///< a thread raised: the exception class in `exceptionClass`
  Deadlock,        ///< CPU engine: threads of a block wait forever (RuntimeError)
  OutOfMemory,     ///< MemoryError
  InvalidValue,    ///< a bad argument to a runtime call: ValueError
  Unavailable,     ///< the target cannot be used on this machine (RuntimeError)
  Internal,        ///< a broken invariant: RuntimeError
  Interrupted,     ///< InterruptCheck stopped the launch: its exception stands
};

class [[nodiscard]] Status {
public:
  static Status success() { return Status(); }
  static Status error(ErrorKind kind, std::string message) {
    Status status;
    status.errorKind = kind;
    status.text = std::move(message);
    return status;
  }
  /// A driver error: `code` is the CUresult, `name` its cuGetErrorName.
  static Status cudaError(int code, std::string name, std::string message) {
    Status status = error(ErrorKind::CudaError, std::move(message));
    status.cudaCode = code;
    status.cudaName = std::move(name);
    return status;
  }
  /// A raise in a kernel: `className` is a builtin exception's name.
  static Status kernelException(std::string className, std::string message) {
    Status status = error(ErrorKind::KernelException, std::move(message));
    status.exceptionName = std::move(className);
    return status;
  }

  bool ok() const { return errorKind == ErrorKind::None; }
  ErrorKind kind() const { return errorKind; }
  const std::string &message() const { return text; }
  int cudaErrorCode() const { return cudaCode; }
  const std::string &cudaErrorName() const { return cudaName; }
  const std::string &exceptionClass() const { return exceptionName; }

private:
  ErrorKind errorKind = ErrorKind::None;
  std::string text;
  int cudaCode = 0;
  std::string cudaName;
  std::string exceptionName;
};

/// An address in the target's memory (CUdeviceptr on CUDA).
using DevicePointer = uint64_t;

/// A device allocation as another process opens it (CUDA IPC): the
/// driver's handle of the allocation, whose first byte is `base`, and how
/// large it is.
struct IpcMemoryHandle {
  static constexpr size_t kBytes = 64;
  unsigned char handle[kBytes] = {};
  DevicePointer base = 0;
  uint64_t size = 0;
};
/// A stream (CUstream on CUDA); 0 is the default stream.
using StreamHandle = uintptr_t;
/// An event (CUevent on CUDA).
using EventHandle = uintptr_t;

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
};

/// Asked every few milliseconds while a launch that runs to completion
/// (the CPU target's) is waited for: true stops it, and the launch fails
/// with ErrorKind::Interrupted. The Python runtime checks for Ctrl-C here.
struct InterruptCheck {
  bool (*requested)(void *context) = nullptr;
  void *context = nullptr;
};

struct LaunchDims {
  Dim3 grid;
  Dim3 block;
  uint32_t dynamicSharedBytes = 0;
  /// Not a dimension, but passed along with them to every launch.
  InterruptCheck interrupt;
};

/// One compiled specialization, as the manifest describes it. Owned by the
/// dispatcher of its kernel, which outlives every launch of it.
struct KernelSpec {
  std::string name;      ///< Python name, for messages: "add_kernel"
  std::string signature; ///< for messages: "(array(float32, 1d, C), int64)"
  std::string entryName; ///< the .entry symbol in the PTX and cubins
  uint64_t staticSharedBytes = 0;
  uint64_t localBytes = 0;
  bool raises = false;
  /// Whether it syncs the grid: every block must be resident at once, which
  /// a cooperative launch guarantees (or refuses).
  bool cooperative = false;
  /// Its launch_bounds' most threads per block; 0 where it has none.
  uint32_t maxThreadsPerBlock = 0;
  /// Host code (CPU target).
  KilnHostEntries hostEntries = {nullptr, nullptr};
  /// Whether the host code holds the kernel's body with index checks, and
  /// without: both, unless it was built with only the copy its boundscheck
  /// option asks for (the manifest's "index_checks").
  bool hasCheckedCode = true;
  bool hasUncheckedCode = true;
  /// "file:line" of each operation the host code's messages name, by the
  /// index the code passes.
  std::vector<std::string> sites;
  /// The fat binary of its image (CUDA target), inside the module's bundle;
  /// the specializations of an image share it.
  const uint8_t *fatbin = nullptr;
  uint64_t fatbinSize = 0;
  std::vector<unsigned> cubinArchs; ///< 75, 80, ...: real architectures
  std::vector<unsigned> ptxArchs;   ///< virtual architectures of the PTX
  /// The CUDA target's lazily loaded CUfunction (per process: the runtime
  /// uses one device). Set once, under `loadMutex`.
  std::atomic<uintptr_t> gpuFunction{0};
  std::mutex loadMutex;
};

/// What host code sees of the device (get_current_device(), detect()).
struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int computeCapabilityMajor = 0;
  int computeCapabilityMinor = 0;
  uint64_t totalMemoryBytes = 0;
  int multiprocessorCount = 0;
  int warpSize = 32;
  int maxThreadsPerBlock = 1024;
  int maxSharedMemoryPerBlock = 48 * 1024;
  std::string uuid;
};

class ExecutionTarget {
public:
  virtual ~ExecutionTarget() = default;

  /// "cuda" or "cpu", for messages and `kiln.cuda.detect()`; what the
  /// runtime does differently per target it asks of the capabilities below.
  virtual const char *name() const = 0;
  /// Whether kernels read and write host memory in place (the CPU engine):
  /// host arrays then need no copies to and from the device.
  virtual bool sharesHostMemory() const = 0;
  /// Whether launches load the specialization's fat binary (the GPU) rather
  /// than run its host code (the CPU engine), which never reads one.
  virtual bool runsFatBinaries() const = 0;
  virtual Status deviceInfo(DeviceInfo &info) = 0;
  /// The CUDA driver's version as cuDriverGetVersion gives it (1000 * major
  /// + 10 * minor: 13000 for 13.0), or 0 where there is no driver (the CPU
  /// engine).
  virtual Status driverVersion(int &version) = 0;

  // Memory. Copies on a stream may return before they finish; the caller
  // keeps host buffers alive until the stream is synchronized.
  virtual Status allocate(size_t bytes, DevicePointer &pointer) = 0;
  virtual void release(DevicePointer pointer) = 0;
  /// Managed (unified) memory, which the device and the host both address
  /// (managed_array): its DevicePointer is a host address too. Released
  /// with release(). Unavailable where the device has no managed memory.
  virtual Status allocateManaged(size_t bytes, DevicePointer &pointer) = 0;
  /// The device's free and total memory in bytes (get_memory_info()); on
  /// the CPU target, the host's available and physical memory.
  virtual Status memoryInfo(uint64_t &freeBytes, uint64_t &totalBytes) = 0;
  /// Page-locked host memory (pinned_array); `mapped` also maps it into the
  /// device's address space (mapped_array).
  virtual Status allocateHost(size_t bytes, bool mapped, void *&host) = 0;
  virtual void releaseHost(void *host) = 0;
  virtual Status mappedDevicePointer(void *host, DevicePointer &pointer) = 0;
  virtual Status copyToDevice(DevicePointer destination, const void *source, size_t bytes,
                              StreamHandle stream) = 0;
  virtual Status copyToHost(void *destination, DevicePointer source, size_t bytes,
                            StreamHandle stream) = 0;
  virtual Status copyOnDevice(DevicePointer destination, DevicePointer source, size_t bytes,
                              StreamHandle stream) = 0;
  virtual Status fill(DevicePointer destination, uint8_t value, size_t bytes,
                      StreamHandle stream) = 0;
  /// CUDA IPC: the handle of the allocation that holds `pointer`, which
  /// another process opens with openIpc; unavailable on the CPU engine,
  /// whose device memory is this process's host memory.
  virtual Status exportIpc(DevicePointer pointer, IpcMemoryHandle &exported) = 0;
  /// The address, in this process, of the allocation another process
  /// exported as `handle` (the handle's bytes); closeIpc lets it go.
  virtual Status openIpc(const unsigned char (&handle)[IpcMemoryHandle::kBytes],
                         DevicePointer &base) = 0;
  virtual Status closeIpc(DevicePointer base) = 0;

  // Streams and events.
  virtual Status createStream(StreamHandle &stream) = 0;
  virtual void destroyStream(StreamHandle stream) = 0;
  virtual Status synchronizeStream(StreamHandle stream) = 0;
  /// Whether all work on the stream has finished.
  virtual Status queryStream(StreamHandle stream, bool &finished) = 0;
  virtual Status synchronizeDevice() = 0;
  virtual Status createEvent(bool timing, EventHandle &event) = 0;
  virtual void destroyEvent(EventHandle event) = 0;
  virtual Status recordEvent(EventHandle event, StreamHandle stream) = 0;
  virtual Status synchronizeEvent(EventHandle event) = 0;
  virtual Status queryEvent(EventHandle event, bool &finished) = 0;
  virtual Status elapsedMilliseconds(EventHandle start, EventHandle end, float &milliseconds) = 0;

  /// Launches `spec` with `args`: one pointer per machine parameter, each to
  /// the parameter's value (docs/abi.md), exactly as cuLaunchKernel takes
  /// them. The CPU target runs the whole grid before it returns; the CUDA
  /// target only enqueues the launch on `stream`.
  virtual Status launch(KernelSpec &spec, const LaunchDims &dims, StreamHandle stream,
                        void **args) = 0;
  /// How many blocks of `threadsPerBlock` threads, each with
  /// `dynamicSharedBytes` of dynamic shared memory, a cooperative launch of
  /// `spec` may have: as many as the device keeps resident at once
  /// (max_cooperative_grid_blocks()).
  virtual Status maxCooperativeBlocks(KernelSpec &spec, uint32_t threadsPerBlock,
                                      uint32_t dynamicSharedBytes, uint32_t &blocks) = 0;
  /// What to warn of before the first launch of `spec` when the target's
  /// settings ask for code `spec` lacks, so that it runs other code than
  /// asked (the CPU engine's KILN_CPU_BOUNDSCHECK and a kernel holding one
  /// copy of its body); empty otherwise.
  virtual std::string launchWarning(const KernelSpec &) const { return {}; }
};

} // namespace kiln::runtime
