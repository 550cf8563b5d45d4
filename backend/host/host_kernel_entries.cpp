//===- backend/host/host_kernel_entries.cpp - A kernel's host entry points -===//
//
// The `_thread` entry, and the `_block` entry in its three forms: a loop
// nest over the block's threads (or over a run of blocks), region loops,
// barrier regions.
//
//===----------------------------------------------------------------------===//

#include "backend/host/host_kernel_entries.h"

#include "backend/host/host_barrier_regions.h"
#include "backend/host/host_block_runs.h"
#include "backend/host/host_interrupt_polls.h"
#include "backend/host/host_region_loops.h"
#include "backend/host/host_target.h"
#include "module/cpu_kernel_abi.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace kiln::backend {

using I = ir::Intrinsic;

namespace {

/// Writes the entry points of one kernel into its module.
class KernelEntryWriter {
public:
  KernelEntryWriter(llvm::Function &kernel, llvm::Function *uncheckedKernel,
                    llvm::ArrayRef<KernelParameter> parameters, std::string name,
                    bool checksByDefault)
      : kernel(kernel), uncheckedKernel(uncheckedKernel), parameters(parameters),
        name(std::move(name)), checksByDefault(checksByDefault), module(*kernel.getParent()),
        context(module.getContext()), pointer(llvm::PointerType::get(context, 0)),
        entryType(
            llvm::FunctionType::get(llvm::Type::getVoidTy(context), {pointer, pointer}, false)) {}

  /// The `_thread` entry: one thread.
  llvm::Function &writeThreadEntry();
  /// The `_block` entry of a kernel whose threads wait at block barriers,
  /// as region loops; false, writing nothing, when the kernel does not fit
  /// them.
  bool writeRegionLoopsEntry();
  /// The `_block` entry of a kernel whose threads wait at block barriers,
  /// as barrier regions the engine runs; none when the kernel's barriers
  /// cannot be made regions.
  void writeBarrierRegionsEntry(bool reducesAtBarriers);
  /// The `_block` entry of a kernel whose threads never wait for each
  /// other: a loop nest over the block's threads, one after the other, x
  /// fastest, with laneId the position in the warp of the linear thread
  /// index; or the loops over a run of blocks.
  void writeThreadLoopEntry();

private:
  /// The loop bodies of the kernel's bodies for the thread loop entry.
  struct ThreadLoopBodies {
    /// A body's loop body (see specializeForThreadLoop), if it has one.
    llvm::DenseMap<llvm::Function *, llvm::Function *> loops;
    /// A body's run body (see host_block_runs.h), if its blocks are
    /// independent.
    llvm::DenseMap<llvm::Function *, BlockRunBody> runs;
  };

  /// The thread and the parameters, unpacked from `args`: one pointer per
  /// flat parameter.
  std::vector<llvm::Value *> unpackParameters(llvm::IRBuilder<> &builder, llvm::Function &entry);
  /// Whether the launch runs the checked copy: the kernel's boundscheck=
  /// unless the engine's flags (the environment) say otherwise.
  llvm::Value *runsChecked(llvm::IRBuilder<> &builder, llvm::Value *thread);
  /// Emits, from the builder's block, code that runs `emit(body)` with the
  /// checked kernel body or the unchecked one, then goes on at `done`.
  void emitForEachBody(llvm::IRBuilder<> &builder, llvm::Function &entry, llvm::BasicBlock *done,
                       llvm::function_ref<void(llvm::Function *)> emit);
  /// An entry point that calls, with the thread and the parameters, the
  /// function `callee` picks for the checked or the unchecked kernel body.
  llvm::Function &writeCallingEntry(const std::string &entryName,
                                    llvm::function_ref<llvm::Function *(llvm::Function *)> callee);
  /// The KilnCpuRegionStart of the block entry: starts a thread's
  /// coroutine, `regions` or `uncheckedRegions`, leaves its handle at
  /// `handle` and returns whether the thread has already ended.
  llvm::Function *writeRegionsStart(llvm::Function *regions, llvm::Function *uncheckedRegions);
  /// The bodies the thread loop entry calls: none at opt=0, which keeps
  /// calls (the loop calls the body as it is); a run body for a kernel
  /// whose blocks are independent, else a loop body.
  ThreadLoopBodies makeThreadLoopBodies();
  /// for z, for y, for x: nested loops over blockDim (`dims`), around a
  /// call of `loopBody` with the thread's indices or, when it is null, of
  /// `body` with the indices stored in the thread. `values`: the thread
  /// and the parameters.
  void emitThreadLoopNest(llvm::IRBuilder<> &builder, llvm::Function *body,
                          llvm::Function *loopBody, llvm::ArrayRef<llvm::Value *> values,
                          llvm::ArrayRef<llvm::Value *> dims);

