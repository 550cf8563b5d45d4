//===- runtime/cpu_engine/fiber_scheduler.cpp - Threads as fibers ---------===//

#include "runtime/cpu_engine/fiber_scheduler.h"

#include <bit>
#include <cstdio>
#include <cstdlib>
#include <type_traits>

namespace kiln::cpu_engine {

static_assert(std::is_standard_layout_v<FiberThread>,
              "services cast KilnCpuThread* back to FiberThread*");

namespace {

constexpr uint32_t laneBit(uint32_t lane) {
  return 1u << lane;
}

const char *barrierName(BarrierOp op) {
  switch (op) {
  case BarrierOp::Sync:
    return "syncthreads";
  case BarrierOp::Count:
    return "syncthreads_count";
  case BarrierOp::And:
    return "syncthreads_and";
  case BarrierOp::Or:
    return "syncthreads_or";
  }
  return "syncthreads";
}

/// "3", "0-15", "0-3, 8, 10-11".
std::string laneList(uint32_t lanes) {
  std::string text;
  while (lanes) {
    uint32_t first = static_cast<uint32_t>(std::countr_zero(lanes));
    uint32_t last = first;
    while (last + 1 < 32 && (lanes >> (last + 1) & 1u))
      ++last;
    if (!text.empty())
      text += ", ";
    text += std::to_string(first);
    if (last != first)
      text += "-" + std::to_string(last);
    lanes &= last == 31 ? 0 : ~0u << (last + 1);
  }
  return text;
}

std::string threadIndex(const KilnCpuThread &thread) {
  return "(" + std::to_string(thread.threadIdx[0]) + ", " + std::to_string(thread.threadIdx[1]) +
         ", " + std::to_string(thread.threadIdx[2]) + ")";
}

} // namespace

FiberScheduler::Outcome FiberScheduler::run(const KilnCpuThread &prototype,
                                            KilnCpuKernelEntry kernelEntry, void *const *kernelArgs,
                                            size_t localBytesPerThread, std::string &problem) {
  uint32_t dimX = prototype.blockDim[0], dimY = prototype.blockDim[1];
  uint32_t count = dimX * dimY * prototype.blockDim[2];
  if (!stacks.reserve(count, baseStackBytes + localBytesPerThread, problem))
    return Outcome::NoStacks;

  entry = kernelEntry;
  args = kernelArgs;
  threads.resize(count);
  warps.assign((count + 31) / 32, Warp());
  runQueue.resize(count);
  queueHead = 0;
  queueSize = 0;
  barrierWaiters.clear();
  barrierWaiters.reserve(count);
  barrierTrue = 0;
  liveThreads = count;
  gridWaiters = 0;

  for (uint32_t id = 0; id < count; ++id) {
    FiberThread &thread = threads[id];
    thread.abi = prototype;
    thread.abi.threadIdx[0] = id % dimX;
    thread.abi.threadIdx[1] = id / dimX % dimY;
    thread.abi.threadIdx[2] = id / (dimX * dimY);
    thread.abi.laneId = id % 32;
    thread.scheduler = this;
    thread.linearId = id;
    thread.wait = FiberThread::Wait::None;
    thread.context.prepare(stacks[id].low(), stacks[id].size(), &FiberScheduler::fiberMain,
                           &thread);
    warps[id / 32].live |= laneBit(id % 32);
    pushRunnable(id);
  }

  uint32_t first = 0;
  popRunnable(first);
  return runFrom(first, problem);
}

FiberScheduler::Outcome FiberScheduler::passGridBarrier(std::string &problem) {
  for (FiberThread &thread : threads)
    if (thread.wait == FiberThread::Wait::Grid) {
      thread.wait = FiberThread::Wait::None;
      pushRunnable(thread.linearId);
    }
  gridWaiters = 0;
  uint32_t first = 0;
  popRunnable(first); // AtGridBarrier: at least one thread waited
  return runFrom(first, problem);
}

FiberScheduler::Outcome FiberScheduler::runFrom(uint32_t first, std::string &problem) {
  FiberContext::switchTo(workerContext, threads[first].context);
  // Back on the worker: no fiber is runnable.
  if (liveThreads == 0)
    return Outcome::Completed;
  if (gridWaiters == liveThreads)
    return Outcome::AtGridBarrier;
  problem = describeDeadlock();
  return Outcome::Deadlocked;
}

void FiberScheduler::fiberMain(void *argument) {
  FiberThread &self = *static_cast<FiberThread *>(argument);
  FiberScheduler &scheduler = *self.scheduler;
  scheduler.entry(&self.abi, scheduler.args);
  scheduler.exit(self);
}

void FiberScheduler::pushRunnable(uint32_t id) {
  uint32_t slot = queueHead + queueSize;
  if (slot >= runQueue.size())
    slot -= static_cast<uint32_t>(runQueue.size());
  runQueue[slot] = id;
  ++queueSize;
}

bool FiberScheduler::popRunnable(uint32_t &id) {
  if (queueSize == 0)
    return false;
  id = runQueue[queueHead];
  if (++queueHead == runQueue.size())
    queueHead = 0;
  --queueSize;
  return true;
}

void FiberScheduler::suspend(FiberThread &self) {
  uint32_t next;
  if (popRunnable(next))
    FiberContext::switchTo(self.context, threads[next].context);
  else
    FiberContext::switchTo(self.context, workerContext);
}

int32_t FiberScheduler::barrier(FiberThread &self, BarrierOp op, bool predicate) {
  self.wait = FiberThread::Wait::Barrier;
  self.barrierOp = op;
  barrierWaiters.push_back(self.linearId);
  barrierTrue += predicate;
  if (barrierWaiters.size() == liveThreads) {
    releaseBarrier(&self);
  } else {
    // A lane that waits here no longer holds up its warp's activemask().
    tryCompleteActiveMasks(self.linearId / 32, nullptr);
    suspend(self);
  }
  return self.barrierResult;
}

void FiberScheduler::releaseBarrier(const FiberThread *running) {
  uint32_t arrived = static_cast<uint32_t>(barrierWaiters.size());
  for (uint32_t id : barrierWaiters) {
    FiberThread &thread = threads[id];
    thread.barrierResult = barrierResultFor(thread.barrierOp, barrierTrue, arrived);
    thread.wait = FiberThread::Wait::None;
    if (&thread != running)
      pushRunnable(id);
  }
  barrierWaiters.clear();
  barrierTrue = 0;
}

uint32_t FiberScheduler::groupOf(const FiberThread &thread) const {
  // The calling lane always takes part, even if its mask forgets it.
  uint32_t lane = thread.linearId % 32;
  return (thread.mask | laneBit(lane)) & warps[thread.linearId / 32].live;
}

void FiberScheduler::warpCollective(FiberThread &self) {
  uint32_t warp = self.linearId / 32, lane = self.linearId % 32;
  self.wait = FiberThread::Wait::Warp;
  warps[warp].pending |= laneBit(lane);
  if (tryCompleteGroup(warp, lane, &self))
    return;
  tryCompleteActiveMasks(warp, nullptr);
  suspend(self);
}

bool FiberScheduler::tryCompleteGroup(uint32_t warp, uint32_t lane, const FiberThread *running) {
  Warp &state = warps[warp];
  FiberThread *lanes = &threads[warp * 32];
  const FiberThread &caller = lanes[lane];
  if (caller.collective == CollectiveKind::ActiveMask)
    return tryCompleteActiveMasks(warp, running);
  uint32_t group = groupOf(caller);
  if (group & ~state.pending)
    return false;
  // Lockstep: every member must be at the same kind of collective, naming
  // the same lanes. Anything else waits (and is reported if it never ends).
  uint64_t values[32] = {};
  uint32_t predicates = 0;
  for (uint32_t rest = group; rest; rest &= rest - 1) {
    uint32_t member = static_cast<uint32_t>(std::countr_zero(rest));
    const FiberThread &thread = lanes[member];
    if (thread.collective != caller.collective || groupOf(thread) != group)
      return false;
    values[member] = thread.value;
    predicates |= uint32_t(thread.predicate) << member;
  }
  bool allEqual = false;
  uint32_t matchAll =
      caller.collective == CollectiveKind::MatchAll ? matchAllGroup(group, values, allEqual) : 0;
  for (uint32_t rest = group; rest; rest &= rest - 1) {
    uint32_t member = static_cast<uint32_t>(std::countr_zero(rest));
    FiberThread &thread = lanes[member];
    switch (thread.collective) {
    case CollectiveKind::Syncwarp:
      break;
    case CollectiveKind::Shuffle:
      thread.result =
          shuffleLane(group, values, member, thread.mode, thread.laneOperand, thread.clamp);
      break;
    case CollectiveKind::Vote:
      thread.result = voteGroup(group, predicates, thread.mode);
      break;
    case CollectiveKind::MatchAny:
      thread.result = matchAnyLane(group, values, member);
      break;
    case CollectiveKind::MatchAll:
      thread.result = matchAll;
      thread.resultFlag = allEqual;
      break;
    case CollectiveKind::ActiveMask: // completed by tryCompleteActiveMasks
      break;
    }
    thread.wait = FiberThread::Wait::None;
    if (&thread != running)
      pushRunnable(thread.linearId);
  }
  state.pending &= ~group;
  return true;
}

bool FiberScheduler::tryCompleteActiveMasks(uint32_t warp, const FiberThread *running) {
  Warp &state = warps[warp];
  if (state.live & ~waitingLanes(warp))
    return false; // a lane still running may yet reach one of the calls
  // Every call site at once: lanes that went separate ways and wait at
  // different calls go on together, so that they meet again afterwards.
  FiberThread *lanes = &threads[warp * 32];
  uint32_t atActiveMask = 0;
  for (uint32_t rest = state.pending; rest; rest &= rest - 1) {
    uint32_t lane = static_cast<uint32_t>(std::countr_zero(rest));
    if (lanes[lane].collective == CollectiveKind::ActiveMask)
      atActiveMask |= laneBit(lane);
  }
  for (uint32_t rest = atActiveMask; rest; rest &= rest - 1) {
    FiberThread &thread = lanes[std::countr_zero(rest)];
    uint32_t group = 0;
    for (uint32_t others = atActiveMask; others; others &= others - 1) {
      uint32_t other = static_cast<uint32_t>(std::countr_zero(others));
      if (lanes[other].value == thread.value)
        group |= laneBit(other);
    }
    thread.result = group;
    thread.wait = FiberThread::Wait::None;
    if (&thread != running)
      pushRunnable(thread.linearId);
  }
  state.pending &= ~atActiveMask;
  return atActiveMask != 0;
}

uint32_t FiberScheduler::waitingLanes(uint32_t warp) const {
  uint32_t waiting = warps[warp].pending;
  for (uint32_t rest = warps[warp].live & ~waiting; rest; rest &= rest - 1) {
    uint32_t lane = static_cast<uint32_t>(std::countr_zero(rest));
    if (threads[warp * 32 + lane].wait == FiberThread::Wait::Barrier ||
        threads[warp * 32 + lane].wait == FiberThread::Wait::Grid)
      waiting |= laneBit(lane);
  }
  return waiting;
}

void FiberScheduler::retryWarp(uint32_t warp) {
  for (uint32_t rest = warps[warp].pending; rest; rest &= rest - 1) {
    uint32_t lane = static_cast<uint32_t>(std::countr_zero(rest));
    if (warps[warp].pending & laneBit(lane))
      tryCompleteGroup(warp, lane, nullptr);
  }
}

void FiberScheduler::gridSync(FiberThread &self) {
  self.wait = FiberThread::Wait::Grid;
  ++gridWaiters;
  tryCompleteActiveMasks(self.linearId / 32, nullptr);
  suspend(self);
}

bool FiberScheduler::yield(FiberThread &self) {
  if (queueSize == 0)
    return false;
  pushRunnable(self.linearId);
  suspend(self);
  return true;
}

void FiberScheduler::exit(FiberThread &self) {
  uint32_t warp = self.linearId / 32;
  self.wait = FiberThread::Wait::Exited;
  --liveThreads;
  warps[warp].live &= ~laneBit(self.linearId % 32);
  // Fewer live lanes and threads may complete what others wait for.
  if (warps[warp].pending)
    retryWarp(warp);
  if (!barrierWaiters.empty() && barrierWaiters.size() == liveThreads)
    releaseBarrier(nullptr);
  suspend(self); // never resumed
  std::abort();
}

std::string FiberScheduler::describeWait(const FiberThread &thread) const {
  if (thread.wait == FiberThread::Wait::Barrier)
    return std::string("wait in ") + barrierName(thread.barrierOp) + " (" +
           std::to_string(barrierWaiters.size()) + " of " + std::to_string(liveThreads) +
           " live threads arrived)";
  if (thread.wait == FiberThread::Wait::Grid)
    return "wait in this_grid().sync() (" + std::to_string(gridWaiters) + " of " +
           std::to_string(liveThreads) + " live threads of the block arrived)";
  if (thread.wait != FiberThread::Wait::Warp)
    return "are runnable"; // cannot happen in a deadlock
  uint32_t warp = thread.linearId / 32;
  if (thread.collective == CollectiveKind::ActiveMask) // cannot either: all others wait
    return "wait in activemask of warp " + std::to_string(warp) +
           " for the warp's other lanes to wait or exit";
  const FiberThread *lanes = &threads[warp * 32];
  uint32_t group = groupOf(thread), missing = 0;
  for (uint32_t rest = group; rest; rest &= rest - 1) {
    uint32_t member = static_cast<uint32_t>(std::countr_zero(rest));
    const FiberThread &other = lanes[member];
    if (!(warps[warp].pending & laneBit(member)) || other.collective != thread.collective ||
        groupOf(other) != group)
      missing |= laneBit(member);
  }
  char mask[16];
  std::snprintf(mask, sizeof mask, "0x%08x", thread.mask);
  return std::string("wait in ") + collectiveName(thread.collective, thread.mode) +
         "(mask=" + mask + ") of warp " + std::to_string(warp) + " for " +
         (std::popcount(missing) == 1 ? "lane " : "lanes ") + laneList(missing) +
         " to reach the same collective";
}

std::string FiberScheduler::describeDeadlock() const {
  constexpr int maxGroups = 8;
  std::string text = "no thread can make progress (" + std::to_string(liveThreads) + " of " +
                     std::to_string(threads.size()) + " threads alive)";
  int groups = 0;
  uint32_t omitted = 0;
  for (size_t id = 0; id < threads.size();) {
    if (threads[id].wait == FiberThread::Wait::Exited) {
      ++id;
      continue;
    }
    // Consecutive threads waiting the same way make one line.
    std::string wait = describeWait(threads[id]);
    size_t last = id;
    while (last + 1 < threads.size() && threads[last + 1].wait != FiberThread::Wait::Exited &&
           describeWait(threads[last + 1]) == wait)
      ++last;
    if (groups++ < maxGroups) {
      text += "; ";
      if (last == id)
        text += "thread " + threadIndex(threads[id].abi) + " waits" + wait.substr(4);
      else
        text += "threads " + threadIndex(threads[id].abi) + " to " +
                threadIndex(threads[last].abi) + " " + wait;
    } else {
      omitted += static_cast<uint32_t>(last - id + 1);
    }
    id = last + 1;
  }
  if (omitted)
    text += "; and " + std::to_string(omitted) + " more threads";
  return text;
}

} // namespace kiln::cpu_engine
