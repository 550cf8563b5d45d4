//===- runtime/cpu_engine/barrier_regions.cpp - Threads between barriers --===//

#include "runtime/cpu_engine/barrier_regions.h"

#include "runtime/cpu_engine/barrier_result.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <new>

namespace kiln::cpu_engine {

namespace {

/// Frames come from chunks of at least this size, kept from block to block.
constexpr size_t minimumChunkBytes = 256 * 1024;
/// Frames set aside per thread start at this alignment (KilnCpuThread::frame).
constexpr uint64_t frameAlignment = 64;
/// Larger frames are allocated per block, as they are asked for.
constexpr uint64_t maximumProvidedFrame = 64 * 1024;

} // namespace

void BarrierRegions::run(const KilnCpuThread &prototype, void *const *args,
                         KilnCpuRegionStart start, KilnCpuRegionRound round, uint32_t flags) {
  provideFrames(prepareThreads(prototype));
  uint32_t count = static_cast<uint32_t>(threads.size());
  startBlock();
  // Every thread's start() stores its handle before anything reads it.
  handles.resize(count);
  order.resize(count);
  arrived.resize(count);
  for (uint32_t id = 0; id < count; ++id)
    order[id] = id;
  active = true;

  // Locals, not members: the calls below might change members, as far as
  // the compiler knows, and this loop is the hot path of such kernels.
  KilnCpuThread *const thread = threads.data();
  void **const handle = handles.data();
  uint32_t *current = order.data();
  uint32_t *next = arrived.data();
  uint32_t running = count;
  uint32_t waiting = 0;
  for (uint32_t id = 0; id < count; ++id)
    if (!start(&thread[id], args, &handle[id]))
      next[waiting++] = id;
  bool reduces = flags & KILN_REGIONS_REDUCE;
  for (;;) {
    if (reduces) {
      uint32_t trueCount = 0;
      for (uint32_t position = 0; position < waiting; ++position)
        trueCount += thread[next[position]].barrierValue != 0;
      for (uint32_t position = 0; position < waiting; ++position) {
        KilnCpuThread &waiter = thread[next[position]];
        waiter.barrierValue = barrierResultFor(barrierOpOf(waiter.barrierMode), trueCount, waiting);
      }
    }
    // The thread that completed the barrier goes on first.
    if (waiting && next[waiting - 1] == current[running - 1])
      std::rotate(next, next + waiting - 1, next + waiting);
    std::swap(current, next);
    running = waiting;
    if (!running) {
      active = false;
      return;
    }
    // Threads poll in loops without barriers; the others are polled here.
    if (*prototype.interrupt)
      prototype.services->interrupted(&thread[current[0]]);
    waiting = round(handle, current, running, next);
  }
}

void BarrierRegions::provideFrames(bool threadsChanged) {
  uint64_t stride = (largestFrame + frameAlignment - 1) & ~(frameAlignment - 1);
  if (!threadsChanged && stride == frameStride && frameCount == threads.size())
    return;
  if (stride != frameStride || frameCount != threads.size()) {
    size_t bytes = stride * threads.size();
    frames.reset(bytes ? new (std::nothrow) std::byte[bytes + frameAlignment] : nullptr);
    if (!frames)
      stride = 0; // allocate() answers each start then
    auto base = reinterpret_cast<uintptr_t>(frames.get());
    alignedFrames = frames.get() + (((base + frameAlignment - 1) & ~(frameAlignment - 1)) - base);
    frameStride = stride;
    frameCount = threads.size();
  }
  for (size_t id = 0; id < threads.size(); ++id) {
    threads[id].frame = frameStride ? alignedFrames + id * frameStride : nullptr;
    threads[id].frameBytes = frameStride;
  }
}

bool BarrierRegions::prepareThreads(const KilnCpuThread &prototype) {
  // Blocks of one launch differ only in blockIdx: the threads of the last
  // block need only that, which saves copying the whole array per block.
  KilnCpuThread launch = prototype;
  std::fill(std::begin(launch.blockIdx), std::end(launch.blockIdx), 0);
  uint32_t dimX = prototype.blockDim[0], dimY = prototype.blockDim[1];
  uint32_t count = dimX * dimY * prototype.blockDim[2];
  if (threads.size() == count && std::memcmp(&launch, &lastLaunch, sizeof launch) == 0) {
    for (KilnCpuThread &thread : threads)
      std::copy(std::begin(prototype.blockIdx), std::end(prototype.blockIdx), thread.blockIdx);
    return false;
  }
  lastLaunch = launch;
  threads.resize(count);
  // Counting, not dividing: three divisions a thread would cost more than
  // many a kernel's regions.
  uint32_t x = 0, y = 0, z = 0;
  for (uint32_t id = 0; id < count; ++id) {
    KilnCpuThread &thread = threads[id];
    thread = prototype;
    thread.threadIdx[0] = x;
    thread.threadIdx[1] = y;
    thread.threadIdx[2] = z;
    thread.laneId = id % KILN_CPU_WARP_SIZE;
    if (++x == dimX) {
      x = 0;
      if (++y == dimY) {
        y = 0;
        ++z;
      }
    }
  }
  return true;
}

void *BarrierRegions::allocate(uint64_t bytes, uint64_t alignment) {
  alignment = std::max<uint64_t>(alignment, alignof(std::max_align_t));
  if (alignment > minimumChunkBytes || bytes > (uint64_t(1) << 40))
    return nullptr;
  // Only coroutine frames are set aside per thread for the next blocks.
  if (active && alignment <= frameAlignment && bytes <= maximumProvidedFrame)
    largestFrame = std::max(largestFrame, bytes);
  for (; chunkInUse < chunks.size(); ++chunkInUse, bytesUsed = 0) {
    Chunk &chunk = chunks[chunkInUse];
    // Chunks start at operator new's alignment; the offset does the rest.
    auto base = reinterpret_cast<uintptr_t>(chunk.bytes.get());
    uint64_t offset = ((base + bytesUsed + alignment - 1) & ~(alignment - 1)) - base;
    if (offset + bytes <= chunk.size) {
      bytesUsed = offset + bytes;
      return chunk.bytes.get() + offset;
    }
  }
  size_t size = std::max<size_t>(minimumChunkBytes, bytes + alignment);
  std::unique_ptr<std::byte[]> memory(new (std::nothrow) std::byte[size]);
  if (!memory)
    return nullptr;
  chunks.push_back({std::move(memory), size});
  chunkInUse = chunks.size() - 1;
  bytesUsed = 0;
  return allocate(bytes, alignment);
}

} // namespace kiln::cpu_engine