  llvm::Function &kernel;
  llvm::Function *uncheckedKernel;
  llvm::ArrayRef<KernelParameter> parameters;
  /// The kernel's name, which its entries' names extend.
  std::string name;
  bool checksByDefault;
  llvm::Module &module;
  llvm::LLVMContext &context;
  llvm::Type *pointer;
  /// (thread, args) -> void.
  llvm::FunctionType *entryType;
};

} // namespace

std::vector<llvm::Value *> KernelEntryWriter::unpackParameters(llvm::IRBuilder<> &builder,
                                                               llvm::Function &entry) {
  std::vector<llvm::Value *> values{entry.getArg(0)};
  for (unsigned i = 0; i < parameters.size(); ++i) {
    llvm::Value *slot = builder.CreateConstInBoundsGEP1_64(pointer, entry.getArg(1), i);
    llvm::Value *address = builder.CreateAlignedLoad(pointer, slot, llvm::Align(8));
    llvm::Type *type = kernel.getFunctionType()->getParamType(i + 1);
    values.push_back(
        builder.CreateAlignedLoad(type, address, llvm::Align(parameters[i].alignment)));
  }
  return values;
}

llvm::Value *KernelEntryWriter::runsChecked(llvm::IRBuilder<> &builder, llvm::Value *thread) {
  llvm::Value *flags =
      builder.CreateAlignedLoad(builder.getInt32Ty(),
                                builder.CreateConstInBoundsGEP1_64(builder.getInt8Ty(), thread,
                                                                   offsetof(KilnCpuThread, flags)),
                                llvm::Align(4));
  uint32_t overriding =
      checksByDefault ? KILN_THREAD_SKIP_INDEX_CHECKS : KILN_THREAD_FORCE_INDEX_CHECKS;
  llvm::Value *overridden =
      builder.CreateICmpNE(builder.CreateAnd(flags, overriding), builder.getInt32(0));
  return checksByDefault ? builder.CreateNot(overridden) : overridden;
}

void KernelEntryWriter::emitForEachBody(llvm::IRBuilder<> &builder, llvm::Function &entry,
                                        llvm::BasicBlock *done,
                                        llvm::function_ref<void(llvm::Function *)> emit) {
  if (!uncheckedKernel) {
    emit(&kernel);
    builder.CreateBr(done);
    return;
  }
  llvm::BasicBlock *checked = llvm::BasicBlock::Create(context, "checked", &entry);
  llvm::BasicBlock *unchecked = llvm::BasicBlock::Create(context, "unchecked", &entry);
  builder.CreateCondBr(runsChecked(builder, entry.getArg(0)), checked, unchecked);
  builder.SetInsertPoint(checked);
  emit(&kernel);
  builder.CreateBr(done);
  builder.SetInsertPoint(unchecked);
  emit(uncheckedKernel);
  builder.CreateBr(done);
}

