//===- runtime/cpu_engine/launch_validation.cpp - What a GPU rejects ------===//
//
// The launch checks of a CUDA device of compute capability 7.0 or later,
// with messages that name the offending value and the limit, where CUDA only
// says "invalid configuration argument".
//
//===----------------------------------------------------------------------===//

#include "runtime/cpu_engine/engine.h"

namespace kiln::cpu_engine {

namespace {

const char *const axisNames[3] = {"x", "y", "z"};

uint32_t component(const Dim3 &dim, int axis) {
  return axis == 0 ? dim.x : axis == 1 ? dim.y : dim.z;
}

LaunchResult invalid(const KernelImage &image, const std::string &problem) {
  std::string name = image.name && *image.name ? image.name : "<unnamed kernel>";
  return LaunchResult::failure(LaunchErrorKind::InvalidConfiguration,
                               "invalid launch of kernel '" + name + "': " + problem);
}

} // namespace

uint32_t maxCooperativeBlocks(uint64_t threadsPerBlock) {
  if (threadsPerBlock == 0 || threadsPerBlock > DeviceLimits::maxThreadsPerBlock)
    return 0;
  uint64_t byThreads = DeviceLimits::maxCooperativeThreads / threadsPerBlock;
  return static_cast<uint32_t>(byThreads < DeviceLimits::maxCooperativeBlocks
                                   ? byThreads
                                   : DeviceLimits::maxCooperativeBlocks);
}

LaunchResult validateLaunch(const KernelImage &image, const LaunchConfig &config) {
  if (!image.threadEntry && !image.blockEntry)
    return invalid(image, "the kernel image has no entry point");
  if (!image.threadEntry && image.localBytesPerThread)
    return invalid(image, "the kernel image has a block entry alone but " +
                              std::to_string(image.localBytesPerThread) +
                              " bytes of local memory per thread, which need a thread entry");

  for (int axis = 0; axis < 3; ++axis)
    if (component(config.grid, axis) == 0)
      return invalid(image, std::string("grid dimension ") + axisNames[axis] +
                                " is 0; every dimension must be at least 1");
  for (int axis = 0; axis < 3; ++axis)
    if (component(config.block, axis) == 0)
      return invalid(image, std::string("block dimension ") + axisNames[axis] +
                                " is 0; every dimension must be at least 1");

  for (int axis = 0; axis < 3; ++axis) {
    uint32_t value = component(config.block, axis);
    if (value > DeviceLimits::maxBlockDim[axis])
      return invalid(image, std::string("block dimension ") + axisNames[axis] + " is " +
                                std::to_string(value) + ", above the limit of " +
                                std::to_string(DeviceLimits::maxBlockDim[axis]));
  }
  uint64_t threads = uint64_t(config.block.x) * config.block.y * config.block.z;
  if (threads > DeviceLimits::maxThreadsPerBlock)
    return invalid(image,
                   "a block of " + std::to_string(config.block.x) + " x " +
                       std::to_string(config.block.y) + " x " + std::to_string(config.block.z) +
                       " = " + std::to_string(threads) + " threads is above the limit of " +
                       std::to_string(DeviceLimits::maxThreadsPerBlock) + " threads per block");
  if (image.maxThreadsPerBlock && threads > image.maxThreadsPerBlock)
    return invalid(image, "a block of " + std::to_string(threads) +
                              " threads is above the kernel's launch_bounds of " +
                              std::to_string(image.maxThreadsPerBlock) +
                              " threads per block (a GPU refuses it: CUDA_ERROR_INVALID_VALUE)");

  for (int axis = 0; axis < 3; ++axis) {
    uint32_t value = component(config.grid, axis);
    if (value > DeviceLimits::maxGridDim[axis])
      return invalid(image, std::string("grid dimension ") + axisNames[axis] + " is " +
                                std::to_string(value) + ", above the limit of " +
                                std::to_string(DeviceLimits::maxGridDim[axis]));
  }

  uint64_t shared = uint64_t(image.staticSharedBytes) + config.dynamicSharedBytes;
  if (shared > DeviceLimits::maxSharedBytesPerBlock)
    return invalid(
        image, std::to_string(image.staticSharedBytes) + " bytes of static and " +
                   std::to_string(config.dynamicSharedBytes) + " bytes of dynamic shared memory (" +
                   std::to_string(shared) + " bytes) are above the limit of " +
                   std::to_string(DeviceLimits::maxSharedBytesPerBlock) + " bytes per block");

  uint64_t blocks = uint64_t(config.grid.x) * config.grid.y * config.grid.z;
  if (image.cooperative && blocks > maxCooperativeBlocks(threads))
    return invalid(image, "a cooperative grid of " + std::to_string(blocks) + " blocks of " +
                              std::to_string(threads) + " threads is above the " +
                              std::to_string(maxCooperativeBlocks(threads)) +
                              " blocks that can be resident at once "
                              "(max_cooperative_grid_blocks)");
  return LaunchResult::success();
}

} // namespace kiln::cpu_engine
