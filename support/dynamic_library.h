//===- support/dynamic_library.h - Libraries loaded at run time -*- C++ -*-===//
//
// libnvJitLink.so comes from whichever toolkit is found when kiln runs,
// libcuda.so.1 (the driver, for `native`) may not exist at all, and libcurl
// (with the dozens of libraries it needs) serves only builds with an HTTP
// remote cache, so none is linked: each is opened with dlopen when needed. A library, once opened,
// stays loaded for the life of the process (closing libraries that start threads is unsafe), so
// symbols can be cached freely.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <string>

namespace kiln::support {

/// The file, by its real path, that holds the code or data at `address`:
/// the kiln program, kiln._compiler in a Python process, or the shared
/// compiler library the two load in a wheel. The running program's path
/// where the dynamic loader names the file only as it was started.
std::string fileHolding(const void *address);

class DynamicLibrary {
public:
  /// Opens `pathOrName` (a path, or a soname looked up as the dynamic loader
  /// does). Opening the same name again returns the same library.
  static llvm::Expected<DynamicLibrary> open(llvm::StringRef pathOrName);

  /// The address of `symbol`, or an error naming the symbol and library.
  llvm::Expected<void *> symbol(llvm::StringRef name) const;

  /// Looks up a function and casts it to `Function`.
  template <typename Function> llvm::Expected<Function *> function(llvm::StringRef name) const {
    llvm::Expected<void *> address = symbol(name);
    if (!address)
      return address.takeError();
    return reinterpret_cast<Function *>(*address);
  }

  llvm::StringRef name() const { return libraryName; }

private:
  DynamicLibrary(void *handle, llvm::StringRef libraryName)
      : handle(handle), libraryName(libraryName) {}
  void *handle;
  llvm::StringRef libraryName; // owned by the registry in the .cpp
};

} // namespace kiln::support
