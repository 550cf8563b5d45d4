//===- backend/host/host_region_cut.cpp - A kernel body cut at barriers ---------===//

#include "backend/host/host_region_cut.h"

#include "backend/host/host_barrier_regions.h"
#include "backend/host/host_region_loops.h"
#include "backend/host/host_region_uniformity.h"
#include "module/cpu_kernel_abi.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/CFG.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Module.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>
#include <llvm/Transforms/Utils/Local.h>
#include <llvm/Transforms/Utils/SSAUpdater.h>

#include <cstddef>
#include <optional>

namespace kiln::backend {

namespace {

/// Where threads wait is kept as a mask of codes in 64 bits (code 0: the
/// thread has ended).
constexpr size_t maxBarriers = 62;

/// Removes the branches on constants the lowering leaves (the index checks
/// of a kernel that runs unchecked) and the code they make unreachable,
/// which would otherwise count as paths some threads take.
void foldConstantBranches(llvm::Function &body) {
  for (llvm::BasicBlock &block : body)
    llvm::ConstantFoldTerminator(&block, /*DeleteDeadConditions=*/true);
  llvm::removeUnreachableBlocks(body);
}

/// Leaves each barrier call of `cut.body` alone in a block and then removes
/// it: its predicate goes to cut.predicates first, its result is read from a
/// variable the block function sets. False when there are too many.
bool isolateBarriers(CutBody &cut) {
  llvm::Function &body = *cut.body;
  llvm::LLVMContext &context = body.getContext();
  llvm::Type *i32 = llvm::Type::getInt32Ty(context);
  std::vector<std::pair<llvm::CallInst *, uint32_t>> calls;
  for (llvm::Instruction &instruction : llvm::instructions(body))
    if (auto *call = llvm::dyn_cast<llvm::CallInst>(&instruction))
      if (std::optional<uint32_t> mode = barrierModeOf(*call))
        calls.emplace_back(call, *mode);
  if (calls.empty() || calls.size() > maxBarriers)
    return false;
  bool reduces =
      llvm::any_of(calls, [](const auto &call) { return call.second != KILN_BARRIER_SYNC; });
  llvm::BasicBlock &entry = body.getEntryBlock();
  if (reduces)
    cut.predicates = new llvm::AllocaInst(i32, 0, "barrier.predicate", entry.begin());
  for (auto [call, mode] : calls) {
    RegionBarrier barrier;
    barrier.mode = mode;
    if (reduces) {
      llvm::IRBuilder<> at(call);
      llvm::Value *predicate = mode == KILN_BARRIER_SYNC
                                   ? at.getInt32(0)
                                   : at.CreateZExtOrTrunc(call->getArgOperand(2), i32);
      at.CreateAlignedStore(predicate, cut.predicates, llvm::Align(4));
    }
    barrier.block = call->getParent()->splitBasicBlock(call, "barrier");
    barrier.resume = barrier.block->splitBasicBlock(call->getNextNode(), "after.barrier");
    if (!call->getType()->isVoidTy()) {
      barrier.result = new llvm::AllocaInst(i32, 0, "barrier.result", entry.begin());
      llvm::IRBuilder<> after(barrier.resume, barrier.resume->getFirstInsertionPt());
      llvm::Value *result = after.CreateAlignedLoad(i32, barrier.result, llvm::Align(4));
      call->replaceAllUsesWith(after.CreateZExtOrTrunc(result, call->getType()));
    }
    call->eraseFromParent();
    cut.barriers.push_back(barrier);
  }
  return true;
}

/// The barriers `value` is live across: those from whose block a use of it
/// is reached without passing its definition.
std::vector<unsigned> barriersCrossedBy(llvm::Instruction &value, const CutBody &cut) {
  llvm::BasicBlock *home = value.getParent();
  llvm::SmallPtrSet<llvm::BasicBlock *, 16> seen;
  llvm::SmallVector<llvm::BasicBlock *, 16> work;
  for (llvm::Use &use : value.uses()) {
    auto *user = llvm::cast<llvm::Instruction>(use.getUser());
    // A phi uses its value at the end of the block it comes from.
    auto *phi = llvm::dyn_cast<llvm::PHINode>(user);
    llvm::BasicBlock *where = phi ? phi->getIncomingBlock(use) : user->getParent();
    if (where != home && seen.insert(where).second)
      work.push_back(where);
  }
  while (!work.empty()) {
    llvm::BasicBlock *block = work.pop_back_val();
    for (llvm::BasicBlock *predecessor : llvm::predecessors(block))
      if (predecessor != home && seen.insert(predecessor).second)
        work.push_back(predecessor);
  }
  std::vector<unsigned> crossed;
  for (unsigned b = 0; b < cut.barriers.size(); ++b)
    if (seen.contains(cut.barriers[b].block))
      crossed.push_back(b);
  return crossed;
}

/// Whether the KilnCpuThread field at `offset` is the same for every thread
/// of a block, all the time it runs: launch indices and dimensions other
/// than the thread's, shared memory, the engine's pointers.
bool isBlockInvariantField(uint64_t offset) {
  return (offset >= offsetof(KilnCpuThread, blockIdx) &&
          offset < offsetof(KilnCpuThread, laneId)) ||
         (offset >= offsetof(KilnCpuThread, warpSize) && offset < offsetof(KilnCpuThread, flags)) ||
         offset == offsetof(KilnCpuThread, interrupt);
}

/// The constant offset of `pointer` from `base`, if it is one.
std::optional<uint64_t> offsetFrom(const llvm::Value *pointer, const llvm::Value *base) {
  if (pointer == base)
    return 0;
  const auto *element = llvm::dyn_cast<llvm::GetElementPtrInst>(pointer);
  if (!element || element->getPointerOperand() != base || element->getNumIndices() != 1 ||
      !element->getSourceElementType()->isIntegerTy(8))
    return std::nullopt;
  if (const auto *offset = llvm::dyn_cast<llvm::ConstantInt>(element->getOperand(1)))
    return offset->getZExtValue();
  return std::nullopt;
}

/// Whether `value` can be computed again where it is used, rather than kept
/// across a barrier: it depends only on the body's parameters (the thread's
/// indices among them) and on what does not change while a block runs, and
/// computing it where the original was not computed is safe.
bool isRecomputable(const llvm::Value *value, const llvm::Function &body, unsigned depth = 0) {
  if (llvm::isa<llvm::Argument>(value) || llvm::isa<llvm::Constant>(value))
    return true;
  const auto *instruction = llvm::dyn_cast<llvm::Instruction>(value);
  // Deep chains cost more to compute again than a slot.
  if (!instruction || depth > 6 || llvm::isa<llvm::PHINode>(instruction))
    return false;
  if (const auto *load = llvm::dyn_cast<llvm::LoadInst>(instruction))
    return readsBlockInvariant(*load, body);
  if (instruction->mayReadOrWriteMemory() || !llvm::isSafeToSpeculativelyExecute(instruction))
    return false;
  return llvm::all_of(instruction->operands(), [&](const llvm::Use &operand) {
    return isRecomputable(operand.get(), body, depth + 1);
  });
}

/// A copy of recomputable `value` computed before `point`.
llvm::Value *recompute(llvm::Value *value, llvm::Instruction *point) {
  auto *instruction = llvm::dyn_cast<llvm::Instruction>(value);
  if (!instruction)
    return value;
  llvm::Instruction *copy = instruction->clone();
  for (llvm::Use &operand : copy->operands())
    operand.set(recompute(operand.get(), point));
  copy->insertBefore(point);
  return copy;
}

/// Computes `value` again at each of its uses outside its own block.
void recomputeAtUses(llvm::Instruction &value) {
  for (llvm::Use &use : llvm::make_early_inc_range(value.uses())) {
    auto *user = llvm::cast<llvm::Instruction>(use.getUser());
    auto *phi = llvm::dyn_cast<llvm::PHINode>(user);
    llvm::BasicBlock *where = phi ? phi->getIncomingBlock(use) : user->getParent();
    if (where != value.getParent())
      use.set(recompute(&value, phi ? where->getTerminator() : user));
  }
}

/// Keeps `value`, which every thread holds alike across the barriers
/// `crossed`, in a UniformSlot: each thread writes it before each of those
/// barriers and reads it back after, and the uses take whichever copy
/// reaches them, so that no SSA value lives across a barrier any longer.
void keepInUniformSlot(llvm::Instruction &value, llvm::ArrayRef<unsigned> crossed, CutBody &cut) {
  llvm::Type *type = value.getType();
  llvm::BasicBlock &entry = cut.body->getEntryBlock();
  UniformSlot slot;
  slot.in = new llvm::AllocaInst(type, 0, value.getName() + ".uniform", entry.begin());
  slot.out = new llvm::AllocaInst(type, 0, value.getName() + ".uniform.next", entry.begin());
  cut.uniformSlots.push_back(slot);

  llvm::SSAUpdater updater;
  updater.Initialize(type, value.getName());
  updater.AddAvailableValue(value.getParent(), &value);
  llvm::DenseMap<llvm::BasicBlock *, llvm::Value *> reloads;
  for (unsigned b : crossed) {
    const RegionBarrier &barrier = cut.barriers[b];
    // The barrier's block is split from the one that ran up to the call.
    llvm::BasicBlock *before = barrier.block->getSinglePredecessor();
    new llvm::StoreInst(&value, slot.out, before->getTerminator()->getIterator());
    llvm::IRBuilder<> after(barrier.resume, barrier.resume->getFirstInsertionPt());
    llvm::Value *reload = after.CreateLoad(type, slot.in, value.getName() + ".reload");
    reloads[barrier.resume] = reload;
    updater.AddAvailableValue(barrier.resume, reload);
  }
  for (llvm::Use &use : llvm::make_early_inc_range(value.uses())) {
    auto *user = llvm::cast<llvm::Instruction>(use.getUser());
    if (!llvm::isa<llvm::PHINode>(user)) {
      // A use in a block that defines the value comes after the definition.
      if (user->getParent() == value.getParent())
        continue;
      if (llvm::Value *reload = reloads.lookup(user->getParent())) {
        use.set(reload);
        continue;
      }
    }
    updater.RewriteUse(use);
  }
}

/// Moves every value that lives across a barrier out of registers (see the
/// header).
void moveCrossingValues(CutBody &cut, const RegionUniformity &uniformity) {
  llvm::Function &body = *cut.body;
  std::vector<std::pair<llvm::Instruction *, std::vector<unsigned>>> crossing;
  for (llvm::Instruction &instruction : llvm::instructions(body))
    if (!llvm::isa<llvm::AllocaInst>(instruction))
      if (std::vector<unsigned> crossed = barriersCrossedBy(instruction, cut); !crossed.empty())
        crossing.emplace_back(&instruction, std::move(crossed));
  for (auto &[value, crossed] : crossing)
    if (isRecomputable(value, body))
      recomputeAtUses(*value);
    else if (cut.barriersUniform && uniformity.isUniform(value))
      keepInUniformSlot(*value, crossed, cut);
    else
      llvm::DemoteRegToStack(*value);
}

/// Gathers the allocas at the top of the entry block, splits the rest off
/// and lists the regions. False when some alloca is not of a size known
/// here, or the threads keep too much.
bool gatherVariables(CutBody &cut) {
  llvm::Function &body = *cut.body;
  llvm::BasicBlock &entry = body.getEntryBlock();
  for (llvm::Instruction &instruction : llvm::instructions(body))
    if (auto *alloca = llvm::dyn_cast<llvm::AllocaInst>(&instruction)) {
      if (!alloca->isStaticAlloca())
        return false;
      cut.allocas.push_back(alloca);
    }
  for (llvm::AllocaInst *alloca : cut.allocas) {
    if (!cut.isUniform(alloca))
      cut.slotBytes += strideOf(*alloca);
    // The arrays replace them, per thread: what marks their lifetime goes.
    for (llvm::User *user : llvm::make_early_inc_range(alloca->users()))
      if (auto *intrinsic = llvm::dyn_cast<llvm::IntrinsicInst>(user);
          intrinsic && intrinsic->isLifetimeStartOrEnd())
        intrinsic->eraseFromParent();
  }
  if (cut.slotBytes > maxRegionLoopSlotBytes)
    return false;
  for (llvm::AllocaInst *alloca : cut.allocas) {
    alloca->removeFromParent();
    alloca->insertInto(&entry, entry.begin());
  }
  llvm::BasicBlock::iterator start = entry.getFirstInsertionPt();
  while (llvm::isa<llvm::AllocaInst>(*start))
    ++start;
  llvm::BasicBlock *code = entry.splitBasicBlock(start, "start");

  // Region 0 from the start, region k from barrier k: the blocks reached
  // without passing another barrier.
  std::vector<llvm::BasicBlock *> starts{code};
  for (const RegionBarrier &barrier : cut.barriers)
    starts.push_back(barrier.resume);
  for (llvm::BasicBlock *first : starts) {
    std::vector<llvm::BasicBlock *> region{first};
    llvm::SmallPtrSet<llvm::BasicBlock *, 16> seen{first};
    for (size_t next = 0; next < region.size(); ++next)
      for (llvm::BasicBlock *successor : llvm::successors(region[next]))
        if (!cut.isBarrierBlock(successor) && seen.insert(successor).second)
          region.push_back(successor);
    cut.regions.push_back(std::move(region));
  }
  return true;
}

} // namespace

bool CutBody::isBarrierBlock(const llvm::BasicBlock *block) const {
  return llvm::any_of(barriers,
                      [&](const RegionBarrier &barrier) { return barrier.block == block; });
}

bool CutBody::isUniform(const llvm::AllocaInst *alloca) const {
  return llvm::any_of(barriers,
                      [&](const RegionBarrier &barrier) { return barrier.result == alloca; }) ||
         llvm::any_of(uniformSlots, [&](const UniformSlot &slot) {
           return slot.in == alloca || slot.out == alloca;
         });
}

bool cutAtBarriers(CutBody &cut) {
  llvm::Function &body = *cut.body;
  foldConstantBranches(body);
  if (!isolateBarriers(cut))
    return false;
  RegionUniformity uniformity = analyzeRegionUniformity(
      body, [&](const llvm::BasicBlock &block) { return cut.isBarrierBlock(&block); },
      [&](const llvm::LoadInst &load) {
        const auto *variable = llvm::dyn_cast<llvm::AllocaInst>(load.getPointerOperand());
        return readsBlockInvariant(load, body) || (variable && cut.isUniform(variable));
      });
  cut.barriersUniform = uniformity.barriersUniform;
  moveCrossingValues(cut, uniformity);
  return gatherVariables(cut);
}

uint64_t strideOf(const llvm::AllocaInst &alloca) {
  uint64_t bytes = alloca.getAllocationSize(alloca.getModule()->getDataLayout())->getFixedValue();
  return llvm::alignTo(bytes, alloca.getAlign());
}

bool readsBlockInvariant(const llvm::LoadInst &load, const llvm::Function &body) {
  if (load.isVolatile() || load.isAtomic())
    return false;
  const llvm::Value *thread = body.getArg(0);
  const llvm::Value *pointer = load.getPointerOperand();
  if (std::optional<uint64_t> offset = offsetFrom(pointer, thread))
    return isBlockInvariantField(*offset);
  const auto *element = llvm::dyn_cast<llvm::GetElementPtrInst>(pointer);
  const auto *services =
      llvm::dyn_cast<llvm::LoadInst>(element ? element->getPointerOperand() : pointer);
  return services &&
         offsetFrom(services->getPointerOperand(), thread) == offsetof(KilnCpuThread, services) &&
         (!element || offsetFrom(element, services).has_value());
}

bool computesWith(llvm::Argument &index) {
  llvm::Argument *thread = index.getParent()->getArg(0);
  return llvm::any_of(index.uses(), [&](const llvm::Use &use) {
    const auto *store = llvm::dyn_cast<llvm::StoreInst>(use.getUser());
    return !store || use.getOperandNo() != 0 ||
           !offsetFrom(store->getPointerOperand(), thread).has_value();
  });
}

} // namespace kiln::backend
