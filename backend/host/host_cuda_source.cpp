//===- backend/host/host_cuda_source.cpp - CUDA C/C++ link files on the CPU ----===//

#include "backend/host/host_cuda_source.h"

#include "backend/cuda_tools/cuda_toolkit.h"
#include "support/temporary_directory.h"
#include "support/tool_runner.h"

#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/Program.h>

#include <cstdlib>

namespace kiln::backend {

namespace {

/// Defines CUDA's qualifiers away, so that a file of device functions is
/// host C++ (a __forceinline__ function is still emitted, as nvcc emits
/// it, for kernels to call), and includes what nvcc includes in every file (size_t, the
/// fixed-width integers, the math functions). __CUDA_ARCH__ stays
/// undefined: code that tests it takes its host path.
constexpr llvm::StringLiteral kPrelude = R"(#include <cmath>
#include <cstddef>
#include <cstdint>
#define __device__
#define __host__
#define __global__
#define __shared__
#define __constant__
#define __managed__
#define __forceinline__ inline __attribute__((always_inline, used))
#define __noinline__ __attribute__((noinline))
#define __restrict__ __restrict
#define __launch_bounds__(...)
)";

constexpr unsigned kClangTimeoutSeconds = 300;

/// The first of clang's error lines, without the scratch folder's name.
std::string firstError(const support::ToolOutput &output, llvm::StringRef scratch) {
  std::string text = support::indentedToolOutput(output, scratch);
  llvm::SmallVector<llvm::StringRef, 16> lines;
  llvm::StringRef(text).split(lines, '\n', -1, false);
  for (llvm::StringRef line : lines)
    if (line.contains("error:"))
      return line.trim().str();
  return lines.empty() ? "clang exited with status " + std::to_string(output.exitCode)
                       : lines.front().trim().str();
}

llvm::Expected<std::string> findHostClang() {
  if (const char *chosen = std::getenv("KILN_CLANG"); chosen && *chosen) {
    llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName(chosen);
    if (!found)
      return llvm::createStringError("KILN_CLANG names '%s', which is not a program", chosen);
    return *found;
  }
  for (std::string name : {"clang++-" + std::to_string(LLVM_VERSION_MAJOR), std::string("clang++")})
    if (llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName(name))
      return *found;
  return llvm::createStringError("no clang++ on PATH (set KILN_CLANG to one of LLVM %d or older) "
                                 "to compile CUDA C/C++ for the CPU engine",
                                 LLVM_VERSION_MAJOR);
}

std::optional<std::string> toolkitIncludeDirectory() {
  llvm::Expected<cuda_tools::CudaToolkit> toolkit = cuda_tools::findCudaToolkit();
  if (!toolkit) {
    llvm::consumeError(toolkit.takeError());
    return std::nullopt;
  }
  llvm::SmallString<256> include(toolkit->root);
  llvm::sys::path::append(include, "include");
  if (!llvm::sys::fs::is_directory(include))
    return std::nullopt;
  return include.str().str();
}

} // namespace

HostCudaSourceOptions findHostCudaTools(std::vector<std::string> includeDirectories) {
  HostCudaSourceOptions tools;
  tools.includeDirectories = std::move(includeDirectories);
  llvm::Expected<std::string> clang = findHostClang();
  if (clang)
    tools.clang = std::move(*clang);
  else
    tools.clangMissing = llvm::toString(clang.takeError());
  tools.toolkitIncludeDirectory = toolkitIncludeDirectory();
  tools.compiled = std::make_shared<HostCudaBitcode>();
  return tools;
}

llvm::Expected<std::string>
HostCudaBitcode::get(const std::string &path,
                     llvm::function_ref<llvm::Expected<std::string>(const std::string &)> compile) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto found = compiled.find(path); found != compiled.end()) {
      if (found->second.first)
        return found->second.second;
      return llvm::createStringError(found->second.second);
    }
  }
  // Compiled unlocked, so that kernels linking other files go on meanwhile.
  llvm::Expected<std::string> bitcode = compile(path);
  std::lock_guard<std::mutex> lock(mutex);
  if (bitcode) {
    compiled.try_emplace(path, true, *bitcode);
    return bitcode;
  }
  std::string why = llvm::toString(bitcode.takeError());
  compiled.try_emplace(path, false, why);
  return llvm::createStringError(why);
}

