//===- backend/nvptx/libdevice.cpp - NVIDIA's math library ----------------------===//

#include "backend/nvptx/libdevice.h"

#include <llvm/ADT/StringSet.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/Instructions.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Transforms/IPO/Internalize.h>

#include <map>
#include <mutex>

namespace kiln::backend {

/// The bytes of libdevice files, read once and shared by every thread.
static llvm::Expected<llvm::MemoryBufferRef> libdeviceBytes(llvm::StringRef path) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<llvm::MemoryBuffer>> files;
  std::lock_guard<std::mutex> lock(mutex);
  auto found = files.find(path.str());
  if (found == files.end()) {
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file = llvm::MemoryBuffer::getFile(path);
    if (!file)
      return llvm::createStringError(file.getError(), "cannot read libdevice at '" + path.str() +
                                                          "': " + file.getError().message());
    found = files.emplace(path.str(), std::move(*file)).first;
  }
  return found->second->getMemBufferRef();
}

llvm::Error linkLibdeviceFunctions(llvm::Module &module, llvm::StringRef libdevicePath,
                                   llvm::StringRef missing) {
  std::string firstCalled;
  for (const llvm::Function &function : module)
    if (function.isDeclaration() && function.getName().starts_with("__nv_")) {
      firstCalled = function.getName().str();
      break;
    }
  if (firstCalled.empty())
    return llvm::Error::success();
  if (libdevicePath.empty())
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "the kernel calls libdevice's '" + firstCalled + "', and this build has no libdevice: " +
            (missing.empty() ? llvm::StringRef("install the CUDA toolkit (or the nvidia-cuda-nvcc "
                                               "and nvidia-nvvm wheels) or set CUDA_HOME")
                             : missing));
  llvm::Expected<llvm::MemoryBufferRef> bytes = libdeviceBytes(libdevicePath);
  if (!bytes)
    return bytes.takeError();
  llvm::Expected<std::unique_ptr<llvm::Module>> library =
      llvm::getLazyBitcodeModule(*bytes, module.getContext());
  if (!library)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "'" + libdevicePath.str() + "' is not a libdevice: " + llvm::toString(library.takeError()));
  (*library)->setTargetTriple(module.getTargetTriple());
  (*library)->setDataLayout(module.getDataLayout());
  llvm::StringSet<> before;
  for (const llvm::GlobalValue &value : module.global_values())
    if (!value.isDeclaration())
      before.insert(value.getName());
  if (llvm::Linker::linkModules(module, std::move(*library), llvm::Linker::LinkOnlyNeeded))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot link libdevice from '" + libdevicePath.str() + "'");
  for (llvm::GlobalValue &value : module.global_values())
    if (!value.isDeclaration() && !before.contains(value.getName()))
      value.setLinkage(llvm::GlobalValue::InternalLinkage);
  return llvm::Error::success();
}

void answerReflectQuestion(llvm::Module &module, llvm::StringRef question, int answer) {
  llvm::Function *reflect = module.getFunction("__nvvm_reflect");
  if (!reflect)
    return;
  for (llvm::User *user : llvm::make_early_inc_range(reflect->users())) {
    auto *call = llvm::dyn_cast<llvm::CallInst>(user);
    llvm::StringRef asked;
    if (!call || call->arg_size() != 1 ||
        !llvm::getConstantStringInfo(call->getArgOperand(0), asked) || asked != question)
      continue;
    call->replaceAllUsesWith(llvm::ConstantInt::get(call->getType(), answer));
    call->eraseFromParent();
  }
}

llvm::Error linkLibdevice(llvm::Module &module, llvm::StringRef libdevicePath, llvm::StringRef keep,
                          unsigned arch, bool fastmath) {
  if (llvm::Error error = linkLibdeviceFunctions(module, libdevicePath))
    return error;
  // LLVM 19's NVVMReflect answers any question but __CUDA_FTZ and
  // __CUDA_ARCH with 0, which would make sqrtf, hypotf and norm3df use the
  // approximate sqrt.approx.f32. It knows the architecture only when the
  // target machine adds it to the pipeline, not when a pipeline is read
  // from text, so Kiln answers that question too.
  answerReflectQuestion(module, "__CUDA_PREC_SQRT", fastmath ? 0 : 1);
  answerReflectQuestion(module, "__CUDA_ARCH", int(arch) * 10);
  llvm::internalizeModule(module, [&](const llvm::GlobalValue &value) {
    return value.getName() == keep || value.isDeclaration() ||
           value.getName() == "_kiln_dynamic_shared";
  });
  return llvm::Error::success();
}

} // namespace kiln::backend
