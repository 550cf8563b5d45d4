//===- runtime/cpu_engine/engine.h - Running kernels on the host -*- C++ -*-===//
//
// [Note: the CPU engine]
// The engine runs the host code Kiln generates for a kernel
// (module/cpu_kernel_abi.h) with CUDA's execution model, on any machine.
//
// Blocks. A launch is a grid of independent blocks; a pool of host threads
// (workers, created with large stacks because local arrays live on the
// stack) claims blocks in order, in chunks, and runs each block to
// completion on one worker. Launches from several host threads queue up in
// the same pool. A grid too small to gain from the pool (one block, a few
// hundred threads in all, or a pool of one worker) runs its blocks in order
// on the thread that launches it instead, which saves waking a worker
// (calling_thread.h); results are the same either way. Each block gets its
// shared memory zeroed: static arrays at the start, dynamic ones after them
// (16-byte aligned). A kernel without shared memory whose blocks are
// independent (no barriers, atomics or prints) takes the consecutive blocks
// of a grid row in its chunk as one run, and runs them row of threads by
// row of threads across the run (host_block_runs.h), which reads the rows
// of 2-D arrays from start to end; an index error ends its block alone,
// and the engine finishes the run's other blocks from the rows they
// stopped at, so that every block ends as it would alone.
//
// Threads of a block. A kernel that never waits for other threads has a
// `<kernel>_block` entry that loops over the block's threads itself: one
// call per block, no scheduling at all. A kernel whose threads wait only at
// block barriers has a `<kernel>_block` entry too, which runs them region
// by region itself: a loop over the threads from one barrier to the next,
// with what lives across a barrier in an array per thread (on the stack,
// or from allocateFrame once per block). Where those arrays would be large, the
// entry hands the engine its threads as coroutines that return at each
// barrier instead (barrier_regions.h): a call per thread and barrier, with
// what lives across the barrier in a small frame. Every other kernel (warp
// collectives, activemask, nanosleep, a raise) runs each CUDA thread as a
// fiber: its own mmap'd stack (guard page below, untouched pages cost
// nothing) and a saved register set, switched by a few instructions of
// assembly (fiber_context.h). A fiber runs until it must wait for other
// threads (syncthreads, a warp collective) or ends; it then hands the worker
// directly to the next runnable fiber of the block (fiber_scheduler.h).
// nanosleep also lets the other runnable fibers go first, so that a thread
// polling a flag another thread of its block sets cannot spin forever. Only
// one fiber of a block runs at a time, on one worker, so the block's
// scheduling state needs no locks, and the order in which fibers run is a
// function of the kernel alone: race-free kernels give the same results on
// every run and with any number of workers. Region loops and barrier
// regions run their threads in the order fibers would.
//
// Barriers follow sm_70+: syncthreads completes when every thread of the
// block that has not exited has arrived (exited threads count as arrived).
// Warps are 32 consecutive linear thread ids (x fastest). Warp collectives
// are lockstep rendezvous: a lane that calls shfl/vote/match/syncwarp with
// `mask` waits until every live lane named in the mask has reached a
// collective of the same kind naming the same live lanes; then the whole
// group gets its results at once, as PTX defines them (warp_collectives.h).
// Lanes that disagree (a shuffle against a vote, different masks) keep
// waiting, which ends as a deadlock report rather than a silent wrong
// result. activemask() names the lanes that would run the call together on
// a GPU: it waits until every other live lane of the warp waits (at a
// barrier or a collective) or has exited, then returns the lanes waiting at
// the same call site; lanes in another branch call from elsewhere. A lane
// that spins without waiting holds up its warp's activemask().
//
// Cooperative launches. A kernel that syncs the grid (cuda.cg.this_grid()
// .sync()) needs every block of the grid resident until the last one has
// arrived, so its launch runs all blocks on one worker, each block's
// threads as fibers of the block's own scheduler with the block's own
// shared memory: block after block up to the grid barrier (or the end),
// then, once every block has arrived, round after round on from it. As at
// syncthreads, exited threads count as arrived. Such a grid may hold at
// most maxCooperativeBlocks() blocks (max_cooperative_grid_blocks()), as a
// GPU refuses a cooperative launch larger than it can keep resident. Blocks
// take turns between grid barriers, so a block that spins until another
// block writes a flag, with no grid barrier between them, spins forever
// here (until Ctrl-C), where a GPU would run both at once.
//
// Deadlocks. Waits only end when a fiber arrives or exits, and both events
// check at once whether that completes a barrier or a warp group. So when
// the fiber that is running must wait and no fiber is runnable, nothing can
// ever change: the block is deadlocked. The engine then abandons the block's
// fibers and fails the launch with a message naming the block and where
// each waiting thread waits, instead of hanging.
//
// Exceptions. A raise in a fiber records the exception and ends the fiber
// as if it had returned: barriers stop waiting for it, the other threads and
// blocks run on, as on a GPU. Block entries must not raise (generated code
// only raises from kernels without one); if one does anyway, the exception
// is recorded and the threads of that block the loop had not reached yet
// do not run.
//
// Index errors. Checked code (module/cpu_kernel_abi.h) reports an index
// out of bounds through raiseIndexError, whatever debug= says: the engine
// records an IndexError, like any raise, and the launch fails with it
// instead of the access reaching memory the array does not own.
//
// Interrupts. The host thread that waits for a launch polls the caller's
// StopCheck (the Python runtime: a pending Ctrl-C) every few milliseconds.
// Once it says stop, blocks not yet started are skipped, and running
// threads stop at their next loop back-edge, where generated code reads
// KilnCpuThread::interrupt; the launch then fails as Interrupted, and the
// engine is ready for the next launch. A launch on the calling thread is
// polled from inside: every few milliseconds its running thread is asked
// (through the same word) to poll the StopCheck itself, and goes on unless
// it says stop.
//
// Reference mode. An engine made with EngineOptions::reference runs each
// launch on one worker, block after block, and each thread of a block as a
// fiber through the kernel's plain `_thread` entry, in the order fibers
// run: one thread at a time, to its end or its next barrier or warp
// collective. It takes none of the fast paths above: no block entries (so
// neither loops over a block's threads, runs of blocks, region loops nor
// barrier regions), no launches on the calling thread, and the thread
// entry's code assumes no ranges of launch indices. Every fast path must
// give the results it gives; the differential tester compares them.
//
// Failures are reported deterministically: the launch reports the failure
// of the lowest block (see launch_job.h), and the lowest thread in it.
//
// Everything here is free of exceptions, RTTI, LLVM, CUDA and Python, so
// that the Python runtime can link it into a small C extension.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "module/cpu_kernel_abi.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

