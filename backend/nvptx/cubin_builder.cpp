//===- backend/nvptx/cubin_builder.cpp - A kernel's PTX to a cubin --------------===//

#include "backend/nvptx/cubin_builder.h"

#include "backend/cuda_tools/cuda_source.h"
#include "backend/cuda_tools/ptxas.h"
#include "backend/nvptx/tool_options.h"

#include <llvm/Support/Path.h>

namespace kiln::backend {

/// One .cu file compiled for one architecture, by whichever thread asked
/// first; the others wait for it.
struct CubinBuilder::CompiledSource {
  std::once_flag once;
  std::optional<cuda_tools::LinkInput> input;
  std::string error;
};

llvm::Expected<cuda_tools::LinkInput>
CubinBuilder::linkInput(const JitOptions &options, const std::string &path, unsigned arch) {
  if (llvm::sys::path::extension(path) != ".cu")
    return cuda_tools::readLinkInput(path);
  std::shared_ptr<CompiledSource> entry;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto key = std::make_tuple(path, arch, options.optimize, options.debug, options.lineinfo);
    std::shared_ptr<CompiledSource> &slot = sources[key];
    if (!slot)
      slot = std::make_shared<CompiledSource>();
    entry = slot;
  }
  std::call_once(entry->once, [&] {
    cuda_tools::CudaSourceOptions sourceOptions = cudaSourceOptionsFor(options);
    sourceOptions.includeDirectories = includeDirectories;
    llvm::Expected<cuda_tools::LinkInput> compiled = cuda_tools::compileCudaSource(
        toolkit, path, arch, cuda_tools::CudaSourceOutput::Ptx, sourceOptions);
    if (compiled)
      entry->input = std::move(*compiled);
    else
      entry->error = llvm::toString(compiled.takeError());
  });
  if (!entry->input)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), entry->error);
  return *entry->input;
}

const cuda_tools::NvJitLink *CubinBuilder::loadLinker(std::string *whyNot) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!linker)
    linker.emplace(cuda_tools::NvJitLink::load(toolkit));
  if (!*linker) {
    // Keep the reason; Expected holds its error until it is taken.
    if (!linkerError)
      linkerError = llvm::toString(linker->takeError());
    *whyNot = *linkerError;
    return nullptr;
  }
  return &**linker;
}

llvm::Expected<BuiltCubin> CubinBuilder::build(const JitOptions &options, llvm::StringRef ptx,
                                               llvm::StringRef ptxName, unsigned arch,
                                               llvm::ArrayRef<std::string> linkFiles) {
  if (linkFiles.empty()) {
    // ptxas, not nvJitLink, even though nvJitLink runs in process and starts
    // faster: nvJitLink assembles PTX as relocatable code, which costs
    // registers (18 become 24 on a saxpy).
    llvm::Expected<cuda_tools::AssembledCubin> cubin =
        cuda_tools::assemblePtx(toolkit, ptx, arch, ptxasOptionsFor(options, extraPtxasFlags));
    if (!cubin)
      return cubin.takeError();
    return BuiltCubin{std::move(cubin->cubin), std::move(cubin->usage)};
  }
  std::vector<cuda_tools::LinkInput> inputs{
      {cuda_tools::LinkInputKind::Ptx, ptxName.str(), ptx.str()}};
  for (const std::string &path : linkFiles) {
    llvm::Expected<cuda_tools::LinkInput> input = linkInput(options, path, arch);
    if (!input)
      return input.takeError();
    inputs.push_back(std::move(*input));
  }
  std::string whyNot;
  const cuda_tools::NvJitLink *loaded = loadLinker(&whyNot);
  if (!loaded)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), whyNot);
  llvm::Expected<cuda_tools::LinkedCubin> linked =
      loaded->link(arch, inputs, linkOptionsFor(options, extraPtxasFlags));
  if (!linked)
    return linked.takeError();
  return BuiltCubin{std::move(linked->cubin), std::move(linked->usage)};
}

} // namespace kiln::backend
