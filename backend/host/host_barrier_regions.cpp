//===- backend/host/host_barrier_regions.cpp - Barriers as coroutines ----------===//

#include "backend/host/host_barrier_regions.h"

#include "backend/host/host_target.h"
#include "module/cpu_kernel_abi.h"

#include <llvm/IR/InstIterator.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>
#include <llvm/Transforms/Utils/CallPromotionUtils.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <cstddef>

namespace kiln::backend {

static constexpr llvm::StringLiteral barrierMarker = "kiln.barrier";
/// On a round function: the names of the coroutines whose threads it resumes.
static constexpr llvm::StringLiteral roundMarker = "kiln.regions.round";

void markBarrier(llvm::CallInst &call, uint32_t mode) {
  llvm::LLVMContext &context = call.getContext();
  call.setMetadata(barrierMarker,
                   llvm::MDNode::get(context, llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(
                                                  llvm::Type::getInt32Ty(context), mode))));
}

std::optional<uint32_t> barrierModeOf(const llvm::CallInst &call) {
  const llvm::MDNode *node = call.getMetadata(barrierMarker);
  if (!node)
    return std::nullopt;
  return static_cast<uint32_t>(
      llvm::mdconst::extract<llvm::ConstantInt>(node->getOperand(0))->getZExtValue());
}

