//===- backend/host/host_region_cut.h - A kernel body cut at barriers -*- C++ -*-===//
//
// The first half of region loops (host_region_loops.h): a kernel body cut
// at each barrier into regions, the code a thread runs from one barrier to
// the next, with every value that lives across a barrier taken out of
// registers. A value is computed again after the barrier where that is
// cheap; else it is kept in a variable with one element per thread, or,
// when the block's threads wait at their barriers together and all hold
// the same value (host_region_uniformity.h), in one variable for the block.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/IR/Argument.h>
#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Instructions.h>

#include <cstdint>
#include <vector>

namespace kiln::backend {

struct RegionBarrier {
  /// What is left of the barrier: a block that only branches to `resume`.
  llvm::BasicBlock *block = nullptr;
  llvm::BasicBlock *resume = nullptr;
  uint32_t mode = 0;
  /// Where a reducing barrier's result is read after it: the same for every
  /// thread, so one variable, not one per thread.
  llvm::AllocaInst *result = nullptr;
};

/// A variable for the block that holds a value every thread shares across
/// barriers: each thread reads `in` after a barrier and writes `out`
/// before the next, and between rounds `out` is copied to `in`, so that no
/// thread reads what another wrote in the same round.
struct UniformSlot {
  llvm::AllocaInst *in = nullptr;
  llvm::AllocaInst *out = nullptr;
};

/// The kernel body cut at its barriers, ready to become region loops.
struct CutBody {
  llvm::Function *body = nullptr;
  std::vector<RegionBarrier> barriers;
  /// Whether the threads of a block wait at the same barriers in the same
  /// order: every region sends all the threads it runs to one barrier, or
  /// ends them all.
  bool barriersUniform = false;
  std::vector<UniformSlot> uniformSlots;
  /// The body's allocas, all in its entry block, which does nothing else.
  std::vector<llvm::AllocaInst *> allocas;
  /// Each thread's predicate at the barrier it waits at (reducing kernels).
  llvm::AllocaInst *predicates = nullptr;
  /// What a thread keeps across barriers: the per-thread allocas' strides.
  uint64_t slotBytes = 0;
  /// regions[0] starts the kernel; regions[k] goes on from barrier k.
  std::vector<std::vector<llvm::BasicBlock *>> regions;

  bool isBarrierBlock(const llvm::BasicBlock *block) const;
  /// Whether `alloca` is one variable for the block, not one per thread.
  bool isUniform(const llvm::AllocaInst *alloca) const;
};

/// Cuts `cut.body` at its barriers (calls markBarrier marked): each barrier
/// call is removed and leaves an empty block, the values that live across
/// barriers are moved to allocas in the entry block, and the regions are
/// listed. False when the kernel does not fit region loops: no barrier or
/// more than 62, private memory of a size not known here, or more than
/// maxRegionLoopSlotBytes per thread.
bool cutAtBarriers(CutBody &cut);

/// Whether `load`, in kernel body `body`, reads what does not change while
/// a block runs: a field of the thread that is the same for the whole
/// block, or the engine's services table and its entries.
bool readsBlockInvariant(const llvm::LoadInst &load, const llvm::Function &body);

/// Bytes from one thread's element of a static alloca's array to the
/// next's: its size, rounded up to its alignment.
uint64_t strideOf(const llvm::AllocaInst &alloca);

/// Whether the thread index `index` (a parameter of the body) is used other
/// than stored into the thread's fields, as it is before a service call.
bool computesWith(llvm::Argument &index);

} // namespace kiln::backend
