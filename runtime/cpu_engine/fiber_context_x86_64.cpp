//===- runtime/cpu_engine/fiber_context_x86_64.cpp - x86-64 switch --------===//
//
// System V x86-64: rbx, rbp and r12-r15 are callee-saved; everything else is
// saved by the compiler around the call to kiln_cpu_fiber_switch. A suspended
// fiber's stack holds, from its saved stack pointer up:
//
//   r15 r14 r13 r12 rbx rbp <return address>
//
// A new fiber gets that frame with r12 = FiberContext::start, r13 = the
// context and the return address of kiln_cpu_fiber_start, which makes the
// call start(context).
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu_engine/fiber_context.h"

#if !KILN_CPU_FIBER_USES_UCONTEXT && defined(__x86_64__)

#include <cstdint>

extern "C" void kiln_cpu_fiber_start();

__asm__(R"(
  .pushsection .text,"ax",@progbits
  .globl kiln_cpu_fiber_switch
  .hidden kiln_cpu_fiber_switch
  .type kiln_cpu_fiber_switch,@function
  .p2align 4
kiln_cpu_fiber_switch:
  .cfi_startproc
  pushq %rbp
  .cfi_adjust_cfa_offset 8
  pushq %rbx
  .cfi_adjust_cfa_offset 8
  pushq %r12
  .cfi_adjust_cfa_offset 8
  pushq %r13
  .cfi_adjust_cfa_offset 8
  pushq %r14
  .cfi_adjust_cfa_offset 8
  pushq %r15
  .cfi_adjust_cfa_offset 8
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  .cfi_adjust_cfa_offset -8
  popq %r14
  .cfi_adjust_cfa_offset -8
  popq %r13
  .cfi_adjust_cfa_offset -8
  popq %r12
  .cfi_adjust_cfa_offset -8
  popq %rbx
  .cfi_adjust_cfa_offset -8
  popq %rbp
  .cfi_adjust_cfa_offset -8
  ret
  .cfi_endproc
  .size kiln_cpu_fiber_switch, .-kiln_cpu_fiber_switch

  .globl kiln_cpu_fiber_start
  .hidden kiln_cpu_fiber_start
  .type kiln_cpu_fiber_start,@function
  .p2align 4
kiln_cpu_fiber_start:
  .cfi_startproc
  .cfi_undefined rip
  movq %r13, %rdi
  callq *%r12
  ud2
  .cfi_endproc
  .size kiln_cpu_fiber_start, .-kiln_cpu_fiber_start
  .popsection
)");

namespace kiln::cpu_engine {

void FiberContext::prepareMachineState(void *stackLow, size_t stackBytes) {
  // kiln_cpu_fiber_start must begin with rsp 16-byte aligned, so that the
  // call it makes leaves entry() with the alignment the ABI promises; the
  // 7-word frame below it therefore starts 8 bytes off alignment.
  uintptr_t top = (reinterpret_cast<uintptr_t>(stackLow) + stackBytes) & ~uintptr_t(15);
  auto *frame = reinterpret_cast<uint64_t *>(top - 9 * sizeof(uint64_t));
  frame[0] = 0;                                                  // r15
  frame[1] = 0;                                                  // r14
  frame[2] = reinterpret_cast<uintptr_t>(this);                  // r13
  frame[3] = reinterpret_cast<uintptr_t>(&FiberContext::start);  // r12
  frame[4] = 0;                                                  // rbx
  frame[5] = 0;                                                  // rbp: ends frame chains
  frame[6] = reinterpret_cast<uintptr_t>(&kiln_cpu_fiber_start); // return address
  frame[7] = 0;
  frame[8] = 0;
  stackPointer = frame;
}

const char *FiberContext::implementationName() {
  return "x86-64 assembly";
}

} // namespace kiln::cpu_engine

#endif