llvm::Function *makeBarrierRegions(llvm::Function &body, bool reduces) {
  llvm::Module &module = *body.getParent();
  llvm::LLVMContext &context = module.getContext();
  llvm::Type *pointer = llvm::PointerType::get(context, 0);
  auto *type = llvm::FunctionType::get(pointer, body.getFunctionType()->params(), false);
  llvm::Function *regions = llvm::Function::Create(type, llvm::GlobalValue::InternalLinkage,
                                                   body.getName() + ".regions", module);
  llvm::ValueToValueMapTy map;
  llvm::Function::arg_iterator argument = regions->arg_begin();
  for (llvm::Argument &from : body.args())
    map[&from] = &*argument++;
  llvm::SmallVector<llvm::ReturnInst *, 4> returns;
  llvm::CloneFunctionInto(regions, &body, map, llvm::CloneFunctionChangeType::GlobalChanges,
                          returns);
  regions->setLinkage(llvm::GlobalValue::InternalLinkage);
  // The engine resumes the coroutine through its handle, never inlines it.
  regions->removeFnAttr(llvm::Attribute::AlwaysInline);
  if (!inlineAllCalls(*regions)) {
    regions->eraseFromParent();
    return nullptr;
  }

  // Where the code ends a thread (after an index error, which the engine
  // records and returns from here), the coroutine goes to its end.
  std::vector<llvm::UnreachableInst *> ends;
  for (llvm::Instruction &instruction : llvm::instructions(*regions))
    if (auto *unreachable = llvm::dyn_cast<llvm::UnreachableInst>(&instruction))
      ends.push_back(unreachable);

  // Entry: the frame, from the engine, then the original code.
  llvm::Value *thread = regions->getArg(0);
  llvm::BasicBlock &entry = regions->getEntryBlock();
  llvm::BasicBlock::iterator start = entry.begin();
  while (llvm::isa<llvm::AllocaInst>(*start))
    ++start;
  llvm::IRBuilder<> builder(&entry, start);
  llvm::Value *id = builder.CreateIntrinsic(
      llvm::Intrinsic::coro_id, {},
      {builder.getInt32(0), llvm::ConstantPointerNull::get(llvm::PointerType::get(context, 0)),
       llvm::ConstantPointerNull::get(llvm::PointerType::get(context, 0)),
       llvm::ConstantPointerNull::get(llvm::PointerType::get(context, 0))});
  llvm::Value *size =
      builder.CreateIntrinsic(llvm::Intrinsic::coro_size, {builder.getInt64Ty()}, {});
  llvm::Value *alignment =
      builder.CreateIntrinsic(llvm::Intrinsic::coro_align, {builder.getInt64Ty()}, {});
  // The frame goes where the engine set memory aside, when it fits.
  llvm::Value *slot = builder.CreateAlignedLoad(
      pointer, threadFieldAddress(builder, thread, offsetof(KilnCpuThread, frame)), llvm::Align(8));
  llvm::Value *slotBytes = builder.CreateAlignedLoad(
      builder.getInt64Ty(),
      threadFieldAddress(builder, thread, offsetof(KilnCpuThread, frameBytes)), llvm::Align(8));
  llvm::Value *fits = builder.CreateAnd(builder.CreateICmpULE(size, slotBytes),
                                        builder.CreateICmpULE(alignment, builder.getInt64(64)));
  llvm::BasicBlock *head = builder.GetInsertBlock();
  llvm::Instruction *asks =
      llvm::SplitBlockAndInsertIfElse(fits, builder.GetInsertPoint(), /*Unreachable=*/false,
                                      llvm::MDBuilder(context).createLikelyBranchWeights());
  llvm::BasicBlock *asked = asks->getParent();
  llvm::BasicBlock *begins = asked->getSingleSuccessor();
  builder.SetInsertPoint(asks);
  llvm::Value *allocated = callHostService(
      builder, thread, offsetof(KilnCpuServices, allocateFrame), pointer, {size, alignment});
  builder.SetInsertPoint(begins, begins->getFirstInsertionPt());
  llvm::PHINode *frame = builder.CreatePHI(pointer, 2, "frame");
  frame->addIncoming(slot, head);
  frame->addIncoming(allocated, asked);
  llvm::Value *handle = builder.CreateIntrinsic(llvm::Intrinsic::coro_begin, {}, {id, frame});

  // Where every suspension returns to the engine, and the way down after
  // the end (never taken: the engine does not destroy coroutines).
  llvm::BasicBlock *suspended = llvm::BasicBlock::Create(context, "suspended", regions);
  builder.SetInsertPoint(suspended);
  builder.CreateIntrinsic(llvm::Intrinsic::coro_end, {},
                          {handle, builder.getFalse(), llvm::ConstantTokenNone::get(context)});
  builder.CreateRet(handle);
  llvm::BasicBlock *cleanup = llvm::BasicBlock::Create(context, "cleanup", regions);
  llvm::BranchInst::Create(suspended, cleanup);
  llvm::BasicBlock *never = llvm::BasicBlock::Create(context, "resumed.after.end", regions);
  new llvm::UnreachableInst(context, never);

  auto suspend = [&](llvm::IRBuilder<> &at, llvm::Value *save, bool final,
                     llvm::BasicBlock *resumed) {
    llvm::Value *outcome =
        at.CreateIntrinsic(llvm::Intrinsic::coro_suspend, {}, {save, at.getInt1(final)});
    llvm::SwitchInst *branch = at.CreateSwitch(outcome, suspended, 2);
    branch->addCase(at.getInt8(0), resumed);
    branch->addCase(at.getInt8(1), cleanup);
  };

  // The end: a final suspension, after which the handle reads as done.
  llvm::BasicBlock *end = llvm::BasicBlock::Create(context, "end", regions);
  builder.SetInsertPoint(end);
  suspend(builder, llvm::ConstantTokenNone::get(context), true, never);
  for (llvm::ReturnInst *ret : returns) {
    llvm::BranchInst::Create(end, ret);
    ret->eraseFromParent();
  }
  for (llvm::UnreachableInst *unreachable : ends) {
    llvm::BranchInst::Create(end, unreachable);
    unreachable->eraseFromParent();
  }

  // Each barrier: its mode and predicate into the thread, a suspension, and
  // on resumption the result the engine left there.
  std::vector<llvm::CallInst *> barriers;
  for (llvm::Instruction &instruction : llvm::instructions(*regions))
    if (auto *call = llvm::dyn_cast<llvm::CallInst>(&instruction);
        call && call->getMetadata(barrierMarker))
      barriers.push_back(call);
  for (llvm::CallInst *call : barriers) {
    uint32_t mode = *barrierModeOf(*call);
    llvm::IRBuilder<> at(call);
    // The engine reads them only in kernels with reducing barriers.
    if (reduces) {
      llvm::Value *predicate = mode == KILN_BARRIER_SYNC
                                   ? at.getInt32(0)
                                   : at.CreateZExtOrTrunc(call->getArgOperand(2), at.getInt32Ty());
      at.CreateAlignedStore(at.getInt32(mode),
                            threadFieldAddress(at, thread, offsetof(KilnCpuThread, barrierMode)),
                            llvm::Align(4));
      at.CreateAlignedStore(predicate,
                            threadFieldAddress(at, thread, offsetof(KilnCpuThread, barrierValue)),
                            llvm::Align(4));
    }
    llvm::Value *save = at.CreateIntrinsic(llvm::Intrinsic::coro_save, {}, {handle});
    llvm::BasicBlock *before = call->getParent();
    llvm::BasicBlock *resumed = before->splitBasicBlock(call, "resumed");
    before->getTerminator()->eraseFromParent();
    llvm::IRBuilder<> tail(before);
    suspend(tail, save, false, resumed);
    if (!call->getType()->isVoidTy()) {
      llvm::IRBuilder<> after(call);
      llvm::Value *result = after.CreateAlignedLoad(
          after.getInt32Ty(),
          threadFieldAddress(after, thread, offsetof(KilnCpuThread, barrierValue)), llvm::Align(4));
      call->replaceAllUsesWith(after.CreateZExtOrTrunc(result, call->getType()));
    }
    call->eraseFromParent();
  }
  regions->addFnAttr(llvm::Attribute::PresplitCoroutine);
  return regions;
}

