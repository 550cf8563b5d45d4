//===- runtime/cpu_engine/fiber_stack.h - Stacks for fibers -----*- C++ -*-===//
//
// Each fiber runs on its own mmap'd stack with 64 KiB of inaccessible guard
// pages below it, so that an overflow faults instead of corrupting a
// neighbour.
// Mappings are reserved, not committed (MAP_NORESERVE): a page costs memory
// only once a fiber touches it, so generous sizes are cheap. A worker keeps
// its stacks from block to block and launch to launch.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace kiln::cpu_engine {

class FiberStack {
public:
  FiberStack() = default;
  FiberStack(FiberStack &&other) noexcept;
  FiberStack &operator=(FiberStack &&other) noexcept;
  FiberStack(const FiberStack &) = delete;
  FiberStack &operator=(const FiberStack &) = delete;
  ~FiberStack();

  /// Maps a stack of at least `usableBytes` above a guard page. On failure
  /// returns false and sets `error`.
  bool allocate(size_t usableBytes, std::string &error);

  void *low() const { return usable; }
  size_t size() const { return usableBytes; }

private:
  void release();

  void *mapping = nullptr;
  size_t mappingBytes = 0;
  void *usable = nullptr;
  size_t usableBytes = 0;
};

/// The stacks of one worker's fibers.
class FiberStackPool {
public:
  /// Makes at least `count` stacks of at least `bytes` each available.
  bool reserve(size_t count, size_t bytes, std::string &error);
  FiberStack &operator[](size_t index) { return stacks[index]; }

private:
  std::vector<FiberStack> stacks;
};

} // namespace kiln::cpu_engine
