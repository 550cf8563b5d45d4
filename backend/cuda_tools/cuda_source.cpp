//===- backend/cuda_tools/cuda_source.cpp - CUDA C/C++ files for link=[...] ----------===//

#include "backend/cuda_tools/cuda_source.h"

#include "backend/cuda_tools/cuda_archs.h"
#include "backend/cuda_tools/ptxas.h"
#include "support/temporary_directory.h"
#include "support/tool_runner.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

namespace kiln::cuda_tools {

namespace {

constexpr llvm::StringLiteral kPtxName = "device.ptx";

} // namespace

llvm::Expected<LinkInput> compileCudaSource(const CudaToolkit &toolkit, llvm::StringRef sourcePath,
                                            unsigned arch, CudaSourceOutput output,
                                            const CudaSourceOptions &options) {
  if (!isCudaArchitecture(arch))
    return llvm::createStringError("cannot compile '%s' for sm_%u: not an architecture CUDA 13 "
                                   "supports",
                                   sourcePath.str().c_str(), arch);
  if (options.optimizationLevel > 3)
    return llvm::createStringError("optimisation level %u is out of range (0 to 3)",
                                   options.optimizationLevel);
  if (!llvm::sys::fs::is_regular_file(sourcePath))
    return llvm::createStringError("cannot compile '%s': no such file", sourcePath.str().c_str());
  llvm::Expected<std::string> nvcc = toolkit.require(ToolkitComponent::Nvcc);
  if (!nvcc)
    return nvcc.takeError();
  llvm::Expected<support::TemporaryDirectory> directory =
      support::TemporaryDirectory::create("kiln-nvcc");
  if (!directory)
    return directory.takeError();

  std::vector<std::string> arguments = {"-ptx", "-rdc=true", "-arch=" + computeName(arch)};
  if (options.debug)
    arguments.push_back("-G");
  else if (options.lineInfo)
    arguments.push_back("-lineinfo");
  for (const std::string &directoryName : options.includeDirectories)
    arguments.push_back("-I" + directoryName);
  for (const std::string &define : options.defines)
    arguments.push_back("-D" + define);
  arguments.insert(arguments.end(), options.extraNvccFlags.begin(), options.extraNvccFlags.end());
  arguments.push_back(sourcePath.str());
  arguments.push_back("-o");
  arguments.push_back(directory->file(kPtxName));

  llvm::Expected<support::ToolOutput> result = support::runTool(*nvcc, arguments);
  if (!result)
    return result.takeError();
  if (result->exitCode != 0)
    return llvm::createStringError("nvcc could not compile '%s' for %s (exit status %d):%s",
                                   sourcePath.str().c_str(), smName(arch).c_str(), result->exitCode,
                                   support::indentedToolOutput(*result, directory->path()).c_str());
  llvm::Expected<std::string> ptx = directory->read(kPtxName);
  if (!ptx)
    return ptx.takeError();

  llvm::SmallString<64> name(llvm::sys::path::filename(sourcePath));
  if (output == CudaSourceOutput::Ptx) {
    llvm::sys::path::replace_extension(name, ".ptx");
    return LinkInput{LinkInputKind::Ptx, std::string(name), std::move(*ptx)};
  }

  PtxasOptions ptxasOptions;
  ptxasOptions.optimizationLevel = options.optimizationLevel;
  ptxasOptions.lineInfo = options.lineInfo;
  ptxasOptions.debug = options.debug;
  ptxasOptions.extraFlags = {"-c"}; // relocatable: keeps extern device functions
  llvm::Expected<AssembledCubin> cubin = assemblePtx(toolkit, *ptx, arch, ptxasOptions);
  if (!cubin)
    return llvm::createStringError("cannot assemble the PTX nvcc made from '%s': %s",
                                   sourcePath.str().c_str(),
                                   llvm::toString(cubin.takeError()).c_str());
  llvm::sys::path::replace_extension(name, ".cubin");
  return LinkInput{LinkInputKind::Cubin, std::string(name), std::move(cubin->cubin)};
}

} // namespace kiln::cuda_tools
