//===- backend/host/host_target.h - Target hooks for the CPU engine --*- C++ -*-===//
//
// Code for the CPU engine (runtime/cpu_engine) follows the contract of
// module/cpu_kernel_abi.h: every function takes the engine's
// KilnCpuThread as a hidden first parameter; thread indices and shared
// memory are read from it, barriers and warp collectives call its
// services, math calls the C library. Each kernel gets a `_thread` entry
// and, when its threads never wait for each other, a `_block` entry that
// runs the whole block in a loop; when they wait only at block barriers, a
// `_block` entry that runs them as barrier regions
// (backend/host/host_barrier_regions.h). host_kernel_entries.h writes them.
//
// Block loops: the `_block` entry of a kernel whose threads never wait runs
// a loop nest over the block's threads around a copy of the kernel's body
// with every call inlined, in which threadIdx and laneId are the loops'
// induction variables (written to the KilnCpuThread only before a service
// call). Index loads in that copy carry the ranges the launch limits give
// them (those of the plain `_thread` entry do not: it is the reference the
// fast paths are compared with), and the optimizer splits each loop at the range checks of its
// guards and index checks (inductive range check elimination), so that the body of a typical `if i
// < n:` kernel vectorizes across threads. A kernel whose blocks are independent loops over runs of
// blocks instead (host_block_runs.h).
//
// Interrupts: once optimized, every loop of the kernel's code that can run
// long polls the engine's interrupt word (host_interrupt_polls.h); the
// loops of barrier regions, before LLVM splits them at their barriers.
//
// Index checks: the lowering guards every array access with a check whose
// condition includes whether this copy of the code checks indices. A build
// of one copy (index_check_copies.h) makes that the constant the kernel's
// boundscheck option says. A build of both makes it a call of
// `kiln.index_checks`: once the kernel is lowered, each function that has
// such checks gets an unchecked copy, in which the call is false (LLVM
// then deletes the checks); in the original it is true. The entry points
// pick a copy per launch from KilnCpuThread.flags, so that turning the
// checks off costs one branch per thread or block, not one per access.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "backend/codegen/target_hooks.h"
#include "backend/host/host_cuda_source.h"
#include "backend/host/index_check_copies.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/Analysis/LoopInfo.h>

#include <optional>
#include <vector>

namespace kiln::backend {

class HostTargetHooks final : public TargetHooks {
public:
  /// `cudaCode`: the kernel's link files compiled for the host, if any.
  /// `switchableIndexChecks`: see KernelCompiler::switchableIndexChecks.
  HostTargetHooks(std::string triple, std::string dataLayout,
                  const HostCudaCode *cudaCode = nullptr, bool switchableIndexChecks = false)
      : triple(std::move(triple)), dataLayout(std::move(dataLayout)), cudaCode(cudaCode),
        switchableIndexChecks(switchableIndexChecks) {}

  void configureModule(llvm::Module &module, const ir::Function &kernel) override;
  bool passesThreadContext() const override { return true; }

  llvm::Value *readIndex(HookSite &site, ir::Intrinsic which, unsigned dimension) override;
  void syncThreads(HookSite &site) override;
  llvm::Value *syncThreadsReduce(HookSite &site, ir::Intrinsic which,
                                 llvm::Value *predicate) override;
  void syncWarp(HookSite &site, llvm::Value *mask) override;
  void gridSync(HookSite &site) override;
  void fence(HookSite &site, ir::Intrinsic which) override;
  void nanosleep(HookSite &site, llvm::Value *nanoseconds) override;

  llvm::Value *shuffle32(HookSite &site, ir::Intrinsic mode, llvm::Value *mask, llvm::Value *value,
                         llvm::Value *lane) override;
  llvm::Value *vote(HookSite &site, ir::Intrinsic which, llvm::Value *mask,
                    llvm::Value *predicate) override;
  llvm::Value *matchAny(HookSite &site, llvm::Value *mask, llvm::Value *value) override;
  std::pair<llvm::Value *, llvm::Value *> matchAll(HookSite &site, llvm::Value *mask,
                                                   llvm::Value *value) override;
  llvm::Value *activeMask(HookSite &site) override;
  llvm::Value *lanemaskLt(HookSite &site) override;

  llvm::Value *sharedArray(HookSite &site, const SharedSlot &slot) override;
  llvm::Value *cacheHintedLoad(HookSite &site, ir::Intrinsic which, llvm::Value *address,
                               llvm::Type *type, llvm::Align alignment) override;
  void cacheHintedStore(HookSite &site, ir::Intrinsic which, llvm::Value *address,
                        llvm::Value *value, llvm::Align alignment) override;
  unsigned constantDataAddressSpace() const override;
  std::pair<llvm::Value *, llvm::Value *> dynamicSharedMemory(HookSite &site) override;

  std::optional<std::string> mathFunction(ir::Intrinsic which, unsigned bits,
                                          bool fastmath) override;
  bool minMaxOrdersSignedZeros() const override { return false; }
  std::optional<std::string> externalCallProblem(llvm::StringRef symbol) const override;

