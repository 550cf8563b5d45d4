//===- tests/runtime/stand_in_driver/stand_in_ipc_test.cpp - CUDA IPC -----===//
//
// CUDA IPC in the stand-in CUDA driver (see the note in stand_in_driver.cpp),
// across real processes: the test dlopens the built stand-in, allocates and
// fills device memory, takes an IPC handle and fork()s; the child opens the
// handle, reads and writes the bytes through the Driver API, and reports
// what failed through its exit status (the number of the failed check) and
// a pipe (what the check was). Every child ends with _exit, and an alarm
// ends any that would hang.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/cuda_driver_api.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <functional>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace {

using namespace kiln::runtime::cu;

/// The stand-in's exports, found with dlsym by the names libcuda.so.1 has.
struct Driver {
#define KILN_DECLARE_MEMBER(member, symbol, fallback, parameters) PFN_##member member = nullptr;
  KILN_CUDA_DRIVER_ENTRY_POINTS(KILN_DECLARE_MEMBER)
#undef KILN_DECLARE_MEMBER

  /// Loads the stand-in (once per process); "" or what went wrong.
  std::string load() {
    void *library = dlopen(KILN_STAND_IN_DRIVER_PATH, RTLD_NOW | RTLD_LOCAL);
    if (!library)
      return std::string("dlopen of the stand-in failed: ") + dlerror();
    std::string missing;
#define KILN_LOAD_MEMBER(member, symbol, fallback, parameters)                                     \
  member = reinterpret_cast<PFN_##member>(dlsym(library, symbol));                                 \
  if (!member)                                                                                     \
    missing += std::string(" ") + symbol;
    KILN_CUDA_DRIVER_ENTRY_POINTS(KILN_LOAD_MEMBER)
#undef KILN_LOAD_MEMBER
    return missing.empty() ? "" : "the stand-in does not export:" + missing;
  }
};

Driver &driver() {
  static Driver instance;
  return instance;
}

/// The checks of a child process: the first that fails names the child's
/// exit status (its number) and its message.
struct ChildChecks {
  int count = 0;
  int failed = 0;
  std::string message;

  /// Records check number `count` + 1; false (and the first failure) if not `ok`.
  bool expect(bool ok, const std::string &what) {
    ++count;
    if (!ok && !failed) {
      failed = count;
      message = what;
    }
    return ok;
  }
  bool expectResult(CUresult result, CUresult expected, const std::string &what) {
    return expect(result == expected, what + ": got CUresult " + std::to_string(result) +
                                          ", expected " + std::to_string(expected));
  }
};

/// How a child process ended.
struct ChildOutcome {
  /// The number of the failed check (0: none), or -1 if the child did not
  /// exit normally (the signal is in `message`).
  int status = -1;
  std::string message;
};

/// Runs `body` in a child process, which always ends with _exit: with 0 when
/// every check passed, else with the failed check's number after writing its
/// message into a pipe the parent reads. An alarm ends a child that hangs.
ChildOutcome inChild(const std::function<void(ChildChecks &)> &body) {
  int channel[2];
  if (pipe(channel) != 0)
    return {-1, "pipe() failed"};
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t child = fork();
  if (child < 0)
    return {-1, "fork() failed"};
  if (child == 0) {
    close(channel[0]);
    alarm(30); // A child that hangs dies of SIGALRM.
    ChildChecks checks;
    body(checks);
    if (checks.failed) {
      const char *text = checks.message.c_str();
      size_t left = checks.message.size();
      while (left > 0) {
        ssize_t written = write(channel[1], text, left);
        if (written <= 0)
          break;
        text += written;
        left -= static_cast<size_t>(written);
      }
    }
    _exit(checks.failed > 125 ? 125 : checks.failed);
  }
  close(channel[1]);
  ChildOutcome outcome;
  char buffer[512];
  ssize_t got;
  while ((got = read(channel[0], buffer, sizeof buffer)) > 0)
    outcome.message.append(buffer, static_cast<size_t>(got));
  close(channel[0]);
  int status = 0;
  if (waitpid(child, &status, 0) != child)
    return {-1, "waitpid() failed"};
  if (WIFEXITED(status))
    outcome.status = WEXITSTATUS(status);
  else
    outcome.message = "the child was killed by signal " +
                      std::to_string(WIFSIGNALED(status) ? WTERMSIG(status) : 0) +
                      (outcome.message.empty() ? "" : " after: " + outcome.message);
  return outcome;
}

