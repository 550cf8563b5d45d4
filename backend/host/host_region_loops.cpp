//===- backend/host/host_region_loops.cpp - Barriers as loops over threads -----===//

#include "backend/host/host_region_loops.h"

#include "backend/codegen/optimize.h"
#include "backend/host/host_barrier_regions.h"
#include "backend/host/host_interrupt_polls.h"
#include "backend/host/host_target.h"
#include "module/cpu_kernel_abi.h"

#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/Local.h>

#include <cstddef>
#include <optional>
#include <vector>

namespace kiln::backend {

namespace {

/// A thread's state between rounds: where it waits (0: it has ended; k: at
/// barrier k, counting from 1) times two, plus the parity of the round that
/// wrote it, so that no round runs a thread twice.
constexpr uint32_t endedCode = 0;
/// Where threads wait is also kept as a mask of codes, in 64 bits.
constexpr size_t maxBarriers = 62;

struct Barrier {
  /// What is left of the barrier: a block that only branches to `resume`.
  llvm::BasicBlock *block = nullptr;
  llvm::BasicBlock *resume = nullptr;
  uint32_t mode = KILN_BARRIER_SYNC;
  /// Where a reducing barrier's result is read after it: the same for every
  /// thread, so one variable, not one per thread.
  llvm::AllocaInst *result = nullptr;
};

/// The kernel body cut at its barriers, ready to become region loops.
struct CutBody {
  llvm::Function *body = nullptr;
  std::vector<Barrier> barriers;
  /// The body's allocas, all in its entry block, which does nothing else.
  std::vector<llvm::AllocaInst *> allocas;
  /// Each thread's predicate at the barrier it waits at (reducing kernels).
  llvm::AllocaInst *predicates = nullptr;
  /// What a thread keeps across barriers: the per-thread allocas' strides.
  uint64_t slotBytes = 0;
  /// regions[0] starts the kernel; regions[k] goes on from barrier k.
  std::vector<std::vector<llvm::BasicBlock *>> regions;

