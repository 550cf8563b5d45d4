//===- backend/codegen/kernel_compiler.cpp - One kernel to PTX or host code -------===//

#include "backend/codegen/kernel_compiler.h"

#include "backend/codegen/lower_module.h"
#include "backend/codegen/optimize.h"
#include "backend/codegen/target_machines.h"
#include "backend/host/host_barrier_regions.h"
#include "backend/host/host_interrupt_polls.h"
#include "backend/host/host_libdevice.h"
#include "backend/host/host_narrow_float_conversions.h"
#include "backend/host/host_target.h"
#include "backend/nvptx/libdevice.h"
#include "backend/nvptx/nvptx_target.h"
#include "ir/libdevice.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/DebugInfo.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>

#include <map>

namespace kiln::backend {

static KernelInterface interfaceOf(const LoweredKernel &lowered, const ir::Function &kernel) {
  KernelInterface interface;
  interface.entryName = lowered.entryName;
  interface.parameters = lowered.parameters;
  interface.staticSharedBytes = lowered.staticSharedBytes;
  interface.localBytes = lowered.localBytes;
  interface.synchronizes = kernel.synchronizes;
  interface.raises = kernel.raises;
  interface.cooperative = kernel.cooperative;
  return interface;
}

static llvm::Expected<std::string> emit(llvm::Module &module, llvm::TargetMachine &machine,
                                        CodeForm form) {
  std::string text;
  llvm::raw_string_ostream stream(text);
  if (form == CodeForm::LLVMIR) {
    module.print(stream, nullptr);
    return text;
  }
  llvm::SmallString<0> bytes;
  llvm::raw_svector_ostream output(bytes);
  llvm::legacy::PassManager passes;
  llvm::CodeGenFileType type = form == CodeForm::Object ? llvm::CodeGenFileType::ObjectFile
                                                        : llvm::CodeGenFileType::AssemblyFile;
  if (machine.addPassesToEmitFile(passes, output, nullptr, type))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "LLVM cannot emit this kind of file for " +
                                       machine.getTargetTriple().str());
  passes.run(module);
  return std::string(bytes.str());
}

/// LLVM numbers the `// callseq N` comments it writes around PTX calls
/// from a counter shared by every compilation in the process, which would
/// make a kernel's PTX depend on what was compiled before it. Numbering them
/// from 0 in each module keeps the output reproducible.
static std::string renumberCallSequences(llvm::StringRef ptx) {
  static constexpr llvm::StringLiteral marker = "// callseq ";
  std::string out;
  out.reserve(ptx.size());
  std::map<std::string, unsigned> numbers;
  while (!ptx.empty()) {
    size_t at = ptx.find(marker);
    if (at == llvm::StringRef::npos) {
      out += ptx;
      break;
    }
    out += ptx.take_front(at + marker.size());
    ptx = ptx.drop_front(at + marker.size());
    llvm::StringRef digits = ptx.take_while([](char c) { return llvm::isDigit(c); });
    auto [entry, inserted] = numbers.try_emplace(digits.str(), numbers.size());
    out += std::to_string(entry->second);
    ptx = ptx.drop_front(digits.size());
  }
  return out;
}

/// LLVM 19's NVPTX back end caches each module's nvvm.annotations (which
/// functions are kernels, their launch bounds) in a process-wide map keyed
/// by the addresses of the module and of its functions, and forgets a
/// module's entries only when it prints the module's PTX. The optimizer
/// fills the map too, so a module freed without being printed leaves entries
/// behind, which a later module allocated at the same address reads as its
/// own: one of its kernels then compiles as a plain function. A module whose
/// result is LLVM IR is therefore emptied and printed, to nowhere, before it
/// is freed.
static void forgetNvptxAnnotations(llvm::Module &module, llvm::TargetMachine &machine) {
  if (llvm::NamedMDNode *annotations = module.getNamedMetadata("nvvm.annotations"))
    annotations->eraseFromParent();
  llvm::StripDebugInfo(module);
  for (llvm::Function &function : module)
    function.dropAllReferences();
  for (llvm::GlobalVariable &global : module.globals())
    global.dropAllReferences();
  while (!module.empty())
    module.begin()->eraseFromParent();
  while (!module.global_empty())
    module.global_begin()->eraseFromParent();
  llvm::Expected<std::string> nothing = emit(module, machine, CodeForm::Assembly);
  llvm::consumeError(nothing.takeError());
}

