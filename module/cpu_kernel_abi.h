/*===- module/cpu_kernel_abi.h - Host-compiled kernels and the engine -----===*
 *
 * The contract between the code Kiln generates for the host target and the
 * CPU engine that runs it (runtime/cpu_engine). Plain C so that both sides,
 * and any tool reading built modules, agree on it byte for byte.
 *
 * For each kernel specialization the back end emits, in the host object:
 *
 *   void <symbol>_thread(KilnCpuThread *thread, void *const *args);
 *       Runs one thread: the one `thread` describes.
 *   void <symbol>_block(KilnCpuThread *thread, void *const *args);
 *       Runs every thread of the block `thread` describes. For a kernel that
 *       never waits for other threads: one after the other, updating
 *       thread->threadIdx and thread->laneId itself (such an entry may take
 *       a run of blocks at once: blockRunLimit below). For a kernel whose
 *       only waits are block barriers (syncthreads and its reducing variants):
 *       either the same, region by region (a loop over the threads from
 *       one barrier to the next, with KILN_THREAD_REGION_LOOPS set in
 *       thread->flags), or it hands the engine's runBarrierRegions service
 *       a function that runs one thread from its start to its first barrier
 *       or its end and leaves it resumable from there (KilnCpuRegionStart
 *       below), and one that resumes a list of threads to their next
 *       barrier in a loop (KilnCpuRegionRound). Kernels with warp
 *       collectives, or that may end a thread early, have no block entry.
 *
 * `args` points at one pointer per kernel parameter, each to the parameter's
 * value in the kernel ABI of docs/abi.md: exactly what cuLaunchKernel takes,
 * so that the runtime packs arguments once for both targets.
 *
 * Device functions take the KilnCpuThread pointer as a hidden first
 * parameter. Math functions are called from the C library (resolved when the
 * module is loaded); everything that needs the other threads of a block goes
 * through `thread->services`.
 *
 *===----------------------------------------------------------------------===*/
#ifndef KILN_MODULE_CPU_KERNEL_ABI_H
#define KILN_MODULE_CPU_KERNEL_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any change to the structures below. */
#define KILN_CPU_ABI_VERSION 13

typedef struct KilnCpuThread KilnCpuThread;

/* One argument of print(): what `kind` says is in the union. */
enum KilnPrintKind {
  KILN_PRINT_INT64 = 0,
  KILN_PRINT_UINT64 = 1,
  KILN_PRINT_FLOAT64 = 2, /* printed with %f, as numba-cuda's vprintf does */
  KILN_PRINT_BOOL = 3,    /* value.i64 is 0 or 1: False or True */
  KILN_PRINT_STRING = 4,  /* a NUL-terminated constant */
  KILN_PRINT_NONE = 5,
  KILN_PRINT_COMPLEX128 = 6 /* real part in f64, imaginary part in imag; (%f%+fj) */
};

/* KilnPrintItem.flags */
enum KilnPrintFlags {
  KILN_PRINT_JOINED = 1 /* no space before the item: the parts of a printed tuple */
};

typedef struct KilnPrintItem {
  uint32_t kind;
  uint32_t flags;
  union {
    int64_t i64;
    uint64_t u64;
    double f64;
    const char *string;
  } value;
  double imag;
} KilnPrintItem;

/* Modes of shfl(), as PTX numbers them. */
enum KilnShuffleMode {
  KILN_SHFL_IDX = 0,
  KILN_SHFL_UP = 1,
  KILN_SHFL_DOWN = 2,
  KILN_SHFL_BFLY = 3
};

/* Modes of vote(). */
enum KilnVoteMode {
  KILN_VOTE_ALL = 0,
  KILN_VOTE_ANY = 1,
  KILN_VOTE_UNI = 2, /* all lanes agree */
  KILN_VOTE_BALLOT = 3
};

/* Modes of syncthreads_reduce(), and KilnCpuThread.barrierMode. */
enum KilnBarrierReduce {
  KILN_BARRIER_COUNT = 0,
  KILN_BARRIER_AND = 1,
  KILN_BARRIER_OR = 2,
  KILN_BARRIER_SYNC = 3 /* plain syncthreads(): no reduction */
};

/* A thread of a block entry's barrier regions: runs it from its start until
 * it reaches a barrier (returns 0; with KILN_REGIONS_REDUCE, barrierMode and
 * barrierValue are set: the mode and the predicate) or ends (returns 1),
 * and stores its handle in
 * *handle. The handle points at the thread's frame, whose first word is
 * the function that runs the thread on from the barrier it waits at to its
 * next barrier or its end (void resume(void *handle)), and is null once the
 * thread has ended: the frame layout of LLVM's switch-lowered coroutines,
 * as C++ coroutine handles use it. Before a thread goes on from a reducing
 * barrier, the engine leaves the barrier's result in its barrierValue. */
typedef int32_t (*KilnCpuRegionStart)(KilnCpuThread *thread, void *const *args, void **handle);
/* A round of a block entry's barrier regions: resumes the threads
 * order[0..count) in that order, each from the barrier it waits at to its
 * next barrier or its end, stores the ids of those that reached a barrier
 * in waiting[], in the order they reached it, and returns how many did.
 * handles[id] is the handle of thread id (its index in the block). */