  bool isBarrierBlock(const llvm::BasicBlock *block) const {
    return llvm::any_of(barriers, [&](const Barrier &barrier) { return barrier.block == block; });
  }
  bool isUniform(const llvm::AllocaInst *alloca) const {
    return llvm::any_of(barriers, [&](const Barrier &barrier) { return barrier.result == alloca; });
  }
};

/// Leaves each barrier call of `cut.body` alone in a block and then removes
/// it: its predicate goes to cut.predicates first, its result is read from a
/// variable the block function sets. False when there are too many.
bool isolateBarriers(CutBody &cut) {
  llvm::Function &body = *cut.body;
  llvm::LLVMContext &context = body.getContext();
  llvm::Type *i32 = llvm::Type::getInt32Ty(context);
  std::vector<std::pair<llvm::CallInst *, uint32_t>> calls;
  for (llvm::Instruction &instruction : llvm::instructions(body))
    if (auto *call = llvm::dyn_cast<llvm::CallInst>(&instruction))
      if (std::optional<uint32_t> mode = barrierModeOf(*call))
        calls.emplace_back(call, *mode);
  if (calls.empty() || calls.size() > maxBarriers)
    return false;
  bool reduces =
      llvm::any_of(calls, [](const auto &call) { return call.second != KILN_BARRIER_SYNC; });
  llvm::BasicBlock &entry = body.getEntryBlock();
  if (reduces)
    cut.predicates = new llvm::AllocaInst(i32, 0, "barrier.predicate", entry.begin());
  for (auto [call, mode] : calls) {
    Barrier barrier;
    barrier.mode = mode;
    if (reduces) {
      llvm::IRBuilder<> at(call);
      llvm::Value *predicate = mode == KILN_BARRIER_SYNC
                                   ? at.getInt32(0)
                                   : at.CreateZExtOrTrunc(call->getArgOperand(2), i32);
      at.CreateAlignedStore(predicate, cut.predicates, llvm::Align(4));
    }
    barrier.block = call->getParent()->splitBasicBlock(call, "barrier");
    barrier.resume = barrier.block->splitBasicBlock(call->getNextNode(), "after.barrier");
    if (!call->getType()->isVoidTy()) {
      barrier.result = new llvm::AllocaInst(i32, 0, "barrier.result", entry.begin());
      llvm::IRBuilder<> after(barrier.resume, barrier.resume->getFirstInsertionPt());
      llvm::Value *result = after.CreateAlignedLoad(i32, barrier.result, llvm::Align(4));
      call->replaceAllUsesWith(after.CreateZExtOrTrunc(result, call->getType()));
    }
    call->eraseFromParent();
    cut.barriers.push_back(barrier);
  }
  return true;
}

/// Whether `value` is live where a barrier is: whether a use of it is
/// reached from a barrier block without passing its definition.
bool livesAcrossBarrier(llvm::Instruction &value, const CutBody &cut) {
  llvm::BasicBlock *home = value.getParent();
  llvm::SmallPtrSet<llvm::BasicBlock *, 16> seen;
  llvm::SmallVector<llvm::BasicBlock *, 16> work;
  for (llvm::Use &use : value.uses()) {
    auto *user = llvm::cast<llvm::Instruction>(use.getUser());
    // A phi uses its value at the end of the block it comes from.
    auto *phi = llvm::dyn_cast<llvm::PHINode>(user);
    llvm::BasicBlock *where = phi ? phi->getIncomingBlock(use) : user->getParent();
    if (where != home && seen.insert(where).second)
      work.push_back(where);
  }
  while (!work.empty()) {
    llvm::BasicBlock *block = work.pop_back_val();
    if (cut.isBarrierBlock(block))
      return true;
    for (llvm::BasicBlock *predecessor : llvm::predecessors(block))
      if (predecessor != home && seen.insert(predecessor).second)
        work.push_back(predecessor);
  }
  return false;
}

/// Whether the KilnCpuThread field at `offset` is the same for every thread
/// of a block, all the time it runs: launch indices and dimensions other
/// than the thread's, shared memory, the engine's pointers.
bool isBlockInvariantField(uint64_t offset) {
  return (offset >= offsetof(KilnCpuThread, blockIdx) &&
          offset < offsetof(KilnCpuThread, laneId)) ||
         (offset >= offsetof(KilnCpuThread, warpSize) && offset < offsetof(KilnCpuThread, flags)) ||
         offset == offsetof(KilnCpuThread, interrupt);
}

/// The constant offset of `pointer` from `base`, if it is one.
std::optional<uint64_t> offsetFrom(const llvm::Value *pointer, const llvm::Value *base) {
  if (pointer == base)
    return 0;
  const auto *element = llvm::dyn_cast<llvm::GetElementPtrInst>(pointer);
  if (!element || element->getPointerOperand() != base || element->getNumIndices() != 1 ||
      !element->getSourceElementType()->isIntegerTy(8))
    return std::nullopt;
  if (const auto *offset = llvm::dyn_cast<llvm::ConstantInt>(element->getOperand(1)))
    return offset->getZExtValue();
  return std::nullopt;
}

/// Whether `value` can be computed again where it is used, rather than kept
/// per thread across a barrier: it depends only on the body's parameters
/// (the thread's indices among them) and on what does not change while a
/// block runs (the thread's invariant fields, the engine's services), and
/// computing it where the original was not computed is safe.
bool isRecomputable(const llvm::Value *value, const llvm::Function &body, unsigned depth = 0) {
  if (llvm::isa<llvm::Argument>(value) || llvm::isa<llvm::Constant>(value))
    return true;
  const auto *instruction = llvm::dyn_cast<llvm::Instruction>(value);
  // Deep chains cost more to compute again than a slot.
  if (!instruction || depth > 6 || llvm::isa<llvm::PHINode>(instruction))
    return false;
  const llvm::Value *thread = body.getArg(0);
  if (const auto *load = llvm::dyn_cast<llvm::LoadInst>(instruction)) {
    if (load->isVolatile() || load->isAtomic())
      return false;
    const llvm::Value *pointer = load->getPointerOperand();
    if (std::optional<uint64_t> offset = offsetFrom(pointer, thread))
      return isBlockInvariantField(*offset);
    // The services table never changes.
    const auto *element = llvm::dyn_cast<llvm::GetElementPtrInst>(pointer);
    const auto *services =
        llvm::dyn_cast<llvm::LoadInst>(element ? element->getPointerOperand() : pointer);
    return services &&
           offsetFrom(services->getPointerOperand(), thread) == offsetof(KilnCpuThread, services) &&
           (!element || offsetFrom(element, services).has_value());
  }
  if (instruction->mayReadOrWriteMemory() || !llvm::isSafeToSpeculativelyExecute(instruction))
    return false;
  return llvm::all_of(instruction->operands(), [&](const llvm::Use &operand) {
    return isRecomputable(operand.get(), body, depth + 1);
  });
}

/// A copy of recomputable `value` computed before `point`.
llvm::Value *recompute(llvm::Value *value, llvm::Instruction *point) {
  auto *instruction = llvm::dyn_cast<llvm::Instruction>(value);
  if (!instruction)
    return value;
  llvm::Instruction *copy = instruction->clone();
  for (llvm::Use &operand : copy->operands())
    operand.set(recompute(operand.get(), point));
  copy->insertBefore(point);
  return copy;
}

/// Computes `value` again at each of its uses outside its own block.
void recomputeAtUses(llvm::Instruction &value) {
  for (llvm::Use &use : llvm::make_early_inc_range(value.uses())) {
    auto *user = llvm::cast<llvm::Instruction>(use.getUser());
    auto *phi = llvm::dyn_cast<llvm::PHINode>(user);
    llvm::BasicBlock *where = phi ? phi->getIncomingBlock(use) : user->getParent();
    if (where != value.getParent())
      use.set(recompute(&value, phi ? where->getTerminator() : user));
  }
}

/// Bytes from one thread's element of a static alloca's array to the
/// next's: its size, rounded up to its alignment.
uint64_t strideOf(const llvm::AllocaInst &alloca) {
  uint64_t bytes = alloca.getAllocationSize(alloca.getModule()->getDataLayout())->getFixedValue();
  return llvm::alignTo(bytes, alloca.getAlign());
}

/// Moves every value that lives across a barrier to an alloca, gathers the
/// allocas at the top of the entry block and splits the rest off. False
/// when some alloca is not of a size known here.
bool gatherVariables(CutBody &cut) {
  llvm::Function &body = *cut.body;
  std::vector<llvm::Instruction *> crossing;
  for (llvm::Instruction &instruction : llvm::instructions(body))
    if (!llvm::isa<llvm::AllocaInst>(instruction) && livesAcrossBarrier(instruction, cut))
      crossing.push_back(&instruction);
  for (llvm::Instruction *value : crossing)
    if (isRecomputable(value, body))
      recomputeAtUses(*value);
    else
      llvm::DemoteRegToStack(*value);

  llvm::BasicBlock &entry = body.getEntryBlock();
  for (llvm::Instruction &instruction : llvm::instructions(body))
    if (auto *alloca = llvm::dyn_cast<llvm::AllocaInst>(&instruction)) {
      if (!alloca->isStaticAlloca())
        return false;
      cut.allocas.push_back(alloca);
    }
  for (llvm::AllocaInst *alloca : cut.allocas) {
    if (!cut.isUniform(alloca))
      cut.slotBytes += strideOf(*alloca);
    // The arrays replace them, per thread: what marks their lifetime goes.
    for (llvm::User *user : llvm::make_early_inc_range(alloca->users()))
      if (auto *intrinsic = llvm::dyn_cast<llvm::IntrinsicInst>(user);
          intrinsic && intrinsic->isLifetimeStartOrEnd())
        intrinsic->eraseFromParent();
  }
  if (cut.slotBytes > maxRegionLoopSlotBytes)
    return false;
  for (llvm::AllocaInst *alloca : cut.allocas) {
    alloca->removeFromParent();
    alloca->insertInto(&entry, entry.begin());
  }
  llvm::BasicBlock::iterator start = entry.getFirstInsertionPt();
  while (llvm::isa<llvm::AllocaInst>(*start))
    ++start;
  llvm::BasicBlock *code = entry.splitBasicBlock(start, "start");

  // Region 0 from the start, region k from barrier k: the blocks reached
  // without passing another barrier.
  std::vector<llvm::BasicBlock *> starts{code};
  for (const Barrier &barrier : cut.barriers)
    starts.push_back(barrier.resume);
  for (llvm::BasicBlock *first : starts) {
    std::vector<llvm::BasicBlock *> region{first};
    llvm::SmallPtrSet<llvm::BasicBlock *, 16> seen{first};
    for (size_t next = 0; next < region.size(); ++next)
      for (llvm::BasicBlock *successor : llvm::successors(region[next]))
        if (!cut.isBarrierBlock(successor) && seen.insert(successor).second)
          region.push_back(successor);
    cut.regions.push_back(std::move(region));
  }
  return true;
}

/// Whether the thread index `index` is used other than stored into the
/// thread's fields, as it is before a service call.
bool computesWith(llvm::Argument &index) {
  llvm::Argument *thread = index.getParent()->getArg(0);
  return llvm::any_of(index.uses(), [&](const llvm::Use &use) {
    const auto *store = llvm::dyn_cast<llvm::StoreInst>(use.getUser());
    return !store || use.getOperandNo() != 0 ||
           !offsetFrom(store->getPointerOperand(), thread).has_value();
  });
}

/// Writes the block function of a cut kernel body.
class RegionLoopWriter {
public:
  explicit RegionLoopWriter(const CutBody &cut)
      : cut(cut), context(cut.body->getContext()), builder(context),
        usesY(computesWith(*cut.body->getArg(2))), usesZ(computesWith(*cut.body->getArg(3))) {}

