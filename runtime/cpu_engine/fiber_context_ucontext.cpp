//===- runtime/cpu_engine/fiber_context_ucontext.cpp - Portable switch ----===//
//
// The fallback for targets without an assembly switch: POSIX ucontext.
// makecontext passes only int arguments, so a starting fiber finds its
// context through a thread-local pointer set just before the switch (fibers
// never move between host threads).
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu_engine/fiber_context.h"

#if KILN_CPU_FIBER_USES_UCONTEXT

namespace kiln::cpu_engine {

namespace {

thread_local FiberContext *startingContext = nullptr;

} // namespace

void FiberContext::prepareMachineState(void *stackLow, size_t stackBytes) {
  getcontext(&context);
  context.uc_stack.ss_sp = stackLow;
  context.uc_stack.ss_size = stackBytes;
  context.uc_link = nullptr;
  makecontext(&context, [] { FiberContext::start(startingContext); }, 0);
}

void FiberContext::switchMachineState(FiberContext &from, FiberContext &to) {
  startingContext = &to;
  swapcontext(&from.context, &to.context);
}

const char *FiberContext::implementationName() {
  return "ucontext";
}

} // namespace kiln::cpu_engine

#endif