llvm::Function &KernelEntryWriter::writeCallingEntry(
    const std::string &entryName, llvm::function_ref<llvm::Function *(llvm::Function *)> callee) {
  llvm::Function *entry =
      llvm::Function::Create(entryType, llvm::GlobalValue::ExternalLinkage, entryName, module);
  entry->addFnAttr(llvm::Attribute::NoUnwind);
  markTakesThread(*entry);
  llvm::IRBuilder<> builder(llvm::BasicBlock::Create(context, "entry", entry));
  std::vector<llvm::Value *> values = unpackParameters(builder, *entry);
  llvm::BasicBlock *done = llvm::BasicBlock::Create(context, "done", entry);
  emitForEachBody(builder, *entry, done,
                  [&](llvm::Function *body) { builder.CreateCall(callee(body), values); });
  builder.SetInsertPoint(done);
  builder.CreateRetVoid();
  return *entry;
}

llvm::Function &KernelEntryWriter::writeThreadEntry() {
  return writeCallingEntry(threadEntryName(name), [](llvm::Function *body) { return body; });
}

bool KernelEntryWriter::writeRegionLoopsEntry() {
  llvm::DenseMap<llvm::Function *, llvm::Function *> regionLoops;
  bool fitsRegionLoops = true;
  for (llvm::Function *body : {&kernel, uncheckedKernel}) {
    if (!body || !fitsRegionLoops)
      continue;
    // opt=0 keeps calls, which region loops cannot.
    llvm::Function *loopBody =
        body->hasFnAttribute(llvm::Attribute::NoInline) ? nullptr : specializeForThreadLoop(*body);
    llvm::Function *loops = loopBody ? makeRegionLoops(loopBody) : nullptr;
    if (loops)
      regionLoops[body] = loops;
    else
      fitsRegionLoops = false;
  }
  if (!fitsRegionLoops) {
    for (auto &[body, loops] : regionLoops)
      loops->eraseFromParent();
    return false;
  }
  for (auto &[body, loops] : regionLoops) {
    loops->addFnAttr(llvm::Attribute::AlwaysInline);
    markTakesThread(*loops);
  }
  writeCallingEntry(blockEntryName(name),
                    [&](llvm::Function *body) { return regionLoops.lookup(body); });
  return true;
}

llvm::Function *KernelEntryWriter::writeRegionsStart(llvm::Function *regions,
                                                     llvm::Function *uncheckedRegions) {
  llvm::Type *i32 = llvm::Type::getInt32Ty(context);
  auto *startType = llvm::FunctionType::get(i32, {pointer, pointer, pointer}, false);
  llvm::Function *start = llvm::Function::Create(startType, llvm::GlobalValue::InternalLinkage,
                                                 name + "_regions_start", module);
  start->addFnAttr(llvm::Attribute::NoUnwind);
  llvm::IRBuilder<> builder(llvm::BasicBlock::Create(context, "entry", start));
  std::vector<llvm::Value *> values = unpackParameters(builder, *start);
  llvm::BasicBlock *done = llvm::BasicBlock::Create(context, "done", start);
  emitForEachBody(builder, *start, done, [&](llvm::Function *body) {
    llvm::Function *coroutine = body == &kernel ? regions : uncheckedRegions;
    builder.CreateAlignedStore(builder.CreateCall(coroutine, values), start->getArg(2),
                               llvm::Align(8));
  });
  builder.SetInsertPoint(done);
  llvm::Value *handle = builder.CreateAlignedLoad(pointer, start->getArg(2), llvm::Align(8));
  builder.CreateRet(builder.CreateZExt(regionsDone(builder, handle), i32));
  return start;
}

