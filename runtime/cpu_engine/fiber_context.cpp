//===- runtime/cpu_engine/fiber_context.cpp - Switching stacks ------------===//
//
// What all implementations share: starting a fiber, and telling
// AddressSanitizer about switches. ASan must know the bounds of the stack a
// switch goes to; a thread's own stack (where a worker's scheduler runs) has
// none recorded, so the first fiber started from it learns them from ASan.
//
//===----------------------------------------------------------------------===//

#include "runtime/cpu_engine/fiber_context.h"

#include <cstdlib>

#if KILN_CPU_FIBER_TELLS_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

namespace kiln::cpu_engine {

#if KILN_CPU_FIBER_TELLS_ASAN
namespace {
/// The context the running one was switched from, to record its bounds.
thread_local FiberContext *switchedFrom = nullptr;
} // namespace
#endif

void FiberContext::prepare(void *stackLow, size_t stackBytes, FiberEntry fiberEntry,
                           void *fiberArgument) {
  entry = fiberEntry;
  argument = fiberArgument;
#if KILN_CPU_FIBER_TELLS_ASAN
  stackBottom = stackLow;
  stackSize = stackBytes;
  fakeStack = nullptr;
#endif
  prepareMachineState(stackLow, stackBytes);
}

void FiberContext::start(void *context) {
  auto *self = static_cast<FiberContext *>(context);
  if constexpr (KILN_CPU_FIBER_TELLS_ASAN)
    afterSwitch(*self);
  self->entry(self->argument);
  std::abort(); // entries never return
}

#if KILN_CPU_FIBER_TELLS_ASAN

void FiberContext::beforeSwitch(FiberContext &from, FiberContext &to) {
  switchedFrom = &from;
  __sanitizer_start_switch_fiber(&from.fakeStack, to.stackBottom, to.stackSize);
}

void FiberContext::afterSwitch(FiberContext &resumed) {
  const void *bottom = nullptr;
  size_t size = 0;
  __sanitizer_finish_switch_fiber(resumed.fakeStack, &bottom, &size);
  if (switchedFrom && !switchedFrom->stackBottom) {
    switchedFrom->stackBottom = bottom;
    switchedFrom->stackSize = size;
  }
}

#else

void FiberContext::beforeSwitch(FiberContext &, FiberContext &) {}
void FiberContext::afterSwitch(FiberContext &) {}

#endif

} // namespace kiln::cpu_engine
