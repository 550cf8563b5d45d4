//===- runtime/cpu_engine/fiber_stack.cpp - Stacks for fibers -------------===//

#include "runtime/cpu_engine/fiber_stack.h"

#include <cerrno>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>
#include <utility>

#ifndef MAP_NORESERVE
#define MAP_NORESERVE 0
#endif
#ifndef MAP_STACK
#define MAP_STACK 0
#endif

namespace kiln::cpu_engine {

namespace {

size_t pageSize() {
  static const size_t size = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return size;
}

constexpr size_t guardBytes = 64 * 1024;

size_t roundUp(size_t value, size_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

} // namespace

FiberStack::FiberStack(FiberStack &&other) noexcept {
  *this = std::move(other);
}

FiberStack &FiberStack::operator=(FiberStack &&other) noexcept {
  if (this != &other) {
    release();
    mapping = std::exchange(other.mapping, nullptr);
    mappingBytes = std::exchange(other.mappingBytes, 0);
    usable = std::exchange(other.usable, nullptr);
    usableBytes = std::exchange(other.usableBytes, 0);
  }
  return *this;
}

FiberStack::~FiberStack() {
  release();
}

void FiberStack::release() {
  if (mapping)
    munmap(mapping, mappingBytes);
  mapping = usable = nullptr;
  mappingBytes = usableBytes = 0;
}

bool FiberStack::allocate(size_t bytes, std::string &error) {
  release();
  size_t page = pageSize();
  size_t size = roundUp(bytes, page);
  // More than a page, so that a frame with a local array of a few KiB cannot
  // step over the guard into the stack mapped below.
  size_t guard = roundUp(guardBytes, page);
  void *base = mmap(nullptr, size + guard, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (base == MAP_FAILED) {
    error =
        "cannot map a fiber stack of " + std::to_string(size) + " bytes: " + std::strerror(errno);
    return false;
  }
  if (mprotect(base, guard, PROT_NONE) != 0) {
    // Each stack is two mappings; vm.max_map_count bounds how many exist.
    int code = errno;
    error = std::string("cannot protect a fiber stack's guard pages: ") + std::strerror(code);
    if (code == ENOMEM)
      error += " (too many memory mappings? each fiber stack needs two; see vm.max_map_count)";
    munmap(base, size + guard);
    return false;
  }
  mapping = base;
  mappingBytes = size + guard;
  usable = static_cast<char *>(base) + guard;
  usableBytes = size;
  return true;
}

bool FiberStackPool::reserve(size_t count, size_t bytes, std::string &error) {
  if (stacks.size() < count)
    stacks.resize(count);
  for (size_t i = 0; i < count; ++i)
    if (stacks[i].size() < bytes && !stacks[i].allocate(bytes, error))
      return false;
  return true;
}

} // namespace kiln::cpu_engine