void KernelEntryWriter::writeBarrierRegionsEntry(bool reducesAtBarriers) {
  llvm::Function *regions = makeBarrierRegions(kernel, reducesAtBarriers);
  llvm::Function *uncheckedRegions = uncheckedKernel && regions
                                         ? makeBarrierRegions(*uncheckedKernel, reducesAtBarriers)
                                         : nullptr;
  if (!regions || (uncheckedKernel && !uncheckedRegions)) {
    if (regions)
      regions->eraseFromParent();
    return;
  }
  // Once LLVM has split a coroutine, its parts take the frame, not the
  // thread: their loops poll for interrupts from before the split, those
  // that wait at a barrier too (a barrier in a branch may never wait).
  for (llvm::Function *coroutine : {regions, uncheckedRegions})
    if (coroutine) {
      setLaunchIndexRanges(*coroutine);
      insertInterruptPolls(*coroutine);
      unmarkTakesThread(*coroutine);
    }
  llvm::Function *start = writeRegionsStart(regions, uncheckedRegions);

  llvm::Function *block = llvm::Function::Create(entryType, llvm::GlobalValue::ExternalLinkage,
                                                 blockEntryName(name), module);
  block->addFnAttr(llvm::Attribute::NoUnwind);
  llvm::IRBuilder<> builder(llvm::BasicBlock::Create(context, "entry", block));
  llvm::Function *round =
      makeRegionRound(module, name + "_regions_round", {regions, uncheckedRegions});
  callHostService(builder, block->getArg(0), offsetof(KilnCpuServices, runBarrierRegions),
                  builder.getVoidTy(),
                  {block->getArg(1), start, round,
                   builder.getInt32(reducesAtBarriers ? KILN_REGIONS_REDUCE : 0)});
  builder.CreateRetVoid();
}

KernelEntryWriter::ThreadLoopBodies KernelEntryWriter::makeThreadLoopBodies() {
  ThreadLoopBodies bodies;
  for (llvm::Function *body : {&kernel, uncheckedKernel})
    if (body && !body->hasFnAttribute(llvm::Attribute::NoInline)) {
      body->addFnAttr(llvm::Attribute::AlwaysInline);
      llvm::Function *loopBody = specializeForThreadLoop(*body);
      if (!loopBody)
        continue;
      if (std::optional<BlockRunBody> run = makeBlockRunBody(*loopBody)) {
        run->function->addFnAttr(llvm::Attribute::AlwaysInline);
        bodies.runs[body] = *run;
        loopBody->eraseFromParent();
        continue;
      }
      loopBody->addFnAttr(llvm::Attribute::AlwaysInline);
      bodies.loops[body] = loopBody;
    }
  return bodies;
}

void KernelEntryWriter::emitThreadLoopNest(llvm::IRBuilder<> &builder, llvm::Function *body,
                                           llvm::Function *loopBody,
                                           llvm::ArrayRef<llvm::Value *> values,
                                           llvm::ArrayRef<llvm::Value *> dims) {
  llvm::Function *block = builder.GetInsertBlock()->getParent();
  llvm::Value *thread0 = values[0];
  llvm::Type *i32 = builder.getInt32Ty();
  auto field = [&](size_t offset) { return threadFieldAddress(builder, thread0, offset); };
  llvm::PHINode *indices[3];
  for (int d = 2; d >= 0; --d) {
    llvm::BasicBlock *header = llvm::BasicBlock::Create(context, "loop", block);
    llvm::BasicBlock *from = builder.GetInsertBlock();
    builder.CreateBr(header);
    builder.SetInsertPoint(header);
    indices[d] = builder.CreatePHI(i32, 2);
    indices[d]->addIncoming(builder.getInt32(0), from);
    if (!loopBody)
      builder.CreateAlignedStore(indices[d], field(offsetof(KilnCpuThread, threadIdx) + 4 * d),
                                 llvm::Align(4));
  }
  llvm::Value *linear = builder.CreateAdd(
      indices[0],
      builder.CreateMul(dims[0],
                        builder.CreateAdd(indices[1], builder.CreateMul(dims[1], indices[2]))));
  // Warps are 32 threads on every GPU Kiln targets, and on the engine.
  llvm::Value *lane = builder.CreateAnd(linear, builder.getInt32(KILN_CPU_WARP_SIZE - 1));
  if (loopBody) {
    std::vector<llvm::Value *> arguments{values[0], indices[0], indices[1], indices[2], lane};
    arguments.insert(arguments.end(), values.begin() + 1, values.end());
    builder.CreateCall(loopBody, arguments);
  } else {
    builder.CreateAlignedStore(lane, field(offsetof(KilnCpuThread, laneId)), llvm::Align(4));
    builder.CreateCall(body, values);
  }
  for (unsigned d = 0; d < 3; ++d) {
    llvm::Value *next = builder.CreateAdd(indices[d], builder.getInt32(1));
    indices[d]->addIncoming(next, builder.GetInsertBlock());
    llvm::BasicBlock *exit = llvm::BasicBlock::Create(context, "next", block);
    markThreadLoop(
        *builder.CreateCondBr(builder.CreateICmpULT(next, dims[d]), indices[d]->getParent(), exit));
    builder.SetInsertPoint(exit);
  }
}

