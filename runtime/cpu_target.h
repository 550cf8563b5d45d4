//===- runtime/cpu_target.h - Kernels on the host ---------------*- C++ -*-===//
//
// The CPU target: "device" memory is host memory (256-byte aligned, as
// cuMemAlloc's), copies are memcpy, and streams and events are eager: every
// call finishes before it returns, so synchronizing is a no-op and an event
// records the time it was recorded at. Launches run on the CPU engine
// (runtime/cpu_engine), which runs the whole grid before returning.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/execution_target.h"

#include <memory>

namespace kiln::runtime {

/// The CPU target; it cannot fail (the engine starts its workers lazily).
std::unique_ptr<ExecutionTarget> createCpuTarget();

} // namespace kiln::runtime
