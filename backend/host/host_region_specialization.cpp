//===- backend/host/host_region_specialization.cpp - A region's copies ---------===//

#include "backend/host/host_region_specialization.h"

#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/CFG.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>

namespace kiln::backend {

namespace {

/// The body's parameters: the thread, threadIdx.x, .y, .z, laneId, then the
/// kernel's.
constexpr unsigned threadXArgument = 1;
constexpr unsigned lastThreadIndexArgument = 4;

/// The deepest expression computeBeforeRound copies.
constexpr unsigned maxRoundInvariantDepth = 8;

/// Whether `value` is threadIdx.x of `body`, or its extension to a wider
/// type, which is the same number: it is less than 1024.
bool isThreadX(const llvm::Value *value, const llvm::Function &body) {
  if (llvm::isa<llvm::SExtInst>(value) || llvm::isa<llvm::ZExtInst>(value))
    value = llvm::cast<llvm::CastInst>(value)->getOperand(0);
  return value == body.getArg(threadXArgument);
}

llvm::Value *copyBeforeRound(llvm::IRBuilder<> &builder, llvm::Value *value, const CutBody &cut,
                             unsigned k, llvm::function_ref<llvm::Value *(llvm::Value *)> leaf,
                             llvm::DenseMap<llvm::Value *, llvm::Value *> &copies) {
  value = valueInRegion(value, cut, k);
  if (llvm::isa<llvm::Constant>(value))
    return value;
  if (llvm::isa<llvm::Argument>(value) || llvm::isa<llvm::AllocaInst>(value))
    return leaf(value);
  if (llvm::Value *copied = copies.lookup(value))
    return copied;
  llvm::Instruction *copy = llvm::cast<llvm::Instruction>(value)->clone();
  for (llvm::Use &operand : copy->operands())
    operand.set(copyBeforeRound(builder, operand.get(), cut, k, leaf, copies));
  builder.Insert(copy, value->getName());
  copies[value] = copy;
  return copy;
}

} // namespace

llvm::Value *valueInRegion(llvm::Value *value, const CutBody &cut, unsigned k) {
  auto *phi = llvm::dyn_cast<llvm::PHINode>(value);
  if (!phi)
    return value;
  const std::vector<llvm::BasicBlock *> &region = cut.regions[k];
  llvm::Value *only = nullptr;
  for (unsigned i = 0; i < phi->getNumIncomingValues(); ++i) {
    if (!llvm::is_contained(region, phi->getIncomingBlock(i)))
      continue;
    llvm::Value *incoming = phi->getIncomingValue(i);
    if (only && incoming != only)
      return value;
    only = incoming;
  }
  return only && only != phi ? only : value;
}

bool isRoundInvariant(llvm::Value *value, const CutBody &cut, unsigned k, unsigned depth) {
  value = valueInRegion(value, cut, k);
  if (llvm::isa<llvm::Constant>(value))
    return true;
  if (const auto *argument = llvm::dyn_cast<llvm::Argument>(value))
    return argument->getArgNo() == 0 || argument->getArgNo() > lastThreadIndexArgument;
  const auto *instruction = llvm::dyn_cast<llvm::Instruction>(value);
  if (!instruction || depth > maxRoundInvariantDepth || llvm::isa<llvm::PHINode>(instruction))
    return false;
  if (const auto *load = llvm::dyn_cast<llvm::LoadInst>(instruction)) {
    if (readsBlockInvariant(*load, *cut.body))
      return true;
    // What the block function set before the round, and no thread writes.
    const auto *variable = llvm::dyn_cast<llvm::AllocaInst>(load->getPointerOperand());
    return variable && !load->isVolatile() && !load->isAtomic() &&
           (llvm::any_of(
                cut.barriers,
                [&](const RegionBarrier &barrier) { return barrier.result == variable; }) ||
            llvm::any_of(cut.uniformSlots,
                         [&](const UniformSlot &slot) { return slot.in == variable; }));
  }
  if (instruction->mayReadOrWriteMemory() || !llvm::isSafeToSpeculativelyExecute(instruction))
    return false;
  return llvm::all_of(instruction->operands(), [&](const llvm::Use &operand) {
    return isRoundInvariant(operand.get(), cut, k, depth + 1);
  });
}

llvm::BranchInst *findRegionSwitch(const CutBody &cut, unsigned k) {
  const std::vector<llvm::BasicBlock *> &region = cut.regions[k];
  llvm::SmallPtrSet<const llvm::BasicBlock *, 8> seen;
  for (llvm::BasicBlock *block = region.front(); seen.insert(block).second;) {
    auto *branch = llvm::dyn_cast<llvm::BranchInst>(block->getTerminator());
    if (!branch)
      return nullptr;
    if (branch->isConditional())
      return isRoundInvariant(branch->getCondition(), cut, k) ? branch : nullptr;
    block = branch->getSuccessor(0);
    if (!llvm::is_contained(region, block))
      return nullptr;
  }
  return nullptr;
}

std::optional<ThreadGuard> findThreadGuard(const CutBody &cut, unsigned k,
                                           const RegionDecisions &decided) {
  const std::vector<llvm::BasicBlock *> &region = cut.regions[k];
  // The blocks a copy runs, nearest first.
  llvm::SmallVector<llvm::BasicBlock *, 16> order{region.front()};
  llvm::SmallPtrSet<const llvm::BasicBlock *, 16> seen{region.front()};
  for (size_t next = 0; next < order.size(); ++next) {
    auto *branch = llvm::dyn_cast<llvm::BranchInst>(order[next]->getTerminator());
    if (branch && branch->isConditional()) {
      if (auto way = decided.find(branch->getCondition()); way != decided.end()) {
        llvm::BasicBlock *taken = branch->getSuccessor(way->second ? 0 : 1);
        if (llvm::is_contained(region, taken) && seen.insert(taken).second)
          order.push_back(taken);
        continue;
      }
      auto *compare = llvm::dyn_cast<llvm::ICmpInst>(branch->getCondition());
      ThreadGuard guard;
      guard.compare = compare;
      if (compare && isThreadX(compare->getOperand(0), *cut.body)) {
        guard.predicate = compare->getPredicate();
        guard.bound = compare->getOperand(1);
      } else if (compare && isThreadX(compare->getOperand(1), *cut.body)) {
        guard.predicate = compare->getSwappedPredicate();
        guard.bound = compare->getOperand(0);
      }
      if (guard.bound && isRoundInvariant(guard.bound, cut, k))
        return guard;
    }
    for (llvm::BasicBlock *successor : llvm::successors(order[next]))
      if (llvm::is_contained(region, successor) && seen.insert(successor).second)
        order.push_back(successor);
  }
  return std::nullopt;
}

llvm::Value *computeBeforeRound(llvm::IRBuilder<> &builder, llvm::Value *value, const CutBody &cut,
                                unsigned k, llvm::function_ref<llvm::Value *(llvm::Value *)> leaf) {
  llvm::DenseMap<llvm::Value *, llvm::Value *> copies;
  return copyBeforeRound(builder, value, cut, k, leaf, copies);
}

ThreadRange emitThreadRange(llvm::IRBuilder<> &builder, const ThreadGuard &guard,
                            llvm::Value *bound, llvm::Value *width) {
  auto *type = llvm::cast<llvm::IntegerType>(bound->getType());
  width = builder.CreateZExtOrTrunc(width, type);
  llvm::Value *zero = llvm::ConstantInt::get(type, 0);
  llvm::Value *one = llvm::ConstantInt::get(type, 1);
  auto minMax = [&](llvm::Intrinsic::ID id, llvm::Value *a, llvm::Value *b) {
    return builder.CreateBinaryIntrinsic(id, a, b);
  };
  // x is at least 0 and less than width; `x < high` is what the comparison
  // says, or (for >, >=, !=) its opposite.
  ThreadRange range;
  llvm::CmpInst::Predicate predicate = guard.predicate;
  range.inside = llvm::ICmpInst::isLT(predicate) || llvm::ICmpInst::isLE(predicate) ||
                 predicate == llvm::CmpInst::ICMP_EQ;
  llvm::Value *high = nullptr;
  switch (predicate) {
  case llvm::CmpInst::ICMP_EQ:
  case llvm::CmpInst::ICMP_NE: {
    llvm::Value *low = minMax(llvm::Intrinsic::umin, bound, width);
    high = builder.CreateAdd(low, builder.CreateZExt(builder.CreateICmpULT(low, width), type));
    range.low = builder.CreateTrunc(low, builder.getInt32Ty());
    break;
  }
  case llvm::CmpInst::ICMP_ULT:
  case llvm::CmpInst::ICMP_UGE:
    high = minMax(llvm::Intrinsic::umin, bound, width);
    break;
  case llvm::CmpInst::ICMP_ULE:
  case llvm::CmpInst::ICMP_UGT:
    high =
        builder.CreateAdd(minMax(llvm::Intrinsic::umin, bound, builder.CreateSub(width, one)), one);
    break;
  case llvm::CmpInst::ICMP_SLT:
  case llvm::CmpInst::ICMP_SGE:
    high = minMax(llvm::Intrinsic::smax, minMax(llvm::Intrinsic::smin, bound, width), zero);
    break;
  default:
    high = minMax(
        llvm::Intrinsic::smax,
        builder.CreateAdd(minMax(llvm::Intrinsic::smin, bound, builder.CreateSub(width, one)), one),
        zero);
    break;
  }
  range.high = builder.CreateTrunc(high, builder.getInt32Ty());
  return range;
}

} // namespace kiln::backend
