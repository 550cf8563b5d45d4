//===- runtime/cpu_engine/fiber_context_aarch64.cpp - AArch64 switch ------===//
//
// AAPCS64: x19-x28, the frame pointer x29, the link register x30 and the low
// halves of v8-v15 (d8-d15) are callee-saved; the compiler saves everything
// else around the call to kiln_cpu_fiber_switch. A suspended fiber's stack
// holds a 160-byte frame at its saved stack pointer:
//
//   x19 x20 ... x28 x29 x30 d8 ... d15
//
// A new fiber gets that frame with x19 = FiberContext::start, x20 = the
// context and x30 (where the switch returns to) = kiln_cpu_fiber_start, which
// makes the call start(context).
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu_engine/fiber_context.h"

#if !KILN_CPU_FIBER_USES_UCONTEXT && defined(__aarch64__)

#include <cstdint>

extern "C" void kiln_cpu_fiber_start();

__asm__(R"(
  .pushsection .text,"ax",%progbits
  .globl kiln_cpu_fiber_switch
  .hidden kiln_cpu_fiber_switch
  .type kiln_cpu_fiber_switch,%function
  .p2align 4
kiln_cpu_fiber_switch:
  .cfi_startproc
  sub sp, sp, #160
  .cfi_adjust_cfa_offset 160
  stp x19, x20, [sp, #0]
  stp x21, x22, [sp, #16]
  stp x23, x24, [sp, #32]
  stp x25, x26, [sp, #48]
  stp x27, x28, [sp, #64]
  stp x29, x30, [sp, #80]
  stp d8, d9, [sp, #96]
  stp d10, d11, [sp, #112]
  stp d12, d13, [sp, #128]
  stp d14, d15, [sp, #144]
  mov x9, sp
  str x9, [x0]
  mov sp, x1
  ldp x19, x20, [sp, #0]
  ldp x21, x22, [sp, #16]
  ldp x23, x24, [sp, #32]
  ldp x25, x26, [sp, #48]
  ldp x27, x28, [sp, #64]
  ldp x29, x30, [sp, #80]
  ldp d8, d9, [sp, #96]
  ldp d10, d11, [sp, #112]
  ldp d12, d13, [sp, #128]
  ldp d14, d15, [sp, #144]
  add sp, sp, #160
  .cfi_adjust_cfa_offset -160
  ret
  .cfi_endproc
  .size kiln_cpu_fiber_switch, .-kiln_cpu_fiber_switch

  .globl kiln_cpu_fiber_start
  .hidden kiln_cpu_fiber_start
  .type kiln_cpu_fiber_start,%function
  .p2align 4
kiln_cpu_fiber_start:
  .cfi_startproc
  .cfi_undefined x30
  mov x0, x20
  blr x19
  brk #0
  .cfi_endproc
  .size kiln_cpu_fiber_start, .-kiln_cpu_fiber_start
  .popsection
)");

namespace kiln::cpu_engine {

void FiberContext::prepareMachineState(void *stackLow, size_t stackBytes) {
  uintptr_t top = (reinterpret_cast<uintptr_t>(stackLow) + stackBytes) & ~uintptr_t(15);
  auto *frame = reinterpret_cast<uint64_t *>(top - 160);
  // x21-x28, x29 (0 ends frame chains), d8-d15: zero.
  for (int i = 0; i < 20; ++i)
    frame[i] = 0;
  frame[0] = reinterpret_cast<uintptr_t>(&FiberContext::start);   // x19
  frame[1] = reinterpret_cast<uintptr_t>(this);                   // x20
  frame[11] = reinterpret_cast<uintptr_t>(&kiln_cpu_fiber_start); // x30
  stackPointer = frame;
}

const char *FiberContext::implementationName() {
  return "AArch64 assembly";
}

} // namespace kiln::cpu_engine

#endif