namespace kiln::cpu_engine {

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
};

/// What the compiler's metadata says about one kernel specialization.
struct KernelImage {
  /// Runs one thread; null only with a block entry and no local memory.
  KilnCpuKernelEntry threadEntry = nullptr;
  KilnCpuKernelEntry blockEntry = nullptr; ///< null when threads must wait for each other
  uint64_t staticSharedBytes = 0;          ///< static shared arrays, laid out by the compiler
  /// Stack a thread needs for its local arrays: added to each fiber's stack.
  /// (A block entry that would not fit a worker's stack runs as fibers.)
  uint64_t localBytesPerThread = 0;
  /// The kernel syncs the grid: all its blocks run at once (see
  /// "Cooperative launches"), and the grid may hold at most
  /// maxCooperativeBlocks() of them.
  bool cooperative = false;
  /// The kernel's launch_bounds: a larger block is refused, as a GPU
  /// refuses it (CUDA_ERROR_INVALID_VALUE); 0 where it has none.
  uint32_t maxThreadsPerBlock = 0;
  const char *name = nullptr; ///< for messages
  /// "file:line" of each site the host code's messages name, by the index
  /// the code passes (module/cpu_kernel_abi.h, raiseIndexError).
  const std::string *sites = nullptr;
  size_t siteCount = 0;

  /// Site `index`'s "file:line"; null past the table's end.
  const char *site(uint32_t index) const {
    return index < siteCount ? sites[index].c_str() : nullptr;
  }
};

struct LaunchConfig {
  Dim3 grid;
  Dim3 block;
  uint32_t dynamicSharedBytes = 0;
  /// KilnThreadFlags for every thread: which copy of checked code runs.
  uint32_t threadFlags = 0;
};

/// Asked by the host thread waiting for a launch, every few milliseconds
/// while the launch runs: true stops the launch (see "Interrupts").
struct StopCheck {
  bool (*requested)(void *context) = nullptr;
  void *context = nullptr;
};

/// Hardware limits a launch is checked against (those of CUDA devices of
/// compute capability 7.0 and later, without opt-in shared memory).
struct DeviceLimits {
  static constexpr uint32_t maxThreadsPerBlock = KILN_CPU_MAX_THREADS_PER_BLOCK;
  static constexpr uint32_t maxBlockDim[3] = {KILN_CPU_MAX_BLOCK_DIM_X, KILN_CPU_MAX_BLOCK_DIM_Y,
                                              KILN_CPU_MAX_BLOCK_DIM_Z};
  static constexpr uint32_t maxGridDim[3] = {KILN_CPU_MAX_GRID_DIM_X, KILN_CPU_MAX_GRID_DIM_Y,
                                             KILN_CPU_MAX_GRID_DIM_Z};
  static constexpr uint32_t maxSharedBytesPerBlock = 48 * 1024;
  static constexpr uint32_t warpSize = KILN_CPU_WARP_SIZE;
  /// The threads of a cooperative grid, all resident at once as fibers (a
  /// fiber's stack takes two memory mappings, and Linux allows a process
  /// about 65,000).
  static constexpr uint32_t maxCooperativeThreads = 16384;
  /// The blocks of a cooperative grid, as many as 8 SMs of a GPU of
  /// compute capability 8.0 keep resident.
  static constexpr uint32_t maxCooperativeBlocks = 8 * 32;
};

