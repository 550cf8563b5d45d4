//===- support/dynamic_library.cpp - Libraries loaded at run time ---------===//

#include "support/dynamic_library.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/Support/FileSystem.h>

#include <dlfcn.h>
#include <map>
#include <mutex>
#include <string>

namespace kiln::support {

namespace {

/// Every library opened so far, by the name it was opened with. Handles are
/// never closed.
struct Registry {
  std::mutex mutex;
  std::map<std::string, void *, std::less<>> handles;
};

Registry &registry() {
  static Registry *instance = new Registry; // never destroyed: libraries stay loaded
  return *instance;
}

} // namespace

std::string fileHolding(const void *address) {
  Dl_info info;
  llvm::SmallString<256> real;
  if (dladdr(address, &info) && info.dli_fname && *info.dli_fname &&
      !llvm::sys::fs::real_path(info.dli_fname, real))
    return std::string(real);
  return llvm::sys::fs::getMainExecutable(nullptr, const_cast<void *>(address));
}

llvm::Expected<DynamicLibrary> DynamicLibrary::open(llvm::StringRef pathOrName) {
  Registry &libraries = registry();
  std::lock_guard<std::mutex> lock(libraries.mutex);
  auto found = libraries.handles.find(pathOrName);
  if (found != libraries.handles.end())
    return DynamicLibrary(found->second, found->first);
  std::string name = pathOrName.str();
  // RTLD_LOCAL: libraries carry their own copies of common code (LLVM
  // inside nvJitLink) that must not interpose on Kiln's.
  void *handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *reason = dlerror();
    return llvm::createStringError("cannot load %s: %s", name.c_str(),
                                   reason ? reason : "unknown error");
  }
  auto inserted = libraries.handles.emplace(std::move(name), handle).first;
  return DynamicLibrary(handle, inserted->first);
}

llvm::Expected<void *> DynamicLibrary::symbol(llvm::StringRef name) const {
  std::string symbolName = name.str();
  dlerror();
  void *address = dlsym(handle, symbolName.c_str());
  if (!address)
    return llvm::createStringError("%s has no symbol %s (is it too old?)",
                                   libraryName.str().c_str(), symbolName.c_str());
  return address;
}

} // namespace kiln::support
