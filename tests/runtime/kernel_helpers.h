//===- tests/runtime/kernel_helpers.h - Writing kernels by hand -*- C++ -*-===//
//
// The CPU engine's tests write kernels the way Kiln's host code generator
// emits them (module/cpu_kernel_abi.h): an extern "C" thread entry that
// reads its indices from KilnCpuThread and calls thread->services, and, for
// kernels that never wait, a block entry that loops over the block's threads.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "module/cpu_kernel_abi.h"
#include "runtime/cpu_engine/engine.h"

#include <cstdint>
#include <cstring>
#include <string>

namespace kiln::cpu_engine::test {

/// What a block entry does: run `body` for every thread of the block, x
/// fastest, keeping threadIdx and laneId up to date.
inline void forEachThread(KilnCpuThread *thread, void *const *args, KilnCpuKernelEntry body) {
  uint32_t linear = 0;
  for (uint32_t z = 0; z < thread->blockDim[2]; ++z)
    for (uint32_t y = 0; y < thread->blockDim[1]; ++y)
      for (uint32_t x = 0; x < thread->blockDim[0]; ++x, ++linear) {
        thread->threadIdx[0] = x;
        thread->threadIdx[1] = y;
        thread->threadIdx[2] = z;
        thread->laneId = linear % 32;
        body(thread, args);
      }
}

/// Parameter `index` of the kernel, as docs/abi.md passes it.
template <typename T> T arg(void *const *args, int index) {
  T value;
  std::memcpy(&value, args[index], sizeof(T));
  return value;
}

inline uint32_t linearThreadId(const KilnCpuThread *t) {
  return t->threadIdx[0] + t->blockDim[0] * (t->threadIdx[1] + t->blockDim[1] * t->threadIdx[2]);
}

inline uint32_t threadsPerBlock(const KilnCpuThread *t) {
  return t->blockDim[0] * t->blockDim[1] * t->blockDim[2];
}

/// cuda.grid(1).
inline int64_t globalId(const KilnCpuThread *t) {
  return int64_t(t->blockIdx[0]) * t->blockDim[0] + t->threadIdx[0];
}

/// cuda.gridsize(1).
inline int64_t gridSize(const KilnCpuThread *t) {
  return int64_t(t->gridDim[0]) * t->blockDim[0];
}

inline KernelImage threadKernel(KilnCpuKernelEntry entry, const char *name,
                                uint32_t staticShared = 0) {
  KernelImage image;
  image.threadEntry = entry;
  image.name = name;
  image.staticSharedBytes = staticShared;
  return image;
}

inline KernelImage blockKernel(KilnCpuKernelEntry thread, KilnCpuKernelEntry block,
                               const char *name) {
  KernelImage image = threadKernel(thread, name);
  image.blockEntry = block;
  return image;
}

inline LaunchConfig config1d(uint32_t grid, uint32_t block, uint32_t dynamicShared = 0) {
  LaunchConfig config;
  config.grid.x = grid;
  config.block.x = block;
  config.dynamicSharedBytes = dynamicShared;
  return config;
}

/// The message of a failed launch, or "ok".
inline std::string outcome(const LaunchResult &result) {
  return result.ok() ? std::string("ok") : result.message();
}

} // namespace kiln::cpu_engine::test
