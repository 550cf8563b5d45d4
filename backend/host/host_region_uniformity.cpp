//===- backend/host/host_region_uniformity.cpp - What every thread shares -------===//

#include "backend/host/host_region_uniformity.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/Analysis/PostDominators.h>
#include <llvm/IR/CFG.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/Local.h>

namespace kiln::backend {

namespace {

/// The body's parameters that differ per thread: threadIdx.x, .y, .z and
/// laneId, after the thread.
constexpr unsigned firstThreadIndex = 1;
constexpr unsigned lastThreadIndex = 4;

/// The blocks of `function` from which a barrier can be reached.
llvm::SmallPtrSet<const llvm::BasicBlock *, 32>
blocksReachingBarriers(llvm::Function &function,
                       llvm::function_ref<bool(const llvm::BasicBlock &)> isBarrier) {
  llvm::SmallPtrSet<const llvm::BasicBlock *, 32> reaching;
  llvm::SmallVector<const llvm::BasicBlock *, 32> work;
  for (const llvm::BasicBlock &block : function)
    if (isBarrier(block) && reaching.insert(&block).second)
      work.push_back(&block);
  while (!work.empty())
    for (const llvm::BasicBlock *predecessor : llvm::predecessors(work.pop_back_val()))
      if (reaching.insert(predecessor).second)
        work.push_back(predecessor);
  return reaching;
}

/// The blocks of `function` from which a return can be reached.
llvm::SmallPtrSet<const llvm::BasicBlock *, 32> blocksReachingReturns(llvm::Function &function) {
  llvm::SmallPtrSet<const llvm::BasicBlock *, 32> reaching;
  llvm::SmallVector<const llvm::BasicBlock *, 32> work;
  for (const llvm::BasicBlock &block : function)
    if (llvm::isa<llvm::ReturnInst>(block.getTerminator()) && reaching.insert(&block).second)
      work.push_back(&block);
  while (!work.empty())
    for (const llvm::BasicBlock *predecessor : llvm::predecessors(work.pop_back_val()))
      if (reaching.insert(predecessor).second)
        work.push_back(predecessor);
  return reaching;
}

/// Removes from `function` the paths that end a thread where it has failed
/// (an index error): the branches' edges to code that returns no more,
/// from where the other edge goes on. What is left is what the threads
/// that go on run. False when some code then never returns (a loop that
/// never ends, which the analysis does not take).
bool removeFailingPaths(llvm::Function &function) {
  llvm::SmallPtrSet<const llvm::BasicBlock *, 32> returning = blocksReachingReturns(function);
  for (llvm::BasicBlock &block : function) {
    auto *branch = llvm::dyn_cast<llvm::BranchInst>(block.getTerminator());
    if (!branch || !branch->isConditional() || !returning.contains(&block))
      continue;
    for (unsigned fails = 0; fails < 2; ++fails) {
      llvm::BasicBlock *failing = branch->getSuccessor(fails);
      llvm::BasicBlock *going = branch->getSuccessor(1 - fails);
      if (returning.contains(failing) || !returning.contains(going))
        continue;
      failing->removePredecessor(&block);
      llvm::BranchInst::Create(going, branch->getIterator());
      branch->eraseFromParent();
      break;
    }
  }
  llvm::removeUnreachableBlocks(function);
  return blocksReachingReturns(function).size() == function.size();
}

class UniformityAnalysis {
public:
  UniformityAnalysis(llvm::Function &body,
                     llvm::function_ref<bool(const llvm::BasicBlock &)> isBarrier,
                     llvm::function_ref<bool(const llvm::LoadInst &)> readsUniformly)
      : body(body), isBarrier(isBarrier), readsUniformly(readsUniformly), postDominators(body),
        reachingBarriers(blocksReachingBarriers(body, isBarrier)) {}

  RegionUniformity run();

private:
  bool isSourceOfDivergence(const llvm::Instruction &instruction) const;
  void markDivergent(const llvm::Value &value);
  /// Marks what the divergent branch `terminator` chooses; false when its
  /// paths reach a barrier or an end of the thread before they meet.
  bool joinPathsOf(const llvm::Instruction &terminator);

