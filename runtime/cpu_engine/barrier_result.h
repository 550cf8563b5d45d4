//===- runtime/cpu_engine/barrier_result.h - What a barrier returns -*- C++ -*-===//
//
// syncthreads() and its reducing variants, as both ways of running a block
// that synchronizes (fibers and barrier regions) complete them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "module/cpu_kernel_abi.h"

#include <cstdint>

namespace kiln::cpu_engine {

enum class BarrierOp : uint8_t { Sync, Count, And, Or };

/// The operation of a KilnBarrierReduce mode.
inline BarrierOp barrierOpOf(uint32_t mode) {
  switch (mode) {
  case KILN_BARRIER_COUNT:
    return BarrierOp::Count;
  case KILN_BARRIER_AND:
    return BarrierOp::And;
  case KILN_BARRIER_OR:
    return BarrierOp::Or;
  default:
    return BarrierOp::Sync;
  }
}

/// What the barrier returns to each of the `arrived` threads, `trueCount`
/// of which passed a true predicate.
inline int32_t barrierResultFor(BarrierOp op, uint32_t trueCount, uint32_t arrived) {
  switch (op) {
  case BarrierOp::Sync:
    return 0;
  case BarrierOp::Count:
    return static_cast<int32_t>(trueCount);
  case BarrierOp::And:
    return trueCount == arrived;
  case BarrierOp::Or:
    return trueCount != 0;
  }
  return 0;
}

} // namespace kiln::cpu_engine