typedef uint32_t (*KilnCpuRegionRound)(void *const *handles, const uint32_t *order, uint32_t count,
                                       uint32_t *waiting);

/* runBarrierRegions() flags. */
enum KilnRegionFlags {
  KILN_REGIONS_REDUCE = 1 /* some barrier is syncthreads_count/_and/_or */
};

/* What the engine does for generated code. Every function receives the
 * calling thread: the same KilnCpuThread pointer the entry point received,
 * from which the engine finds the fiber's state. */
typedef struct KilnCpuServices {
  uint32_t abiVersion; /* KILN_CPU_ABI_VERSION */
  uint32_t reserved;

  /* cuda.syncthreads(): returns when every thread of the block arrived. */
  void (*syncthreads)(KilnCpuThread *thread);
  /* syncthreads_count/_and/_or: a barrier that also reduces `predicate`
   * (non-zero is true) over the block, as in KilnBarrierReduce. */
  int32_t (*syncthreadsReduce)(KilnCpuThread *thread, uint32_t mode, int32_t predicate);
  /* cuda.syncwarp(mask). */
  void (*syncwarp)(KilnCpuThread *thread, uint32_t mask);
  /* shfl_*_sync on the raw bits of a 32- or 64-bit value. `lane` is the
   * source lane (IDX), the delta (UP, DOWN) or the lane mask (BFLY); `clamp`
   * is PTX's c operand. */
  uint64_t (*shuffle)(KilnCpuThread *thread, uint32_t mask, uint32_t mode, uint64_t value,
                      uint32_t lane, uint32_t clamp);
  /* all/any/eq/ballot_sync. ALL, ANY, UNI return 0 or 1, BALLOT the mask. */
  uint32_t (*vote)(KilnCpuThread *thread, uint32_t mask, uint32_t mode, int32_t predicate);
  /* match_any_sync: lanes of `mask` whose value equals this lane's. */
  uint32_t (*matchAny)(KilnCpuThread *thread, uint32_t mask, uint64_t value);
  /* match_all_sync: the live lanes of `mask` if they all agree
   * (*predicate = 1), else 0. */
  uint32_t (*matchAll)(KilnCpuThread *thread, uint32_t mask, uint64_t value, int32_t *predicate);
  /* activemask(): the lanes of the warp that run this call together (the
   * engine tells call sites apart by the return address). */
  uint32_t (*activeMask)(KilnCpuThread *thread);
  /* cuda.nanosleep(ns). */
  void (*nanosleep)(KilnCpuThread *thread, uint32_t nanoseconds);
  /* print(...): one line, items separated by spaces. */
  void (*print)(KilnCpuThread *thread, const KilnPrintItem *items, uint32_t count);
  /* A raise (or failed assert with debug=True) in the kernel: the engine
   * records it, ends this thread, and reports it after the launch. It never
   * returns (generated code follows the call with `unreachable`), which is
   * why kernels that may raise have no block entry. An empty message means
   * none. */
  void (*raiseException)(KilnCpuThread *thread, const char *exceptionClass, const char *message);
  /* A raise in a kernel compiled without debug=True: as in Numba, the
   * thread just ends, as if its entry had returned, and nothing is
   * reported. It never returns either. */
  void (*exitThread)(KilnCpuThread *thread);
  /* An array index out of bounds (checked code only): the engine records
   * an IndexError naming `array` (e.g. "array 'a'"), the index, the axis
   * and the array's `rank` extents in `shape`, and where: `site` indexes
   * the kernel's table of "file:line" (the manifest's "sites"), which the
   * code itself never holds, so that moving lines leaves it unchanged; a
   * site past the table's end has no position. Then it ends the thread as
   * raiseException does, whatever debug= says. It never returns, except to
   * barrier regions and region loops (KILN_THREAD_REGION_LOOPS), which then
   * end the thread themselves. */
  void (*raiseIndexError)(KilnCpuThread *thread, const char *array, uint32_t site, int64_t index,
                          uint32_t axis, uint32_t rank, const int64_t *shape);
  /* Generated code calls it on a loop back-edge once
   * *KilnCpuThread.interrupt is non-zero. If the launch was interrupted
   * (Ctrl-C) it ends the thread and never returns; if the engine only
   * wanted the thread to poll for an interrupt, it returns and the loop
   * goes on. */
  void (*interrupted)(KilnCpuThread *thread);
  /* Memory for the calling thread's barrier-region state, or for the
   * arrays of a block entry's region loops (`bytes` aligned to `alignment`,
   * a power of two), kept until its block ends. Block entries only. */
  void *(*allocateFrame)(KilnCpuThread *thread, uint64_t bytes, uint64_t alignment);
  /* Runs every thread of the calling block entry's block through its
   * barrier regions, in the order fibers would run them, and returns when
   * all have ended. Block entries only. */
  void (*runBarrierRegions)(KilnCpuThread *thread, void *const *args, KilnCpuRegionStart start,
                            KilnCpuRegionRound round, uint32_t flags);
  /* cuda.cg.this_grid().sync(): returns when every thread of the grid that
   * has not exited has arrived. Only kernels the manifest marks
   * "cooperative" call it; the engine keeps all their blocks resident. */
  void (*syncGrid)(KilnCpuThread *thread);
} KilnCpuServices;