llvm::Function *makeRegionRound(llvm::Module &module, llvm::StringRef name,
                                llvm::ArrayRef<llvm::Function *> coroutines) {
  llvm::LLVMContext &context = module.getContext();
  llvm::Type *pointer = llvm::PointerType::get(context, 0);
  llvm::Type *i32 = llvm::Type::getInt32Ty(context);
  auto *type = llvm::FunctionType::get(i32, {pointer, pointer, i32, pointer}, false);
  llvm::Function *round =
      llvm::Function::Create(type, llvm::GlobalValue::InternalLinkage, name, module);
  round->addFnAttr(llvm::Attribute::NoUnwind);
  llvm::SmallVector<llvm::Metadata *, 2> names;
  for (llvm::Function *coroutine : coroutines)
    if (coroutine)
      names.push_back(llvm::MDString::get(context, coroutine->getName()));
  round->setMetadata(roundMarker, llvm::MDNode::get(context, names));

  llvm::Value *handles = round->getArg(0), *order = round->getArg(1);
  llvm::Value *count = round->getArg(2), *waiting = round->getArg(3);
  llvm::BasicBlock *entry = llvm::BasicBlock::Create(context, "entry", round);
  llvm::BasicBlock *loop = llvm::BasicBlock::Create(context, "thread", round);
  llvm::BasicBlock *waits = llvm::BasicBlock::Create(context, "waits", round);
  llvm::BasicBlock *next = llvm::BasicBlock::Create(context, "next", round);
  llvm::BasicBlock *done = llvm::BasicBlock::Create(context, "done", round);
  llvm::IRBuilder<> builder(entry);
  builder.CreateCondBr(builder.CreateICmpEQ(count, builder.getInt32(0)), done, loop);

  builder.SetInsertPoint(loop);
  llvm::PHINode *position = builder.CreatePHI(i32, 2, "position");
  llvm::PHINode *waited = builder.CreatePHI(i32, 2, "waited");
  position->addIncoming(builder.getInt32(0), entry);
  waited->addIncoming(builder.getInt32(0), entry);
  llvm::Value *id = builder.CreateAlignedLoad(
      i32,
      builder.CreateInBoundsGEP(i32, order, builder.CreateZExt(position, builder.getInt64Ty())),
      llvm::Align(4), "id");
  llvm::Value *idWide = builder.CreateZExt(id, builder.getInt64Ty());
  llvm::Value *handle = builder.CreateAlignedLoad(
      pointer, builder.CreateInBoundsGEP(pointer, handles, idWide), llvm::Align(8), "handle");
  builder.CreateIntrinsic(llvm::Intrinsic::coro_resume, {}, {handle});
  builder.CreateCondBr(regionsDone(builder, handle), next, waits);

  builder.SetInsertPoint(waits);
  builder.CreateAlignedStore(
      id, builder.CreateInBoundsGEP(i32, waiting, builder.CreateZExt(waited, builder.getInt64Ty())),
      llvm::Align(4));
  llvm::Value *oneMore = builder.CreateNUWAdd(waited, builder.getInt32(1));
  builder.CreateBr(next);

  builder.SetInsertPoint(next);
  llvm::PHINode *nowWaiting = builder.CreatePHI(i32, 2, "waiting");
  nowWaiting->addIncoming(waited, loop);
  nowWaiting->addIncoming(oneMore, waits);
  llvm::Value *following = builder.CreateNUWAdd(position, builder.getInt32(1));
  position->addIncoming(following, next);
  waited->addIncoming(nowWaiting, next);
  builder.CreateCondBr(builder.CreateICmpEQ(following, count), done, loop);

  builder.SetInsertPoint(done);
  llvm::PHINode *result = builder.CreatePHI(i32, 2, "result");
  result->addIncoming(builder.getInt32(0), entry);
  result->addIncoming(nowWaiting, next);
  builder.CreateRet(result);
  return round;
}

void finishRegionRounds(llvm::Module &module) {
  for (llvm::Function &round : module) {
    const llvm::MDNode *names = round.getMetadata(roundMarker);
    if (!names)
      continue;
    // Each resumption is a call through the handle's first word, which
    // holds one of the coroutines' resume functions while the thread waits.
    std::vector<llvm::CallBase *> resumptions;
    for (llvm::Instruction &instruction : llvm::instructions(round))
      if (auto *call = llvm::dyn_cast<llvm::CallBase>(&instruction); call && call->isIndirectCall())
        resumptions.push_back(call);
    for (llvm::CallBase *resumption : resumptions) {
      llvm::SmallVector<llvm::CallBase *, 2> direct;
      for (const llvm::MDOperand &name : names->operands()) {
        llvm::Function *resume = module.getFunction(
            (llvm::cast<llvm::MDString>(name.get())->getString() + ".resume").str());
        if (!resume || !llvm::isLegalToPromote(*resumption, resume))
          continue;
        direct.push_back(&llvm::promoteCallWithIfThenElse(
            *resumption, resume, llvm::MDBuilder(module.getContext()).createLikelyBranchWeights()));
      }
      for (llvm::CallBase *call : direct) {
        llvm::InlineFunctionInfo info;
        // Where LLVM cannot inline it, the call stays direct.
        (void)llvm::InlineFunction(*call, info);
      }
    }
    round.setMetadata(roundMarker, nullptr);
  }
}

llvm::Value *regionsDone(llvm::IRBuilder<> &builder, llvm::Value *handle) {
  return builder.CreateIntrinsic(llvm::Intrinsic::coro_done, {}, {handle});
}

} // namespace kiln::backend
