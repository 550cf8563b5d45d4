//===- tests/runtime/cpu_target_test.cpp - The CPU target -----------------===//
//
// runtime/cpu_target without kernels: what the target reports of its
// "device" (the host's memory, no driver) and managed memory, which on the
// CPU engine is ordinary host memory. Launches are the engine's tests.
//
//===----------------------------------------------------------------------===//

#include "runtime/cpu_target.h"

#include <gtest/gtest.h>

#include <cstring>
#include <unistd.h>
#include <vector>

namespace kiln::runtime {
namespace {

uint64_t physicalMemory() {
  return static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) *
         static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

TEST(CpuTarget, MemoryInfoIsTheHostsMemory) {
  std::unique_ptr<ExecutionTarget> target = createCpuTarget();
  uint64_t freeBytes = 0, totalBytes = 0;
  Status status = target->memoryInfo(freeBytes, totalBytes);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_GT(totalBytes, 0u);
  EXPECT_GT(freeBytes, 0u);
  EXPECT_LE(freeBytes, totalBytes);
  EXPECT_EQ(totalBytes, physicalMemory());
}

TEST(CpuTarget, MemoryInfoAndDeviceInfoAgreeOnTheTotal) {
  std::unique_ptr<ExecutionTarget> target = createCpuTarget();
  DeviceInfo info;
  ASSERT_TRUE(target->deviceInfo(info).ok());
  uint64_t freeBytes = 0, totalBytes = 0;
  ASSERT_TRUE(target->memoryInfo(freeBytes, totalBytes).ok());
  EXPECT_EQ(info.totalMemoryBytes, totalBytes);
}

TEST(CpuTarget, ManagedMemoryIsOrdinaryHostMemory) {
  std::unique_ptr<ExecutionTarget> target = createCpuTarget();
  DevicePointer managed = 0;
  Status status = target->allocateManaged(1000, managed);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_NE(managed, 0u);
  EXPECT_EQ(managed % 256, 0u) << "aligned as cuMemAlloc's allocations are";

  // The host reads and writes it in place, and the target's copies see it.
  auto *bytes = reinterpret_cast<uint8_t *>(static_cast<uintptr_t>(managed));
  std::memset(bytes, 0x5a, 1000);
  std::vector<uint8_t> back(1000, 0);
  ASSERT_TRUE(target->copyToHost(back.data(), managed, 1000, 0).ok());
  EXPECT_EQ(back[0], 0x5a);
  EXPECT_EQ(back[999], 0x5a);
  ASSERT_TRUE(target->fill(managed, 0x11, 10, 0).ok());
  EXPECT_EQ(bytes[9], 0x11);
  EXPECT_EQ(bytes[10], 0x5a);
  target->release(managed);
}

TEST(CpuTarget, HasNoDriverVersion) {
  std::unique_ptr<ExecutionTarget> target = createCpuTarget();
  int version = -1;
  ASSERT_TRUE(target->driverVersion(version).ok());
  EXPECT_EQ(version, 0);
}

} // namespace
} // namespace kiln::runtime