void KernelEntryWriter::writeThreadLoopEntry() {
  llvm::Function *block = llvm::Function::Create(entryType, llvm::GlobalValue::ExternalLinkage,
                                                 blockEntryName(name), module);
  block->addFnAttr(llvm::Attribute::NoUnwind);
  markTakesThread(*block);
  // The engine's KilnCpuThread is reached only through this pointer (and the
  // services it is passed to), never through a kernel's arrays: LLVM may
  // keep the indices in registers across the kernel's stores.
  block->addParamAttr(0, llvm::Attribute::NoAlias);
  ThreadLoopBodies bodies = makeThreadLoopBodies();
  llvm::BasicBlock *entryBlock = llvm::BasicBlock::Create(context, "entry", block);
  llvm::IRBuilder<> builder(entryBlock);
  std::vector<llvm::Value *> values = unpackParameters(builder, *block);
  llvm::Value *thread0 = block->getArg(0);
  llvm::Value *dims[3];
  for (unsigned d = 0; d < 3; ++d)
    dims[d] = loadLaunchIndex(builder, thread0, I::BlockDim, d);

  llvm::BasicBlock *done = llvm::BasicBlock::Create(context, "done", block);
  emitForEachBody(builder, *block, done, [&](llvm::Function *body) {
    if (auto run = bodies.runs.find(body); run != bodies.runs.end()) {
      emitBlockRunLoops(builder, thread0, run->second, llvm::ArrayRef(values).drop_front());
      return;
    }
    emitThreadLoopNest(builder, body, bodies.loops.lookup(body), values, dims);
  });
  builder.SetInsertPoint(done);
  builder.CreateRetVoid();
}

void writeKernelEntries(llvm::Function &kernel, llvm::Function *uncheckedKernel,
                        llvm::ArrayRef<KernelParameter> parameters, const KernelEntryNeeds &needs) {
  std::string name = kernel.getName().str();
  kernel.setName(name + "_body");
  kernel.setLinkage(llvm::GlobalValue::InternalLinkage);
  KernelEntryWriter writer(kernel, uncheckedKernel, parameters, name, needs.checksByDefault);
  llvm::Function &thread = writer.writeThreadEntry();
  if (!needs.hasBlockEntry)
    return;
  if (!needs.synchronizes) {
    writer.writeThreadLoopEntry();
  } else if (!writer.writeRegionLoopsEntry()) {
    // The block entry runs the threads region by region where the kernel
    // fits region loops, otherwise it hands the engine the threads as
    // barrier regions.
    writer.writeBarrierRegionsEntry(needs.reducesAtBarriers);
  }
  if (!needs.hasLocalArrays && kernel.getParent()->getFunction(blockEntryName(name))) {
    thread.addFnAttr(llvm::Attribute::OptimizeNone);
    thread.addFnAttr(llvm::Attribute::NoInline);
  }
}

} // namespace kiln::backend
