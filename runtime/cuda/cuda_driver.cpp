//===- runtime/cuda/cuda_driver.cpp - libcuda, loaded with dlopen ---------===//

#include "runtime/cuda/cuda_driver.h"

#include <cstdlib>
#include <dlfcn.h>
#include <mutex>

namespace kiln::runtime {

namespace {

/// The library's entry point `symbol`, else `fallback` (may be null).
void *findSymbol(void *library, const char *symbol, const char *fallback) {
  if (void *address = dlsym(library, symbol))
    return address;
  return fallback ? dlsym(library, fallback) : nullptr;
}

struct LoadOutcome {
  CudaDriver driver;
  bool loaded = false;
  Status why;
};

LoadOutcome loadOnce() {
  LoadOutcome outcome;
  const char *overridePath = std::getenv("KILN_CUDA_DRIVER");
  bool overridden = overridePath && *overridePath;
  std::string path = overridden ? overridePath : "libcuda.so.1";
  std::string described =
      "the CUDA driver library '" + path + "'" + (overridden ? " (from KILN_CUDA_DRIVER)" : "");

  void *library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *error = dlerror();
    outcome.why = Status::error(
        ErrorKind::Unavailable,
        described + " could not be loaded: " + (error ? error : "unknown dlopen error") +
            (overridden ? "" : "; is an NVIDIA driver installed?"));
    return outcome;
  }

#define KILN_CUDA_RESOLVE(member, symbol, fallback, parameters)                                    \
  outcome.driver.member =                                                                          \
      reinterpret_cast<cu::PFN_##member>(findSymbol(library, symbol, fallback));                   \
  if (!outcome.driver.member) {                                                                    \
    outcome.why = Status::error(ErrorKind::Unavailable,                                            \
                                described + " has no entry point '" + symbol +                     \
                                    "': the driver is too old for Kiln (it needs a driver of "     \
                                    "CUDA 12.0 or later)");                                        \
    dlclose(library);                                                                              \
    return outcome;                                                                                \
  }
  KILN_CUDA_DRIVER_ENTRY_POINTS(KILN_CUDA_RESOLVE)
#undef KILN_CUDA_RESOLVE

  outcome.driver.libraryPath = path;
  outcome.loaded = true;
  return outcome;
}

} // namespace

const CudaDriver *loadCudaDriver(Status &why) {
  static std::once_flag once;
  static LoadOutcome *outcome = nullptr;
  // Never destroyed: threads may still call into the driver while the
  // process exits.
  std::call_once(once, [] { outcome = new LoadOutcome(loadOnce()); });
  if (!outcome->loaded) {
    why = outcome->why;
    return nullptr;
  }
  return &outcome->driver;
}

std::string cudaErrorName(const CudaDriver &driver, cu::CUresult code) {
  const char *name = nullptr;
  if (driver.cuGetErrorName(code, &name) == cu::CUDA_SUCCESS && name)
    return name;
  return "CUDA_ERROR_" + std::to_string(code);
}

Status cudaCallFailed(const CudaDriver &driver, const char *call, cu::CUresult code,
                      const std::string &context) {
  std::string name = cudaErrorName(driver, code);
  const char *description = nullptr;
  if (driver.cuGetErrorString(code, &description) != cu::CUDA_SUCCESS || !description)
    description = "no description from the driver";
  std::string message = std::string(call) + " failed: " + name + ": " + description;
  if (!context.empty())
    message += " (" + context + ")";
  return Status::cudaError(code, std::move(name), std::move(message));
}

} // namespace kiln::runtime