#define EXPECT_CHILD_PASSED(outcome)                                                               \
  EXPECT_EQ((outcome).status, 0) << "the child process failed check " << (outcome).status << ": "  \
                                 << (outcome).message

std::string asText(const CUipcMemHandle &handle) {
  return std::string(handle.reserved, sizeof handle.reserved);
}

class StandInIpc : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    unsetenv("KILN_STAND_IN_FAIL");
    unsetenv("KILN_STAND_IN_LOG");
    unsetenv("KILN_STAND_IN_DEVICE_COUNT");
    unsetenv("KILN_STAND_IN_MANAGED_MEMORY");
    loadError = new std::string(driver().load());
  }

  void SetUp() override {
    ASSERT_EQ(*loadError, "");
    Driver &cu = driver();
    ASSERT_EQ(cu.cuInit(0), CUDA_SUCCESS) << "cuInit failed";
    CUcontext context = nullptr;
    ASSERT_EQ(cu.cuDevicePrimaryCtxRetain(&context, 0), CUDA_SUCCESS)
        << "cuDevicePrimaryCtxRetain failed";
    ASSERT_EQ(cu.cuCtxSetCurrent(context), CUDA_SUCCESS) << "cuCtxSetCurrent failed";
  }

  void TearDown() override {
    for (CUdeviceptr pointer : allocations)
      EXPECT_EQ(driver().cuMemFree(pointer), CUDA_SUCCESS) << "cuMemFree_v2 of the test's memory";
    allocations.clear();
    EXPECT_EQ(driver().cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
  }

  /// `bytes` of device memory (freed after the test), filled with `fill`.
  CUdeviceptr allocate(size_t bytes, const std::vector<unsigned char> &fill = {}) {
    CUdeviceptr pointer = 0;
    EXPECT_EQ(driver().cuMemAlloc(&pointer, bytes), CUDA_SUCCESS) << "cuMemAlloc_v2 failed";
    if (pointer)
      allocations.push_back(pointer);
    if (pointer && !fill.empty())
      EXPECT_EQ(driver().cuMemcpyHtoDAsync(pointer, fill.data(), fill.size(), nullptr),
                CUDA_SUCCESS)
          << "cuMemcpyHtoDAsync_v2 into a fresh allocation failed";
    return pointer;
  }

  CUipcMemHandle handleOf(CUdeviceptr base) {
    CUipcMemHandle handle;
    std::memset(&handle, 0, sizeof handle);
    EXPECT_EQ(driver().cuIpcGetMemHandle(&handle, base), CUDA_SUCCESS)
        << "cuIpcGetMemHandle of an allocation's base failed";
    return handle;
  }

  static std::vector<unsigned char> pattern(size_t bytes, unsigned seed) {
    std::vector<unsigned char> bytesOut(bytes);
    for (size_t i = 0; i < bytes; ++i)
      bytesOut[i] = static_cast<unsigned char>(i * 7 + seed);
    return bytesOut;
  }

  static std::string *loadError;
  std::vector<CUdeviceptr> allocations;
};

std::string *StandInIpc::loadError = nullptr;