  llvm::Function &body;
  llvm::function_ref<bool(const llvm::BasicBlock &)> isBarrier;
  llvm::function_ref<bool(const llvm::LoadInst &)> readsUniformly;
  llvm::PostDominatorTree postDominators;
  llvm::SmallPtrSet<const llvm::BasicBlock *, 32> reachingBarriers;
  RegionUniformity result;
  llvm::SmallVector<const llvm::Value *, 32> work;
  llvm::SmallPtrSet<const llvm::Instruction *, 16> joinedBranches;
};

bool UniformityAnalysis::isSourceOfDivergence(const llvm::Instruction &instruction) const {
  if (const auto *load = llvm::dyn_cast<llvm::LoadInst>(&instruction))
    return !readsUniformly(*load);
  // An intrinsic that touches no memory computes from its operands alone.
  if (const auto *call = llvm::dyn_cast<llvm::CallBase>(&instruction))
    return !(llvm::isa<llvm::IntrinsicInst>(call) && call->doesNotAccessMemory());
  // Private variables are the thread's own; atomics return what other
  // threads left.
  return llvm::isa<llvm::AllocaInst>(instruction) || llvm::isa<llvm::AtomicRMWInst>(instruction) ||
         llvm::isa<llvm::AtomicCmpXchgInst>(instruction);
}

void UniformityAnalysis::markDivergent(const llvm::Value &value) {
  if (!value.getType()->isVoidTy() && result.divergent.insert(&value).second)
    work.push_back(&value);
}

bool UniformityAnalysis::joinPathsOf(const llvm::Instruction &terminator) {
  const llvm::BasicBlock *branch = terminator.getParent();
  // After the last barrier, where threads go no longer matters: none of
  // what they compute there lives across a barrier.
  if (!reachingBarriers.contains(branch) || !joinedBranches.insert(&terminator).second)
    return true;
  const llvm::DomTreeNode *node = postDominators.getNode(branch);
  const llvm::DomTreeNode *join = node ? node->getIDom() : nullptr;
  // Paths that never meet (an end each, or a loop that never ends).
  if (!join || !join->getBlock())
    return false;
  const llvm::BasicBlock *meet = join->getBlock();
  // The blocks between the branch and where its paths meet.
  llvm::SmallPtrSet<const llvm::BasicBlock *, 16> between;
  llvm::SmallVector<const llvm::BasicBlock *, 16> pending(llvm::successors(branch));
  while (!pending.empty()) {
    const llvm::BasicBlock *block = pending.pop_back_val();
    if (block == meet || !between.insert(block).second)
      continue;
    if (isBarrier(*block) || llvm::succ_empty(block))
      return false;
    llvm::append_range(pending, llvm::successors(block));
  }
  for (const llvm::PHINode &phi : meet->phis())
    markDivergent(phi);
  for (const llvm::BasicBlock *block : between)
    for (const llvm::Instruction &instruction : *block) {
      // Which path a thread took, or after how many iterations it left.
      if (llvm::isa<llvm::PHINode>(instruction))
        markDivergent(instruction);
      else if (llvm::any_of(instruction.users(), [&](const llvm::User *user) {
                 return !between.contains(llvm::cast<llvm::Instruction>(user)->getParent());
               }))
        markDivergent(instruction);
    }
  return true;
}

RegionUniformity UniformityAnalysis::run() {
  for (unsigned i = firstThreadIndex; i <= lastThreadIndex && i < body.arg_size(); ++i)
    markDivergent(*body.getArg(i));
  for (const llvm::Instruction &instruction : llvm::instructions(body))
    if (isSourceOfDivergence(instruction))
      markDivergent(instruction);
  while (!work.empty()) {
    const llvm::Value *value = work.pop_back_val();
    for (const llvm::User *user : value->users()) {
      const auto *instruction = llvm::dyn_cast<llvm::Instruction>(user);
      if (!instruction)
        continue;
      if (instruction->isTerminator()) {
        if (instruction->getNumSuccessors() > 1 && !joinPathsOf(*instruction))
          return RegionUniformity{};
        continue;
      }
      // Such a load reads one variable of the block, whatever its pointer
      // looks like (the analysis takes an alloca for a thread's own).
      if (const auto *load = llvm::dyn_cast<llvm::LoadInst>(instruction);
          load && readsUniformly(*load))
        continue;
      markDivergent(*instruction);
    }
  }
  result.barriersUniform = true;
  return std::move(result);
}

} // namespace

RegionUniformity
analyzeRegionUniformity(llvm::Function &body,
                        llvm::function_ref<bool(const llvm::BasicBlock &)> isBarrier,
                        llvm::function_ref<bool(const llvm::LoadInst &)> readsUniformly) {
  // The analysis runs on a copy of the body without the paths on which a
  // thread fails.
  llvm::ValueToValueMapTy toCopy;
  llvm::Function *survivors = llvm::CloneFunction(&body, toCopy);
  llvm::DenseMap<const llvm::Value *, const llvm::Value *> original;
  auto refreshOriginals = [&] {
    original.clear();
    for (const auto &[value, copy] : toCopy)
      if (copy)
        original[copy] = value;
  };
  refreshOriginals();
  auto isCopiedBarrier = [&](const llvm::BasicBlock &block) {
    const auto *from = llvm::dyn_cast_or_null<llvm::BasicBlock>(original.lookup(&block));
    return from && isBarrier(*from);
  };
  RegionUniformity copied;
  if (removeFailingPaths(*survivors)) {
    refreshOriginals();
    copied = UniformityAnalysis(*survivors, isCopiedBarrier, [&](const llvm::LoadInst &load) {
               return readsUniformly(*llvm::cast<llvm::LoadInst>(original.lookup(&load)));
             }).run();
  }
  RegionUniformity result;
  result.barriersUniform = copied.barriersUniform;
  if (result.barriersUniform) {
    // What the copy lost is the ending paths' own.
    auto keep = [&](const llvm::Value &value) {
      const llvm::Value *copy = toCopy.lookup(&value);
      if (!copy || copied.divergent.contains(copy))
        result.divergent.insert(&value);
    };
    for (const llvm::Argument &argument : body.args())
      keep(argument);
    for (const llvm::Instruction &instruction : llvm::instructions(body))
      keep(instruction);
  }
  survivors->eraseFromParent();
  return result;
}

} // namespace kiln::backend
