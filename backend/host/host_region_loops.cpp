//===- backend/host/host_region_loops.cpp - Barriers as loops over threads -----===//

#include "backend/host/host_region_loops.h"

#include "backend/codegen/optimize.h"
#include "backend/host/host_interrupt_polls.h"
#include "backend/host/host_region_cut.h"
#include "backend/host/host_region_specialization.h"
#include "backend/host/host_region_thread_loops.h"
#include "backend/host/host_target.h"
#include "module/cpu_kernel_abi.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <cstddef>
#include <optional>
#include <vector>

namespace kiln::backend {

namespace {

/// A thread's state between rounds: where it waits (0: it has ended; k: at
/// barrier k, counting from 1) times two, plus the parity of the round that
/// wrote it, so that no round runs a thread twice.
constexpr uint32_t endedCode = 0;
/// Where the threads wait together, the exit of a thread that failed (an
/// index error), which others may outlive: a code no barrier has.
constexpr uint32_t failedCode = 63;

/// Values of a region's code that a copy takes as given: decided
/// conditions, and what every thread reads alike, read before the loop.
using FixedValues = llvm::SmallDenseMap<llvm::Value *, llvm::Value *, 8>;

/// What a region's threads are checked against and leave (see emitRegion).
struct RegionExits {
  /// Where threads may wait apart: the state of the threads the region
  /// runs, and the parity of the states they leave.
  llvm::Value *expected = nullptr;
  llvm::Value *written = nullptr;
  /// Where they wait together: what a thread that ends leaves as its state
  /// (the round's number, plus one), and whether some thread ended before
  /// the round.
  llvm::Value *endedTag = nullptr;
  llvm::Value *endedBefore = nullptr;
};

/// Writes the block function of a cut kernel body.
class RegionLoopWriter {
public:
  explicit RegionLoopWriter(const CutBody &cut)
      : cut(cut), context(cut.body->getContext()), builder(context),
        usesY(computesWith(*cut.body->getArg(2))), usesZ(computesWith(*cut.body->getArg(3))) {}

