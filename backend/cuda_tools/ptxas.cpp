//===- backend/cuda_tools/ptxas.cpp - Assembling PTX into cubins with ptxas ----------===//

#include "backend/cuda_tools/ptxas.h"

#include "backend/cuda_tools/cuda_archs.h"
#include "backend/cuda_tools/ptx_header.h"
#include "support/temporary_directory.h"
#include "support/tool_runner.h"

#include <llvm/ADT/StringExtras.h>

namespace kiln::cuda_tools {

namespace {

constexpr llvm::StringLiteral kInputName = "kernel.ptx";
constexpr llvm::StringLiteral kOutputName = "kernel.cubin";

/// Options that would fight with the ones Kiln passes itself.
bool isReservedFlag(llvm::StringRef flag) {
  llvm::StringRef name = flag.split('=').first;
  for (llvm::StringRef reserved :
       {"-o", "--output-file", "-arch", "--gpu-name", "-ias", "--input-as-string", "-optf",
        "--options-file", "-m32", "--machine", "-h", "--help", "-V", "--version"})
    if (name == reserved)
      return true;
  return false;
}

} // namespace

llvm::Error validatePtxasOptions(const PtxasOptions &options) {
  if (options.optimizationLevel > 3)
    return llvm::createStringError("ptxas optimisation level %u is out of range (0 to 3)",
                                   options.optimizationLevel);
  if (options.maxRegisters != 0 && (options.maxRegisters < 16 || options.maxRegisters > 255))
    return llvm::createStringError("a limit of %u registers is out of range (16 to 255)",
                                   options.maxRegisters);
  for (const std::string &flag : options.extraFlags) {
    if (!llvm::StringRef(flag).starts_with("-"))
      return llvm::createStringError("ptxas option '%s' does not start with '-' (give one "
                                     "option per entry, e.g. --warn-on-spills)",
                                     flag.c_str());
    if (isReservedFlag(flag))
      return llvm::createStringError("ptxas option '%s' cannot be passed through: Kiln sets the "
                                     "architecture, input and output itself",
                                     flag.c_str());
  }
  return llvm::Error::success();
}

std::vector<std::string> ptxasFlags(const PtxasOptions &options) {
  std::vector<std::string> flags;
  flags.push_back("-O" + std::to_string(options.debug ? 0 : options.optimizationLevel));
  if (options.maxRegisters != 0)
    flags.push_back("--maxrregcount=" + std::to_string(options.maxRegisters));
  if (options.debug)
    flags.push_back("-g"); // -lineinfo would only draw a warning: -g includes it
  else if (options.lineInfo)
    flags.push_back("-lineinfo");
  flags.insert(flags.end(), options.extraFlags.begin(), options.extraFlags.end());
  return flags;
}

llvm::Expected<AssembledCubin> assemblePtx(const CudaToolkit &toolkit, llvm::StringRef ptx,
                                           unsigned arch, const PtxasOptions &options) {
  if (llvm::Error error = validatePtxasOptions(options))
    return error;
  if (!isCudaArchitecture(arch))
    return llvm::createStringError("cannot assemble PTX for sm_%u: not an architecture CUDA 13 "
                                   "supports",
                                   arch);
  llvm::Expected<PtxHeader> header = readPtxHeader(ptx);
  if (!header)
    return header.takeError();
  if (header->targetArch > arch)
    return llvm::createStringError(
        "cannot assemble PTX for sm_%u: its .target is sm_%u%s, and PTX only assembles for its "
        "own target or newer ones",
        arch, header->targetArch, header->targetSuffix.c_str());
  if (!header->targetSuffix.empty() && header->targetArch != arch)
    return llvm::createStringError("cannot assemble PTX for sm_%u: its .target sm_%u%s is "
                                   "architecture-specific",
                                   arch, header->targetArch, header->targetSuffix.c_str());

  llvm::Expected<std::string> ptxas = toolkit.require(ToolkitComponent::Ptxas);
  if (!ptxas)
    return ptxas.takeError();
  llvm::Expected<support::TemporaryDirectory> directory =
      support::TemporaryDirectory::create("kiln-ptxas");
  if (!directory)
    return directory.takeError();
  if (llvm::Error error = directory->write(kInputName, ptx))
    return error;

  std::vector<std::string> arguments = {"-arch=" + smName(arch), "-m64", "-v"};
  for (std::string &flag : ptxasFlags(options))
    arguments.push_back(std::move(flag));
  arguments.push_back(directory->file(kInputName));
  arguments.push_back("-o");
  arguments.push_back(directory->file(kOutputName));

  llvm::Expected<support::ToolOutput> output =
      support::runTool(*ptxas, arguments, std::nullopt, support::ToolFolder::Scratch);
  if (!output)
    return output.takeError();
  ToolLog log = parsePtxasLog(output->standardError + output->standardOutput);
  attachSourceLines(log.messages, ptx);
  for (ToolMessage &message : log.messages)
    message.input.clear(); // the temporary file's name means nothing to anyone

  if (output->exitCode != 0 || log.hasErrors())
    return llvm::make_error<CudaToolError>(
        "ptxas", arch, "exit status " + std::to_string(output->exitCode), std::move(log.messages));

  llvm::Expected<std::string> cubin = directory->read(kOutputName);
  if (!cubin)
    return cubin.takeError();
  AssembledCubin result;
  result.cubin = std::move(*cubin);
  result.usage = std::move(log.usage);
  for (ToolMessage &message : log.messages)
    if (message.severity == ToolSeverity::Warning)
      result.warnings.push_back(std::move(message));
  return result;
}

} // namespace kiln::cuda_tools
