//===- backend/host/host_interrupt_polls.cpp - Ctrl-C reaches every loop -------===//

#include "backend/host/host_interrupt_polls.h"

#include "backend/host/host_target.h"
#include "module/cpu_kernel_abi.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/SetVector.h>
#include <llvm/Analysis/AssumptionCache.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/Analysis/ScalarEvolutionExpressions.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/TargetParser/Triple.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>
#include <llvm/Transforms/Utils/LoopUtils.h>

#include <cstddef>
#include <limits>
#include <optional>
#include <vector>

namespace kiln::backend {

namespace {

/// Iterations a loop may run without polling, its unpolled inner loops'
/// included: at a few nanoseconds an iteration, a loop this long ends well
/// within the engine's poll interval.
constexpr uint64_t unpolledIterationLimit = uint64_t(1) << 16;

/// The property of the loops markThreadLoop marks.
constexpr llvm::StringLiteral threadLoopProperty = "kiln.loop.threads";

bool isThreadLoop(const llvm::Loop &loop) {
  return llvm::findOptionMDForLoop(&loop, threadLoopProperty) != nullptr;
}

uint64_t saturatingProduct(uint64_t a, uint64_t b) {
  if (a != 0 && b > std::numeric_limits<uint64_t>::max() / a)
    return std::numeric_limits<uint64_t>::max();
  return a * b;
}

uint64_t saturatingSum(uint64_t a, uint64_t b) {
  return b > std::numeric_limits<uint64_t>::max() - a ? std::numeric_limits<uint64_t>::max()
                                                      : a + b;
}

/// The most iterations `loop` can run, if ScalarEvolution can bound them.
std::optional<uint64_t> maxIterations(llvm::ScalarEvolution &evolution, const llvm::Loop &loop) {
  const auto *count =
      llvm::dyn_cast<llvm::SCEVConstant>(evolution.getConstantMaxBackedgeTakenCount(&loop));
  if (!count || count->getAPInt().getActiveBits() >= 64)
    return std::nullopt;
  return count->getAPInt().getZExtValue() + 1;
}

/// The latches of the loops of `function` that must poll.
llvm::SmallSetVector<llvm::BasicBlock *, 8> latchesToPoll(llvm::Function &function) {
  llvm::DominatorTree dominators(function);
  llvm::LoopInfo loops(dominators);
  llvm::TargetLibraryInfoImpl libraryInfo(llvm::Triple(function.getParent()->getTargetTriple()));
  llvm::TargetLibraryInfo library(libraryInfo, &function);
  llvm::AssumptionCache assumptions(function);
  llvm::ScalarEvolution evolution(function, library, assumptions, dominators, loops);
  // Inner loops first: a loop's budget counts those of its inner loops
  // that do not poll.
  llvm::DenseMap<const llvm::Loop *, uint64_t> unpolled;
  llvm::SmallVector<llvm::BasicBlock *, 8> found;
  llvm::SmallVector<llvm::Loop *, 8> outerFirst = loops.getLoopsInPreorder();
  for (llvm::Loop *loop : llvm::reverse(outerFirst)) {
    uint64_t inner = 0;
    for (const llvm::Loop *child : loop->getSubLoops())
      inner = saturatingSum(inner, unpolled.lookup(child));
    if (isThreadLoop(*loop)) {
      unpolled[loop] = 0;
      continue;
    }
    std::optional<uint64_t> iterations = maxIterations(evolution, *loop);
    uint64_t work = iterations ? saturatingProduct(*iterations, saturatingSum(inner, 1))
                               : std::numeric_limits<uint64_t>::max();
    if (work <= unpolledIterationLimit) {
      unpolled[loop] = work;
      continue;
    }
    loop->getLoopLatches(found);
    unpolled[loop] = 0;
  }
  return llvm::SmallSetVector<llvm::BasicBlock *, 8>(found.begin(), found.end());
}

/// Polls at the end of `latch`: a volatile read of the interrupt word, and
/// the `interrupted` service when it is set, which returns when the engine
/// only wanted a poll, so that the loop goes on.
void pollAt(llvm::BasicBlock &latch, llvm::Value *thread) {
  llvm::LLVMContext &context = latch.getContext();
  llvm::Type *pointer = llvm::PointerType::get(context, 0);
  llvm::IRBuilder<> builder(latch.getTerminator());
  llvm::Value *word = builder.CreateAlignedLoad(
      pointer, threadFieldAddress(builder, thread, offsetof(KilnCpuThread, interrupt)),
      llvm::Align(8));
  llvm::LoadInst *pending =
      builder.CreateAlignedLoad(builder.getInt32Ty(), word, llvm::Align(4), /*isVolatile=*/true);
  llvm::Instruction *stop = llvm::SplitBlockAndInsertIfThen(
      builder.CreateICmpNE(pending, builder.getInt32(0)), latch.getTerminator(),
      /*Unreachable=*/false, llvm::MDBuilder(context).createUnlikelyBranchWeights());
  builder.SetInsertPoint(stop);
  llvm::Value *services = builder.CreateAlignedLoad(
      pointer, threadFieldAddress(builder, thread, offsetof(KilnCpuThread, services)),
      llvm::Align(8));
  llvm::Value *interrupted = builder.CreateAlignedLoad(
      pointer,
      builder.CreateConstInBoundsGEP1_64(builder.getInt8Ty(), services,
                                         offsetof(KilnCpuServices, interrupted)),
      llvm::Align(8));
  builder.CreateCall(llvm::FunctionType::get(builder.getVoidTy(), {pointer}, false), interrupted,
                     {thread});
}

/// `attributes` of a function or call with one more parameter in front,
/// which gets `first`.
llvm::AttributeList withFirstParameter(llvm::LLVMContext &context,
                                       const llvm::AttributeList &attributes, unsigned parameters,
                                       llvm::AttributeSet first) {
  std::vector<llvm::AttributeSet> shifted{first};
  for (unsigned i = 0; i < parameters; ++i)
    shifted.push_back(attributes.getParamAttrs(i));
  return llvm::AttributeList::get(context, attributes.getFnAttrs(), attributes.getRetAttrs(),
                                  shifted);
}

/// Gives the thread back to the kernel code the optimizer took it from:
/// each such function becomes one with the thread in front, and each call
/// of it passes its caller's. Only internal functions lose parameters, so
/// every call is in the module, and every caller takes the thread (or gets
/// it back here).
void restoreThreadParameters(llvm::Module &module) {
  std::vector<llvm::Function *> lost;
  for (llvm::Function &function : module)
    if (!function.isDeclaration() && tookThread(function) && !takesThread(function))
      lost.push_back(&function);
  if (lost.empty())
    return;
  llvm::LLVMContext &context = module.getContext();
  llvm::Type *pointer = llvm::PointerType::get(context, 0);
  std::vector<std::pair<llvm::Function *, llvm::Function *>> restored;
  for (llvm::Function *function : lost) {
    llvm::FunctionType *type = function->getFunctionType();
    std::vector<llvm::Type *> parameters{pointer};
    parameters.insert(parameters.end(), type->param_begin(), type->param_end());
    llvm::Function *replacement =
        llvm::Function::Create(llvm::FunctionType::get(type->getReturnType(), parameters, false),
                               function->getLinkage(), function->getAddressSpace(), "", &module);
    replacement->copyAttributesFrom(function);
    replacement->setAttributes(withFirstParameter(context, function->getAttributes(),
                                                  type->getNumParams(), llvm::AttributeSet()));
    replacement->copyMetadata(function, 0);
    replacement->takeName(function);
    markTakesThread(*replacement);
    replacement->splice(replacement->end(), function);
    for (unsigned i = 0; i < type->getNumParams(); ++i) {
      replacement->getArg(i + 1)->takeName(function->getArg(i));
      function->getArg(i)->replaceAllUsesWith(replacement->getArg(i + 1));
    }
    restored.emplace_back(function, replacement);
  }
  for (auto [function, replacement] : restored) {
    for (llvm::Use &use : llvm::make_early_inc_range(function->uses())) {
      auto *call = llvm::cast<llvm::CallInst>(use.getUser());
      llvm::Function *caller = call->getFunction();
      assert(takesThread(*caller) && "kernel code is called only by kernel code");
      std::vector<llvm::Value *> arguments{caller->getArg(0)};
      arguments.insert(arguments.end(), call->arg_begin(), call->arg_end());
      auto *passing = llvm::CallInst::Create(replacement, arguments, "", call->getIterator());
      passing->setAttributes(withFirstParameter(context, call->getAttributes(), call->arg_size(),
                                                llvm::AttributeSet()));
      passing->setCallingConv(call->getCallingConv());
      passing->setTailCallKind(call->getTailCallKind());
      passing->copyMetadata(*call);
      passing->takeName(call);
      call->replaceAllUsesWith(passing);
      call->eraseFromParent();
    }
    function->eraseFromParent();
  }
}

} // namespace

void markThreadLoop(llvm::BranchInst &latch) {
  llvm::LLVMContext &context = latch.getContext();
  llvm::MDNode *property =
      llvm::MDNode::get(context, llvm::MDString::get(context, threadLoopProperty));
  // Post-transformation metadata: every copy the optimizer makes of the
  // loop (split at range checks, vectorized, unswitched) keeps it.
  latch.setMetadata(llvm::LLVMContext::MD_loop,
                    llvm::makePostTransformationMetadata(context, nullptr, {}, {property}));
}

void insertInterruptPolls(llvm::Function &function) {
  for (llvm::BasicBlock *latch : latchesToPoll(function))
    pollAt(*latch, function.getArg(0));
}

void insertInterruptPolls(llvm::Module &module) {
  restoreThreadParameters(module);
  for (llvm::Function &function : module)
    if (!function.isDeclaration() && takesThread(function))
      insertInterruptPolls(function);
}

} // namespace kiln::backend
