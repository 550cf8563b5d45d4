//===- runtime/cpu_engine/alternate_signal_stack.cpp - Stack for handlers -===//

#include "runtime/cpu_engine/alternate_signal_stack.h"

#include <csignal>
#include <sys/mman.h>

namespace kiln::cpu_engine {

AlternateSignalStack::AlternateSignalStack() {
  void *memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED)
    return;
  stack_t stack{};
  stack.ss_sp = memory;
  stack.ss_size = bytes;
  if (sigaltstack(&stack, nullptr) == 0)
    base = memory;
  else
    munmap(memory, bytes);
}

AlternateSignalStack::~AlternateSignalStack() {
  if (!base)
    return;
  stack_t disable{};
  disable.ss_flags = SS_DISABLE;
  sigaltstack(&disable, nullptr);
  munmap(base, bytes);
}

void ensureAlternateSignalStack() {
  thread_local bool checked = false;
  if (checked)
    return;
  checked = true;
  stack_t current{};
  if (sigaltstack(nullptr, &current) == 0 && !(current.ss_flags & SS_DISABLE))
    return; // the host's own (Python's faulthandler installs one)
  thread_local AlternateSignalStack own;
}

} // namespace kiln::cpu_engine
