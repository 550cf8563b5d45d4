//===- backend/codegen/optimize.h - LLVM's optimization pipeline --------*- C++ -*-===//
#pragma once

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/Error.h>
#include <llvm/Target/TargetMachine.h>

namespace kiln::backend {

/// LLVM's analysis managers with every analysis of `builder` registered and
/// proxied to each other: what running any pass pipeline needs.
struct AnalysisManagers {
  explicit AnalysisManagers(llvm::PassBuilder &builder);

  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager sccs;
  llvm::ModuleAnalysisManager modules;
};

/// What a target changes in LLVM's default -O3 pipeline.
struct PipelineTuning {
  /// Adds LLVM's inductive range check elimination: a loop whose body is
  /// guarded by (or checks) a range of its induction variable is split into
  /// loops that check it and one that does not, which the vectorizer can
  /// then take; guards in shapes it cannot read are first rewritten into ones
  /// it can (loop_guard_canonicalization.h).
  bool splitRangeChecks = false;

  /// Lets LICM hoist loop-invariant code out of blocks that not every
  /// iteration runs. On a GPU each hoisted value stays in a register for the
  /// whole loop: hoisting a libm function's slow path (the argument
  /// reduction of sin or cos of a loop-invariant angle, behind a range test)
  /// costs a grid-stride loop more registers than recomputing it costs
  /// time, and NVVM does not hoist it either.
  bool speculativeHoisting = true;

  /// Lets LLVM's loop vectorizer run. A GPU thread has no vector registers
  /// to fill: the vectorizer turns a loop over bytes into stores of four
  /// bytes that, with no alignment known, go out again one byte at a time
  /// after shifts, costing registers the scalar loop does not need.
  bool vectorizeLoops = true;
};

/// Runs LLVM's default -O3 pipeline (or -O0's, which still inlines
/// always-inline functions) with the machine's own passes, which for NVPTX
/// include NVVMReflect, changed as `tuning` asks. Fails only where the
/// pipeline without speculative hoisting, which is written out as text and
/// read back, cannot be read: Kiln's own passes (`splitRangeChecks`) have no
/// names in it, so the two do not combine.
llvm::Error optimizeModule(llvm::Module &module, llvm::TargetMachine &machine, bool optimize,
                           const PipelineTuning &tuning = {});

/// The function's variables in registers (SROA), its common loads merged:
/// what the back end's own rewrites of a kernel body read most easily.
void promoteVariables(llvm::Function &function);

/// Asks LLVM not to unroll the module's loops by a run-time factor. NVPTX
/// unrolls loops of unknown trip count by two at -O3; ptxas then keeps both
/// iterations' loads in registers, costing occupancy in the grid-stride loops
/// kernels are made of (Numba's NVVM does not). Loops with a constant trip
/// count are still unrolled in full.
void disableRuntimeUnrolling(llvm::Module &module);

} // namespace kiln::backend
