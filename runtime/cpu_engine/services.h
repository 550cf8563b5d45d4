//===- runtime/cpu_engine/services.h - What generated code calls -*- C++ -*-===//
//
// The two KilnCpuServices tables. Fibers get the real barriers and warp
// collectives. Block entries run threads in a plain loop, or as barrier
// regions that return to the engine at each barrier, so nothing may wait
// inside a service there: a block entry that calls a barrier or collective
// anyway fails the launch (an ABI violation by the code generator) instead
// of silently running wrong. Both share print, nanosleep and raise.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "module/cpu_kernel_abi.h"

namespace kiln::cpu_engine {

extern const KilnCpuServices fiberServices;
extern const KilnCpuServices blockEntryServices;

/// nanosleep(): about `nanoseconds` (at most 1 ms, as on a GPU).
void sleepNanoseconds(uint32_t nanoseconds);

} // namespace kiln::cpu_engine