/* The state of one thread of a launch, owned by the engine. Generated code
 * reads the indices, the shared memory pointers and `services`; the rest is
 * the engine's. */
struct KilnCpuThread {
  uint32_t threadIdx[3];
  uint32_t blockIdx[3];
  uint32_t blockDim[3];
  uint32_t gridDim[3];
  uint32_t laneId;
  uint32_t warpSize;
  /* Static shared arrays of the kernel, laid out by the compiler
   * (sharedMemoryBytes in the specialization's metadata), per block. */
  void *sharedMemory;
  /* cuda.shared.array(0, ...): the launch's dynamic shared memory. */
  void *dynamicSharedMemory;
  const KilnCpuServices *services;
  void *engine;
  /* Size of dynamicSharedMemory in bytes: len() of cuda.shared.array(0, t)
   * is this divided by the item size. */
  uint32_t dynamicSharedBytes;
  /* KilnThreadFlags, set by the engine for the whole launch. */
  uint32_t flags;
  /* Points at a word the engine sets to non-zero when the launch must stop
   * (an interrupt from the user): loops read it on their back-edges. */
  const volatile uint32_t *interrupt;
  /* A thread of barrier regions that waits at a barrier: KilnBarrierReduce
   * and its predicate, then (set by the engine) the barrier's result. */
  uint32_t barrierMode;
  int32_t barrierValue;
  /* A thread of barrier regions: memory the engine set aside for its frame
   * (aligned to 64 bytes) and its size. A start whose frame does not fit
   * asks allocateFrame instead. */
  void *frame;
  uint64_t frameBytes;
  /* Runs of blocks. The engine offers a block entry blockRunLimit
   * consecutive blocks of one grid row (at least 1, at most
   * KILN_CPU_MAX_BLOCK_RUN), from blockIdx.x on, and presets
   * blockRunLength to 1. An entry that takes the run sets blockRunLength to
   * blockRunLimit before it runs any thread, and then runs the blocks' rows
   * of threads (threadIdx.y, .z) one after the other, each row across every
   * block of the run. Before it calls a service, such an entry stores the
   * thread's threadIdx.y and .z and, in runGlobalX, its global x index
   * (blockIdx.x * blockDim.x + threadIdx.x), from which the engine derives
   * blockIdx.x and threadIdx.x (it presets runGlobalX to KILN_NO_GLOBAL_X
   * for entries that store the indices themselves). The engine finishes
   * the other blocks of a run an index error cut short by entering them one
   * at a time (limit 1) from the row they stopped at: such an entry starts
   * at row (threadIdx.y, threadIdx.z), which the engine otherwise sets to
   * (0, 0). */
  uint32_t blockRunLimit;
  uint32_t blockRunLength;
  uint64_t runGlobalX;
};

/* The launch limits the engine enforces, CUDA's. Generated code relies on
 * them: every dimension of a launch lies in [1, its limit], every index in
 * [0, its dimension), laneId in [0, 32). */
#define KILN_CPU_MAX_THREADS_PER_BLOCK 1024u
#define KILN_CPU_MAX_BLOCK_DIM_X 1024u
#define KILN_CPU_MAX_BLOCK_DIM_Y 1024u
#define KILN_CPU_MAX_BLOCK_DIM_Z 64u
#define KILN_CPU_MAX_GRID_DIM_X 0x7fffffffu
#define KILN_CPU_MAX_GRID_DIM_Y 65535u
#define KILN_CPU_MAX_GRID_DIM_Z 65535u
#define KILN_CPU_WARP_SIZE 32u
/* The most blocks the engine offers a block entry as one run
 * (blockRunLimit): generated code relies on it too, as on the limits
 * above, to know how long a run's loops take. */
#define KILN_CPU_MAX_BLOCK_RUN 64u

/* KilnCpuThread.flags: which variant of a kernel's code to run. Kernels
 * compiled with index checks also carry a copy without them; the entry
 * points pick one by these bits and the kernel's own boundscheck= option. */
enum KilnThreadFlags {
  KILN_THREAD_SKIP_INDEX_CHECKS = 1,  /* KILN_CPU_BOUNDSCHECK=0 or NUMBA_BOUNDSCHECK=0 */
  KILN_THREAD_FORCE_INDEX_CHECKS = 2, /* ...=1: checked even where boundscheck=False */
  /* Set by a block entry that runs its threads region by region, from
   * barrier to barrier: an index error ends only the thread. */
  KILN_THREAD_REGION_LOOPS = 4
};

/* KilnCpuThread.runGlobalX before a run's entry stores it. */
#define KILN_NO_GLOBAL_X UINT64_MAX

typedef void (*KilnCpuKernelEntry)(KilnCpuThread *thread, void *const *args);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_MODULE_CPU_KERNEL_ABI_H */
