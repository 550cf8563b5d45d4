//===- runtime/cpu_engine/fiber_context.h - Switching stacks ----*- C++ -*-===//
//
// The saved state of a suspended fiber, and the switch between two of them.
//
// On x86-64 and AArch64 (ELF) a switch is a call to a few instructions of
// assembly that push the callee-saved registers on the current stack, store
// the stack pointer, load the other fiber's and pop its registers: the
// compiler already saved everything else around the call. Elsewhere, or when
// KILN_CPU_FIBER_UCONTEXT is defined, swapcontext does the same, about twenty
// times slower (it changes the signal mask with a system call).
//
// Floating-point control state (MXCSR, FPCR) is not switched: it belongs to
// the worker thread, and no kernel changes it.
//
// Under AddressSanitizer every switch is announced to it, so that it knows
// which stack is current (fiber_context.cpp).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>

#if defined(KILN_CPU_FIBER_UCONTEXT) || !defined(__ELF__) ||                                       \
    !(defined(__x86_64__) || defined(__aarch64__))
#define KILN_CPU_FIBER_USES_UCONTEXT 1
#include <ucontext.h>
#else
#define KILN_CPU_FIBER_USES_UCONTEXT 0
#endif

#if defined(__SANITIZE_ADDRESS__)
#define KILN_CPU_FIBER_TELLS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KILN_CPU_FIBER_TELLS_ASAN 1
#endif
#endif
#ifndef KILN_CPU_FIBER_TELLS_ASAN
#define KILN_CPU_FIBER_TELLS_ASAN 0
#endif

namespace kiln::cpu_engine {

using FiberEntry = void (*)(void *argument);

class FiberContext {
public:
  /// Makes the next switch to this context call entry(argument) on the stack
  /// [stackLow, stackLow + stackBytes). `entry` must never return: a fiber
  /// ends by switching away for good.
  void prepare(void *stackLow, size_t stackBytes, FiberEntry entry, void *argument);

  /// Saves the running context into `from` and resumes `to`. Returns when
  /// something switches back to `from`.
  static void switchTo(FiberContext &from, FiberContext &to);

  /// Which implementation this build uses, for benchmarks and tests.
  static const char *implementationName();

private:
  /// The first code a new fiber runs: calls entry(argument).
  static void start(void *context);
  /// fiber_context_<implementation>.cpp: make the first switch to this
  /// context call start(this) on the given stack, and switch.
  void prepareMachineState(void *stackLow, size_t stackBytes);
  static void switchMachineState(FiberContext &from, FiberContext &to);
  /// AddressSanitizer's bookkeeping around a switch (fiber_context.cpp).
  static void beforeSwitch(FiberContext &from, FiberContext &to);
  static void afterSwitch(FiberContext &resumed);

  FiberEntry entry = nullptr;
  void *argument = nullptr;
#if KILN_CPU_FIBER_USES_UCONTEXT
  ucontext_t context;
#else
  void *stackPointer = nullptr;
#endif
#if KILN_CPU_FIBER_TELLS_ASAN
  const void *stackBottom = nullptr; // null: a thread's own stack, not yet seen
  size_t stackSize = 0;
  void *fakeStack = nullptr;
#endif
};

#if !KILN_CPU_FIBER_USES_UCONTEXT
/// fiber_context_<arch>.cpp: saves the callee-saved registers on the current
/// stack, stores the stack pointer in *save, switches to `load`, and restores
/// the registers found there.
extern "C" void kiln_cpu_fiber_switch(void **save, void *load);

inline void FiberContext::switchMachineState(FiberContext &from, FiberContext &to) {
  kiln_cpu_fiber_switch(&from.stackPointer, to.stackPointer);
}
#endif

inline void FiberContext::switchTo(FiberContext &from, FiberContext &to) {
  if constexpr (KILN_CPU_FIBER_TELLS_ASAN)
    beforeSwitch(from, to);
  switchMachineState(from, to);
  if constexpr (KILN_CPU_FIBER_TELLS_ASAN)
    afterSwitch(from);
}

} // namespace kiln::cpu_engine
