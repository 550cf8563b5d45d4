//===- backend/codegen/kernel_compiler.h - One kernel to PTX or host code -*- C++ -*-===//
//
// The code-generation pipeline of one kernel specialization for one target:
//
//   typed IR ── lowerKernel ──▶ LLVM IR ── (NVPTX: link libdevice) ──▶
//   optimize (-O3, or -O0 for opt=0) ──▶ PTX text / host object
//
// Every call works in its own LLVMContext, so specializations and
// architectures compile in parallel on as many threads as the caller likes;
// the typed IR is only read.
//
// The kernels a module loads together are linked after optimization: each
// is optimized on its own (its LLVM IR is what the cache keeps per kernel),
// then one code generation gives the PTX of all of them, which ptxas
// assembles in one run instead of one per kernel.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "backend/codegen/kernel_abi.h"
#include "backend/host/host_cuda_source.h"
#include "backend/host/index_check_copies.h"
#include "ir/typed_ir.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <string>
#include <vector>

namespace kiln::backend {

/// What the runtime needs to know about a compiled kernel, besides its code.
struct KernelInterface {
  /// The symbol of the kernel in PTX, or the stem of the host entries
  /// (`<entryName>_thread`, `<entryName>_block`).
  std::string entryName;
  std::vector<KernelParameter> parameters;
  uint64_t staticSharedBytes = 0;
  uint64_t localBytes = 0;
  /// Whether threads wait for each other (barriers, warp collectives).
  bool synchronizes = false;
  bool raises = false;
  /// Whether it syncs the grid: it needs a cooperative launch.
  bool cooperative = false;
  /// Host code only: whether there is a `_block` entry that runs a whole
  /// block in a loop (kernels whose threads never wait for one another).
  bool hasBlockEntry = false;
  /// Host code only: the operations (ir/operation_sites.h) whose positions
  /// its messages name, by the index the code passes for each; the build
  /// resolves them to "file:line" beside the code.
  std::vector<uint32_t> messageSites;
  /// Host code only: the copies of the kernel's body it holds.
  IndexCheckCopies indexChecks = IndexCheckCopies::Both;
};

struct CompiledCode {
  KernelInterface interface;
  /// PTX text, LLVM IR text or an object file, as asked.
  std::string bytes;
};

enum class CodeForm { LLVMIR, Assembly, Object };

class KernelCompiler {
public:
  /// Where `libdevicePath` is empty, `libdeviceMissing` says why, for the
  /// error of a kernel that calls libdevice.
  explicit KernelCompiler(std::string libdevicePath, std::string libdeviceMissing = "")
      : libdevicePath(std::move(libdevicePath)), libdeviceMissing(std::move(libdeviceMissing)) {}

  /// PTX (Assembly) or optimized LLVM IR for `.target sm_<arch>`.
  llvm::Expected<CompiledCode> compileForGpu(const ir::Function &kernel, unsigned arch,
                                             CodeForm form) const;
  /// A host object (Object), or optimized LLVM IR, for the CPU engine.
  /// `linkFiles` are the kernel's `link=` files (paths): the functions of
  /// those in CUDA C/C++ that the kernel calls become part of its host code.
  llvm::Expected<CompiledCode> compileForHost(const ir::Function &kernel, CodeForm form,
                                              llvm::ArrayRef<std::string> linkFiles = {}) const;
  /// The PTX for `.target sm_<arch>` of one module holding every kernel of
  /// `optimizedIR` (what compileForGpu gives as LLVMIR for that arch), all
  /// compiled with `options`. Internal symbols that clash, such as the
  /// libdevice helpers each kernel carries, are renamed apart.
  llvm::Expected<std::string> linkForGpu(llvm::ArrayRef<llvm::StringRef> optimizedIR, unsigned arch,
                                         const JitOptions &options) const;

  /// How CUDA C/C++ link files compile for the host.
  HostCudaSourceOptions hostCudaOptions;
  /// Whether host code holds each kernel's body both with and without index
  /// checks, so that the engine's setting (KILN_CPU_BOUNDSCHECK) can choose
  /// at run time, or only the copy the kernel's boundscheck option asks for
  /// (a third less host-code compile time).
  bool switchableIndexChecks = false;

private:
  std::string libdevicePath;
  std::string libdeviceMissing;
};

} // namespace kiln::backend
