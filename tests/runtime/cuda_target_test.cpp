//===- tests/runtime/cuda_target_test.cpp - The CUDA target ---------------===//
//
// runtime/cuda against the stand-in CUDA driver (tests/runtime/stand_in_driver),
// loaded through KILN_CUDA_DRIVER: no GPU needed. The driver is loaded once
// per process, so each test runs its body in a child process with its own
// environment (compute capability, injected failures, a call log) and reads
// the stand-in's log to check the calls the target made.
//
// The fat binaries are built here from a small PTX kernel with the toolkit's
// ptxas and fatbinary: cubins sm_75, sm_80 and sm_86, PTX compute_90.
//
//===----------------------------------------------------------------------===//

#include "backend/cuda_tools/cuda_toolkit.h"
#include "backend/cuda_tools/fatbinary.h"
#include "backend/cuda_tools/ptxas.h"
#include "runtime/cuda/cuda_target.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <functional>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <utility>
#include <vector>

namespace kiln::runtime {
namespace {

using Environment = std::vector<std::pair<std::string, std::string>>;

// A kernel with one parameter of each kind the ABI uses; it does nothing.
const char kTestPtx[] = R"(.version 7.8
.target sm_75
.address_size 64

.visible .entry kiln_test_kernel(
	.param .u64 kiln_test_kernel_param_0,
	.param .u32 kiln_test_kernel_param_1,
	.param .f32 kiln_test_kernel_param_2,
	.param .align 8 .b8 kiln_test_kernel_param_3[16],
	.param .u8 kiln_test_kernel_param_4,
	.param .f64 kiln_test_kernel_param_5
)
{
	ret;
}
)";

const char kEntryName[] = "kiln_test_kernel";

std::string withTarget(std::string ptx, unsigned arch) {
  size_t at = ptx.find(".target sm_");
  size_t end = ptx.find('\n', at);
  return ptx.substr(0, at) + ".target sm_" + std::to_string(arch) + ptx.substr(end);
}

/// A fat binary of the test kernel with these cubins and PTX.
std::string buildFatbin(const std::vector<unsigned> &cubins, const std::vector<unsigned> &ptx) {
  llvm::Expected<cuda_tools::CudaToolkit> toolkit = cuda_tools::findCudaToolkit();
  if (!toolkit) {
    ADD_FAILURE() << "these tests need the CUDA toolkit (ptxas, fatbinary): "
                  << llvm::toString(toolkit.takeError());
    return "";
  }
  std::vector<cuda_tools::FatbinImage> images;
  for (unsigned arch : cubins) {
    llvm::Expected<cuda_tools::AssembledCubin> cubin =
        cuda_tools::assemblePtx(*toolkit, kTestPtx, arch);
    if (!cubin) {
      ADD_FAILURE() << llvm::toString(cubin.takeError());
      return "";
    }
    images.push_back({cuda_tools::FatbinImageKind::Cubin, arch, std::move(cubin->cubin)});
  }
  for (unsigned arch : ptx)
    images.push_back({cuda_tools::FatbinImageKind::Ptx, arch, withTarget(kTestPtx, arch)});
  llvm::Expected<std::string> fatbin = cuda_tools::createFatbinary(*toolkit, images);
  if (!fatbin) {
    ADD_FAILURE() << llvm::toString(fatbin.takeError());
    return "";
  }
  return std::move(*fatbin);
}

/// cubins sm_75, sm_80, sm_86 and PTX compute_90, built once per process.
const std::string &standardFatbin() {
  static const std::string *fatbin = new std::string(buildFatbin({75, 80, 86}, {90}));
  return *fatbin;
}

void describe(KernelSpec &spec, const std::string &fatbin, std::vector<unsigned> cubins,
              std::vector<unsigned> ptx) {
  spec.name = "test_kernel";
  spec.signature = "(array(float32, 1d, C), int32)";
  spec.entryName = kEntryName;
  spec.fatbin = reinterpret_cast<const uint8_t *>(fatbin.data());
  spec.fatbinSize = fatbin.size();
  spec.cubinArchs = std::move(cubins);
  spec.ptxArchs = std::move(ptx);
}

/// A spec of the standard fat binary.
void describeStandard(KernelSpec &spec) {
  describe(spec, standardFatbin(), {75, 80, 86}, {90});
}

/// Runs `body` in a child process with the stand-in driver, a fresh call
/// log at `logPath()`, and `environment`. The child's failures print as they
/// happen; the parent fails if the child did.
std::string currentLog;
const std::string &logPath() {
  return currentLog;
}

void inChild(const Environment &environment, const std::function<void()> &body) {
  static int counter = 0;
  currentLog = ::testing::TempDir() + "kiln_stand_in_" + std::to_string(getpid()) + "_" +
               std::to_string(++counter) + ".jsonl";
  std::remove(currentLog.c_str());
  (void)standardFatbin(); // Built once, before the children need it.
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    setenv("KILN_CUDA_DRIVER", KILN_STAND_IN_DRIVER_PATH, 1);
    setenv("KILN_STAND_IN_LOG", currentLog.c_str(), 1);
    unsetenv("KILN_STAND_IN_FAIL");
    unsetenv("KILN_STAND_IN_COMPUTE_CAPABILITY");
    unsetenv("KILN_STAND_IN_DEVICE_COUNT");
    unsetenv("KILN_STAND_IN_MANAGED_MEMORY");
    for (const auto &[name, value] : environment)
      setenv(name.c_str(), value.c_str(), 1);
    body();
    std::fflush(stdout);
    std::fflush(stderr);
    _exit(::testing::Test::HasFailure() ? 1 : 0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "the test's child process failed (its messages are above)";
  std::remove(currentLog.c_str());
}

/// One line of the stand-in's log.
struct LogLine {
  std::string text;

  /// The raw JSON of top-level `key` ("\"cuInit\"", "4096", "[1,1,1]"), or "".
  std::string raw(const std::string &key) const {
    std::string pattern = "\"" + key + "\":";
    size_t at = text.find(pattern);
    if (at == std::string::npos)
      return "";
    size_t start = at + pattern.size(), end = start;
    int depth = 0;
    bool inString = false;
    for (; end < text.size(); ++end) {
      char c = text[end];
      if (inString) {
        if (c == '\\')
          ++end;
        else if (c == '"')
          inString = false;
      } else if (c == '"') {
        inString = true;
      } else if (c == '[' || c == '{') {
        ++depth;
      } else if (c == ']' || c == '}') {
        if (depth == 0)
          break;
        --depth;
      } else if (c == ',' && depth == 0) {
        break;
      }
    }
    return text.substr(start, end - start);
  }
  /// A string field without its quotes.
  std::string string(const std::string &key) const {
    std::string value = raw(key);
    return value.size() >= 2 ? value.substr(1, value.size() - 2) : value;
  }
  uint64_t number(const std::string &key) const {
    return std::strtoull(raw(key).c_str(), nullptr, 10);
  }
  std::string call() const { return string("call"); }
  std::string result() const { return string("result"); }
};

std::vector<LogLine> readLog() {
  std::vector<LogLine> lines;
  std::ifstream file(logPath());
  for (std::string line; std::getline(file, line);)
    lines.push_back({line});
  return lines;
}

/// The log's calls, without the context checks and error look-ups that
/// every call may make.
std::vector<LogLine> mainCalls() {
  std::vector<LogLine> lines;
  for (LogLine &line : readLog()) {
    std::string call = line.call();
    if (call != "cuCtxGetCurrent" && call != "cuGetErrorName" && call != "cuGetErrorString")
      lines.push_back(std::move(line));
  }
  return lines;
}

std::vector<LogLine> callsOf(const std::string &name) {
  std::vector<LogLine> lines;
  for (LogLine &line : readLog())
    if (line.call() == name)
      lines.push_back(std::move(line));
  return lines;
}

std::vector<std::string> names(const std::vector<LogLine> &lines) {
  std::vector<std::string> result;
  for (const LogLine &line : lines)
    result.push_back(line.call());
  return result;
}

std::unique_ptr<ExecutionTarget> createTarget() {
  Status why;
  std::unique_ptr<ExecutionTarget> target = createCudaTarget(why);
  EXPECT_TRUE(target) << why.message();
  return target;
}

std::string hex(const void *data, size_t size) {
  static const char digits[] = "0123456789abcdef";
  std::string text;
  for (size_t i = 0; i < size; ++i) {
    unsigned char byte = static_cast<const unsigned char *>(data)[i];
    text += digits[byte >> 4];
    text += digits[byte & 15];
  }
  return text;
}

/// The test kernel's arguments, packed as the runtime packs them.
struct TestArguments {
  uint64_t data = 0;
  uint32_t count = 7;
  float scale = 1.5f;
  struct {
    double real;
    int64_t other;
  } record = {-2.5, 1234567890123};
  uint8_t flag = 1;
  double offset = 2.25;
  void *pointers[6] = {&data, &count, &scale, &record, &flag, &offset};
};

LaunchDims dims(uint32_t grid, uint32_t block, uint32_t shared = 0) {
  LaunchDims result;
  result.grid.x = grid;
  result.block.x = block;
  result.dynamicSharedBytes = shared;
  return result;
}

// Creation.

TEST(CudaTarget, CreatesOnDeviceZeroAndDescribesIt) {
  inChild({{"KILN_STAND_IN_COMPUTE_CAPABILITY", "8.6"}}, [] {
    std::unique_ptr<ExecutionTarget> target = createTarget();
    ASSERT_TRUE(target);
    EXPECT_STREQ(target->name(), "cuda");
    DeviceInfo info;
    ASSERT_TRUE(target->deviceInfo(info).ok());
    EXPECT_EQ(info.ordinal, 0);
    EXPECT_EQ(info.name, "Kiln stand-in driver (not a GPU)");
    EXPECT_EQ(info.computeCapabilityMajor, 8);
    EXPECT_EQ(info.computeCapabilityMinor, 6);
    EXPECT_EQ(info.totalMemoryBytes, uint64_t(16) << 30);
    EXPECT_EQ(info.multiprocessorCount, 108);
    EXPECT_EQ(info.warpSize, 32);
    EXPECT_EQ(info.maxThreadsPerBlock, 1024);
    EXPECT_EQ(info.maxSharedMemoryPerBlock, 48 * 1024);
    EXPECT_EQ(info.uuid, "GPU-00102030-4050-6070-8090-a0b0c0d0e0f0");

    std::vector<LogLine> calls = mainCalls();
    ASSERT_GE(calls.size(), 5u);
    EXPECT_EQ(calls[0].call(), "cuInit");
    EXPECT_EQ(calls[1].call(), "cuDeviceGetCount");
    EXPECT_EQ(calls[2].call(), "cuDeviceGet");
    EXPECT_EQ(calls[3].call(), "cuDevicePrimaryCtxRetain");
    EXPECT_EQ(calls[4].call(), "cuCtxSetCurrent");
    EXPECT_EQ(calls[4].number("ctx"), calls[3].number("pctx"));
    for (const LogLine &line : readLog())
      EXPECT_EQ(line.result(), "CUDA_SUCCESS") << line.text;

    target.reset();
    EXPECT_EQ(mainCalls().back().call(), "cuDevicePrimaryCtxRelease_v2");
  });
}

TEST(CudaTarget, WithoutADriverLibrarySaysWhichLibrary) {
  inChild({{"KILN_CUDA_DRIVER", "/nonexistent/libcuda.so.1"}}, [] {
    Status why;
    EXPECT_FALSE(createCudaTarget(why));
    EXPECT_EQ(why.kind(), ErrorKind::Unavailable);
    EXPECT_NE(why.message().find("the CUDA driver library '/nonexistent/libcuda.so.1' (from "
                                 "KILN_CUDA_DRIVER) could not be loaded"),
              std::string::npos)
        << why.message();
    // The outcome is remembered.
    Status again;
    EXPECT_FALSE(createCudaTarget(again));
    EXPECT_EQ(again.message(), why.message());
  });
}

TEST(CudaTarget, WithoutADeviceSaysSo) {
  inChild({{"KILN_STAND_IN_DEVICE_COUNT", "0"}}, [] {
    Status why;
    EXPECT_FALSE(createCudaTarget(why));
    EXPECT_EQ(why.kind(), ErrorKind::Unavailable);
    EXPECT_NE(why.message().find("no CUDA device"), std::string::npos) << why.message();
    EXPECT_NE(why.message().find("CUDA_ERROR_NO_DEVICE"), std::string::npos) << why.message();
  });
}

TEST(CudaTarget, AFailedCuInitIsReportedWithTheDriversName) {
  inChild({{"KILN_STAND_IN_FAIL", "cuInit=CUDA_ERROR_NOT_SUPPORTED"}}, [] {
    Status why;
    EXPECT_FALSE(createCudaTarget(why));
    EXPECT_EQ(why.kind(), ErrorKind::Unavailable);
    EXPECT_NE(
        why.message().find("cuInit failed: CUDA_ERROR_NOT_SUPPORTED: operation not supported"),
        std::string::npos)
        << why.message();
  });
}

// Memory.

TEST(CudaTarget, CopiesRoundTripThroughDeviceMemory) {
  inChild({}, [] {
    std::unique_ptr<ExecutionTarget> target = createTarget();
    ASSERT_TRUE(target);
    std::vector<uint8_t> source(1000), back(1000, 0);
    for (size_t i = 0; i < source.size(); ++i)
      source[i] = static_cast<uint8_t>(i * 7);
    DevicePointer first = 0, second = 0;
    ASSERT_TRUE(target->allocate(1000, first).ok());
    ASSERT_TRUE(target->allocate(1000, second).ok());
    EXPECT_NE(first, 0u);
    ASSERT_TRUE(target->copyToDevice(first, source.data(), 1000, 0).ok());
    ASSERT_TRUE(target->copyOnDevice(second, first, 1000, 0).ok());
    ASSERT_TRUE(target->fill(second + 100, 0xee, 50, 0).ok());
    ASSERT_TRUE(target->copyToHost(back.data(), second, 1000, 0).ok());
    ASSERT_TRUE(target->synchronizeDevice().ok());
    for (size_t i = 0; i < source.size(); ++i)
      ASSERT_EQ(back[i], i >= 100 && i < 150 ? 0xee : source[i]) << "byte " << i;
    target->release(first);
    target->release(second);

    // Zero bytes need no driver call.
    DevicePointer empty = 1;
    ASSERT_TRUE(target->allocate(0, empty).ok());
    EXPECT_EQ(empty, 0u);
    target->release(empty);

    std::vector<std::string> expected = {
        "cuMemAlloc_v2",        "cuMemAlloc_v2",   "cuMemcpyHtoDAsync_v2",
        "cuMemcpyDtoDAsync_v2", "cuMemsetD8Async", "cuMemcpyDtoHAsync_v2",
        "cuCtxSynchronize",     "cuMemFree_v2",    "cuMemFree_v2"};
    std::vector<std::string> calls = names(mainCalls());
    ASSERT_GE(calls.size(), expected.size());
    EXPECT_EQ(std::vector<std::string>(calls.end() - expected.size(), calls.end()), expected);
    std::vector<LogLine> fills = callsOf("cuMemsetD8Async");
    ASSERT_EQ(fills.size(), 1u);
    EXPECT_EQ(fills[0].number("dstDevice"), second + 100);
    EXPECT_EQ(fills[0].number("uc"), 0xeeu);
    EXPECT_EQ(fills[0].number("N"), 50u);
    for (const LogLine &line : readLog())
      EXPECT_EQ(line.result(), "CUDA_SUCCESS") << line.text;
  });
}

TEST(CudaTarget, PinnedAndMappedHostMemory) {
  inChild({}, [] {
    std::unique_ptr<ExecutionTarget> target = createTarget();
    ASSERT_TRUE(target);
    void *pinned = nullptr, *mapped = nullptr;
    ASSERT_TRUE(target->allocateHost(256, false, pinned).ok());
    ASSERT_TRUE(target->allocateHost(256, true, mapped).ok());
    std::vector<LogLine> allocations = callsOf("cuMemHostAlloc");
    ASSERT_EQ(allocations.size(), 2u);
    EXPECT_EQ(allocations[0].number("Flags"), 0u);
    EXPECT_EQ(allocations[1].number("Flags"), 3u); // DEVICEMAP | PORTABLE

    DevicePointer device = 0;
    ASSERT_TRUE(target->mappedDevicePointer(mapped, device).ok());
    EXPECT_EQ(device, reinterpret_cast<uintptr_t>(mapped)); // The stand-in's unified addressing.
    std::memset(mapped, 0x5a, 256);
    ASSERT_TRUE(target->copyToHost(pinned, device, 256, 0).ok());
    EXPECT_EQ(static_cast<uint8_t *>(pinned)[255], 0x5a);

    Status notMapped = target->mappedDevicePointer(pinned, device);
    EXPECT_EQ(notMapped.kind(), ErrorKind::CudaError);
    EXPECT_EQ(notMapped.cudaErrorName(), "CUDA_ERROR_INVALID_VALUE");
    target->releaseHost(pinned);
    target->releaseHost(mapped);
    EXPECT_EQ(callsOf("cuMemFreeHost").size(), 2u);
  });
}

TEST(CudaTarget, MemoryInfoIsTheDevicesFreeAndTotalMemory) {
  inChild({}, [] {
    std::unique_ptr<ExecutionTarget> target = createTarget();
    ASSERT_TRUE(target);
    uint64_t freeBytes = 0, totalBytes = 0;
    ASSERT_TRUE(target->memoryInfo(freeBytes, totalBytes).ok());
    EXPECT_EQ(totalBytes, uint64_t(16) << 30);
    EXPECT_GT(totalBytes, 0u);
    EXPECT_LE(freeBytes, totalBytes);
    // The stand-in counts what is allocated on the device.
    DevicePointer pointer = 0;
    ASSERT_TRUE(target->allocate(1 << 20, pointer).ok());
    uint64_t freeAfter = 0, totalAfter = 0;
    ASSERT_TRUE(target->memoryInfo(freeAfter, totalAfter).ok());
    EXPECT_EQ(totalAfter, totalBytes);
    EXPECT_EQ(freeAfter, freeBytes - (1 << 20));
    target->release(pointer);

    std::vector<LogLine> queries = callsOf("cuMemGetInfo_v2");
    ASSERT_EQ(queries.size(), 2u);
    EXPECT_EQ(queries[0].number("free"), freeBytes);
    EXPECT_EQ(queries[0].number("total"), totalBytes);
    for (const LogLine &line : readLog())
      EXPECT_EQ(line.result(), "CUDA_SUCCESS") << line.text;
  });
}

TEST(CudaTarget, MemoryInfoMakesTheContextCurrentFirst) {
  inChild({}, [] {
    std::unique_ptr<ExecutionTarget> target = createTarget();
    ASSERT_TRUE(target);
    uint64_t freeBytes = 0, totalBytes = 0;
    std::thread other([&] { EXPECT_TRUE(target->memoryInfo(freeBytes, totalBytes).ok()); });
    other.join();
    EXPECT_GT(totalBytes, 0u);
    std::vector<std::string> calls = names(mainCalls());
    ASSERT_GE(calls.size(), 2u);
    EXPECT_EQ(std::vector<std::string>(calls.end() - 2, calls.end()),
              (std::vector<std::string>{"cuCtxSetCurrent", "cuMemGetInfo_v2"}));
  });
}

TEST(CudaTarget, ManagedMemoryIsAllocatedGloballyAndReleased) {
  inChild({}, [] {
    std::unique_ptr<ExecutionTarget> target = createTarget();
    ASSERT_TRUE(target);
    uint64_t freeBefore = 0, total = 0;
    ASSERT_TRUE(target->memoryInfo(freeBefore, total).ok());
    DevicePointer managed = 0;
    ASSERT_TRUE(target->allocateManaged(4096, managed).ok());
    ASSERT_NE(managed, 0u);
    std::vector<LogLine> allocations = callsOf("cuMemAllocManaged");
    ASSERT_EQ(allocations.size(), 1u);
    EXPECT_EQ(allocations[0].number("bytesize"), 4096u);
    EXPECT_EQ(allocations[0].number("flags"), 1u); // CU_MEM_ATTACH_GLOBAL
    EXPECT_EQ(allocations[0].number("dptr"), managed);
    uint64_t freeDuring = 0;
    ASSERT_TRUE(target->memoryInfo(freeDuring, total).ok());
    EXPECT_EQ(freeDuring, freeBefore - 4096);

    // The host writes it in place; the device's copies see the bytes.
    std::memset(reinterpret_cast<void *>(static_cast<uintptr_t>(managed)), 0x3c, 4096);
    std::vector<uint8_t> back(4096, 0);
    ASSERT_TRUE(target->copyToHost(back.data(), managed, 4096, 0).ok());
    EXPECT_EQ(back[0], 0x3c);
    EXPECT_EQ(back[4095], 0x3c);

    target->release(managed);
    std::vector<LogLine> frees = callsOf("cuMemFree_v2");
    ASSERT_EQ(frees.size(), 1u);
    EXPECT_EQ(frees[0].number("dptr"), managed);
    uint64_t freeAfter = 0;
    ASSERT_TRUE(target->memoryInfo(freeAfter, total).ok());
    EXPECT_EQ(freeAfter, freeBefore);

    // Zero bytes need no driver call.
    DevicePointer empty = 1;
    ASSERT_TRUE(target->allocateManaged(0, empty).ok());
    EXPECT_EQ(empty, 0u);
    EXPECT_EQ(callsOf("cuMemAllocManaged").size(), 1u);
    for (const LogLine &line : readLog())
      EXPECT_EQ(line.result(), "CUDA_SUCCESS") << line.text;
  });
}

TEST(CudaTarget, ManagedMemoryOnADeviceWithoutItIsUnavailable) {
  inChild({{"KILN_STAND_IN_MANAGED_MEMORY", "0"}}, [] {
    std::unique_ptr<ExecutionTarget> target = createTarget();
    ASSERT_TRUE(target);
    std::vector<LogLine> attributes = callsOf("cuDeviceGetAttribute");
    bool asked = false;
    for (const LogLine &line : attributes)
      if (line.number("attrib") == 83) {
        asked = true;
        EXPECT_EQ(line.number("pi"), 0u);
      }
    EXPECT_TRUE(asked) << "CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY was never asked for";
    DevicePointer pointer = 1;
    Status status = target->allocateManaged(4096, pointer);
    EXPECT_EQ(status.kind(), ErrorKind::Unavailable);
    EXPECT_EQ(pointer, 0u);
    EXPECT_EQ(status.message(),
              "managed memory is not supported on device 0 (Kiln stand-in driver (not a GPU)): "
              "it reports CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY = 0; use device memory "
              "(device_array) or mapped host memory (mapped_array) instead");
    // The driver is never asked.
    EXPECT_TRUE(callsOf("cuMemAllocManaged").empty());
    // Ordinary device memory still works.
    ASSERT_TRUE(target->allocate(4096, pointer).ok());
    target->release(pointer);
  });
}

TEST(CudaTarget, DriverVersionIsCuDriverGetVersions) {
  inChild({}, [] {
    std::unique_ptr<ExecutionTarget> target = createTarget();
    ASSERT_TRUE(target);
    int version = 0;
    ASSERT_TRUE(target->driverVersion(version).ok());
    EXPECT_EQ(version, 13000);
    EXPECT_EQ(callsOf("cuDriverGetVersion").size(), 1u);
  });
}

TEST(CudaTarget, DriverErrorsCarryTheDriversNameAndWhatFailed) {
  inChild({{"KILN_STAND_IN_FAIL", "cuMemAlloc_v2=CUDA_ERROR_OUT_OF_MEMORY,cuStreamCreate=999"}},
          [] {
            std::unique_ptr<ExecutionTarget> target = createTarget();
            ASSERT_TRUE(target);
            DevicePointer pointer = 0;
            Status status = target->allocate(4096, pointer);
            EXPECT_EQ(status.kind(), ErrorKind::CudaError);
            EXPECT_EQ(status.cudaErrorCode(), 2);
            EXPECT_EQ(status.cudaErrorName(), "CUDA_ERROR_OUT_OF_MEMORY");
            EXPECT_EQ(status.message(), "cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY: out of "
                                        "memory (allocating 4096 bytes)");
            StreamHandle stream = 0;
            status = target->createStream(stream);
            EXPECT_EQ(status.cudaErrorCode(), 999);
            EXPECT_EQ(status.message(), "cuStreamCreate failed: CUDA_ERROR_UNKNOWN: unknown error");
          });
}

TEST(CudaTarget, ManagedMemoryAndMemoryInfoErrorsCarryTheDriversName) {
  inChild({{"KILN_STAND_IN_FAIL", "cuMemAllocManaged=CUDA_ERROR_OUT_OF_MEMORY,cuMemGetInfo_v2,"
                                  "cuDriverGetVersion=CUDA_ERROR_NOT_INITIALIZED"}},
          [] {
            std::unique_ptr<ExecutionTarget> target = createTarget();
            ASSERT_TRUE(target);
            DevicePointer pointer = 1;
            Status status = target->allocateManaged(4096, pointer);
            EXPECT_EQ(status.kind(), ErrorKind::CudaError);
            EXPECT_EQ(status.cudaErrorName(), "CUDA_ERROR_OUT_OF_MEMORY");
            EXPECT_EQ(status.message(), "cuMemAllocManaged failed: CUDA_ERROR_OUT_OF_MEMORY: out "
                                        "of memory (allocating 4096 bytes of managed memory)");
            EXPECT_EQ(pointer, 0u);
            uint64_t freeBytes = 1, totalBytes = 1;
            status = target->memoryInfo(freeBytes, totalBytes);
            EXPECT_EQ(status.kind(), ErrorKind::CudaError);
            EXPECT_EQ(status.message(),
                      "cuMemGetInfo failed: CUDA_ERROR_UNKNOWN: unknown error (device 0)");
            EXPECT_EQ(freeBytes, 0u);
            EXPECT_EQ(totalBytes, 0u);
            int version = 1;
            status = target->driverVersion(version);
            EXPECT_EQ(status.cudaErrorName(), "CUDA_ERROR_NOT_INITIALIZED");
            EXPECT_EQ(version, 0);
          });
}

// Streams and events.

TEST(CudaTarget, StreamsAndEvents) {
  inChild({}, [] {
    std::unique_ptr<ExecutionTarget> target = createTarget();
    ASSERT_TRUE(target);
    StreamHandle stream = 0;
    EventHandle start = 0, end = 0, untimed = 0;
    ASSERT_TRUE(target->createStream(stream).ok());
    EXPECT_NE(stream, 0u);
    ASSERT_TRUE(target->createEvent(true, start).ok());
    ASSERT_TRUE(target->createEvent(true, end).ok());
    ASSERT_TRUE(target->createEvent(false, untimed).ok());
    ASSERT_TRUE(target->recordEvent(start, stream).ok());
    ASSERT_TRUE(target->recordEvent(end, stream).ok());
    ASSERT_TRUE(target->recordEvent(untimed, 0).ok());
    ASSERT_TRUE(target->synchronizeEvent(end).ok());
    bool finished = false;
    ASSERT_TRUE(target->queryEvent(end, finished).ok());
    EXPECT_TRUE(finished);
    finished = false;
    ASSERT_TRUE(target->queryStream(stream, finished).ok());
    EXPECT_TRUE(finished);
    ASSERT_TRUE(target->synchronizeStream(stream).ok());
    ASSERT_TRUE(target->synchronizeStream(0).ok());
    float milliseconds = -1;
    ASSERT_TRUE(target->elapsedMilliseconds(start, end, milliseconds).ok());
    EXPECT_GE(milliseconds, 0.0f);
    Status status = target->elapsedMilliseconds(start, untimed, milliseconds);
    EXPECT_EQ(status.kind(), ErrorKind::CudaError);
    EXPECT_EQ(status.message(),
              "cuEventElapsedTime failed: CUDA_ERROR_INVALID_HANDLE: invalid resource handle");
    target->destroyEvent(start);
    target->destroyEvent(end);
    target->destroyEvent(untimed);
    target->destroyStream(stream);
    target->destroyStream(0); // The default stream is never destroyed.

    std::vector<LogLine> calls = mainCalls();
    std::vector<std::string> expected = {
        "cuStreamCreate",        "cuEventCreate",         "cuEventCreate",
        "cuEventCreate",         "cuEventRecord",         "cuEventRecord",
        "cuEventRecord",         "cuEventSynchronize",    "cuEventQuery",
        "cuStreamQuery",         "cuStreamSynchronize",   "cuStreamSynchronize",
        "cuEventElapsedTime_v2", "cuEventElapsedTime_v2", "cuEventDestroy_v2",
        "cuEventDestroy_v2",     "cuEventDestroy_v2",     "cuStreamDestroy_v2"};
    std::vector<std::string> called = names(calls);
    ASSERT_GE(called.size(), expected.size());
    EXPECT_EQ(std::vector<std::string>(called.end() - expected.size(), called.end()), expected);
    std::vector<LogLine> events = callsOf("cuEventCreate");
    ASSERT_EQ(events.size(), 3u);
    EXPECT_EQ(events[0].number("Flags"), 0u);
    EXPECT_EQ(events[2].number("Flags"), 2u); // CU_EVENT_DISABLE_TIMING
    std::vector<LogLine> records = callsOf("cuEventRecord");
    EXPECT_EQ(records[0].number("hStream"), stream);
    EXPECT_EQ(records[2].number("hStream"), 0u);
  });
}

TEST(CudaTarget, MakesItsContextCurrentOnEveryThread) {
  inChild({}, [] {
    std::unique_ptr<ExecutionTarget> target = createTarget();
    ASSERT_TRUE(target);
    // Another library unbinds the context from this thread.
    void *driver = dlopen(KILN_STAND_IN_DRIVER_PATH, RTLD_NOW | RTLD_NOLOAD);
    ASSERT_TRUE(driver);
    auto setCurrent = reinterpret_cast<int (*)(void *)>(dlsym(driver, "cuCtxSetCurrent"));
    ASSERT_EQ(setCurrent(nullptr), 0);
    DevicePointer pointer = 0;
    ASSERT_TRUE(target->allocate(64, pointer).ok());
    std::thread other([&] { target->release(pointer); });
    other.join();
    for (const LogLine &line : readLog())
      EXPECT_EQ(line.result(), "CUDA_SUCCESS") << line.text;
    EXPECT_EQ(callsOf("cuCtxSetCurrent").size(), 4u); // creation, test, again, other thread
    dlclose(driver);
  });
}

// Kernels.

TEST(CudaTarget, LaunchPassesEachParameterAsThePtxDeclaresIt) {
  inChild({}, [] {
    std::unique_ptr<ExecutionTarget> target = createTarget();
    ASSERT_TRUE(target);
    KernelSpec spec;
    describeStandard(spec);
    TestArguments arguments;
    ASSERT_TRUE(target->allocate(256, arguments.data).ok());
    StreamHandle stream = 0;
    ASSERT_TRUE(target->createStream(stream).ok());
    LaunchDims launchDims;
    launchDims.grid = {4, 2, 1};
    launchDims.block = {32, 4, 2};
    launchDims.dynamicSharedBytes = 1024;
    Status status = target->launch(spec, launchDims, stream, arguments.pointers);
    ASSERT_TRUE(status.ok()) << status.message();

    std::vector<LogLine> launches = callsOf("cuLaunchKernel");
    ASSERT_EQ(launches.size(), 1u);
    const LogLine &launch = launches[0];
    EXPECT_EQ(launch.result(), "CUDA_SUCCESS");
    EXPECT_EQ(launch.string("function"), kEntryName);
    EXPECT_EQ(launch.raw("grid"), "[4,2,1]");
    EXPECT_EQ(launch.raw("block"), "[32,4,2]");
    EXPECT_EQ(launch.number("sharedMemBytes"), 1024u);
    EXPECT_EQ(launch.number("hStream"), stream);

    struct Expected {
      const char *type;
      size_t size, align, offset;
      std::string hex;
    };
    const Expected expected[] = {
        {"u64", 8, 8, 0, hex(&arguments.data, 8)},   {"u32", 4, 4, 8, hex(&arguments.count, 4)},
        {"f32", 4, 4, 12, hex(&arguments.scale, 4)}, {"b8", 16, 8, 16, hex(&arguments.record, 16)},
        {"u8", 1, 1, 32, hex(&arguments.flag, 1)},   {"f64", 8, 8, 40, hex(&arguments.offset, 8)},
    };
    std::string params = launch.raw("params");
    size_t at = 0;
    for (size_t i = 0; i < std::size(expected); ++i) {
      std::string object = "{\"name\":\"kiln_test_kernel_param_" + std::to_string(i) +
                           "\",\"type\":\"" + expected[i].type +
                           "\",\"size\":" + std::to_string(expected[i].size) +
                           ",\"align\":" + std::to_string(expected[i].align) +
                           ",\"offset\":" + std::to_string(expected[i].offset) + ",\"hex\":\"" +
                           expected[i].hex + "\"}";
      size_t found = params.find(object, at);
      EXPECT_NE(found, std::string::npos)
          << "parameter " << i << ": " << object << "\nin " << params;
      if (found != std::string::npos)
        at = found + object.size();
    }

    // The module loads once; the second launch reuses the function.
    ASSERT_TRUE(target->launch(spec, launchDims, 0, arguments.pointers).ok());
    EXPECT_EQ(callsOf("cuModuleLoadData").size(), 1u);
    EXPECT_EQ(callsOf("cuModuleGetFunction").size(), 1u);
    EXPECT_EQ(callsOf("cuLaunchKernel").size(), 2u);
    EXPECT_EQ(callsOf("cuFuncSetAttribute").size(), 0u);
  });
}

TEST(CudaTarget, LoadsEachImageOnceAndEachSpecializationsFunctionOnceFromEightThreads) {
  inChild({}, [] {
    std::unique_ptr<ExecutionTarget> target = createTarget();
    ASSERT_TRUE(target);
    // `first` and `second` share an image, as the kernels of one module
    // do; `third`'s fat binary has the same bytes at another address, as
    // another image's would.
    KernelSpec first, second, third;
    describeStandard(first);
    describeStandard(second);
    second.name = "other_kernel";
    std::string elsewhere = standardFatbin();
    describe(third, elsewhere, {75, 80, 86}, {90});
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t)
      threads.emplace_back([&, t] {
        TestArguments arguments;
        for (int i = 0; i < 12; ++i) {
          KernelSpec &spec = (t + i) % 3 == 0 ? first : (t + i) % 3 == 1 ? second : third;
          if (!target->launch(spec, dims(1, 32), 0, arguments.pointers).ok())
            ++failures;
        }
      });
    for (std::thread &thread : threads)
      thread.join();
    EXPECT_EQ(failures.load(), 0);
    EXPECT_EQ(callsOf("cuModuleLoadData").size(), 2u) << "an image was loaded more than once";
    EXPECT_EQ(callsOf("cuModuleGetFunction").size(), 3u);
    std::vector<LogLine> launches = callsOf("cuLaunchKernel");
    EXPECT_EQ(launches.size(), 96u);
    for (const LogLine &line : readLog())
      EXPECT_EQ(line.result(), "CUDA_SUCCESS") << line.text;
    EXPECT_NE(first.gpuFunction.load(), 0u);
    EXPECT_NE(second.gpuFunction.load(), first.gpuFunction.load());
    EXPECT_NE(third.gpuFunction.load(), 0u);
  });
}

/// What the stand-in loaded for the standard fat binary on a device of
/// `capability`: "sm_80 cubin", ...
void expectSelected(const char *capability, const char *selected) {
  SCOPED_TRACE(capability);
  inChild({{"KILN_STAND_IN_COMPUTE_CAPABILITY", capability}}, [&] {
    std::unique_ptr<ExecutionTarget> target = createTarget();
    ASSERT_TRUE(target);
    KernelSpec spec;
    describeStandard(spec);
    TestArguments arguments;
    Status status = target->launch(spec, dims(1, 1), 0, arguments.pointers);
    ASSERT_TRUE(status.ok()) << status.message();
    std::vector<LogLine> loads = callsOf("cuModuleLoadData");
    ASSERT_EQ(loads.size(), 1u);
    EXPECT_EQ(loads[0].string("selected"), selected);
    EXPECT_EQ(loads[0].raw("images"),
              "[\"sm_75 cubin\",\"sm_80 cubin\",\"sm_86 cubin\",\"compute_90 PTX\"]");
  });
}

TEST(CudaTarget, TheDriverGetsACubinWhereOneFitsElsePtx) {
  expectSelected("7.5", "sm_75 cubin");
  expectSelected("8.0", "sm_80 cubin");
  expectSelected("8.6", "sm_86 cubin");
  expectSelected("8.9", "sm_86 cubin");
  expectSelected("9.0", "compute_90 PTX");
  expectSelected("10.0", "compute_90 PTX");
  expectSelected("12.0", "compute_90 PTX");
}

TEST(CudaTarget, NoBinaryForGpuNamesTheDeviceAndTheModulesArchs) {
  for (const char *capability : {"7.0", "6.1"}) {
    SCOPED_TRACE(capability);
    inChild({{"KILN_STAND_IN_COMPUTE_CAPABILITY", capability}}, [&] {
      std::unique_ptr<ExecutionTarget> target = createTarget();
      ASSERT_TRUE(target);
      KernelSpec spec;
      describeStandard(spec);
      TestArguments arguments;
      Status status = target->launch(spec, dims(1, 1), 0, arguments.pointers);
      EXPECT_EQ(status.kind(), ErrorKind::NoBinaryForGpu);
      std::string arch = std::string("sm_") + capability[0] + capability[2];
      EXPECT_EQ(status.message(),
                "no binary for the GPU: kernel 'test_kernel' (array(float32, 1d, C), int32) "
                "cannot run on Kiln stand-in driver (not a GPU) (" +
                    arch + ", compute capability " + capability +
                    "): the module holds cubins for sm_75, sm_80 and sm_86 and PTX for "
                    "compute_90; rebuild it with --arch naming " +
                    arch);
      EXPECT_TRUE(callsOf("cuModuleLoadData").empty());
      EXPECT_EQ(spec.gpuFunction.load(), 0u);
    });
  }
}

TEST(CudaTarget, CubinsOnlyAndTheDriversOwnRefusal) {
  static const std::string cubinOnly = buildFatbin({75}, {});
  inChild({}, [] {
    std::unique_ptr<ExecutionTarget> target = createTarget();
    ASSERT_TRUE(target);
    TestArguments arguments;
    // The manifest says sm_75 only: the target refuses before the driver.
    KernelSpec spec;
    describe(spec, cubinOnly, {75}, {});
    Status status = target->launch(spec, dims(1, 1), 0, arguments.pointers);
    EXPECT_EQ(status.kind(), ErrorKind::NoBinaryForGpu);
    EXPECT_NE(status.message().find("the module holds cubins for sm_75;"), std::string::npos)
        << status.message();
    // A manifest that claims sm_80: the driver finds nothing and says so.
    KernelSpec wrong;
    describe(wrong, cubinOnly, {80}, {});
    status = target->launch(wrong, dims(1, 1), 0, arguments.pointers);
    EXPECT_EQ(status.kind(), ErrorKind::CudaError);
    EXPECT_EQ(status.cudaErrorName(), "CUDA_ERROR_NO_BINARY_FOR_GPU");
    EXPECT_EQ(status.message(), "cuModuleLoadData failed: CUDA_ERROR_NO_BINARY_FOR_GPU: no kernel "
                                "image is available for execution on the device (loading kernel "
                                "'test_kernel' (array(float32, 1d, C), int32))");
  });
}

TEST(CudaTarget, AFailedLoadIsRetriedAtTheNextLaunch) {
  inChild({{"KILN_STAND_IN_FAIL", "cuModuleLoadData=CUDA_ERROR_INVALID_PTX"}}, [] {
    std::unique_ptr<ExecutionTarget> target = createTarget();
    ASSERT_TRUE(target);
    KernelSpec spec;
    describeStandard(spec);
    TestArguments arguments;
    Status status = target->launch(spec, dims(1, 1), 0, arguments.pointers);
    EXPECT_EQ(status.cudaErrorName(), "CUDA_ERROR_INVALID_PTX");
    EXPECT_NE(status.message().find("cuModuleLoadData failed: CUDA_ERROR_INVALID_PTX: a PTX JIT "
                                    "compilation failed (loading kernel 'test_kernel'"),
              std::string::npos)
        << status.message();
    unsetenv("KILN_STAND_IN_FAIL");
    ASSERT_TRUE(target->launch(spec, dims(1, 1), 0, arguments.pointers).ok());
    EXPECT_EQ(callsOf("cuModuleLoadData").size(), 2u);
  });
}

TEST(CudaTarget, LaunchErrorsNameTheKernel) {
  inChild({{"KILN_STAND_IN_FAIL", "cuLaunchKernel=CUDA_ERROR_LAUNCH_FAILED"}}, [] {
    std::unique_ptr<ExecutionTarget> target = createTarget();
    ASSERT_TRUE(target);
    KernelSpec spec;
    describeStandard(spec);
    TestArguments arguments;
    Status status = target->launch(spec, dims(1, 1), 0, arguments.pointers);
    EXPECT_EQ(status.kind(), ErrorKind::CudaError);
    EXPECT_EQ(status.cudaErrorCode(), 719);
    EXPECT_EQ(status.message(),
              "cuLaunchKernel failed: CUDA_ERROR_LAUNCH_FAILED: unspecified launch failure "
              "(launching kernel 'test_kernel' (array(float32, 1d, C), int32))");
  });
}

TEST(CudaTarget, DynamicSharedMemoryAbove48KiBIsOptedInto) {
  inChild({{"KILN_STAND_IN_COMPUTE_CAPABILITY", "8.0"}}, [] {
    std::unique_ptr<ExecutionTarget> target = createTarget();
    ASSERT_TRUE(target);
    KernelSpec spec;
    describeStandard(spec);
    TestArguments arguments;
    ASSERT_TRUE(target->launch(spec, dims(1, 32, 40 * 1024), 0, arguments.pointers).ok());
    EXPECT_TRUE(callsOf("cuFuncSetAttribute").empty());
    Status status = target->launch(spec, dims(1, 32, 64 * 1024), 0, arguments.pointers);
    ASSERT_TRUE(status.ok()) << status.message();
    // Smaller requests need no change.
    ASSERT_TRUE(target->launch(spec, dims(1, 32, 60 * 1024), 0, arguments.pointers).ok());
    std::vector<LogLine> attributes = callsOf("cuFuncSetAttribute");
    ASSERT_EQ(attributes.size(), 1u);
    EXPECT_EQ(attributes[0].number("attrib"), 8u);
    EXPECT_EQ(attributes[0].number("value"), 65536u);
    // Above the device's opt-in limit (163 KiB on sm_80).
    status = target->launch(spec, dims(1, 32, 200 * 1024), 0, arguments.pointers);
    EXPECT_EQ(status.kind(), ErrorKind::InvalidLaunch);
    EXPECT_EQ(status.message(),
              "invalid launch of kernel 'test_kernel': 0 bytes of static and 204800 bytes of "
              "dynamic shared memory (204800 bytes) are above the device's limit of 166912 "
              "bytes per block");
    for (const LogLine &line : readLog())
      EXPECT_EQ(line.result(), "CUDA_SUCCESS") << line.text;
  });
}

TEST(CudaTarget, BadConfigurationsAreRefusedBeforeTheDriver) {
  inChild({}, [] {
    std::unique_ptr<ExecutionTarget> target = createTarget();
    ASSERT_TRUE(target);
    KernelSpec spec;
    describeStandard(spec);
    TestArguments arguments;
    Status status = target->launch(spec, dims(0, 32), 0, arguments.pointers);
    EXPECT_EQ(status.kind(), ErrorKind::InvalidLaunch);
    EXPECT_EQ(status.message(), "invalid launch of kernel 'test_kernel': grid dimension x is 0; "
                                "every dimension must be at least 1");
    status = target->launch(spec, dims(1, 1025), 0, arguments.pointers);
    EXPECT_EQ(status.kind(), ErrorKind::InvalidLaunch);
    EXPECT_EQ(status.message(), "invalid launch of kernel 'test_kernel': block dimension x is "
                                "1025, above the device's limit of 1024");
    LaunchDims cube;
    cube.block = {16, 16, 8};
    status = target->launch(spec, cube, 0, arguments.pointers);
    EXPECT_EQ(status.message(), "invalid launch of kernel 'test_kernel': a block of 16 x 16 x 8 "
                                "= 2048 threads is above the device's limit of 1024 threads per "
                                "block");
    EXPECT_TRUE(callsOf("cuLaunchKernel").empty());
    EXPECT_TRUE(callsOf("cuModuleLoadData").empty());
  });
}

} // namespace
} // namespace kiln::runtime