namespace {

/// The LLVM bitcode clang makes of the .cu file at `path` for `triple`, or
/// why it makes none.
llvm::Expected<std::string> compileToBitcode(const std::string &path,
                                             const HostCudaSourceOptions &options,
                                             llvm::StringRef triple) {
  if (options.clang.empty())
    return llvm::createStringError(options.clangMissing);
  llvm::Expected<support::TemporaryDirectory> scratch =
      support::TemporaryDirectory::create("kiln-host-cu");
  if (!scratch)
    return scratch.takeError();
  if (llvm::Error error = scratch->write("cuda_prelude.h", kPrelude))
    return error;
  // -w: clang's warnings about code written for nvcc mean nothing here.
  std::vector<std::string> arguments = {
      "-x", "c++", "-std=c++17", "-O2", "-fPIC", "-fno-exceptions", "-w"};
  arguments.insert(arguments.end(), {"-target", triple.str(), "-emit-llvm", "-c"});
  arguments.insert(arguments.end(), {"-include", scratch->file("cuda_prelude.h")});
  for (const std::string &directory : options.includeDirectories)
    arguments.push_back("-I" + directory);
  if (options.toolkitIncludeDirectory)
    arguments.insert(arguments.end(), {"-isystem", *options.toolkitIncludeDirectory});
  arguments.insert(arguments.end(), {path, "-o", scratch->file("host.bc")});
  llvm::Expected<support::ToolOutput> ran =
      support::runTool(options.clang, arguments, kClangTimeoutSeconds);
  if (!ran)
    return ran.takeError();
  if (ran->exitCode != 0)
    return llvm::createStringError(firstError(*ran, scratch->path()));
  return scratch->read("host.bc");
}

} // namespace

HostCudaCode HostCudaCode::compile(llvm::ArrayRef<std::string> linkFiles,
                                   const HostCudaSourceOptions &options, llvm::StringRef triple,
                                   llvm::LLVMContext &context) {
  HostCudaCode code;
  for (const std::string &path : linkFiles) {
    if (llvm::sys::path::extension(path) != ".cu")
      continue;
    std::string name = llvm::sys::path::filename(path).str();
    code.fileNames.push_back(name);
    auto fail = [&](const std::string &why) {
      code.problems.push_back("'" + name + "' does not compile for the CPU engine: " + why);
    };
    auto compileFile = [&](const std::string &file) {
      return compileToBitcode(file, options, triple);
    };
    llvm::Expected<std::string> bitcode =
        options.compiled ? options.compiled->get(path, compileFile) : compileFile(path);
    if (!bitcode) {
      fail(llvm::toString(bitcode.takeError()));
      continue;
    }
    llvm::Expected<std::unique_ptr<llvm::Module>> module =
        llvm::parseBitcodeFile(llvm::MemoryBufferRef(*bitcode, name), context);
    if (!module) {
      fail("the LLVM IR of " + options.clang + " is not LLVM " +
           std::to_string(LLVM_VERSION_MAJOR) + "'s (" + llvm::toString(module.takeError()) +
           "); set KILN_CLANG to an older clang");
      continue;
    }
    // `used` only made clang emit the inline functions (__forceinline__):
    // the kernel's module keeps those it calls, not all of them.
    for (llvm::StringRef keeper : {"llvm.used", "llvm.compiler.used"})
      if (llvm::GlobalVariable *list = (*module)->getNamedGlobal(keeper))
        list->eraseFromParent();
    for (const llvm::Function &function : **module)
      if (!function.isDeclaration() && !function.hasLocalLinkage())
        code.definedIn.try_emplace(function.getName(), name);
    code.modules.push_back(std::move(*module));
  }
  return code;
}

std::optional<std::string> HostCudaCode::callProblem(llvm::StringRef symbol) const {
  if (definedIn.count(symbol))
    return std::nullopt;
  if (!problems.empty())
    return llvm::join(problems, "; ");
  if (fileNames.empty())
    return std::string("it is defined in PTX or device code, which only a GPU runs");
  return "none of " + llvm::join(fileNames, ", ") + " defines it";
}

llvm::Error HostCudaCode::linkInto(llvm::Module &module) {
  // The files first, whole, as their functions may call one another; then
  // what the kernel calls of them.
  std::unique_ptr<llvm::Module> files;
  std::vector<std::string> linked;
  for (std::unique_ptr<llvm::Module> &source : modules) {
    source->setTargetTriple(module.getTargetTriple());
    source->setDataLayout(module.getDataLayout());
    for (const llvm::GlobalValue &global : source->global_values())
      if (!global.isDeclaration() && !global.hasLocalLinkage())
        linked.push_back(global.getName().str());
    if (!files)
      files = std::move(source);
    else if (llvm::Linker::linkModules(*files, std::move(source)))
      return llvm::createStringError("%s define the same function twice",
                                     llvm::join(fileNames, ", ").c_str());
  }
  modules.clear();
  if (!files)
    return llvm::Error::success();
  if (llvm::Linker::linkModules(module, std::move(files), llvm::Linker::Flags::LinkOnlyNeeded))
    return llvm::createStringError("cannot link the host code of %s into the kernel's",
                                   llvm::join(fileNames, ", ").c_str());
  // Each kernel carries its own copy: internal, so that two kernels of one
  // module that call the same file link together.
  for (const std::string &name : linked)
    if (llvm::GlobalValue *global = module.getNamedValue(name); global && !global->isDeclaration())
      global->setLinkage(llvm::GlobalValue::InternalLinkage);
  return llvm::Error::success();
}

} // namespace kiln::backend
