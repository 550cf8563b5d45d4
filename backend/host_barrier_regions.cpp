//===- backend/host_barrier_regions.cpp - Barriers as coroutines ----------===//

#include "backend/host_barrier_regions.h"

#include "backend/host_target.h"
#include "module/cpu_kernel_abi.h"

#include <llvm/IR/InstIterator.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <cstddef>

namespace kiln::backend {

static constexpr llvm::StringLiteral barrierMarker = "kiln.barrier";

void markBarrier(llvm::CallInst &call, uint32_t mode) {
  llvm::LLVMContext &context = call.getContext();
  call.setMetadata(barrierMarker,
                   llvm::MDNode::get(context, llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(
                                                  llvm::Type::getInt32Ty(context), mode))));
}

static uint32_t barrierMode(const llvm::CallInst &call) {
  const llvm::MDNode *node = call.getMetadata(barrierMarker);
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
  llvm::Value *frame = callHostService(builder, thread, offsetof(KilnCpuServices, allocateFrame),
                                       pointer, {size, alignment});
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
    uint32_t mode = barrierMode(*call);
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

bool suspendsIn(const llvm::Loop &loop) {
  for (const llvm::BasicBlock *block : loop.blocks())
    for (const llvm::Instruction &instruction : *block)
      if (const auto *call = llvm::dyn_cast<llvm::IntrinsicInst>(&instruction);
          call && call->getIntrinsicID() == llvm::Intrinsic::coro_suspend)
        return true;
  return false;
}

llvm::Value *regionsDone(llvm::IRBuilder<> &builder, llvm::Value *handle) {
  return builder.CreateIntrinsic(llvm::Intrinsic::coro_done, {}, {handle});
}

} // namespace kiln::backend
