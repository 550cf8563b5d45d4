//===- backend/host/host_cuda_source.h - CUDA C/C++ link files on the CPU -*- C++ -*-===//
//
// A kernel that calls device functions written in CUDA C/C++
// (`cuda.declare_device(..., link="helpers.cu")`) runs them on the CPU engine
// too. Such a file is C++ with CUDA's qualifiers on its functions, so clang
// compiles it as host C++ to LLVM IR, with `__device__`, `__host__`,
// `__forceinline__` and the like defined away and the CUDA toolkit's
// headers on the include path; the kernel's host module
// links in the functions it calls, internal to it, where they inline as
// Kiln's own device functions do.
//
// Code that only a GPU runs (threadIdx, __syncthreads, atomics, inline PTX)
// does not compile as host C++, and no clang may be installed: calls of that
// file's functions then raise on the CPU engine, saying why, while the GPU
// build links the file as before.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/ADT/StringMap.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/Error.h>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace kiln::backend {

/// The bitcode (or why there is none) of each .cu file compiled for the
/// host in one build, which every kernel linking the file shares: the
/// files do not change while a build runs.
class HostCudaBitcode {
public:
  /// `path` compiled by `compile` the first time it is asked for.
  llvm::Expected<std::string>
  get(const std::string &path,
      llvm::function_ref<llvm::Expected<std::string>(const std::string &)> compile);

private:
  std::mutex mutex;
  /// The bitcode of each file, or the message of its failure.
  std::map<std::string, std::pair<bool, std::string>> compiled;
};

/// What compiles the link files of a kernel for the host, found once per
/// build (findHostCudaTools) for every kernel's code and cache key.
struct HostCudaSourceOptions {
  /// -I directories, searched for `#include <...>` after the file's own
  /// folder (Numba's CUDA_NVRTC_EXTRA_SEARCH_PATHS).
  std::vector<std::string> includeDirectories;
  /// The clang; where none is found, why (`clangMissing`).
  std::string clang;
  std::string clangMissing;
  /// The CUDA toolkit's include folder, searched after the include folders
  /// given, as nvcc searches it (cuRAND's device API, cuda_fp16.h, ...);
  /// none where no toolkit is found.
  std::optional<std::string> toolkitIncludeDirectory;
  /// The build's files compiled so far; none compiles each file per kernel.
  std::shared_ptr<HostCudaBitcode> compiled;
};

/// The clang (KILN_CLANG where set, else the clang of this Kiln's LLVM
/// version, else `clang++` on PATH) and the toolkit's headers that compile
/// CUDA C/C++ for the host, with `includeDirectories`.
HostCudaSourceOptions findHostCudaTools(std::vector<std::string> includeDirectories);

/// The link files of one kernel, compiled for the host in one LLVMContext.
class HostCudaCode {
public:
  /// Compiles the .cu files among `linkFiles` for `triple`; files of other
  /// kinds (PTX, cubins, objects) hold GPU code only. A file that does not
  /// compile is remembered with the reason, not returned as an error: only
  /// the calls of its functions fail, and only when they run.
  static HostCudaCode compile(llvm::ArrayRef<std::string> linkFiles,
                              const HostCudaSourceOptions &options, llvm::StringRef triple,
                              llvm::LLVMContext &context);

  /// Why the CPU engine cannot call `symbol`, or nothing when it can.
  std::optional<std::string> callProblem(llvm::StringRef symbol) const;

  /// Links the functions `module` calls into it, with internal linkage.
  llvm::Error linkInto(llvm::Module &module);

private:
  std::vector<std::unique_ptr<llvm::Module>> modules;
  /// Each function defined by a compiled file, to the file's name.
  llvm::StringMap<std::string> definedIn;
  /// Why each file that holds no host code has none, file by file.
  std::vector<std::string> problems;
  std::vector<std::string> fileNames;
};

} // namespace kiln::backend
