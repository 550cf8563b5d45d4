//===- backend/codegen/target_machines.cpp - LLVM target machines -----------------===//

#include "backend/codegen/target_machines.h"

#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include <mutex>

extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

namespace kiln::backend {

void initializeTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

static llvm::CodeGenOptLevel optLevel(const JitOptions &options) {
  return options.optimize ? llvm::CodeGenOptLevel::Aggressive : llvm::CodeGenOptLevel::None;
}

llvm::Expected<std::unique_ptr<llvm::TargetMachine>> createNvptxMachine(unsigned arch,
                                                                        const JitOptions &options) {
  initializeTargets();
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget("nvptx64-nvidia-cuda", error);
  if (!target)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "LLVM has no NVPTX back end: " + error);
  llvm::TargetOptions targetOptions;
  if (options.fastmath)
    targetOptions.UnsafeFPMath = true; // div.approx and sqrt.approx, as Numba's fastmath
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      // PTX ISA 7.8 (CUDA 11.8) for every target: the oldest that accepts
      // the DWARF LLVM writes for debug=True and knows sm_90.
      "nvptx64-nvidia-cuda", "sm_" + std::to_string(arch), "+ptx78", targetOptions, std::nullopt,
      std::nullopt, optLevel(options)));
  if (!machine)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "LLVM cannot generate code for sm_" + std::to_string(arch));
  return machine;
}

std::string hostTriple() {
  return llvm::sys::getProcessTriple();
}

llvm::Expected<std::unique_ptr<llvm::TargetMachine>> createHostMachine(const JitOptions &options) {
  initializeTargets();
  std::string triple = hostTriple();
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "LLVM cannot generate code for this machine (" + triple +
                                       "): " + error);
  llvm::Triple parsed(triple);
  std::string cpu = parsed.getArch() == llvm::Triple::x86_64 ? "x86-64" : "generic";
  llvm::TargetOptions targetOptions;
  if (options.fastmath)
    targetOptions.UnsafeFPMath = true;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, cpu, "", targetOptions, llvm::Reloc::PIC_, std::nullopt, optLevel(options)));
  if (!machine)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "LLVM cannot generate code for " + triple);
  return machine;
}

} // namespace kiln::backend
