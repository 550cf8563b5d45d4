//===- backend/host_library.cpp - Linking host code into a library --------===//

#include "backend/host_library.h"

#include <llvm/Support/raw_ostream.h>

#include <lld/Common/Driver.h>
#include <mutex>

LLD_HAS_DRIVER(elf)

namespace kiln::backend {

llvm::Error linkSharedLibrary(llvm::ArrayRef<std::string> objectPaths, llvm::StringRef outputPath) {
  // LLD keeps global state while it links: one link at a time.
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  std::string output = outputPath.str();
  // One thread: a module's objects are small, and starting LLD's thread
  // pool would take longer than the link (twice as long in all).
  std::vector<const char *> arguments = {"ld.lld", "--threads=1", "-shared", "--build-id=none",
                                         "-z",     "noexecstack", "-o",      output.c_str()};
  for (const std::string &path : objectPaths)
    arguments.push_back(path.c_str());
  std::string messages;
  llvm::raw_string_ostream stream(messages);
  lld::Result result = lld::lldMain(arguments, stream, stream, {{lld::Gnu, &lld::elf::link}});
  if (result.retCode != 0)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot link '" + output +
                                       "': " + llvm::StringRef(messages).trim().str());
  return llvm::Error::success();
}

} // namespace kiln::backend