TEST_F(StandInIpc, ChildProcessReadsAndWritesTheParentsDeviceMemory) {
  Driver &cu = driver();
  constexpr size_t kBytes = 4096 + 100; // More than a page, not a whole one.
  std::vector<unsigned char> original = pattern(kBytes, 1);
  CUdeviceptr base = allocate(kBytes, original);
  ASSERT_NE(base, 0u);
  CUipcMemHandle handle = handleOf(base);

  // The process that made the handle cannot open it, as with a driver.
  CUdeviceptr own = 0;
  EXPECT_EQ(cu.cuIpcOpenMemHandle(&own, handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
            CUDA_ERROR_INVALID_CONTEXT)
      << "opening a handle in the process that made it must fail";

  std::vector<unsigned char> written = pattern(kBytes, 77);
  ChildOutcome outcome = inChild([&](ChildChecks &check) {
    CUdeviceptr opened = 0;
    if (!check.expectResult(
            cu.cuIpcOpenMemHandle(&opened, handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
            CUDA_SUCCESS, "cuIpcOpenMemHandle_v2 in the child"))
      return;
    check.expect(opened != 0, "cuIpcOpenMemHandle_v2 gave a null address");
    std::vector<unsigned char> seen(kBytes, 0);
    check.expectResult(cu.cuMemcpyDtoHAsync(seen.data(), opened, kBytes, nullptr), CUDA_SUCCESS,
                       "cuMemcpyDtoHAsync_v2 from the opened mapping");
    check.expect(seen == original, "the child read other bytes than the parent wrote");

    CUdeviceptr rangeBase = 0;
    size_t rangeSize = 0;
    check.expectResult(cu.cuMemGetAddressRange(&rangeBase, &rangeSize, opened + 4100), CUDA_SUCCESS,
                       "cuMemGetAddressRange_v2 inside the opened mapping");
    check.expect(rangeBase == opened && rangeSize == kBytes,
                 "cuMemGetAddressRange_v2 of the opened mapping gave base " +
                     std::to_string(rangeBase) + " size " + std::to_string(rangeSize));
    check.expectResult(cu.cuMemFree(opened), CUDA_ERROR_INVALID_VALUE,
                       "cuMemFree_v2 of an opened mapping must be refused");

    // Writes through every path that takes device memory.
    check.expectResult(cu.cuMemcpyHtoDAsync(opened, written.data(), kBytes, nullptr), CUDA_SUCCESS,
                       "cuMemcpyHtoDAsync_v2 into the opened mapping");
    check.expectResult(cu.cuMemsetD8Async(opened + kBytes - 16, 0x5a, 16, nullptr), CUDA_SUCCESS,
                       "cuMemsetD8Async on the opened mapping");
    CUdeviceptr local = 0;
    check.expectResult(cu.cuMemAlloc(&local, 32), CUDA_SUCCESS, "cuMemAlloc_v2 in the child");
    check.expectResult(cu.cuMemcpyDtoDAsync(local, opened, 32, nullptr), CUDA_SUCCESS,
                       "cuMemcpyDtoDAsync_v2 from the opened mapping");
    check.expectResult(cu.cuMemcpyDtoDAsync(opened + 32, local, 32, nullptr), CUDA_SUCCESS,
                       "cuMemcpyDtoDAsync_v2 into the opened mapping");
    check.expectResult(cu.cuMemcpyDtoHAsync(seen.data(), opened, kBytes, nullptr), CUDA_SUCCESS,
                       "cuMemcpyDtoHAsync_v2 after writing");
    check.expectResult(cu.cuMemcpyHtoDAsync(opened + kBytes - 8, seen.data(), 16, nullptr),
                       CUDA_ERROR_INVALID_VALUE,
                       "a copy past the end of the opened mapping must be refused");
    check.expectResult(cu.cuIpcCloseMemHandle(opened), CUDA_SUCCESS,
                       "cuIpcCloseMemHandle in the child");
    check.expectResult(cu.cuMemGetAddressRange(&rangeBase, &rangeSize, opened),
                       CUDA_ERROR_NOT_FOUND, "the closed mapping is gone");
  });
  EXPECT_CHILD_PASSED(outcome);

  std::vector<unsigned char> expected = written;
  std::memset(expected.data() + kBytes - 16, 0x5a, 16);
  std::memcpy(expected.data() + 32, expected.data(), 32);
  std::vector<unsigned char> seen(kBytes, 0);
  ASSERT_EQ(cu.cuMemcpyDtoHAsync(seen.data(), base, kBytes, nullptr), CUDA_SUCCESS)
      << "cuMemcpyDtoHAsync_v2 in the parent after the child";
  EXPECT_TRUE(seen == expected) << "the parent does not see the bytes the child wrote";
}

TEST_F(StandInIpc, ProcessCannotOpenItsOwnHandle) {
  CUdeviceptr base = allocate(256);
  CUipcMemHandle handle = handleOf(base);
  CUdeviceptr opened = 0;
  EXPECT_EQ(driver().cuIpcOpenMemHandle(&opened, handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
            CUDA_ERROR_INVALID_CONTEXT)
      << "a driver cannot open a handle in the process that made it";
  EXPECT_EQ(opened, 0u) << "a refused open must not give an address";
}

TEST_F(StandInIpc, AddressRangeOfAnInteriorAddressIsTheWholeAllocation) {
  Driver &cu = driver();
  CUdeviceptr base = allocate(1000);
  CUdeviceptr rangeBase = 0;
  size_t rangeSize = 0;
  ASSERT_EQ(cu.cuMemGetAddressRange(&rangeBase, &rangeSize, base + 999), CUDA_SUCCESS)
      << "cuMemGetAddressRange_v2 of the allocation's last byte";
  EXPECT_EQ(rangeBase, base) << "the base of the allocation holding an interior address";
  EXPECT_EQ(rangeSize, 1000u) << "the size of the allocation holding an interior address";
  rangeBase = 0;
  EXPECT_EQ(cu.cuMemGetAddressRange(&rangeBase, nullptr, base + 10), CUDA_SUCCESS)
      << "psize may be null";
  EXPECT_EQ(rangeBase, base) << "the base when psize is null";
  rangeSize = 0;
  EXPECT_EQ(cu.cuMemGetAddressRange(nullptr, &rangeSize, base), CUDA_SUCCESS)
      << "pbase may be null";
  EXPECT_EQ(rangeSize, 1000u) << "the size when pbase is null";
  EXPECT_EQ(cu.cuMemGetAddressRange(&rangeBase, &rangeSize, base + 1000), CUDA_ERROR_NOT_FOUND)
      << "the address just past the allocation is in none";
  EXPECT_EQ(cu.cuMemGetAddressRange(&rangeBase, &rangeSize, 0), CUDA_ERROR_NOT_FOUND)
      << "address 0 is in no allocation";
  void *host = nullptr;
  ASSERT_EQ(cu.cuMemHostAlloc(&host, 64, 0), CUDA_SUCCESS) << "cuMemHostAlloc failed";
  EXPECT_EQ(cu.cuMemGetAddressRange(&rangeBase, &rangeSize, reinterpret_cast<uintptr_t>(host)),
            CUDA_ERROR_NOT_FOUND)
      << "host memory is not a device allocation";
  EXPECT_EQ(cu.cuMemFreeHost(host), CUDA_SUCCESS);
}

TEST_F(StandInIpc, GetMemHandleNeedsTheBaseOfADeviceAllocation) {
  Driver &cu = driver();
  CUdeviceptr base = allocate(512);
  CUipcMemHandle handle;
  EXPECT_EQ(cu.cuIpcGetMemHandle(&handle, base + 8), CUDA_ERROR_INVALID_VALUE)
      << "an interior address is not an allocation's base";
  EXPECT_EQ(cu.cuIpcGetMemHandle(&handle, 0), CUDA_ERROR_INVALID_VALUE)
      << "address 0 is no allocation";
  CUdeviceptr managed = 0;
  ASSERT_EQ(cu.cuMemAllocManaged(&managed, 512, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS)
      << "cuMemAllocManaged failed";
  EXPECT_EQ(cu.cuIpcGetMemHandle(&handle, managed), CUDA_ERROR_INVALID_VALUE)
      << "managed memory is not cuMemAlloc's device memory";
  EXPECT_EQ(cu.cuMemFree(managed), CUDA_SUCCESS) << "cuMemFree_v2 of managed memory";
  CUipcMemHandle first = handleOf(base), second = handleOf(base);
  EXPECT_EQ(asText(first), asText(second)) << "two handles of one allocation differ";
}

TEST_F(StandInIpc, OpenRefusesFlagsOtherThanLazyPeerAccess) {
  CUipcMemHandle handle = handleOf(allocate(256));
  for (unsigned flags : {0u, 2u, 3u}) {
    CUdeviceptr opened = 0;
    // Flags are checked first: this process's own handle would be refused
    // with CUDA_ERROR_INVALID_CONTEXT.
    EXPECT_EQ(driver().cuIpcOpenMemHandle(&opened, handle, flags), CUDA_ERROR_INVALID_VALUE)
        << "cuIpcOpenMemHandle_v2 with Flags " << flags;
  }
}

TEST_F(StandInIpc, OpenRefusesAHandleWithoutTheMagic) {
  CUipcMemHandle handle = handleOf(allocate(256));
  handle.reserved[0] ^= 0x20; // Damages the tag only.
  ChildOutcome outcome = inChild([&](ChildChecks &check) {
    CUdeviceptr opened = 0;
    check.expectResult(
        driver().cuIpcOpenMemHandle(&opened, handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
        CUDA_ERROR_INVALID_VALUE, "a handle without the magic, in another process");
    CUipcMemHandle zeros;
    std::memset(&zeros, 0, sizeof zeros);
    check.expectResult(
        driver().cuIpcOpenMemHandle(&opened, zeros, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
        CUDA_ERROR_INVALID_VALUE, "a handle of zeros");
  });
  EXPECT_CHILD_PASSED(outcome);
}

TEST_F(StandInIpc, CloseRefusesAnAddressNeverOpened) {
  Driver &cu = driver();
  CUdeviceptr base = allocate(256);
  EXPECT_EQ(cu.cuIpcCloseMemHandle(base), CUDA_ERROR_INVALID_VALUE)
      << "a device allocation was not opened from a handle";
  EXPECT_EQ(cu.cuIpcCloseMemHandle(0x1000), CUDA_ERROR_INVALID_VALUE)
      << "an address in no allocation";
}

TEST_F(StandInIpc, ReopeningGivesTheSameAddressAndTheLastCloseUnmaps) {
  Driver &cu = driver();
  std::vector<unsigned char> original = pattern(300, 9);
  CUipcMemHandle handle = handleOf(allocate(300, original));
  ChildOutcome outcome = inChild([&](ChildChecks &check) {
    size_t freeBefore = 0, freeAfter = 0, total = 0;
    check.expectResult(cu.cuMemGetInfo(&freeBefore, &total), CUDA_SUCCESS, "cuMemGetInfo_v2");
    CUdeviceptr first = 0, second = 0;
    if (!check.expectResult(
            cu.cuIpcOpenMemHandle(&first, handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS), CUDA_SUCCESS,
            "the first cuIpcOpenMemHandle_v2"))
      return;
    check.expectResult(cu.cuIpcOpenMemHandle(&second, handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
                       CUDA_SUCCESS, "the second cuIpcOpenMemHandle_v2");
    check.expect(first == second, "a second open of one handle gave another address");
    check.expectResult(cu.cuMemGetInfo(&freeAfter, &total), CUDA_SUCCESS, "cuMemGetInfo_v2");
    check.expect(freeAfter == freeBefore, "opened memory counted as this process's allocation");
    check.expectResult(cu.cuIpcCloseMemHandle(first), CUDA_SUCCESS, "the first close");
    std::vector<unsigned char> seen(300, 0);
    check.expectResult(cu.cuMemcpyDtoHAsync(seen.data(), first, 300, nullptr), CUDA_SUCCESS,
                       "reading after one of two closes");
    check.expect(seen == original, "the mapping's bytes changed after one of two closes");
    check.expectResult(cu.cuIpcCloseMemHandle(first), CUDA_SUCCESS, "the second close");
    check.expectResult(cu.cuMemcpyDtoHAsync(seen.data(), first, 300, nullptr),
                       CUDA_ERROR_INVALID_VALUE, "reading after the last close must be refused");
    check.expectResult(cu.cuIpcCloseMemHandle(first), CUDA_ERROR_INVALID_VALUE,
                       "a third close of two opens must be refused");
  });
  EXPECT_CHILD_PASSED(outcome);
}

TEST_F(StandInIpc, HandleOfFreedMemoryIsRefusedEvenWhenItsFdIsReused) {
  Driver &cu = driver();
  CUdeviceptr freed = 0;
  ASSERT_EQ(cu.cuMemAlloc(&freed, 256), CUDA_SUCCESS) << "cuMemAlloc_v2 failed";
  CUipcMemHandle stale = handleOf(freed);
  ASSERT_EQ(cu.cuMemFree(freed), CUDA_SUCCESS) << "cuMemFree_v2 failed";
  ChildOutcome beforeReuse = inChild([&](ChildChecks &check) {
    CUdeviceptr opened = 0;
    check.expectResult(cu.cuIpcOpenMemHandle(&opened, stale, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
                       CUDA_ERROR_INVALID_HANDLE, "opening the handle of freed memory");
  });
  EXPECT_CHILD_PASSED(beforeReuse);

  // A new allocation (most likely on the freed one's fd number) has a handle
  // of its own, as cuda.h says; the old one still names nothing.
  CUipcMemHandle fresh = handleOf(allocate(256));
  EXPECT_NE(asText(fresh), asText(stale)) << "a new allocation's handle equals a freed one's";
  ChildOutcome afterReuse = inChild([&](ChildChecks &check) {
    CUdeviceptr opened = 0;
    check.expectResult(cu.cuIpcOpenMemHandle(&opened, stale, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
                       CUDA_ERROR_INVALID_HANDLE,
                       "opening the handle of freed memory after a new allocation");
    check.expectResult(cu.cuIpcOpenMemHandle(&opened, fresh, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
                       CUDA_SUCCESS, "opening the new allocation's handle");
  });
  EXPECT_CHILD_PASSED(afterReuse);
}

TEST_F(StandInIpc, HandleOfAnExitedProcessIsInvalid) {
  // A child exports memory, passes the handle up and exits.
  int channel[2];
  ASSERT_EQ(pipe(channel), 0);
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(channel[0]);
    alarm(30);
    CUdeviceptr memory = 0;
    CUipcMemHandle handle;
    std::memset(&handle, 0, sizeof handle);
    bool ok = driver().cuMemAlloc(&memory, 128) == CUDA_SUCCESS &&
              driver().cuIpcGetMemHandle(&handle, memory) == CUDA_SUCCESS &&
              write(channel[1], &handle, sizeof handle) == ssize_t(sizeof handle);
    _exit(ok ? 0 : 1);
  }
  close(channel[1]);
  CUipcMemHandle handle;
  ssize_t got = read(channel[0], &handle, sizeof handle);
  close(channel[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0 && got == ssize_t(sizeof handle))
      << "the exporting child failed to allocate or export";
  CUdeviceptr opened = 0;
  EXPECT_EQ(driver().cuIpcOpenMemHandle(&opened, handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
            CUDA_ERROR_INVALID_HANDLE)
      << "opening the handle of a process that has exited";
}

TEST_F(StandInIpc, InjectedFailuresReachTheIpcCalls) {
  Driver &cu = driver();
  CUdeviceptr base = allocate(64);
  CUipcMemHandle handle;
  CUdeviceptr opened = 0;
  setenv("KILN_STAND_IN_FAIL",
         "cuMemGetAddressRange_v2=CUDA_ERROR_INVALID_CONTEXT,cuIpcGetMemHandle=2,"
         "cuIpcOpenMemHandle_v2,cuIpcCloseMemHandle=CUDA_ERROR_INVALID_HANDLE",
         1);
  CUresult range = cu.cuMemGetAddressRange(nullptr, nullptr, base);
  CUresult get = cu.cuIpcGetMemHandle(&handle, base);
  CUresult open = cu.cuIpcOpenMemHandle(&opened, handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
  CUresult close = cu.cuIpcCloseMemHandle(base);
  unsetenv("KILN_STAND_IN_FAIL");
  EXPECT_EQ(range, CUDA_ERROR_INVALID_CONTEXT)
      << "the failure injected into cuMemGetAddressRange_v2";
  EXPECT_EQ(get, CUDA_ERROR_OUT_OF_MEMORY) << "the failure injected into cuIpcGetMemHandle";
  EXPECT_EQ(open, CUDA_ERROR_UNKNOWN) << "the failure injected into cuIpcOpenMemHandle_v2";
  EXPECT_EQ(close, CUDA_ERROR_INVALID_HANDLE) << "the failure injected into cuIpcCloseMemHandle";
}

} // namespace
