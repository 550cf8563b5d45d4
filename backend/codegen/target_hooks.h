//===- backend/codegen/target_hooks.h - What differs between targets ----*- C++ -*-===//
//
// [Note: target hooks]
// One lowering turns typed IR into LLVM IR for every target; the few
// operations whose code depends on where the kernel runs are asked of a
// TargetHooks object. NVPTX reads special registers, uses bar.sync and
// shfl.sync and links libdevice; the host target reads the engine's
// KilnCpuThread and calls the engine's services and the C library (see
// module/cpu_kernel_abi.h). Arithmetic, arrays, tuples, atomics (LLVM's
// atomicrmw works on both) and control flow are the same everywhere and
// live in the lowering, never here.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "backend/codegen/kernel_abi.h"
#include "ir/operation_sites.h"
#include "ir/typed_ir.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <optional>
#include <string>

namespace kiln::backend {

/// Where a hook emits code: the builder positioned at the insertion point,
/// the function being lowered, and the thread context the host target
/// passes to every function (null on NVPTX).
struct HookSite {
  llvm::IRBuilder<> &builder;
  const ir::Function &function;
  llvm::Value *threadContext;
  /// Source position of the operation, in the function's file.
  ir::Location location;
  /// The operation's number among the kernel's (ir/operation_sites.h):
  /// what host code names it by, rather than by its position.
  uint32_t operation = ir::OperationSites::noSite;

  /// "file:line" of the operation, for messages; empty when unknown. Made
  /// only when a hook needs it (a raise with debug=True), not for every
  /// operation.
  std::string describeLocation() const;
};

/// One value to print, already widened: int64, uint64, float64 or bool
/// (i1); or constant text.
struct PrintArgument {
  enum class Kind : uint8_t { Int64, UInt64, Float64, Bool, Text };
  Kind kind;
  llvm::Value *value = nullptr;
  std::string text;
  /// No space before it (ir::PrintItem::joined).
  bool joined = false;
};

/// A statically sized shared array, placed by the lowering.
struct SharedSlot {
  /// Unique in the module: `<function symbol>.shared<N>`.
  std::string name;
  uint64_t offset; // in the host target's per-block shared memory
  uint64_t bytes;
  uint64_t alignment;
};

class TargetHooks {
public:
  virtual ~TargetHooks();

  /// Sets the triple, data layout and module flags of the module that will
  /// hold `kernel`.
  virtual void configureModule(llvm::Module &module, const ir::Function &kernel) = 0;
  /// Whether every function takes the thread context as a hidden first
  /// parameter.
  virtual bool passesThreadContext() const = 0;

  //===--- Threads and blocks ---===//
  /// threadIdx, blockIdx, blockDim, gridDim (dimension 0..2), laneid and
  /// warpsize, as i32.
  virtual llvm::Value *readIndex(HookSite &site, ir::Intrinsic which, unsigned dimension) = 0;
  virtual void syncThreads(HookSite &site) = 0;
  /// syncthreads_count/and/or of an i32 predicate; returns i32.
  virtual llvm::Value *syncThreadsReduce(HookSite &site, ir::Intrinsic which,
                                         llvm::Value *predicate) = 0;
  virtual void syncWarp(HookSite &site, llvm::Value *mask) = 0;
  /// cuda.cg.this_grid().sync(): waits for every thread of the grid, and
  /// makes the writes of each visible to all (a cooperative launch).
  virtual void gridSync(HookSite &site) = 0;
  virtual void fence(HookSite &site, ir::Intrinsic which) = 0;
  virtual void nanosleep(HookSite &site, llvm::Value *nanoseconds) = 0;

  //===--- Warp collectives ---===//
  /// shfl_*_sync on 32 bits: `lane` is the source lane, delta or lane mask.
  virtual llvm::Value *shuffle32(HookSite &site, ir::Intrinsic mode, llvm::Value *mask,
                                 llvm::Value *value, llvm::Value *lane) = 0;
  /// all/any/eq/ballot_sync of an i1 predicate: i1 for the first three, the
  /// i32 ballot mask for the last.
  virtual llvm::Value *vote(HookSite &site, ir::Intrinsic which, llvm::Value *mask,
                            llvm::Value *predicate) = 0;
  /// match_any_sync of an i32 or i64 value: the i32 mask of matching lanes.
  virtual llvm::Value *matchAny(HookSite &site, llvm::Value *mask, llvm::Value *value) = 0;
  /// match_all_sync: {i32 mask, i1 predicate}.
  virtual std::pair<llvm::Value *, llvm::Value *> matchAll(HookSite &site, llvm::Value *mask,
                                                           llvm::Value *value) = 0;
  virtual llvm::Value *activeMask(HookSite &site) = 0;
  virtual llvm::Value *lanemaskLt(HookSite &site) = 0;