  llvm::Function *write();

private:
  void allocateArrays();
  /// Round 0, then rounds until no thread waits, for threads that may wait
  /// at different barriers: each round runs every region some thread waits
  /// at, each over the threads that wait there.
  void writeRounds(llvm::BasicBlock *finished);
  /// The same for threads that wait at their barriers together: each round
  /// runs the one region they all wait at, over every thread.
  void writeUniformRounds(llvm::BasicBlock *finished);
  /// Runs region `k` over the block's threads from thread `first`, for
  /// each thread whose state is `exits.expected` (every thread when null),
  /// leaving the thread's next state with parity `exits.written` (where
  /// the threads wait together, no state).
  void emitRegion(unsigned k, llvm::Value *first, RegionExits exits);
  /// Where the threads wait together: the thread the next round starts at,
  /// the last one the round before ran.
  llvm::Value *emitUniformRoundStart();
  /// emitRegion for a copy of the region's code for `decided` (see
  /// host_region_specialization.h).
  void emitRegionCopy(unsigned k, llvm::Value *first, const RegionExits &exits,
                      const RegionDecisions &decided);
  /// A loop over the threads of the row from x `from` to `to` that runs a
  /// copy of region `k` in which the values `fixed` maps are given.
  void emitThreads(unsigned k, const ThreadRows &rows, llvm::Value *from, llvm::Value *to,
                   const FixedValues &fixed, const RegionExits &exits);
  /// The block function's value for a parameter or an alloca of the body
  /// that is the same for every thread.
  llvm::Value *sharedLeaf(llvm::Value *value);
  /// For a reducing kernel, what its barriers return to the threads that
  /// wait, those whose states have parity `parity` (all, where null).
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
  /// Each thread's state. Where the threads wait together, 0 while it
  /// runs, and the number of the round it ended in, plus one, after.
  llvm::AllocaInst *states = nullptr;
  /// Where the threads wait together: whether some thread has ended, and
  /// the number of the round that runs.
  llvm::AllocaInst *someEnded = nullptr;
  llvm::AllocaInst *roundNumber = nullptr;
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
  reached = builder.CreateAlloca(i64, nullptr, "reached");
  roundStart = builder.CreateAlloca(i32, nullptr, "round.start");
  states = builder.CreateAlloca(i32, threadCount, "thread.states");
  if (cut.barriersUniform) {
    someEnded = builder.CreateAlloca(i32, nullptr, "some.ended");
    roundNumber = builder.CreateAlloca(i32, nullptr, "round.number");
  } else {
    lastRun = builder.CreateAlloca(i32, nullptr, "last.run");
    waitingParity = builder.CreateAlloca(i32, nullptr, "waiting.parity");
  }

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

llvm::Value *RegionLoopWriter::sharedLeaf(llvm::Value *value) {
  if (auto *argument = llvm::dyn_cast<llvm::Argument>(value))
    return function->getArg(argument->getArgNo() == 0 ? 0 : argument->getArgNo() - 4);
  return arrays.lookup(llvm::cast<llvm::AllocaInst>(value));
}

void RegionLoopWriter::emitRegion(unsigned k, llvm::Value *first, RegionExits exits) {
  if (!cut.barriersUniform) {
    emitRegionCopy(k, first, exits, RegionDecisions());
    return;
  }
  llvm::Type *i32 = builder.getInt32Ty();
  exits.endedTag = builder.CreateNUWAdd(builder.CreateAlignedLoad(i32, roundNumber, llvm::Align(4)),
                                        builder.getInt32(1));
  exits.endedBefore = builder.CreateICmpNE(
      builder.CreateAlignedLoad(i32, someEnded, llvm::Align(4)), builder.getInt32(0));
  llvm::BranchInst *regionSwitch = findRegionSwitch(cut, k);
  if (!regionSwitch) {
    emitRegionCopy(k, first, exits, RegionDecisions());
    return;
  }
  llvm::Value *condition = regionSwitch->getCondition();
  llvm::BasicBlock *taken = llvm::BasicBlock::Create(context, "region.switch.taken", function);
  llvm::BasicBlock *other = llvm::BasicBlock::Create(context, "region.switch.other", function);
  llvm::BasicBlock *done = llvm::BasicBlock::Create(context, "region.switch.done", function);
  builder.CreateCondBr(computeBeforeRound(builder, condition, cut, k,
                                          [&](llvm::Value *leaf) { return sharedLeaf(leaf); }),
                       taken, other);
  for (bool way : {true, false}) {
    builder.SetInsertPoint(way ? taken : other);
    emitRegionCopy(k, first, exits, {{condition, way}});
    builder.CreateBr(done);
  }
  builder.SetInsertPoint(done);
}

void RegionLoopWriter::emitRegionCopy(unsigned k, llvm::Value *first, const RegionExits &exits,
                                      const RegionDecisions &decided) {
  auto leaf = [&](llvm::Value *value) { return sharedLeaf(value); };
  // What does not change while the block runs is read once, before the
  // loops: the optimizer cannot tell that a service call leaves it.
  FixedValues fixed;
  for (llvm::BasicBlock *block : cut.regions[k])
    for (llvm::Instruction &instruction : *block)
      if (auto *load = llvm::dyn_cast<llvm::LoadInst>(&instruction);
          load && readsBlockInvariant(*load, *cut.body))
        fixed[load] = computeBeforeRound(builder, load, cut, k, leaf);
  for (auto [condition, value] : decided)
    fixed[condition] = builder.getInt1(value);
  std::optional<ThreadGuard> guard =
      cut.barriersUniform ? findThreadGuard(cut, k, decided) : std::optional<ThreadGuard>();
  ThreadRange range;
  if (guard)
    range = emitThreadRange(builder, *guard,
                            computeBeforeRound(builder, guard->bound, cut, k, leaf), dims[0]);
  ThreadLoops loops(builder, dims, threadCount, usesY, usesZ);
  ThreadRows rows = loops.beginRows(first);
  auto emitRun = [&](llvm::Value *from, llvm::Value *to) {
    if (!guard) {
      emitThreads(k, rows, from, to, fixed, exits);
      return;
    }
    auto withGuard = [&](bool value) {
      FixedValues both = fixed;
      both[guard->compare] = builder.getInt1(value);
      return both;
    };
    auto clamp = [&](llvm::Intrinsic::ID id, llvm::Value *a, llvm::Value *b) {
      return b ? builder.CreateBinaryIntrinsic(id, a, b) : a;
    };
    // In order: the threads below the range, in it, and above it.
    if (range.low)
      emitThreads(k, rows, from, clamp(llvm::Intrinsic::umin, to, range.low),
                  withGuard(!range.inside), exits);
    emitThreads(k, rows, clamp(llvm::Intrinsic::umax, from, range.low),
                clamp(llvm::Intrinsic::umin, to, range.high), withGuard(range.inside), exits);
    emitThreads(k, rows, clamp(llvm::Intrinsic::umax, from, range.high), to,
                withGuard(!range.inside), exits);
  };
  if (cut.barriersUniform)
    loops.emitLiveRuns(rows, states, exits.endedBefore, emitRun);
  else
    emitRun(rows.x, rows.xEnd);
  loops.endRows(rows);
}

void RegionLoopWriter::emitThreads(unsigned k, const ThreadRows &rows, llvm::Value *from,
                                   llvm::Value *to, const FixedValues &fixed,
                                   const RegionExits &exits) {
  llvm::Function &body = *cut.body;
  llvm::Type *i32 = builder.getInt32Ty();
  llvm::Type *i64 = builder.getInt64Ty();
  ThreadLoops loops(builder, dims, threadCount, usesY, usesZ);
  ThreadLoop loop = loops.beginThreads(rows, from, to);
  llvm::Value *linear = loop.linear;
  llvm::Value *wide = builder.CreateZExt(linear, i64);
  llvm::BasicBlock *latch = loop.latch;

  llvm::ValueToValueMapTy map;
  map[body.getArg(0)] = function->getArg(0);
  // An index the loop does not count stands for itself until the code that
  // stores it is cloned (below).
  llvm::Value *counted[3] = {loop.x, rows.y, rows.z};
  llvm::Instruction *uncounted[3] = {};
  for (unsigned d = 0; d < 3; ++d) {
    if (counted[d]) {
      map[body.getArg(1 + d)] = counted[d];
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
  llvm::SmallDenseMap<uint32_t, llvm::BasicBlock *, 4> exitBlocks;
  auto exitTo = [&](uint32_t code) {
    llvm::BasicBlock *&exit = exitBlocks[code];
    if (exit)
      return exit;
    exit = llvm::BasicBlock::Create(context, "to." + std::to_string(code), function);
    llvm::IRBuilder<> at(exit);
    if (cut.barriersUniform && code == failedCode) {
      at.CreateAlignedStore(exits.endedTag, stateAddress, llvm::Align(4));
      at.CreateAlignedStore(at.getInt32(1), someEnded, llvm::Align(4));
    } else if (cut.barriersUniform && code == endedCode) {
      // Every thread the round runs returns (see host_region_uniformity.h),
      // and none waits any more.
    } else if (cut.barriersUniform) {
      // Every thread that goes on goes where the others go.
      at.CreateAlignedStore(at.getInt64(uint64_t(1) << code), reached, llvm::Align(8));
    } else {
      at.CreateAlignedStore(at.CreateAdd(at.getInt32(code * 2), exits.written), stateAddress,
                            llvm::Align(4));
      llvm::Value *mask = at.CreateAlignedLoad(i64, reached, llvm::Align(8));
      at.CreateAlignedStore(at.CreateOr(mask, at.getInt64(uint64_t(1) << code)), reached,
                            llvm::Align(8));
      at.CreateAlignedStore(at.CreateOr(at.CreateShl(linear, 1), at.getInt32(code != endedCode)),
                            lastRun, llvm::Align(4));
    }
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
  // The copy of a given value goes; its uses take the given one.
  std::vector<llvm::Instruction *> givenCopies;
  for (auto [value, given] : fixed)
    if (auto *copy = llvm::dyn_cast_or_null<llvm::Instruction>(map.lookup(value))) {
      givenCopies.push_back(copy);
      map[value] = given;
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
      bool fails = llvm::isa<llvm::UnreachableInst>(terminator) && cut.barriersUniform;
      llvm::BranchInst::Create(exitTo(fails ? failedCode : endedCode), terminator);
      terminator->eraseFromParent();
    }
  }
  llvm::remapInstructionsInBlocks(clones, map);
  for (llvm::Instruction *copy : givenCopies)
    copy->eraseFromParent();
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
  if (exits.expected) {
    llvm::Value *state = builder.CreateAlignedLoad(i32, stateAddress, llvm::Align(4));
    builder.CreateCondBr(builder.CreateICmpEQ(state, exits.expected), start, latch);
  } else {
    builder.CreateBr(start);
  }
  loops.endThreads(loop);
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
  // Where the threads wait together, every one that has not ended waits.
  llvm::Value *waits =
      parity ? builder.CreateAnd(
                   builder.CreateICmpUGE(state, builder.getInt32(2)),
                   builder.CreateICmpEQ(builder.CreateAnd(state, builder.getInt32(1)), parity))
             : builder.CreateICmpEQ(state, builder.getInt32(0));
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
  for (const RegionBarrier &barrier : cut.barriers) {
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

void RegionLoopWriter::writeRounds(llvm::BasicBlock *finished) {
  llvm::Type *i32 = builder.getInt32Ty();
  llvm::Type *i64 = builder.getInt64Ty();
  // Round 0: every thread from its start; the states it leaves have parity 1.
  emitRegion(0, builder.getInt32(0), {nullptr, builder.getInt32(1)});
  llvm::BasicBlock *round = llvm::BasicBlock::Create(context, "round", function);
  llvm::BasicBlock *rounds = llvm::BasicBlock::Create(context, "round.regions", function);
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
    emitRegion(k, start, {builder.CreateAdd(builder.getInt32(k * 2), parity), written});
    builder.CreateBr(skip);
    builder.SetInsertPoint(skip);
  }
  builder.CreateAlignedStore(written, waitingParity, llvm::Align(4));
  builder.CreateBr(round);
}

void RegionLoopWriter::writeUniformRounds(llvm::BasicBlock *finished) {
  llvm::Type *i32 = builder.getInt32Ty();
  llvm::Type *i64 = builder.getInt64Ty();
  // No thread has ended; round 0 runs every thread from its start.
  builder.CreateMemSet(states, builder.getInt8(0),
                       builder.CreateNUWMul(builder.CreateZExt(threadCount, i64),
                                            builder.getInt64(sizeof(uint32_t))),
                       llvm::MaybeAlign(4));
  builder.CreateAlignedStore(builder.getInt32(0), someEnded, llvm::Align(4));
  builder.CreateAlignedStore(builder.getInt32(0), roundNumber, llvm::Align(4));
  emitRegion(0, builder.getInt32(0), {});
  llvm::BasicBlock *round = llvm::BasicBlock::Create(context, "round", function);
  llvm::BasicBlock *rounds = llvm::BasicBlock::Create(context, "round.regions", function);
  builder.CreateBr(round);

  // Each later round: the region every thread that goes on waits at.
  builder.SetInsertPoint(round);
  llvm::Value *waitingAt = builder.CreateAlignedLoad(i64, reached, llvm::Align(8));
  builder.CreateCondBr(
      builder.CreateICmpEQ(builder.CreateLShr(waitingAt, builder.getInt64(1)), builder.getInt64(0)),
      finished, rounds);
  builder.SetInsertPoint(rounds);
  llvm::Value *start = emitUniformRoundStart();
  builder.CreateAlignedStore(start, roundStart, llvm::Align(4));
  builder.CreateAlignedStore(
      builder.CreateNUWAdd(builder.CreateAlignedLoad(i32, roundNumber, llvm::Align(4)),
                           builder.getInt32(1)),
      roundNumber, llvm::Align(4));
  builder.CreateAlignedStore(builder.getInt64(0), reached, llvm::Align(8));
  // What the threads wrote before the barrier, they read after it.
  for (const UniformSlot &slot : cut.uniformSlots)
    builder.CreateStore(builder.CreateLoad(slot.out->getAllocatedType(), arrays.lookup(slot.out)),
                        arrays.lookup(slot.in));
  if (cut.predicates)
    emitReductions(nullptr);
  for (unsigned k = 1; k <= cut.barriers.size(); ++k) {
    llvm::BasicBlock *runs = llvm::BasicBlock::Create(context, "round.region", function);
    llvm::BasicBlock *skip = llvm::BasicBlock::Create(context, "round.next", function);
    llvm::Value *bit = builder.CreateAnd(waitingAt, builder.getInt64(uint64_t(1) << k));
    builder.CreateCondBr(builder.CreateICmpNE(bit, builder.getInt64(0)), runs, skip);
    builder.SetInsertPoint(runs);
    emitRegion(k, start, {});
    builder.CreateBr(skip);
    builder.SetInsertPoint(skip);
  }
  builder.CreateBr(round);
}

llvm::Value *RegionLoopWriter::emitUniformRoundStart() {
  llvm::Type *i32 = builder.getInt32Ty();
  // As fibers run them: the thread that completed the barrier, the last the
  // round before ran, goes on first, then the others in the order they
  // reached it, which is the order they ran. The last thread in that order
  // did not run if it had ended before. (If the last that ran ended in the
  // round, fibers start where the round started, which skipping the threads
  // that have ended makes the same.)
  llvm::Value *previous = builder.CreateAlignedLoad(i32, roundStart, llvm::Align(4));
  auto before = [&](llvm::Value *thread) {
    return builder.CreateNUWSub(
        builder.CreateSelect(builder.CreateICmpEQ(thread, builder.getInt32(0)), threadCount,
                             thread),
        builder.getInt32(1));
  };
  llvm::Value *last = before(previous);
  llvm::Value *endedTag = builder.CreateNUWAdd(
      builder.CreateAlignedLoad(i32, roundNumber, llvm::Align(4)), builder.getInt32(1));
  llvm::BasicBlock *from = builder.GetInsertBlock();
  llvm::BasicBlock *scan = llvm::BasicBlock::Create(context, "round.start.scan", function);
  llvm::BasicBlock *chosen = llvm::BasicBlock::Create(context, "round.start", function);
  builder.CreateCondBr(
      builder.CreateICmpNE(builder.CreateAlignedLoad(i32, someEnded, llvm::Align(4)),
                           builder.getInt32(0)),
      scan, chosen);

  builder.SetInsertPoint(scan);
  llvm::PHINode *thread = builder.CreatePHI(i32, 2, "thread");
  thread->addIncoming(last, from);
  llvm::Value *state = builder.CreateAlignedLoad(
      i32, builder.CreateInBoundsGEP(i32, states, builder.CreateZExt(thread, builder.getInt64Ty())),
      llvm::Align(4));
  llvm::Value *ran = builder.CreateOr(builder.CreateICmpEQ(state, builder.getInt32(0)),
                                      builder.CreateICmpEQ(state, endedTag));
  thread->addIncoming(before(thread), scan);
  markThreadLoop(*builder.CreateCondBr(ran, chosen, scan));

  builder.SetInsertPoint(chosen);
  llvm::PHINode *start = builder.CreatePHI(i32, 2, "round.start");
  start->addIncoming(last, from);
  start->addIncoming(thread, scan);
  return start;
}

llvm::Function *RegionLoopWriter::write() {
  llvm::Function &body = *cut.body;
  llvm::Type *i32 = builder.getInt32Ty();
  std::vector<llvm::Type *> parameters{body.getFunctionType()->getParamType(0)};
  for (unsigned i = 5; i < body.arg_size(); ++i)
    parameters.push_back(body.getFunctionType()->getParamType(i));
  function = llvm::Function::Create(llvm::FunctionType::get(builder.getVoidTy(), parameters, false),
                                    llvm::GlobalValue::InternalLinkage, body.getName() + ".regions",
                                    body.getParent());
  function->addFnAttr(llvm::Attribute::NoUnwind);
  // As in the body, the thread's fields are reached through it alone.
  function->addParamAttr(0, llvm::Attribute::NoAlias);
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
  builder.CreateAlignedStore(builder.getInt32(0), roundStart, llvm::Align(4));
  llvm::BasicBlock *finished = llvm::BasicBlock::Create(context, "finished", function);
  if (cut.barriersUniform)
    writeUniformRounds(finished);
  else
    writeRounds(finished);
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
  if (cutAtBarriers(cut)) {
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
