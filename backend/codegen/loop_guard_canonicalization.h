//===- backend/codegen/loop_guard_canonicalization.h - Guards IRCE reads -*- C++ -*-===//
//
// LLVM's inductive range check elimination splits a loop at the checks of
// its induction variable it can read: `i < n` or `i >= 0` on the branch that
// stays in the loop, alone or joined by `and`. A kernel's guards reach it in
// two other shapes, and each keeps the loop over a block's threads scalar:
//
// * `if 0 < x < n` arrives as `x != 0 && x < n` once instcombine knows x is
//   never negative; the test against zero is written back as the range
//   check it is, `x - 1 >= 0` (`x - 1 < 0` for `x == 0`);
// * an index check of a 2-D array, `if y >= h or x >= w: raise`, arrives as
//   one branch that leaves the loop when either fails; it becomes the branch
//   that stays when every inverted test passes, `y < h and x < w`.
//
// This pass runs just before that elimination. Both rewrites keep each
// branch's meaning; instcombine restores its own forms of what is left.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/IR/PassManager.h>

namespace kiln::backend {

class CanonicalizeLoopGuardsPass : public llvm::PassInfoMixin<CanonicalizeLoopGuardsPass> {
public:
  llvm::PreservedAnalyses run(llvm::Function &function, llvm::FunctionAnalysisManager &analyses);
};

} // namespace kiln::backend
