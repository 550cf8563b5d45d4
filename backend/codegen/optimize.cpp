//===- backend/codegen/optimize.cpp - LLVM's optimization pipeline ----------------===//

#include "backend/codegen/optimize.h"

#include "backend/codegen/loop_guard_canonicalization.h"

#include <llvm/Analysis/LoopInfo.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/PassManager.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Transforms/Scalar/EarlyCSE.h>
#include <llvm/Transforms/Scalar/InductiveRangeCheckElimination.h>
#include <llvm/Transforms/Scalar/SROA.h>
#include <llvm/Transforms/Utils/LoopUtils.h>

#include <mutex>

namespace kiln::backend {

/// LLVM's pass options Kiln changes, once per process and for every
/// target alike, so that what a kernel compiles to never depends on what the
/// process compiled before.
///
/// Range check elimination splits only loops whose profile says the checks
/// pass; kernels come without profiles, and the guards of a block's threads
/// (`if i < n`) pass for all threads but those past the end.
///
/// Loop unswitching scales its size budget by the number of loops beside the
/// one it unswitches, which in a loop nest over a run of blocks (one x loop
/// per unswitched copy of a row's checks) leaves the last of a row's bounds
/// checks in the x loop, where it keeps the loop from being vectorized.
static void configurePasses() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::StringMap<llvm::cl::Option *> &options = llvm::cl::getRegisteredOptions();
    if (llvm::cl::Option *option = options.lookup("irce-skip-profitability-checks"))
      option->addOccurrence(0, option->ArgStr, "true");
    if (llvm::cl::Option *option = options.lookup("enable-unswitch-cost-multiplier"))
      option->addOccurrence(0, option->ArgStr, "false");
  });
}

AnalysisManagers::AnalysisManagers(llvm::PassBuilder &builder) {
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(sccs);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, sccs, modules);
}

/// The pass pipeline `builder` makes for -O3, with LICM kept from hoisting
/// what not every iteration runs. LLVM offers no option for the default
/// pipeline's LICM passes, so the pipeline is written out as text, their
/// parameter changed, and the text read back.
static llvm::Expected<llvm::ModulePassManager>
o3WithoutSpeculativeHoisting(llvm::PassBuilder &builder,
                             llvm::PassInstrumentationCallbacks &passNames) {
  std::string pipeline;
  llvm::raw_string_ostream text(pipeline);
  builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3)
      .printPipeline(text, [&](llvm::StringRef className) {
        llvm::StringRef name = passNames.getPassNameForClassName(className);
        return name.empty() ? className : name;
      });
  llvm::StringRef speculating = "licm<allowspeculation>";
  for (size_t at = pipeline.find(speculating); at != std::string::npos;
       at = pipeline.find(speculating, at))
    pipeline.replace(at, speculating.size(), "licm<no-allowspeculation>");
  llvm::ModulePassManager passes;
  if (llvm::Error error = builder.parsePassPipeline(passes, pipeline))
    return llvm::createStringError("LLVM's -O3 pipeline without speculative hoisting: " +
                                   llvm::toString(std::move(error)));
  return std::move(passes);
}

llvm::Error optimizeModule(llvm::Module &module, llvm::TargetMachine &machine, bool optimize,
                           const PipelineTuning &tuning) {
  configurePasses();
  llvm::PassInstrumentationCallbacks passNames;
  llvm::PipelineTuningOptions options;
  options.LoopVectorization = tuning.vectorizeLoops;
  llvm::PassBuilder builder(&machine, options, std::nullopt, &passNames);
  if (tuning.splitRangeChecks) {
    builder.registerScalarOptimizerLateEPCallback(
        [](llvm::FunctionPassManager &passes, llvm::OptimizationLevel) {
          passes.addPass(CanonicalizeLoopGuardsPass());
          passes.addPass(llvm::IRCEPass());
        });
  }
  // The callbacks above must be registered before the analyses.
  AnalysisManagers analyses(builder);
  llvm::ModulePassManager passes;
  if (!optimize) {
    passes = builder.buildO0DefaultPipeline(llvm::OptimizationLevel::O0);
  } else if (tuning.speculativeHoisting) {
    passes = builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  } else {
    llvm::Expected<llvm::ModulePassManager> tuned =
        o3WithoutSpeculativeHoisting(builder, passNames);
    if (!tuned)
      return tuned.takeError();
    passes = std::move(*tuned);
  }
  passes.run(module, analyses.modules);
  return llvm::Error::success();
}

void promoteVariables(llvm::Function &function) {
  llvm::PassBuilder builder;
  AnalysisManagers analyses(builder);
  llvm::FunctionPassManager passes;
  passes.addPass(llvm::SROAPass(llvm::SROAOptions::ModifyCFG));
  passes.addPass(llvm::EarlyCSEPass());
  passes.run(function, analyses.functions);
}

void disableRuntimeUnrolling(llvm::Module &module) {
  llvm::LLVMContext &context = module.getContext();
  for (llvm::Function &function : module) {
    if (function.isDeclaration())
      continue;
    llvm::DominatorTree dominators(function);
    llvm::LoopInfo loops(dominators);
    for (llvm::Loop *loop : loops.getLoopsInPreorder()) {
      llvm::MDNode *disable = llvm::MDNode::get(
          context, llvm::MDString::get(context, "llvm.loop.unroll.runtime.disable"));
      llvm::MDNode *id =
          llvm::makePostTransformationMetadata(context, loop->getLoopID(), {}, {disable});
      loop->setLoopID(id);
    }
  }
}

} // namespace kiln::backend