llvm::Expected<CompiledCode> KernelCompiler::compileForGpu(const ir::Function &kernel,
                                                           unsigned arch, CodeForm form) const {
  llvm::LLVMContext context;
  NvptxTargetHooks hooks;
  llvm::Expected<LoweredKernel> lowered = lowerKernel(kernel, hooks, context);
  if (!lowered)
    return lowered.takeError();
  llvm::Module &module = *lowered->module;
  if (llvm::Error error =
          linkLibdevice(module, libdevicePath, lowered->entryName, arch, kernel.options.fastmath))
    return error;
  if (kernel.options.fastmath)
    // Inlining keeps "unsafe-fp-math" only where caller and callee both
    // have it; libdevice's functions must have it too, or fastmath would
    // lose div.approx and sqrt.approx once they are inlined.
    for (llvm::Function &function : module)
      if (!function.isDeclaration())
        function.addFnAttr("unsafe-fp-math", "true");
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> machine =
      createNvptxMachine(arch, kernel.options);
  if (!machine)
    return machine.takeError();
  disableRuntimeUnrolling(module);
  PipelineTuning tuning;
  tuning.speculativeHoisting = false;
  tuning.vectorizeLoops = false;
  if (llvm::Error error = optimizeModule(module, **machine, kernel.options.optimize, tuning))
    return error;
  llvm::Expected<std::string> bytes = emit(module, **machine, form);
  if (form == CodeForm::LLVMIR)
    forgetNvptxAnnotations(module, **machine);
  if (!bytes)
    return bytes.takeError();
  if (form == CodeForm::Assembly)
    *bytes = renumberCallSequences(*bytes);
  return CompiledCode{interfaceOf(*lowered, kernel), std::move(*bytes)};
}

llvm::Expected<std::string> KernelCompiler::linkForGpu(llvm::ArrayRef<llvm::StringRef> optimizedIR,
                                                       unsigned arch,
                                                       const JitOptions &options) const {
  if (optimizedIR.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "no kernels to link");
  llvm::LLVMContext context;
  // The linker reports its errors to the context's handler.
  std::string problems;
  context.setDiagnosticHandlerCallBack(
      [](const llvm::DiagnosticInfo *info, void *sink) {
        llvm::raw_string_ostream stream(*static_cast<std::string *>(sink));
        llvm::DiagnosticPrinterRawOStream printer(stream);
        info->print(printer);
        stream << '\n';
      },
      &problems);
  std::unique_ptr<llvm::Module> linked;
  for (size_t i = 0; i < optimizedIR.size(); ++i) {
    llvm::SMDiagnostic diagnostic;
    std::unique_ptr<llvm::Module> module =
        llvm::parseAssemblyString(optimizedIR[i], diagnostic, context);
    if (!module)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "the LLVM IR of kernel " + std::to_string(i) + " does not parse: line " +
              std::to_string(diagnostic.getLineNo()) + ": " + diagnostic.getMessage().str());
    if (!linked) {
      linked = std::move(module);
      continue;
    }
    if (llvm::Linker::linkModules(*linked, std::move(module)))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "linking the kernels' LLVM IR failed: " + problems);
  }
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> machine = createNvptxMachine(arch, options);
  if (!machine)
    return machine.takeError();
  llvm::Expected<std::string> ptx = emit(*linked, **machine, CodeForm::Assembly);
  if (!ptx)
    return ptx.takeError();
  return renumberCallSequences(*ptx);
}

llvm::Expected<CompiledCode>
KernelCompiler::compileForHost(const ir::Function &kernel, CodeForm form,
                               llvm::ArrayRef<std::string> linkFiles) const {
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> machine = createHostMachine(kernel.options);
  if (!machine)
    return machine.takeError();
  llvm::LLVMContext context;
  HostCudaCode cudaCode = HostCudaCode::compile(linkFiles, hostCudaOptions, hostTriple(), context);
  HostTargetHooks hooks(hostTriple(), (*machine)->createDataLayout().getStringRepresentation(),
                        &cudaCode, switchableIndexChecks);
  llvm::Expected<LoweredKernel> lowered = lowerKernel(kernel, hooks, context);
  if (!lowered)
    return lowered.takeError();
  if (llvm::Error error = cudaCode.linkInto(*lowered->module))
    return error;
  // CUDA C/C++ compiled for the host rounds to bfloat16 (cuda_bf16.h)
  // through the same helpers as kernels.
  if (usesBFloat16(*lowered->module) && !lowered->module->getFunction("__truncsfbf2"))
    defineBFloat16Conversions(*lowered->module);
  if (ir::callsLibdevice(kernel)) {
    if (llvm::Error error =
            linkLibdeviceFunctions(*lowered->module, libdevicePath, libdeviceMissing))
      return error;
    if (llvm::Error error = adaptLibdeviceForHost(*lowered->module))
      return error;
    // half2float and float2half_rn convert through the host's half helpers.
    if (usesHalf(*lowered->module) && !lowered->module->getFunction("__extendhfsf2"))
      defineHalfConversions(*lowered->module);
  }
  KernelInterface interface = interfaceOf(*lowered, kernel);
  interface.hasBlockEntry =
      lowered->module->getFunction(blockEntryName(lowered->entryName)) != nullptr;
  interface.messageSites = hooks.messageSites();
  interface.indexChecks = hooks.indexCheckCopies();
  // The block entry loops over a block's threads, whose bodies are mostly
  // guarded by `if i < n` and by index checks.
  PipelineTuning tuning;
  tuning.splitRangeChecks = true;
  if (llvm::Error error =
          optimizeModule(*lowered->module, **machine, kernel.options.optimize, tuning))
    return error;
  finishRegionRounds(*lowered->module);
  insertInterruptPolls(*lowered->module);
  llvm::Expected<std::string> bytes = emit(*lowered->module, **machine, form);
  if (!bytes)
    return bytes.takeError();
  return CompiledCode{std::move(interface), std::move(*bytes)};
}

} // namespace kiln::backend