  llvm::Function *write();

private:
  void allocateArrays();
  /// A loop over the block's threads from thread `first` that runs region
  /// `k` for each thread whose state is `expected` (every thread when null)
  /// and leaves the thread's next state with parity `written`.
  void emitRegion(unsigned k, llvm::Value *first, llvm::Value *expected, llvm::Value *written);
  /// Starts a loop over the block's threads in linear order from thread
  /// `first`, wrapping around: its linear index and (x, y, z) indices. The
  /// builder ends up in the loop's body.
  void beginThreadLoop(llvm::Value *first, llvm::PHINode *indices[4]);
  /// Ends it: from `latch`, the next thread, until thread `first` again.
  void endThreadLoop(llvm::BasicBlock *latch, llvm::Value *first, llvm::PHINode *indices[4]);
  /// For a reducing kernel, what its barriers return to the threads that
  /// wait, with parity `parity`.
  void emitReductions(llvm::Value *parity);

  const CutBody &cut;
  llvm::LLVMContext &context;
  llvm::IRBuilder<> builder;
  llvm::Function *function = nullptr;
  llvm::Value *dims[3] = {};
  llvm::Value *threadCount = nullptr;
  /// Per body alloca: its array (one element per thread) or, for uniform
  /// ones, its one variable.
  llvm::DenseMap<const llvm::AllocaInst *, llvm::Value *> arrays;
  llvm::AllocaInst *states = nullptr;
  /// Whether the arrays are allocas (else engine memory).
  bool slotsOnStack = true;
  /// Bit k: some thread reached code k in the round that is running.
  llvm::AllocaInst *reached = nullptr;
  /// The last thread the round ran, times two, plus one if it reached a
  /// barrier.
  llvm::AllocaInst *lastRun = nullptr;
  /// The thread each round starts at, and the parity of the states the
  /// threads that wait have.
  llvm::AllocaInst *roundStart = nullptr;
  llvm::AllocaInst *waitingParity = nullptr;
  /// Whether the regions compute with threadIdx.y or .z: if not, the loops
  /// over threads need not count them, and the rare stores of them into the
  /// thread (before a service call) compute them from the linear index.
  const bool usesY, usesZ;
};

void RegionLoopWriter::allocateArrays() {
  llvm::Type *i32 = builder.getInt32Ty();
  llvm::Type *i64 = builder.getInt64Ty();
  states = builder.CreateAlloca(i32, threadCount, "thread.states");
  reached = builder.CreateAlloca(i64, nullptr, "reached");
  lastRun = builder.CreateAlloca(i32, nullptr, "last.run");
  roundStart = builder.CreateAlloca(i32, nullptr, "round.start");
  waitingParity = builder.CreateAlloca(i32, nullptr, "waiting.parity");

  // Small arrays are allocas of the stack of the thread that runs the
  // block (measured: a barrier tree's step kept so runs about 10% faster
  // than in engine memory), where each thread's element is the alloca's
  // type, unpadded.
  const llvm::DataLayout &layout = cut.body->getDataLayout();
  slotsOnStack = cut.slotBytes <= maxStackSlotBytes;
  for (llvm::AllocaInst *alloca : cut.allocas)
    if (!cut.isUniform(alloca))
      slotsOnStack &= strideOf(*alloca) == alloca->getAllocationSize(layout)->getFixedValue();
  for (llvm::AllocaInst *alloca : cut.allocas)
    if (cut.isUniform(alloca) || slotsOnStack) {
      llvm::Value *count =
          cut.isUniform(alloca)
              ? nullptr
              : builder.CreateNUWMul(threadCount,
                                     builder.CreateZExtOrTrunc(alloca->getArraySize(), i32));
      llvm::AllocaInst *array =
          builder.CreateAlloca(alloca->getAllocatedType(), count, alloca->getName() + ".threads");
      array->setAlignment(alloca->getAlign());
      arrays[alloca] = array;
    }
  if (slotsOnStack)
    return;

  // Else one piece of engine memory for the block holds them, each at a
  // multiple of 64 bytes.
  constexpr uint64_t alignment = 64;
  llvm::Value *threads = builder.CreateZExt(threadCount, i64);
  llvm::Value *total = builder.getInt64(0);
  std::vector<std::pair<const llvm::AllocaInst *, llvm::Value *>> offsets;
  for (llvm::AllocaInst *alloca : cut.allocas) {
    if (cut.isUniform(alloca))
      continue;
    offsets.emplace_back(alloca, total);
    llvm::Value *arrayBytes = builder.CreateNUWMul(threads, builder.getInt64(strideOf(*alloca)));
    total = builder.CreateAnd(
        builder.CreateNUWAdd(total,
                             builder.CreateNUWAdd(arrayBytes, builder.getInt64(alignment - 1))),
        builder.getInt64(~(alignment - 1)));
  }
  if (!offsets.empty()) {
    llvm::CallInst *memory =
        callHostService(builder, function->getArg(0), offsetof(KilnCpuServices, allocateFrame),
                        builder.getPtrTy(), {total, builder.getInt64(alignment)});
    // Memory nothing else of the kernel reaches, as malloc's.
    memory->addRetAttr(llvm::Attribute::NoAlias);
    for (auto [alloca, offset] : offsets)
      arrays[alloca] = builder.CreateInBoundsGEP(builder.getInt8Ty(), memory, offset,
                                                 alloca->getName() + ".threads");
  }
}

void RegionLoopWriter::beginThreadLoop(llvm::Value *first, llvm::PHINode *indices[4]) {
  llvm::Type *i32 = builder.getInt32Ty();
  llvm::Value *starts[4] = {first, builder.CreateURem(first, dims[0]),
                            builder.CreateURem(builder.CreateUDiv(first, dims[0]), dims[1]),
                            builder.CreateUDiv(first, builder.CreateNUWMul(dims[0], dims[1]))};
  llvm::BasicBlock *from = builder.GetInsertBlock();
  llvm::BasicBlock *loop = llvm::BasicBlock::Create(context, "threads", function);
  builder.CreateBr(loop);
  builder.SetInsertPoint(loop);
  static constexpr const char *names[4] = {"thread", "x", "y", "z"};
  for (unsigned i = 0; i < 4; ++i) {
    if ((i == 2 && !usesY) || (i == 3 && !usesZ)) {
      indices[i] = nullptr;
      continue;
    }
    indices[i] = builder.CreatePHI(i32, 2, names[i]);
    indices[i]->addIncoming(starts[i], from);
  }
}

void RegionLoopWriter::endThreadLoop(llvm::BasicBlock *latch, llvm::Value *first,
                                     llvm::PHINode *indices[4]) {
  builder.SetInsertPoint(latch);
  llvm::Type *i32 = builder.getInt32Ty();
  llvm::Value *zero = builder.getInt32(0), *one = builder.getInt32(1);
  // x fastest, then y, then z; after the last thread, the first. The loop
  // ends where it started.
  llvm::Value *linear = builder.CreateNUWAdd(indices[0], one);
  llvm::Value *wraps = builder.CreateICmpEQ(linear, threadCount);
  llvm::Value *next[4] = {builder.CreateSelect(wraps, zero, linear)};
  llvm::Value *x = builder.CreateNUWAdd(indices[1], one);
  llvm::Value *xWraps = builder.CreateICmpEQ(x, dims[0]);
  next[1] = builder.CreateSelect(xWraps, zero, x);
  llvm::Value *yWraps = builder.getFalse();
  if (indices[2] || indices[3]) {
    llvm::Value *y =
        indices[2] ? builder.CreateAdd(indices[2], builder.CreateZExt(xWraps, i32)) : nullptr;
    // Without y: the block's rows, counted by x's wraps, make up a z.
    yWraps = y ? builder.CreateICmpEQ(y, dims[1])
               : builder.CreateICmpEQ(
                     builder.CreateURem(linear, builder.CreateNUWMul(dims[0], dims[1])), zero);
    if (y)
      next[2] = builder.CreateSelect(yWraps, zero, y);
  }
  if (indices[3])
    next[3] = builder.CreateSelect(wraps, zero,
                                   builder.CreateAdd(indices[3], builder.CreateZExt(yWraps, i32)));
  for (unsigned i = 0; i < 4; ++i)
    if (indices[i])
      indices[i]->addIncoming(next[i], latch);
  llvm::BasicBlock *exit = llvm::BasicBlock::Create(context, "threads.done", function);
  markThreadLoop(
      *builder.CreateCondBr(builder.CreateICmpNE(next[0], first), indices[0]->getParent(), exit));
  builder.SetInsertPoint(exit);
}

void RegionLoopWriter::emitRegion(unsigned k, llvm::Value *first, llvm::Value *expected,
                                  llvm::Value *written) {
  llvm::Function &body = *cut.body;
  llvm::Type *i32 = builder.getInt32Ty();
  llvm::Type *i64 = builder.getInt64Ty();
  llvm::PHINode *indices[4];
  beginThreadLoop(first, indices);
  llvm::Value *linear = indices[0];
  llvm::Value *wide = builder.CreateZExt(linear, i64);
  llvm::BasicBlock *latch = llvm::BasicBlock::Create(context, "next.thread", function);

  llvm::ValueToValueMapTy map;
  map[body.getArg(0)] = function->getArg(0);
  // An index the loop does not count stands for itself until the code that
  // stores it is cloned (below).
  llvm::Instruction *uncounted[3] = {};
  for (unsigned d = 0; d < 3; ++d) {
    if (indices[1 + d]) {
      map[body.getArg(1 + d)] = indices[1 + d];
      continue;
    }
    uncounted[d] = llvm::cast<llvm::Instruction>(
        builder.CreateFreeze(llvm::PoisonValue::get(i32), "uncounted"));
    map[body.getArg(1 + d)] = uncounted[d];
  }
  map[body.getArg(4)] = builder.CreateAnd(linear, builder.getInt32(KILN_CPU_WARP_SIZE - 1));
  for (unsigned i = 5; i < body.arg_size(); ++i)
    map[body.getArg(i)] = function->getArg(i - 4);
  for (llvm::AllocaInst *alloca : cut.allocas) {
    llvm::Value *array = arrays.lookup(alloca);
    if (cut.isUniform(alloca))
      map[alloca] = array;
    else if (slotsOnStack)
      map[alloca] = builder.CreateInBoundsGEP(
          alloca->getAllocatedType(), array,
          builder.CreateNUWMul(wide, builder.CreateZExtOrTrunc(alloca->getArraySize(), i64)));
    else
      map[alloca] = builder.CreateInBoundsGEP(
          builder.getInt8Ty(), array,
          builder.CreateNUWMul(wide, builder.getInt64(strideOf(*alloca))));
  }
  llvm::BasicBlock *dispatch = builder.GetInsertBlock();

  // Where the thread goes next: its state, and the round's mask.
  llvm::Value *stateAddress = builder.CreateInBoundsGEP(i32, states, wide);
  llvm::SmallDenseMap<uint32_t, llvm::BasicBlock *, 4> exits;
  auto exitTo = [&](uint32_t code) {
    llvm::BasicBlock *&exit = exits[code];
    if (exit)
      return exit;
    exit = llvm::BasicBlock::Create(context, "to." + std::to_string(code), function);
    llvm::IRBuilder<> at(exit);
    at.CreateAlignedStore(at.CreateAdd(at.getInt32(code * 2), written), stateAddress,
                          llvm::Align(4));
    llvm::Value *mask = at.CreateAlignedLoad(i64, reached, llvm::Align(8));
    at.CreateAlignedStore(at.CreateOr(mask, at.getInt64(uint64_t(1) << code)), reached,
                          llvm::Align(8));
    at.CreateAlignedStore(at.CreateOr(at.CreateShl(linear, 1), at.getInt32(code != endedCode)),
                          lastRun, llvm::Align(4));
    at.CreateBr(latch);
    return exit;
  };

  const std::vector<llvm::BasicBlock *> &region = cut.regions[k];
  llvm::SmallPtrSet<const llvm::BasicBlock *, 32> inRegion(region.begin(), region.end());
  std::vector<llvm::BasicBlock *> clones;
  for (llvm::BasicBlock *block : region) {
    llvm::BasicBlock *clone = llvm::CloneBasicBlock(block, map, ".r" + std::to_string(k), function);
    map[block] = clone;
    clones.push_back(clone);
    for (unsigned b = 0; b < cut.barriers.size(); ++b)
      if (llvm::is_contained(llvm::successors(block), cut.barriers[b].block))
        map[cut.barriers[b].block] = exitTo(b + 1);
  }
  for (llvm::BasicBlock *clone : clones) {
    // Edges from other regions come through barriers.
    for (llvm::PHINode &phi : clone->phis())
      for (unsigned i = phi.getNumIncomingValues(); i-- > 0;)
        if (!inRegion.contains(phi.getIncomingBlock(i)))
          phi.removeIncomingValue(i, /*DeletePHIIfEmpty=*/false);
    // The thread ends at a return, and where an index error ended it.
    llvm::Instruction *terminator = clone->getTerminator();
    if (llvm::isa<llvm::ReturnInst>(terminator) || llvm::isa<llvm::UnreachableInst>(terminator)) {
      llvm::BranchInst::Create(exitTo(endedCode), terminator);
      terminator->eraseFromParent();
    }
  }
  llvm::remapInstructionsInBlocks(clones, map);
  for (unsigned d = 1; d < 3; ++d) {
    if (!uncounted[d])
      continue;
    for (llvm::Use &use : llvm::make_early_inc_range(uncounted[d]->uses())) {
      llvm::IRBuilder<> at(llvm::cast<llvm::Instruction>(use.getUser()));
      llvm::Value *row = at.CreateUDiv(linear, dims[0]);
      use.set(d == 1 ? at.CreateURem(row, dims[1]) : at.CreateUDiv(row, dims[1]));
    }
    uncounted[d]->eraseFromParent();
  }

  builder.SetInsertPoint(dispatch);
  llvm::BasicBlock *start = llvm::cast<llvm::BasicBlock>(map[region.front()]);
  if (expected) {
    llvm::Value *state = builder.CreateAlignedLoad(i32, stateAddress, llvm::Align(4));
    builder.CreateCondBr(builder.CreateICmpEQ(state, expected), start, latch);
  } else {
    builder.CreateBr(start);
  }
  endThreadLoop(latch, first, indices);
}

void RegionLoopWriter::emitReductions(llvm::Value *parity) {
  llvm::Type *i32 = builder.getInt32Ty();
  llvm::Value *predicates = arrays.lookup(cut.predicates);
  llvm::BasicBlock *before = builder.GetInsertBlock();
  llvm::BasicBlock *loop = llvm::BasicBlock::Create(context, "reduce", function);
  llvm::BasicBlock *done = llvm::BasicBlock::Create(context, "reduced", function);
  builder.CreateBr(loop);
  builder.SetInsertPoint(loop);
  llvm::PHINode *thread = builder.CreatePHI(i32, 2, "thread");
  llvm::PHINode *waiting = builder.CreatePHI(i32, 2, "waiting");
  llvm::PHINode *passed = builder.CreatePHI(i32, 2, "passed");
  for (llvm::PHINode *phi : {thread, waiting, passed})
    phi->addIncoming(builder.getInt32(0), before);
  llvm::Value *wide = builder.CreateZExt(thread, builder.getInt64Ty());
  llvm::Value *state =
      builder.CreateAlignedLoad(i32, builder.CreateInBoundsGEP(i32, states, wide), llvm::Align(4));
  llvm::Value *waits = builder.CreateAnd(
      builder.CreateICmpUGE(state, builder.getInt32(2)),
      builder.CreateICmpEQ(builder.CreateAnd(state, builder.getInt32(1)), parity));
  llvm::Value *predicate = builder.CreateAlignedLoad(
      i32, builder.CreateInBoundsGEP(i32, predicates, wide), llvm::Align(4));
  llvm::Value *passes =
      builder.CreateAnd(waits, builder.CreateICmpNE(predicate, builder.getInt32(0)));
  llvm::Value *nowWaiting = builder.CreateAdd(waiting, builder.CreateZExt(waits, i32));
  llvm::Value *nowPassed = builder.CreateAdd(passed, builder.CreateZExt(passes, i32));
  llvm::Value *next = builder.CreateNUWAdd(thread, builder.getInt32(1));
  thread->addIncoming(next, loop);
  waiting->addIncoming(nowWaiting, loop);
  passed->addIncoming(nowPassed, loop);
  markThreadLoop(*builder.CreateCondBr(builder.CreateICmpULT(next, threadCount), loop, done));
  builder.SetInsertPoint(done);
  for (const Barrier &barrier : cut.barriers) {
    if (!barrier.result)
      continue;
    llvm::Value *result =
        barrier.mode == KILN_BARRIER_COUNT ? nowPassed
        : barrier.mode == KILN_BARRIER_AND
            ? builder.CreateZExt(builder.CreateICmpEQ(nowPassed, nowWaiting), i32)
            : builder.CreateZExt(builder.CreateICmpNE(nowPassed, builder.getInt32(0)), i32);
    builder.CreateAlignedStore(result, arrays.lookup(barrier.result), llvm::Align(4));
  }
}

llvm::Function *RegionLoopWriter::write() {
  llvm::Function &body = *cut.body;
  llvm::Type *i32 = builder.getInt32Ty();
  llvm::Type *i64 = builder.getInt64Ty();
  std::vector<llvm::Type *> parameters{body.getFunctionType()->getParamType(0)};
  for (unsigned i = 5; i < body.arg_size(); ++i)
    parameters.push_back(body.getFunctionType()->getParamType(i));
  function = llvm::Function::Create(llvm::FunctionType::get(builder.getVoidTy(), parameters, false),
                                    llvm::GlobalValue::InternalLinkage, body.getName() + ".regions",
                                    body.getParent());
  function->addFnAttr(llvm::Attribute::NoUnwind);
  // The regions' code, with its debug locations, moves here.
  function->setSubprogram(body.getSubprogram());
  body.setSubprogram(nullptr);
  llvm::Value *thread = function->getArg(0);
  builder.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", function));
  for (unsigned d = 0; d < 3; ++d)
    dims[d] = loadLaunchIndex(builder, thread, ir::Intrinsic::BlockDim, d);
  threadCount = builder.CreateNUWMul(dims[0], builder.CreateNUWMul(dims[1], dims[2]));
  llvm::Value *flags = threadFieldAddress(builder, thread, offsetof(KilnCpuThread, flags));
  builder.CreateAlignedStore(builder.CreateOr(builder.CreateAlignedLoad(i32, flags, llvm::Align(4)),
                                              builder.getInt32(KILN_THREAD_REGION_LOOPS)),
                             flags, llvm::Align(4));
  allocateArrays();
  builder.CreateAlignedStore(builder.getInt64(0), reached, llvm::Align(8));

  // Round 0: every thread from its start; the states it leaves have parity 1.
  builder.CreateAlignedStore(builder.getInt32(0), roundStart, llvm::Align(4));
  emitRegion(0, builder.getInt32(0), nullptr, builder.getInt32(1));
  llvm::BasicBlock *round = llvm::BasicBlock::Create(context, "round", function);
  llvm::BasicBlock *rounds = llvm::BasicBlock::Create(context, "round.regions", function);
  llvm::BasicBlock *finished = llvm::BasicBlock::Create(context, "finished", function);
  builder.CreateAlignedStore(builder.getInt32(1), waitingParity, llvm::Align(4));
  builder.CreateBr(round);

  // Each later round: the regions some thread waits at, in order.
  builder.SetInsertPoint(round);
  llvm::Value *waitingAt = builder.CreateAlignedLoad(i64, reached, llvm::Align(8));
  builder.CreateCondBr(
      builder.CreateICmpEQ(builder.CreateLShr(waitingAt, builder.getInt64(1)), builder.getInt64(0)),
      finished, rounds);
  builder.SetInsertPoint(rounds);
  llvm::Value *parity = builder.CreateAlignedLoad(i32, waitingParity, llvm::Align(4));
  llvm::Value *written = builder.CreateXor(parity, builder.getInt32(1));
  builder.CreateAlignedStore(builder.getInt64(0), reached, llvm::Align(8));
  // As fibers run them: the thread that completed the barrier (the last to
  // reach it, if it was the last the round ran) goes on first, then the
  // others in the order they reached it.
  llvm::Value *last = builder.CreateAlignedLoad(i32, lastRun, llvm::Align(4));
  llvm::Value *start = builder.CreateSelect(
      builder.CreateTrunc(last, builder.getInt1Ty()), builder.CreateLShr(last, 1),
      builder.CreateAlignedLoad(i32, roundStart, llvm::Align(4)));
  builder.CreateAlignedStore(start, roundStart, llvm::Align(4));
  if (cut.predicates)
    emitReductions(parity);
  for (unsigned k = 1; k <= cut.barriers.size(); ++k) {
    llvm::BasicBlock *runs = llvm::BasicBlock::Create(context, "round.region", function);
    llvm::BasicBlock *skip = llvm::BasicBlock::Create(context, "round.next", function);
    llvm::Value *bit = builder.CreateAnd(waitingAt, builder.getInt64(uint64_t(1) << k));
    builder.CreateCondBr(builder.CreateICmpNE(bit, builder.getInt64(0)), runs, skip);
    builder.SetInsertPoint(runs);
    emitRegion(k, start, builder.CreateAdd(builder.getInt32(k * 2), parity), written);
    builder.CreateBr(skip);
    builder.SetInsertPoint(skip);
  }
  builder.CreateAlignedStore(written, waitingParity, llvm::Align(4));
  builder.CreateBr(round);

  builder.SetInsertPoint(finished);
  builder.CreateRetVoid();
  return function;
}

} // namespace

llvm::Function *makeRegionLoops(llvm::Function *loopBody) {
  CutBody cut;
  cut.body = loopBody;
  promoteVariables(*loopBody);
  llvm::Function *regions = nullptr;
  if (isolateBarriers(cut) && gatherVariables(cut)) {
    regions = RegionLoopWriter(cut).write();
    // Every value the regions use is theirs or lives in an array; a slip
    // would show here, and the kernel then runs as coroutines.
    if (llvm::verifyFunction(*regions)) {
      regions->eraseFromParent();
      regions = nullptr;
    }
  }
  loopBody->eraseFromParent();
  return regions;
}

} // namespace kiln::backend