  void print(HookSite &site, llvm::ArrayRef<PrintArgument> arguments) override;
  void raise(HookSite &site, llvm::StringRef exceptionClass, llvm::StringRef message) override;
  void raiseUnsupported(HookSite &site, llvm::StringRef message) override;
  bool checksIndices() const override { return true; }
  llvm::Value *indexChecksEnabled(HookSite &site) override;
  void raiseIndexError(HookSite &site, llvm::StringRef array, llvm::Value *index, llvm::Value *axis,
                       llvm::ArrayRef<llvm::Value *> shape) override;

  void finishKernel(llvm::Function &kernel, const ir::Function &function,
                    llvm::ArrayRef<KernelParameter> parameters) override;

  /// The operations (ir/operation_sites.h) whose positions the code's
  /// messages name: the code passes the index of one in this list, and the
  /// build resolves it to "file:line" beside the code.
  llvm::ArrayRef<uint32_t> messageSites() const { return sites; }

  /// Which copies of its body the kernel's host code holds.
  IndexCheckCopies indexCheckCopies() const;

private:
  /// The index in messageSites() of `operation`, added on first use.
  uint32_t messageSite(uint32_t operation);

  std::string triple;
  std::string dataLayout;
  const HostCudaCode *cudaCode;
  std::vector<uint32_t> sites;
  llvm::DenseMap<uint32_t, uint32_t> siteIndices;
  /// Whether the kernel calls nanosleep or activemask, or syncs the grid,
  /// which wait for other threads although the front end does not count
  /// them as synchronizing: a thread that sleeps may be polling for another
  /// thread, which a block entry would only run after it; activemask needs
  /// the lanes of its warp to have reached it; a grid barrier needs every
  /// block of the grid. Such kernels run as fibers.
  bool waitsForOthers = false;
  /// Whether the kernel uses a warp collective (syncwarp, shuffles, votes,
  /// match): those need the lanes of a warp to meet in one call, which
  /// only fibers give them.
  bool usesWarpCollectives = false;
  /// Whether a barrier of the kernel is syncthreads_count/_and/_or.
  bool reducesAtBarriers = false;
  /// Whether the kernel was compiled with debug=True.
  bool reportsExceptions = false;
  /// Whether the kernel runs its checked code unless the engine is told
  /// otherwise: all but boundscheck=False.
  bool checksByDefault = true;
  /// Whether the host code holds the kernel's body with and without index
  /// checks, or only the copy checksByDefault names.
  bool switchableIndexChecks;
  /// Whether the kernel checks any index at all: if not, its one copy is
  /// both.
  bool checksAnyIndex = false;
};

/// Marks `function` as kernel code, whose first parameter is the
/// KilnCpuThread: the lowered functions, the entries and their loops.
void markTakesThread(llvm::Function &function);
/// Removes the marks: a coroutine's parts take a frame instead.
void unmarkTakesThread(llvm::Function &function);
/// Whether `function` takes the thread as its first parameter.
bool takesThread(const llvm::Function &function);
/// Whether `function` was marked as taking the thread, which the optimizer
/// may since have removed as unused.
bool tookThread(const llvm::Function &function);

/// Inlines every call of a function defined in the module into `function`,
/// those of the inlined code too. False if that does not end (recursion).
bool inlineAllCalls(llvm::Function &function);

/// A copy of kernel body `body` (thread, parameters...) for the block
/// entry's loop: (thread, threadIdx.x, .y, .z, laneId, parameters...), with
/// every function it calls inlined and the thread's indices read from those
/// parameters. The thread's fields get them only before a call that takes
/// the thread (a service), so that the loop over the block's threads keeps
/// them in registers and stores nothing per thread. Null when a call cannot
/// be inlined.
llvm::Function *specializeForThreadLoop(llvm::Function &body);

/// The address of the field at `offset` of the KilnCpuThread `thread`.
llvm::Value *threadFieldAddress(llvm::IRBuilder<> &builder, llvm::Value *thread, size_t offset);

/// Calls the engine service at `offset` in KilnCpuServices with `thread` and
/// `arguments`.
llvm::CallInst *callHostService(llvm::IRBuilder<> &builder, llvm::Value *thread, size_t offset,
                                llvm::Type *result, llvm::ArrayRef<llvm::Value *> arguments);

/// The offset in KilnCpuServices of the service `call` calls, if it calls
/// one.
std::optional<size_t> serviceOffsetOf(const llvm::CallInst &call);

/// Whether `load` reads blockIdx.x of the kernel's thread.
bool readsBlockIndexX(const llvm::LoadInst &load);

/// Loads launch index or dimension `which` (threadIdx, blockIdx, blockDim,
/// gridDim, laneId, warpSize) of the KilnCpuThread `thread`, with the range
/// the launch limits give it: for the loops of the fast paths.
llvm::LoadInst *loadLaunchIndex(llvm::IRBuilder<> &builder, llvm::Value *thread,
                                ir::Intrinsic which, unsigned dimension);

/// Gives the launch indices `fastPath` reads from its thread the ranges the
/// launch limits give them. The kernel's code itself reads them without
/// (the plain thread entry, which the engine's reference mode runs): only
/// copies of it that a fast path makes assume what the engine guarantees.
void setLaunchIndexRanges(llvm::Function &fastPath);

/// Names of a kernel's host entry points.
std::string threadEntryName(llvm::StringRef kernelName);
std::string blockEntryName(llvm::StringRef kernelName);

} // namespace kiln::backend
