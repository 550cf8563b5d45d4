//===- backend/codegen/loop_guard_canonicalization.cpp - Guards IRCE reads --------===//

#include "backend/codegen/loop_guard_canonicalization.h"

#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/Analysis/ScalarEvolutionExpressions.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/PatternMatch.h>
#include <llvm/Transforms/Utils/Local.h>

namespace kiln::backend {

namespace {

namespace pm = llvm::PatternMatch;

/// `value == 0` or `value != 0`, where value is an affine induction variable
/// of the loop the comparison sits in and never negative.
bool isZeroTestOfCount(llvm::ICmpInst &compare, llvm::LoopInfo &loops,
                       llvm::ScalarEvolution &evolution) {
  if (!compare.isEquality() || !pm::match(compare.getOperand(1), pm::m_Zero()))
    return false;
  llvm::Loop *loop = loops.getLoopFor(compare.getParent());
  llvm::Value *value = compare.getOperand(0);
  // Integers only: a pointer compared with null is no count.
  if (!loop || !value->getType()->isIntegerTy() || !evolution.isSCEVable(value->getType()))
    return false;
  const auto *induction = llvm::dyn_cast<llvm::SCEVAddRecExpr>(evolution.getSCEV(value));
  return induction && induction->getLoop() == loop && induction->isAffine() &&
         evolution.isKnownNonNegative(induction);
}

/// `value != 0` as `value - 1 >= 0`, `value == 0` as `value - 1 < 0`.
void rewriteAsRangeCheck(llvm::ICmpInst &compare, llvm::ScalarEvolution &evolution) {
  llvm::IRBuilder<> builder(&compare);
  llvm::Value *value = compare.getOperand(0);
  // value >= 0, so value - 1 cannot wrap.
  llvm::Value *lessOne = builder.CreateNSWAdd(
      value, llvm::ConstantInt::getSigned(value->getType(), -1), value->getName() + ".less.one");
  llvm::Value *check =
      builder.CreateICmp(compare.getPredicate() == llvm::CmpInst::ICMP_NE ? llvm::CmpInst::ICMP_SGE
                                                                          : llvm::CmpInst::ICMP_SLT,
                         lessOne, llvm::ConstantInt::get(value->getType(), 0));
  check->takeName(&compare);
  compare.replaceAllUsesWith(check);
  evolution.forgetValue(&compare);
  compare.eraseFromParent();
}

/// The comparisons whose `or` (plain or short-circuit) is `condition`, in
/// order; false when some leaf is not a comparison.
bool collectFailureTests(llvm::Value *condition, llvm::SmallVectorImpl<llvm::ICmpInst *> &tests) {
  llvm::Value *left, *right;
  if (pm::match(condition, pm::m_LogicalOr(pm::m_Value(left), pm::m_Value(right))))
    return condition->hasOneUse() && collectFailureTests(left, tests) &&
           collectFailureTests(right, tests);
  auto *compare = llvm::dyn_cast<llvm::ICmpInst>(condition);
  if (!compare)
    return false;
  tests.push_back(compare);
  return true;
}

/// `br (or fail...), exit, stay` as `br (and pass...), stay, exit`: the
/// shape of a check whose failure leaves the loop that IRCE reads. Only
/// branches that test two or more comparisons change: IRCE reads a single
/// one either way.
bool rewriteAsPassingTests(llvm::BranchInst &branch, llvm::Loop &loop) {
  if (!branch.isConditional() || loop.contains(branch.getSuccessor(0)) ||
      !loop.contains(branch.getSuccessor(1)))
    return false;
  llvm::SmallVector<llvm::ICmpInst *, 4> tests;
  if (!collectFailureTests(branch.getCondition(), tests) || tests.size() < 2)
    return false;
  llvm::IRBuilder<> builder(&branch);
  llvm::Value *allPass = nullptr;
  for (llvm::ICmpInst *test : tests) {
    llvm::Value *passes = builder.CreateICmp(test->getInversePredicate(), test->getOperand(0),
                                             test->getOperand(1), test->getName() + ".passes");
    // Short-circuit, as `or` may have been: a later test may be poison
    // where an earlier one fails.
    allPass = allPass ? builder.CreateLogicalAnd(allPass, passes) : passes;
  }
  llvm::Value *old = branch.getCondition();
  branch.setCondition(allPass);
  branch.swapSuccessors();
  llvm::RecursivelyDeleteTriviallyDeadInstructions(old);
  return true;
}

} // namespace

llvm::PreservedAnalyses CanonicalizeLoopGuardsPass::run(llvm::Function &function,
                                                        llvm::FunctionAnalysisManager &analyses) {
  llvm::LoopInfo &loops = analyses.getResult<llvm::LoopAnalysis>(function);
  llvm::ScalarEvolution &evolution = analyses.getResult<llvm::ScalarEvolutionAnalysis>(function);
  llvm::SmallVector<llvm::ICmpInst *, 8> zeroTests;
  llvm::SmallVector<std::pair<llvm::BranchInst *, llvm::Loop *>, 8> exits;
  for (llvm::BasicBlock &block : function) {
    llvm::Loop *loop = loops.getLoopFor(&block);
    if (!loop)
      continue;
    for (llvm::Instruction &instruction : block)
      if (auto *compare = llvm::dyn_cast<llvm::ICmpInst>(&instruction);
          compare && isZeroTestOfCount(*compare, loops, evolution))
        zeroTests.push_back(compare);
    if (auto *branch = llvm::dyn_cast<llvm::BranchInst>(block.getTerminator()))
      exits.emplace_back(branch, loop);
  }

  // Zero tests first: rewriting a branch deletes the comparisons it inverts.
  bool changed = !zeroTests.empty();
  for (llvm::ICmpInst *compare : zeroTests)
    rewriteAsRangeCheck(*compare, evolution);
  for (auto [branch, loop] : exits)
    changed |= rewriteAsPassingTests(*branch, *loop);
  if (!changed)
    return llvm::PreservedAnalyses::all();
  llvm::PreservedAnalyses preserved;
  preserved.preserveSet<llvm::CFGAnalyses>();
  return preserved;
}

} // namespace kiln::backend
