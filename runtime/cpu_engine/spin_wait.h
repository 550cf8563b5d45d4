//===- runtime/cpu_engine/spin_wait.h - Brief busy waiting ------*- C++ -*-===//
//
// Waking a sleeping thread costs several microseconds, more than many
// launches take to run. So the host thread that waits for a launch, and a
// worker that waits for the next one, poll for a short while before they
// sleep; they yield the core while polling, so that on a busy machine the
// threads doing the work still get to run.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <chrono>
#include <thread>

namespace kiln::cpu_engine {

/// How long a waiter polls before it sleeps.
inline constexpr std::chrono::microseconds spinDuration{50};

/// Polls `ready` until it returns true (then returns true) or spinDuration
/// has passed (then returns false).
template <typename Ready> bool spinUntil(Ready ready) {
  using Clock = std::chrono::steady_clock;
  Clock::time_point deadline = Clock::now() + spinDuration;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (ready())
        return true;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#elif defined(__aarch64__)
      __asm__ __volatile__("yield");
#endif
    }
    if (Clock::now() >= deadline)
      return false;
    std::this_thread::yield();
  }
}

} // namespace kiln::cpu_engine