/// How many blocks of `threadsPerBlock` threads a cooperative launch may
/// have (max_cooperative_grid_blocks()); 0 if the block is too large.
uint32_t maxCooperativeBlocks(uint64_t threadsPerBlock);

struct EngineOptions {
  /// Host threads that run blocks; 0 means std::thread::hardware_concurrency().
  unsigned workerCount = 0;
  /// Stack of each worker; block entries (and their local arrays) run on it.
  size_t workerStackBytes = size_t(16) << 20;
  /// Stack of each fiber, before adding the kernel's localBytesPerThread.
  size_t fiberStackBytes = size_t(256) << 10;
  /// Where print() writes; null means stdout.
  std::FILE *printStream = nullptr;
  /// Runs every launch as the programming model defines it, with none of
  /// the engine's fast paths (see "Reference mode"): the oracle the fast
  /// paths are tested against.
  bool reference = false;
};

/// Why a launch failed.
enum class LaunchErrorKind {
  None,
  InvalidConfiguration, ///< rejected before running (bad dimensions, shared memory, no entry)
  KernelException,      ///< a thread raised; see LaunchResult::exception()
  Deadlock,             ///< the threads of a block wait for each other forever
  ResourceFailure,      ///< the host could not provide threads, stacks or memory
  Internal,             ///< the kernel broke the ABI (e.g. a block entry that waits)
  Interrupted,          ///< the StopCheck asked the launch to stop
};

/// A raise in the kernel, as Numba's dispatcher reports it.
struct KernelException {
  std::string className; ///< e.g. "ZeroDivisionError"
  /// What Python passes to the class: "tid=[z, y, x] ctaid=[z, y, x]: message".
  std::string argument;
  Dim3 threadIdx;
  Dim3 blockIdx;
};

/// Success, or an error with a message that names the offending value.
class [[nodiscard]] LaunchResult {
public:
  static LaunchResult success() { return LaunchResult(); }
  static LaunchResult failure(LaunchErrorKind kind, std::string message);
  static LaunchResult kernelException(KernelException exception);

  bool ok() const { return errorKind == LaunchErrorKind::None; }
  LaunchErrorKind kind() const { return errorKind; }
  /// The whole message; for exceptions "ZeroDivisionError: tid=[...] ...".
  const std::string &message() const { return text; }
  /// Set for LaunchErrorKind::KernelException.
  const KernelException *exception() const { return raised ? &*raised : nullptr; }

private:
  LaunchErrorKind errorKind = LaunchErrorKind::None;
  std::string text;
  std::optional<KernelException> raised;
};

/// Runs launches on a pool of worker threads. Thread-safe: any number of host
/// threads may launch at once. Workers start at the first launch, so an
/// engine that is never used costs nothing; a process forked after that
/// starts its own workers at its first launch. Destroy an engine only when
/// no launch is in flight.
class Engine {
public:
  explicit Engine(const EngineOptions &options = EngineOptions());
  ~Engine();
  Engine(const Engine &) = delete;
  Engine &operator=(const Engine &) = delete;

  /// Runs `image` over the grid and returns when every block has finished.
  /// `args` holds one pointer per kernel parameter (docs/abi.md). Release the
  /// GIL around this call: it blocks, and kernels may print.
  /// `stop`, when given, is polled while the launch runs, always on the
  /// thread that called launch().
  LaunchResult launch(const KernelImage &image, const LaunchConfig &config, void *const *args,
                      StopCheck stop = {});

  /// Worker threads blocks run on.
  unsigned workerCount() const;

  /// Whether the engine runs launches in reference mode.
  bool reference() const;

private:
  LaunchResult runOnPool(const KernelImage &image, const LaunchConfig &config, void *const *args,
                         StopCheck stop);

  struct State;
  std::unique_ptr<State> state;
};

/// The checks of a launch a GPU would reject, in the order CUDA makes them.
LaunchResult validateLaunch(const KernelImage &image, const LaunchConfig &config);

} // namespace kiln::cpu_engine
