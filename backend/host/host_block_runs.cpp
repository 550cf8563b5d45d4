//===- backend/host/host_block_runs.cpp - Runs of blocks as one loop nest ------===//

#include "backend/host/host_block_runs.h"

#include "backend/codegen/optimize.h"
#include "backend/host/host_interrupt_polls.h"
#include "backend/host/host_target.h"
#include "module/cpu_kernel_abi.h"

#include <llvm/IR/ConstantRange.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/PatternMatch.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/Local.h>

#include <cstddef>
#include <utility>
#include <vector>

namespace kiln::backend {

namespace {

// The run body's parameters, after the thread.
constexpr unsigned threadXArgument = 1;
constexpr unsigned threadYArgument = 2;
constexpr unsigned threadZArgument = 3;
constexpr unsigned laneArgument = 4;
constexpr unsigned blockXArgument = 5;
constexpr unsigned globalXArgument = 6;
constexpr unsigned firstParameter = 7;
// The loop body's (specializeForThreadLoop): thread, the three thread
// indices and laneId, then the kernel's parameters.
constexpr unsigned loopBodyFirstParameter = 5;

/// Whether the kernel's blocks may run interleaved: nothing in it depends
/// on the order of threads of different blocks but what the kernel's own
/// global memory accesses do, which CUDA leaves unordered too.
bool blocksAreIndependent(llvm::Function &loopBody) {
  const llvm::Value *thread = loopBody.getArg(0);
  for (const llvm::Instruction &instruction : llvm::instructions(loopBody)) {
    if (instruction.isAtomic() || instruction.isVolatile())
      return false;
    const auto *call = llvm::dyn_cast<llvm::CallInst>(&instruction);
    if (!call || !llvm::is_contained(call->args(), thread))
      continue;
    std::optional<size_t> service = serviceOffsetOf(*call);
    if (!service || *service != offsetof(KilnCpuServices, raiseIndexError))
      return false;
  }
  return true;
}

/// Whether `access` (a load or a store) reads or writes the field at
/// `offset` of `thread`.
bool accessesThreadField(const llvm::Instruction &access, const llvm::Value *thread,
                         size_t offset) {
  const llvm::Value *pointer = llvm::getLoadStorePointerOperand(&access);
  if (!pointer)
    return false;
  const llvm::DataLayout &layout = access.getModule()->getDataLayout();
  llvm::APInt fieldOffset(layout.getIndexTypeSizeInBits(pointer->getType()), 0);
  const llvm::Value *base = pointer->stripAndAccumulateConstantOffsets(layout, fieldOffset, false);
  return base == thread && fieldOffset == offset;
}

/// Whether `value` is a load of the field at `offset` of `thread`.
bool loadsThreadField(const llvm::Value *value, const llvm::Value *thread, size_t offset) {
  const auto *load = llvm::dyn_cast<llvm::LoadInst>(value);
  return load && accessesThreadField(*load, thread, offset);
}

/// Replaces blockIdx.x * blockDim.x + threadIdx.x, in 64 bits as cuda.grid
/// and Numba's integer arithmetic compute it, by the global x index: the
/// run's loop counts it, where the optimizer cannot see through the
/// division that gives blockIdx.x.
void foldGlobalX(llvm::Function &run) {
  using namespace llvm::PatternMatch;
  llvm::Value *thread = run.getArg(0);
  llvm::Value *globalX = run.getArg(globalXArgument);
  std::vector<llvm::Instruction *> sums;
  for (llvm::Instruction &instruction : llvm::instructions(run))
    if (instruction.getOpcode() == llvm::Instruction::Add &&
        instruction.getType() == globalX->getType())
      sums.push_back(&instruction);
  for (llvm::Instruction *sum : sums) {
    llvm::Value *first, *second, *threadX;
    if (!match(sum, m_c_Add(m_c_Mul(m_ZExtOrSExt(m_Value(first)), m_ZExtOrSExt(m_Value(second))),
                            m_ZExtOrSExt(m_Value(threadX)))))
      continue;
    if (second == run.getArg(blockXArgument))
      std::swap(first, second);
    if (threadX != run.getArg(threadXArgument) || first != run.getArg(blockXArgument) ||
        !loadsThreadField(second, thread, offsetof(KilnCpuThread, blockDim)))
      continue;
    sum->replaceAllUsesWith(globalX);
    llvm::RecursivelyDeleteTriviallyDeadInstructions(sum);
  }
}

/// The stores of the loop's indices into the thread before a service call
/// that a run does not make: the engine derives threadIdx.x and blockIdx.x
/// from the global x index, which the run stores instead. Only stores into
/// those fields of the thread go: the kernel's own stores of the same
/// values (`a[i] = cuda.threadIdx.x` into an int32 array) stay.
void storeGlobalXForServices(llvm::Function &run) {
  const llvm::Value *thread = run.getArg(0);
  for (auto [index, offset] : {std::pair{threadXArgument, offsetof(KilnCpuThread, threadIdx)},
                               std::pair{laneArgument, offsetof(KilnCpuThread, laneId)}})
    for (llvm::User *user : llvm::make_early_inc_range(run.getArg(index)->users()))
      if (auto *store = llvm::dyn_cast<llvm::StoreInst>(user);
          store && store->getValueOperand() == run.getArg(index) &&
          accessesThreadField(*store, thread, offset))
        store->eraseFromParent();
  for (llvm::Instruction &instruction : llvm::instructions(run))
    if (auto *call = llvm::dyn_cast<llvm::CallInst>(&instruction); call && serviceOffsetOf(*call)) {
      llvm::IRBuilder<> at(call);
      at.CreateAlignedStore(
          run.getArg(globalXArgument),
          threadFieldAddress(at, run.getArg(0), offsetof(KilnCpuThread, runGlobalX)),
          llvm::Align(8));
    }
}

/// Emits `for (i = start; i < end; ++i) emitBody(i)` for start < end: a
/// loop over the run's threads, which the launch limits and
/// KILN_CPU_MAX_BLOCK_RUN bound (so that it needs no interrupt polls).
void emitThreadLoop(llvm::IRBuilder<> &builder, llvm::Value *start, llvm::Value *end,
                    llvm::function_ref<void(llvm::Value *)> emitBody) {
  llvm::Function *entry = builder.GetInsertBlock()->getParent();
  llvm::LLVMContext &context = builder.getContext();
  llvm::BasicBlock *before = builder.GetInsertBlock();
  llvm::BasicBlock *header = llvm::BasicBlock::Create(context, "run.loop", entry);
  builder.CreateBr(header);
  builder.SetInsertPoint(header);
  llvm::PHINode *index = builder.CreatePHI(start->getType(), 2);
  index->addIncoming(start, before);
  emitBody(index);
  // At most `end`, which the launch limits keep far from wrapping.
  llvm::Value *next =
      builder.CreateAdd(index, llvm::ConstantInt::get(start->getType(), 1), "", true, true);
  index->addIncoming(next, builder.GetInsertBlock());
  llvm::BasicBlock *exit = llvm::BasicBlock::Create(context, "run.next", entry);
  markThreadLoop(*builder.CreateCondBr(builder.CreateICmpULT(next, end), header, exit));
  builder.SetInsertPoint(exit);
}

} // namespace

std::optional<BlockRunBody> makeBlockRunBody(llvm::Function &loopBody) {
  if (!blocksAreIndependent(loopBody))
    return std::nullopt;
  llvm::Module &module = *loopBody.getParent();
  llvm::LLVMContext &context = module.getContext();
  llvm::Type *i32 = llvm::Type::getInt32Ty(context);
  llvm::FunctionType *loopType = loopBody.getFunctionType();
  std::vector<llvm::Type *> parameters{loopType->getParamType(0),      i32, i32, i32, i32, i32,
                                       llvm::Type::getInt64Ty(context)};
  for (unsigned i = loopBodyFirstParameter; i < loopBody.arg_size(); ++i)
    parameters.push_back(loopType->getParamType(i));
  llvm::Function *run = llvm::Function::Create(
      llvm::FunctionType::get(loopType->getReturnType(), parameters, false),
      llvm::GlobalValue::InternalLinkage, loopBody.getName() + ".run", module);
  llvm::ValueToValueMapTy map;
  for (unsigned i = 0; i < loopBodyFirstParameter; ++i)
    map[loopBody.getArg(i)] = run->getArg(i);
  for (unsigned i = loopBodyFirstParameter; i < loopBody.arg_size(); ++i)
    map[loopBody.getArg(i)] = run->getArg(i - loopBodyFirstParameter + firstParameter);
  llvm::SmallVector<llvm::ReturnInst *, 4> returns;
  llvm::CloneFunctionInto(run, &loopBody, map, llvm::CloneFunctionChangeType::GlobalChanges,
                          returns);

  // The optimizer simplifies the body before it inlines it into the loop
  // nest: what it may assume of the indices rides on the parameters.
  auto setRange = [&](unsigned argument, uint64_t highest) {
    unsigned bits = parameters[argument]->getIntegerBitWidth();
    run->addParamAttr(argument,
                      llvm::Attribute::get(context, llvm::Attribute::Range,
                                           llvm::ConstantRange(llvm::APInt(bits, 0),
                                                               llvm::APInt(bits, highest + 1))));
  };
  setRange(threadXArgument, KILN_CPU_MAX_BLOCK_DIM_X - 1);
  setRange(threadYArgument, KILN_CPU_MAX_BLOCK_DIM_Y - 1);
  setRange(threadZArgument, KILN_CPU_MAX_BLOCK_DIM_Z - 1);
  setRange(laneArgument, KILN_CPU_WARP_SIZE - 1);
  setRange(blockXArgument, KILN_CPU_MAX_GRID_DIM_X - 1);
  setRange(globalXArgument, uint64_t(KILN_CPU_MAX_GRID_DIM_X) * KILN_CPU_MAX_BLOCK_DIM_X - 1);
  // Never poison (the loop nest passes poison only for the indices a body
  // that takes the global x index alone does not use): the optimizer need
  // not freeze the global index where the body uses it twice, which would
  // hide from the loop's range check splitting that it is the loop's own.
  for (unsigned argument : {threadYArgument, threadZArgument, globalXArgument})
    run->addParamAttr(argument, llvm::Attribute::NoUndef);

  llvm::Argument *blockX = run->getArg(blockXArgument);
  std::vector<llvm::Instruction *> reads;
  for (llvm::Instruction &instruction : llvm::instructions(*run))
    if (auto *load = llvm::dyn_cast<llvm::LoadInst>(&instruction); load && readsBlockIndexX(*load))
      reads.push_back(load);
  for (llvm::Instruction *read : reads) {
    read->replaceAllUsesWith(blockX);
    read->eraseFromParent();
  }
  // Its only service is the index error's, which other threads take no part
  // in: the optimizer may duplicate it (unswitch the loop around it).
  run->removeFnAttr(llvm::Attribute::Convergent);
  for (llvm::Instruction &instruction : llvm::instructions(*run))
    if (auto *call = llvm::dyn_cast<llvm::CallInst>(&instruction))
      call->removeFnAttr(llvm::Attribute::Convergent);
  promoteVariables(*run);
  foldGlobalX(*run);
  storeGlobalXForServices(*run);
  return BlockRunBody{run, run->getArg(threadXArgument)->use_empty() &&
                               run->getArg(laneArgument)->use_empty() && blockX->use_empty()};
}

void emitBlockRunLoops(llvm::IRBuilder<> &builder, llvm::Value *thread, const BlockRunBody &body,
                       llvm::ArrayRef<llvm::Value *> parameters) {
  llvm::Type *i32 = builder.getInt32Ty();
  llvm::Type *i64 = builder.getInt64Ty();
  using I = ir::Intrinsic;
  llvm::LoadInst *length = builder.CreateAlignedLoad(
      i32, threadFieldAddress(builder, thread, offsetof(KilnCpuThread, blockRunLimit)),
      llvm::Align(4));
  length->setMetadata(
      llvm::LLVMContext::MD_range,
      llvm::MDBuilder(builder.getContext())
          .createRange(llvm::APInt(32, 1), llvm::APInt(32, uint64_t(KILN_CPU_MAX_BLOCK_RUN) + 1)));
  builder.CreateAlignedStore(
      length, threadFieldAddress(builder, thread, offsetof(KilnCpuThread, blockRunLength)),
      llvm::Align(4));
  llvm::Value *firstBlockX = loadLaunchIndex(builder, thread, I::BlockIdx, 0);
  llvm::Value *firstY = loadLaunchIndex(builder, thread, I::ThreadIdx, 1);
  llvm::Value *firstZ = loadLaunchIndex(builder, thread, I::ThreadIdx, 2);
  llvm::Value *dims[3];
  for (unsigned d = 0; d < 3; ++d)
    dims[d] = loadLaunchIndex(builder, thread, I::BlockDim, d);
  llvm::Value *width = builder.CreateZExt(dims[0], i64);
  llvm::Value *runStart =
      builder.CreateMul(builder.CreateZExt(firstBlockX, i64), width, "", true, true);
  llvm::Value *runWidth = builder.CreateMul(builder.CreateZExt(length, i64), width, "", true, true);
  llvm::PoisonValue *none = llvm::PoisonValue::get(i32);

  auto call = [&](llvm::Value *threadX, llvm::Value *y, llvm::Value *z, llvm::Value *lane,
                  llvm::Value *blockX, llvm::Value *globalX) {
    std::vector<llvm::Value *> arguments{thread, threadX, y, z, lane, blockX, globalX};
    arguments.insert(arguments.end(), parameters.begin(), parameters.end());
    builder.CreateCall(body.function, arguments);
  };
  emitThreadLoop(builder, firstZ, dims[2], [&](llvm::Value *z) {
    // Rows from (firstY, firstZ) on: the engine finishes a block there.
    llvm::Value *startY =
        builder.CreateSelect(builder.CreateICmpEQ(z, firstZ), firstY, builder.getInt32(0));
    emitThreadLoop(builder, startY, dims[1], [&](llvm::Value *y) {
      if (body.globalXOnly) {
        emitThreadLoop(builder, builder.getInt64(0), runWidth, [&](llvm::Value *x) {
          call(none, y, z, none, none, builder.CreateAdd(runStart, x, "", true, true));
        });
        return;
      }
      llvm::Value *rowStart =
          builder.CreateMul(dims[0], builder.CreateAdd(y, builder.CreateMul(dims[1], z)));
      emitThreadLoop(builder, builder.getInt32(0), length, [&](llvm::Value *block) {
        llvm::Value *blockX = builder.CreateAdd(firstBlockX, block, "", true, true);
        llvm::Value *blockStart =
            builder.CreateMul(builder.CreateZExt(blockX, i64), width, "", true, true);
        emitThreadLoop(builder, builder.getInt32(0), dims[0], [&](llvm::Value *threadX) {
          llvm::Value *lane = builder.CreateAnd(builder.CreateAdd(threadX, rowStart),
                                                builder.getInt32(KILN_CPU_WARP_SIZE - 1));
          call(threadX, y, z, lane, blockX,
               builder.CreateAdd(blockStart, builder.CreateZExt(threadX, i64), "", true, true));
        });
      });
    });
  });
}

} // namespace kiln::backend