  //===--- Memory ---===//
  /// The (generic) address of a static shared array.
  virtual llvm::Value *sharedArray(HookSite &site, const SharedSlot &slot) = 0;
  /// The launch's dynamic shared memory: its address and size in bytes (i32).
  virtual std::pair<llvm::Value *, llvm::Value *> dynamicSharedMemory(HookSite &site) = 0;
  /// A load of `type` at the array element `address` with the cache
  /// operator of `which` (LoadCa ... LoadCv).
  virtual llvm::Value *cacheHintedLoad(HookSite &site, ir::Intrinsic which, llvm::Value *address,
                                       llvm::Type *type, llvm::Align alignment) = 0;
  /// A store of `value` to the array element `address` with the cache
  /// operator of `which` (StoreCg ... StoreWt).
  virtual void cacheHintedStore(HookSite &site, ir::Intrinsic which, llvm::Value *address,
                                llvm::Value *value, llvm::Align alignment) = 0;
  /// The address space of read-only data compiled into the code (constant
  /// arrays); its addresses are cast to generic ones.
  virtual unsigned constantDataAddressSpace() const = 0;

  //===--- Math ---===//
  /// The C-library-style function computing `which` in `bits`-bit floats
  /// ("sinf", "__nv_sinf", "__nv_fast_sinf"), or nothing when the lowering
  /// should expand it itself.
  virtual std::optional<std::string> mathFunction(ir::Intrinsic which, unsigned bits,
                                                  bool fastmath) = 0;
  /// Whether LLVM's maxnum and minnum become instructions that order -0
  /// below +0 (PTX's max and min). Elsewhere LLVM leaves the sign of a zero
  /// result open, and may fold code that depends on it, so the lowering
  /// compares instead.
  virtual bool minMaxOrdersSignedZeros() const = 0;
  /// `value`, a float, converted to the integer type `to` as a GPU's
  /// conversion instruction does: truncated toward zero, saturated at the
  /// type's bounds, NaN giving 0. By default LLVM's saturating conversions,
  /// which a target whose instruction saturates by itself replaces.
  virtual llvm::Value *saturatingFloatToInteger(llvm::IRBuilder<> &builder, llvm::Value *value,
                                                llvm::IntegerType *to, bool isSigned);

  /// Why this kernel cannot call `symbol`, a function defined in CUDA
  /// C/C++ or PTX (cuda.declare_device), or nothing when it can; calls it
  /// cannot make raise when they run.
  virtual std::optional<std::string> externalCallProblem(llvm::StringRef symbol) const = 0;

  //===--- Output and errors ---===//
  virtual void print(HookSite &site, llvm::ArrayRef<PrintArgument> arguments) = 0;
  /// Ends the thread with an exception. Emits the block's terminator.
  virtual void raise(HookSite &site, llvm::StringRef exceptionClass, llvm::StringRef message) = 0;
  /// Whether array indices are checked on this target. The CPU engine
  /// checks them, as Numba's simulator does, so that a bad index is an
  /// IndexError and not a stray access to the host process's memory; a
  /// GPU does not, as in Numba.
  virtual bool checksIndices() const = 0;
  /// An i1 that is true where checked code is emitted: a target may keep
  /// copies of the code with and without the checks and decide this per
  /// copy (see HostTargetHooks::finishKernel).
  virtual llvm::Value *indexChecksEnabled(HookSite &site) = 0;
  /// Ends the thread with IndexError: `index` (i64) is out of bounds on
  /// `axis` (i32) of an array of `shape` (i64 extents), described for
  /// messages by `array` ("array 'a'"). Emits the block's terminator.
  virtual void raiseIndexError(HookSite &site, llvm::StringRef array, llvm::Value *index,
                               llvm::Value *axis, llvm::ArrayRef<llvm::Value *> shape) = 0;
  /// Ends the thread with NotImplementedError for code this target cannot
  /// run, reported whatever debug= says: unlike a raise in the kernel, it
  /// is not the kernel's doing, and going on silently would give garbage.
  virtual void raiseUnsupported(HookSite &site, llvm::StringRef message) = 0;

  //===--- Entry points ---===//
  /// Turns `kernel`, which takes the flat parameters of `parameters` (after
  /// the thread context, where passed), into what the target launches.
  virtual void finishKernel(llvm::Function &kernel, const ir::Function &function,
                            llvm::ArrayRef<KernelParameter> parameters) = 0;
};

} // namespace kiln::backend
