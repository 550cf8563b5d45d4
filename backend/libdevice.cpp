//===- backend/libdevice.cpp - NVIDIA's math library for NVPTX ------------===//

#include "backend/libdevice.h"

#include <llvm/Bitcode/BitcodeReader.h>
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

llvm::Error linkLibdevice(llvm::Module &module, llvm::StringRef libdevicePath,
                          llvm::StringRef keep) {
  bool needed = false;
  for (const llvm::Function &function : module)
    if (function.isDeclaration() && function.getName().starts_with("__nv_"))
      needed = true;
  if (needed) {
    llvm::Expected<llvm::MemoryBufferRef> bytes = libdeviceBytes(libdevicePath);
    if (!bytes)
      return bytes.takeError();
    llvm::Expected<std::unique_ptr<llvm::Module>> library =
        llvm::getLazyBitcodeModule(*bytes, module.getContext());
    if (!library)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "'" + libdevicePath.str() + "' is not a libdevice: " +
                                         llvm::toString(library.takeError()));
    (*library)->setTargetTriple(module.getTargetTriple());
    (*library)->setDataLayout(module.getDataLayout());
    if (llvm::Linker::linkModules(module, std::move(*library), llvm::Linker::LinkOnlyNeeded))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "cannot link libdevice from '" + libdevicePath.str() + "'");
  }
  llvm::internalizeModule(module, [&](const llvm::GlobalValue &value) {
    return value.getName() == keep || value.isDeclaration() ||
           value.getName() == "_kiln_dynamic_shared";
  });
  return llvm::Error::success();
}

} // namespace kiln::backend
