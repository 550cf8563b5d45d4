//===- backend/nvptx/nvptx_target.h - Target hooks for NVIDIA GPUs ----*- C++ -*-===//
//
// Special registers, bar.sync, shfl.sync/vote/match, shared memory in
// address space 3, libdevice for math (`__nv_sinf`, or `__nv_fast_sinf`
// under fastmath, as Numba chooses), vprintf for print, and the
// nvvm.annotations that make a function a kernel.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "backend/codegen/target_hooks.h"

namespace kiln::backend {

inline constexpr llvm::StringLiteral kNvptxTriple = "nvptx64-nvidia-cuda";
inline constexpr llvm::StringLiteral kNvptxDataLayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64";

class NvptxTargetHooks final : public TargetHooks {
public:
  void configureModule(llvm::Module &module, const ir::Function &kernel) override;
  bool passesThreadContext() const override { return false; }

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
  bool minMaxOrdersSignedZeros() const override { return true; }
  llvm::Value *saturatingFloatToInteger(llvm::IRBuilder<> &builder, llvm::Value *value,
                                        llvm::IntegerType *to, bool isSigned) override;
  std::optional<std::string> externalCallProblem(llvm::StringRef) const override {
    return std::nullopt;
  }

  void print(HookSite &site, llvm::ArrayRef<PrintArgument> arguments) override;
  void raise(HookSite &site, llvm::StringRef exceptionClass, llvm::StringRef message) override;
  // A GPU reports a stray access as an illegal address; it checks nothing
  // itself, as numba-cuda (whose boundscheck=True is NotImplementedError).
  bool checksIndices() const override { return false; }
  llvm::Value *indexChecksEnabled(HookSite &site) override;
  void raiseIndexError(HookSite &site, llvm::StringRef array, llvm::Value *index, llvm::Value *axis,
                       llvm::ArrayRef<llvm::Value *> shape) override;
  void raiseUnsupported(HookSite &site, llvm::StringRef message) override {
    raise(site, "NotImplementedError", message);
  }

  void finishKernel(llvm::Function &kernel, const ir::Function &function,
                    llvm::ArrayRef<KernelParameter> parameters) override;

private:
  /// Whether the kernel was compiled with debug=True.
  bool reportsExceptions = false;
};

} // namespace kiln::backend
