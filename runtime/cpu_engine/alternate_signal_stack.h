//===- runtime/cpu_engine/alternate_signal_stack.h - Handlers' stack -*- C++ -*-===//
//
// A kernel that overflows its fiber's stack faults with no stack left;
// handlers installed with SA_ONSTACK (such as Python's faulthandler) can
// still report it from an alternate signal stack. Workers have their own;
// a thread that runs fibers of a launch it made itself gets one unless it
// has one already.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>

namespace kiln::cpu_engine {

/// The calling thread's alternate signal stack, for the life of the object.
class AlternateSignalStack {
public:
  AlternateSignalStack();
  ~AlternateSignalStack();
  AlternateSignalStack(const AlternateSignalStack &) = delete;
  AlternateSignalStack &operator=(const AlternateSignalStack &) = delete;

private:
  static constexpr size_t bytes = 64 * 1024;
  void *base = nullptr;
};

/// Gives the calling thread an alternate signal stack, until it ends, if it
/// has none; cheap after the first call on a thread.
void ensureAlternateSignalStack();

} // namespace kiln::cpu_engine
